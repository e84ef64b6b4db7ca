"""A page's language: its declaration checked against its text.

The script of the page's visible text decides where it can: Han (Chinese, or Japanese when
kana are there too), Hangul, Greek, Hebrew, Thai and the other scripts of one language. A
declaration that the text's script contradicts loses (``corrected``: a page declaring ``en``
written in Chinese is ``zh``); a missing declaration is filled in from such a script
(``detected``); Latin, Cyrillic and Arabic text, each written in many languages, keeps its
declaration or stays unknown. A statistical detector (py3langid) was measured instead: it
cost 74 MB of memory per process (more than the page-size bounds' whole budget) and was less
precise on ``bench/profile_eval.py`` (language precision 0.966 against 0.977 for the script).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

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


# Scripts that name one language (or one language a page of that script is most likely in).
_SCRIPTS = {
    "CJK": "zh", "HIRAGANA": "ja", "KATAKANA": "ja", "HANGUL": "ko", "GREEK": "el",
    "HEBREW": "he", "THAI": "th", "ARMENIAN": "hy", "GEORGIAN": "ka", "DEVANAGARI": "hi",
    "BENGALI": "bn", "TAMIL": "ta", "CYRILLIC": "", "ARABIC": "", "LATIN": "",
}  # fmt: skip


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0] if name else ""


def detect_language(text: str) -> tuple[str, float]:
    """The language the script of ``text`` names and the share of its letters in that
    script: Han is Chinese unless kana make it Japanese; Latin, Cyrillic and Arabic, each
    written in many languages, name none (``""``)."""
    counts: dict[str, int] = {}
    letters = 0
    # Each distinct character once (Counter counts in C, in order of first occurrence, so
    # the scripts keep the order in which the text meets them: max() breaks ties the same).
    for ch, n in Counter(text).items():
        if ch.isalpha():
            letters += n
            script = _script(ch)
            counts[script] = counts.get(script, 0) + n
    if not letters:
        return "", 0.0
    kana = counts.get("HIRAGANA", 0) + counts.get("KATAKANA", 0)
    if kana >= 0.1 * letters:
        return "ja", (kana + counts.get("CJK", 0)) / letters
    script, count = max(counts.items(), key=lambda kv: kv[1])
    return _SCRIPTS.get(script, ""), count / letters


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
