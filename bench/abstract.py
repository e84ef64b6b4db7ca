"""Measure :func:`blogfeeds.extract.metadata.abstract` against the article-extraction benchmark.

Data: scrapinghub/article-extraction-benchmark (MIT) as kept in the shared corpus:
``corpus/ground-truth/aeb-ground-truth.json`` (``{hash: {articleBody, url}}``) and the pages
``corpus/pages/aeb/<hash>.html.gz`` (a quarter of the 181 are held back, so fewer are present).

Definitions, after normalising both sides: every run of whitespace collapsed to one space, and a
space between two characters of a script written without spaces (Han, kana, Thai, ...) removed,
since the ground truth joins paragraphs with a newline and the abstract joins Chinese or Japanese
paragraphs with nothing. The abstract adds no ellipsis, so none is stripped.

* strict prefix: the abstract is non-empty and the article body starts with it;
* contained: the abstract is non-empty and occurs inside the first 300 characters of the
  article body (the whole abstract, not just its start);
* empty: the abstract is ``""``.

Speed is abstract extraction only (trafilatura included, page parsing excluded): pages per
second of process CPU time, and the wall-clock median and p95 per page.

Usage, from the repository root::

    python bench/abstract.py [--shared PATH] [--check FLOOR] [--show-misses]

``--check FLOOR`` exits with status 1 when the strict-prefix share is below ``FLOOR`` (0..1).
The shared folder is ``--shared``, else ``$BLOGFEEDS_SHARED``, else ``../shared`` beside the
repository; the script exits with status 2 when it is missing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from blogfeeds.extract.metadata import NO_SPACE_CHARS, abstract  # noqa: E402
from blogfeeds.extract.page import DecodeError, parse_page  # noqa: E402
from blogfeeds.extract.text import collapse  # noqa: E402

CONTAINED_CHARS = 300
_CJK_SPACE = re.compile(f"(?<={NO_SPACE_CHARS}) (?={NO_SPACE_CHARS})")


def normalise(text: str) -> str:
    """Whitespace collapsed; no space left between two no-space-script characters."""
    return _CJK_SPACE.sub("", collapse(text))


def shared_dir(explicit: str | None) -> Path:
    """The shared reference folder: ``explicit``, ``$BLOGFEEDS_SHARED`` or ``../shared``."""
    return Path(explicit or os.environ.get("BLOGFEEDS_SHARED") or ROOT.parent / "shared")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared reference folder")
    parser.add_argument(
        "--check",
        type=float,
        metavar="FLOOR",
        help="exit 1 when the strict-prefix share is below FLOOR",
    )
    parser.add_argument(
        "--show-misses",
        action="store_true",
        help="print every page whose abstract is not a strict prefix",
    )
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # trafilatura warns about pages it discards

    corpus = shared_dir(args.shared) / "corpus"
    truth_path = corpus / "ground-truth" / "aeb-ground-truth.json"
    if not truth_path.is_file():
        print(f"missing {truth_path}", file=sys.stderr)
        return 2
    truth = json.loads(truth_path.read_text(encoding="utf-8"))

    strict = contained = empty = 0
    cpu = 0.0
    walls: list[float] = []
    pages = 0
    for key, gold in sorted(truth.items()):
        path = corpus / "pages" / "aeb" / f"{key}.html.gz"
        if not path.is_file():
            continue
        try:
            page = parse_page(gold["url"], gzip.decompress(path.read_bytes()))
        except DecodeError as exc:
            print(f"{key}: {exc}", file=sys.stderr)
            continue
        wall0, cpu0 = time.perf_counter(), time.process_time()
        got = abstract(page)
        cpu += time.process_time() - cpu0
        walls.append(time.perf_counter() - wall0)
        pages += 1

        body = normalise(gold["articleBody"])
        got = normalise(got)
        if not got:
            empty += 1
        is_strict = bool(got) and body.startswith(got)
        strict += is_strict
        contained += bool(got) and got in body[:CONTAINED_CHARS]
        if args.show_misses and not is_strict:
            print(f"MISS {key[:12]} {gold['url']}\n  got:  {got!r}\n  gold: {body[:120]!r}")

    if not pages:
        print(f"no pages found under {corpus / 'pages' / 'aeb'}", file=sys.stderr)
        return 2
    walls.sort()
    share = strict / pages
    print(f"pages:                    {pages} (of {len(truth)} in the ground truth)")
    print(f"strict prefix share:      {share:.3f} ({strict})")
    print(f"contained in first {CONTAINED_CHARS}:  {contained / pages:.3f} ({contained})")
    print(f"empty share:              {empty / pages:.3f} ({empty})")
    print(f"pages/s (CPU):            {pages / cpu:.1f}")
    print(
        f"ms/page wall median, p95: {1000 * statistics.median(walls):.1f}, "
        f"{1000 * walls[int(0.95 * (len(walls) - 1))]:.1f}"
    )
    if args.check is not None and share < args.check:
        print(f"FAIL: strict prefix share {share:.3f} < floor {args.check:.3f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
