"""Real parking and bot-wall pages for ``tests/test_health.py``, rebuilt outside the repository.

``bench/health_pages.tsv`` names each page (its kind, the service sign it must match, the
public repository, path and commit it was captured in, and that repository's licence): pages a
scanner recorded from public hosts, kept there inside Markdown code fences. None states a
licence, so none is copied into this repository; ``build`` copies them out of a local mirror of
the repository (a bare git directory ``<mirrors>/<owner>+<name>/repo``) into ``--out`` (default
``~/.cache/blogfeeds/health-pages``, or ``BLOGFEEDS_HEALTH_PAGES``), where the tests read them
and skip, saying so, when they are absent.

Usage, from the repository root::

    python bench/health_pages.py build --mirrors MIRRORS [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
from pathlib import Path

MANIFEST = Path(__file__).resolve().parent / "health_pages.tsv"
FENCE = b"```"


def default_out() -> Path:
    return Path(
        os.environ.get("BLOGFEEDS_HEALTH_PAGES")
        or Path.home() / ".cache" / "blogfeeds" / "health-pages"
    )


def rows() -> list[dict[str, str]]:
    with MANIFEST.open(encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def unfenced(body: bytes) -> bytes:
    """The page inside a Markdown code fence (as the repository keeps it), or ``body``."""
    body = body.strip()
    if body.startswith(FENCE) and body.endswith(FENCE):
        body = body[len(FENCE) : -len(FENCE)]
    return body.strip() + b"\n"


def build(mirrors: Path, out: Path) -> int:
    missing = 0
    for row in rows():
        repo = mirrors / row["source_repo"].removeprefix("github:").replace("/", "+") / "repo"
        spec = f"{row['commit']}:{row['source_path']}"
        shown = subprocess.run(
            ["git", f"--git-dir={repo}", "show", spec], capture_output=True, check=False
        )
        if shown.returncode:
            print(f"missing {row['file']}: {shown.stderr.decode().strip()}", file=sys.stderr)
            missing += 1
            continue
        target = out / row["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(unfenced(shown.stdout))
    print(f"{len(rows()) - missing} pages in {out}, {missing} missing")
    return 1 if missing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["build"])
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=default_out())
    args = parser.parse_args()
    return build(args.mirrors, args.out)


if __name__ == "__main__":
    sys.exit(main())
