"""Spider arguments (``-a NAME=VALUE``) no spider of this project reads.

Scrapy sets any ``-a`` argument as a spider attribute, so a misspelt one (``-a lop=true``) is
ignored in silence; :func:`warn_unknown_arguments` says so in one WARNING naming the nearest
known argument. Names starting with ``_`` are scrapyd's (``_job``, ``_version``) and pass.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable

logger = logging.getLogger(__name__)


def unknown_arguments(given: Iterable[str], known: Iterable[str]) -> list[str]:
    """One message per argument in ``given`` that is not in ``known`` (scrapyd's ``_...``
    aside)."""
    names = sorted(known)
    messages = []
    for name in sorted(set(given)):
        if name in names or name.startswith("_"):
            continue
        nearest = difflib.get_close_matches(name, names, n=1)
        hint = f"did you mean -a {nearest[0]}=?" if nearest else f"known: {', '.join(names)}"
        messages.append(f"-a {name}: not an argument of this spider, ignored; {hint}")
    return messages


def warn_unknown_arguments(given: Iterable[str], known: Iterable[str]) -> None:
    for message in unknown_arguments(given, known):
        logger.warning(message)
