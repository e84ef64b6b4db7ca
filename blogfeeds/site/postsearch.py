"""The river's post search: an inverted index of the river's entries, split so that a search
loads only the shards of its words and the rows of the posts it shows.

An entry's words are those of its title and of its opening (its summary as text, cut as the
river shows it: :data:`OPENING` characters). :func:`tokens`: a word is a run of letters and
digits, lower-cased; Chinese, Japanese and Korean script has no spaces, so each of its
characters and each pair of neighbours is a token (a search for 咖啡 looks for the pair).
Entries are numbered newest first, so hits in number order are the newest first.

Files (each a script that assigns into ``window.BLOGFEEDS_POSTS``, since Chromium refuses
``fetch()`` of ``file://``): ``data/posts/index.js`` (the shard keys, the entry count, the
chunk size); ``data/posts/s<n>.js``: the tokens whose key (:func:`shard_key`: the first two
characters, one for CJK) is the n-th key, each with its entry numbers as deltas;
``data/posts/d<n>.js``: the rows shown for entries ``n * CHUNK`` to ``(n + 1) * CHUNK - 1``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from blogfeeds.site.data import plain_text, web_url

OPENING = 280
CHUNK = 64
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")


def tokens(text: str) -> set[str]:
    """The tokens of ``text`` (see the module docstring); ``assets/river.js`` cuts a query
    the same way."""
    out: set[str] = set()
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if _IS_CJK.match(word):
            out.update(word)
            out.update(word[i : i + 2] for i in range(len(word) - 1))
        else:
            out.add(word)
    return out


def shard_key(token: str) -> str:
    return token[:1] if _IS_CJK.match(token) else token[:2]


def post_index(
    entries: Sequence[Mapping[str, Any]], row: Callable[[Mapping[str, Any]], list[Any]]
) -> Iterator[tuple[str, str]]:
    """The files of the index (relative path, script) of ``entries`` (newest first), one at a
    time; ``row`` gives what a hit shows of an entry."""
    postings: dict[str, array[int]] = {}  # 4 bytes a posting: millions at 270,000 entries
    for n, entry in enumerate(entries):
        text = plain_text(entry.get("title"), 10_000) + " " + opening(entry)
        for token in tokens(text):
            got = postings.get(token)
            if got is None:
                got = postings[token] = array("i")
            got.append(n)
    shards: dict[str, dict[str, list[int]]] = {}
    for token in sorted(postings):
        shards.setdefault(shard_key(token), {})[token] = _deltas(postings[token])
    del postings
    keys = sorted(shards)
    index = {"keys": keys, "entries": len(entries), "chunk": CHUNK}
    yield "data/posts/index.js", _assign("index", index)
    for i, key in enumerate(keys):
        yield f"data/posts/s{i}.js", _assign(f"s{i}", shards[key])
    for start in range(0, len(entries), CHUNK):
        rows = [row(e) for e in entries[start : start + CHUNK]]
        yield f"data/posts/d{start // CHUNK}.js", _assign(f"d{start // CHUNK}", rows)


def opening(entry: Mapping[str, Any]) -> str:
    return plain_text(entry.get("summary"), OPENING)


def hit_row(entry: Mapping[str, Any], blog: Mapping[str, Any] | None, page: str | None,
            lang: str, face: Mapping[str, Any]) -> list[Any]:  # fmt: skip
    """``[guid, date, title, link, opening, page, blog title, lang, letter, hue]``: ``page`` is
    the blog page's slug (``""``: no blog known, ``blog title`` is then the feed's address)."""
    title = plain_text(entry.get("title"), 300)
    name = (blog or {}).get("title") or entry.get("blog_id") or entry.get("feed_url") or ""
    return [entry.get("guid") or "", entry.get("date") or "", title,
            web_url(entry.get("link")) or "", opening(entry), page or "", name, lang,
            face["letter"], face["hue"]]  # fmt: skip


def _deltas(numbers: Iterable[int]) -> list[int]:
    out, last = [], 0
    for n in numbers:
        out.append(n - last)
        last = n
    return out


def _assign(name: str, value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'(window.BLOGFEEDS_POSTS = window.BLOGFEEDS_POSTS || {{}})["{name}"] = {text};\n'
