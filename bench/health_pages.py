"""Real parking and bot-wall pages for ``tests/test_health.py``, rebuilt outside the repository.

``bench/health_pages.tsv`` names each page (its kind, the service sign it must match, the
public repository, path and commit it was captured in, and that repository's licence): pages
scanners and crawls recorded from public hosts (some kept inside Markdown code fences), and the
placeholder pages hosting platforms ship. A page whose repository states a permissive licence is
copied into ``tests/data/health/real/`` (``copy`` is ``tests``); the others are not copied into
this repository: ``build`` copies them out of a local mirror of their repository (a bare git
directory ``<mirrors>/<owner>+<name>/repo``) into ``--out`` (default
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
COPIED = Path(__file__).resolve().parent.parent / "tests" / "data" / "health" / "real"
"""The pages of permissively licensed repositories, kept in this repository."""
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
    """The page inside a Markdown code fence (as a scanner's repository keeps it), or ``body``
    as it is."""
    stripped = body.strip()
    if not (stripped.startswith(FENCE) and stripped.endswith(FENCE)):
        return body
    return stripped[len(FENCE) : -len(FENCE)].strip() + b"\n"


def page_path(row: dict[str, str], out: Path) -> Path:
    """Where the page of ``row`` is read: in this repository when copied, else in ``out``."""
    return (COPIED if row.get("copy") == "tests" else out) / row["file"]


def build(mirrors: Path, out: Path) -> int:
    missing = 0
    built = [row for row in rows() if row.get("copy") != "tests"]
    for row in built:
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
    print(f"{len(built) - missing} pages in {out}, {missing} missing")
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
