"""A page's language: its declaration checked against its text.

py3langid (langid.py's model, bundled in the package, nothing downloaded; Lui & Baldwin 2012)
reads the page's visible text: a confident detection that disagrees with the declaration wins
(``corrected``), a missing declaration is filled in (``detected``), a text too short to tell
keeps the declaration. ``bench/profile_eval.py`` and the corpus test of ``tests/test_profile.py``
measure it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from py3langid.langid import MODEL_FILE, LanguageIdentifier

from blogfeeds.extract.page import Page

_MIN_LETTERS = 40  # shorter texts are not checked (a photo blog's captions)
_OVERRIDE_LETTERS = 200  # a declaration is overruled only by this much text
_OVERRIDE_PROB = 0.95
_DETECT_PROB = 0.9
_TEXT_CHARS = 6000
_SKIP_TEXT = {"script", "style", "noscript", "template", "svg", "code", "pre", "textarea"}
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
# A language tag's primary subtag as pages misspell it -> ISO 639-1.
_ALIASES = {"cn": "zh", "jp": "ja", "kr": "ko", "cz": "cs", "gr": "el", "dk": "da", "se": "sv"}


def page_text(page: Page, limit: int = _TEXT_CHARS) -> str:
    """The page's visible text (no scripts, styles, code), at most ``limit`` characters."""
    parts: list[str] = []
    size = 0
    body = page.tree.find("body")
    root = body if body is not None else page.tree
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        skip = element.tag in _SKIP_TEXT
        for text in (None if skip else element.text, element.tail):
            if text and text.strip():
                parts.append(text.strip())
                size += len(text)
        if size > limit:
            break
    return " ".join(parts)[:limit]


@cache
def _identifier() -> Any:
    """The model, loaded once (about 0.1 s) when a page is first checked."""
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect_language(text: str) -> tuple[str, float]:
    """py3langid's language (ISO 639-1) of ``text`` and its probability."""
    identifier = _identifier()  # outside any guard: a model that will not load is a bug
    try:
        lang, prob = identifier.classify(text)
    except (ValueError, IndexError, UnicodeError):  # text the tokenizer cannot take
        return "", 0.0
    return str(lang), float(prob)


def primary(tag: str) -> str:
    """The primary subtag of a language tag, lower-cased, common misspellings mended
    (``zh-CN`` → ``zh``, ``jp`` → ``ja``)."""
    head = re.split(r"[-_]", tag.strip().lower(), maxsplit=1)[0]
    return _ALIASES.get(head, head)


def check_language(declared: str, text: str) -> tuple[str, str]:
    """The language of a page that declares ``declared`` and reads ``text``, and how it was
    decided (:attr:`Profile.language_source`); ``("", "")`` when neither tells."""
    letters = len(_LETTER.findall(text))
    if letters < _MIN_LETTERS:
        return (declared, "declared") if declared else ("", "")
    lang, prob = detect_language(text)
    if not lang:
        return (declared, "declared") if declared else ("", "")
    if not declared:
        return (lang, "detected") if prob >= _DETECT_PROB else ("", "")
    if primary(declared) == lang:
        return declared, "declared"
    if prob >= _OVERRIDE_PROB and letters >= _OVERRIDE_LETTERS:
        return lang, "corrected"
    return declared, "declared"
