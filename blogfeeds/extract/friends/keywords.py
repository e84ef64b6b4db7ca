"""The friend vocabulary: keywords that label a friend list, headings of lost friends, and
the XFN 1.1 relationship values that mark a friend."""

from __future__ import annotations

import functools
import re

KEYWORDS = re.compile(
    r"友情链接|友链|友人帐|友人|朋友|伙伴|左邻右舍|友邻|邻居|博客链接|"
    r"\b(?:links|friends?|blogroll|blogs|weblogs|neighbou?rs|webring)\b",
    re.IGNORECASE,
)
"""Friend keywords that label a list (headings, short labels, page titles)."""

DEAD_HEADING = re.compile(
    r"失联|失效|无法访问|挂了|消失|已故|\b(?:invalid|dead|lost|broken|defunct|inactive|"
    r"unreachable|offline)\b",
    re.IGNORECASE,
)
"""Group headings under which owners keep friends that no longer answer."""

SERVICE_HEADING = re.compile(
    r"工具|收藏|资源|导航|鸣谢|致谢|赞助|服务|ツール|リソース|謝辞|スポンサー|"
    r"(?:好用|实用|常用|推荐|有用|优质)的?(?:网站|站点|网址|软件|应用)|(?:网站|网址)(?:推荐|收藏)|"
    r"\b(?:tools?|resources?|services?|credits?|thanks|acknowledge?ments?|sponsors?|bookmarks?|"
    r"powered by|built with|werkzeuge|danksagung|herramientas|recursos|agradecimientos|"
    r"ferramentas|outils|ressources|podcasts?|"
    r"(?:useful|recommended|handy) (?:web)?sites|(?:rss|feed) readers?)\b",
    re.IGNORECASE,
)
"""Headings of sections that list tools, services, credits and shows rather than people
("在线工具", "鸣谢", "好用的网站", "Resources", "Podcasts", "Powered by"; newsletters and
software makers' blogs are blogs): a heading that
also holds a friend keyword is a friend list ("感谢这些朋友"), and so is one naming people or
their blogs (:data:`PEOPLE_HEADING`: "推荐博客", "Personal websites I like")."""

PEOPLE_HEADING = re.compile(
    r"博客|博主|大佬|朋友|个人(?:网站|站点|主页)|"
    r"\b(?:personal (?:web)?sites?|personal (?:blogs?|pages?|homepages?)|people|persons)\b",
    re.IGNORECASE,
)
"""Words of a heading that lists people: never a service section."""

XFN = frozenset(
    "friend acquaintance contact met co-worker colleague co-resident neighbor child parent "
    "sibling spouse kin muse crush date sweetheart".split()
)
"""XFN 1.1 relationship values that mark a friend."""

_KEYWORD_PARTS = (
    "友", "朋友", "伙伴", "左邻右舍", "邻居", "博客链接",
    "links", "friend", "blogroll", "blogs", "weblogs", "neighbo", "webring",
)  # fmt: skip
"""Substrings one of which every :data:`KEYWORDS` match holds (case-folded)."""


def mentions_keyword(text: str) -> bool:
    """:data:`KEYWORDS` in a long text (an inline script): substring tests first, since the
    regular expression scans a 100 KB script in about 0.3 ms."""
    folded = text.casefold()
    return any(part in folded for part in _KEYWORD_PARTS) and bool(KEYWORDS.search(text))


@functools.lru_cache(maxsize=65536)
def has_keyword(text: str) -> bool:
    """:data:`KEYWORDS` in a short text (labels and headings repeat across pages and sites:
    "Home", "Tags:", "友情链接", so each is searched once)."""
    return bool(KEYWORDS.search(text))


@functools.lru_cache(maxsize=65536)
def is_service_heading(text: str) -> bool:
    """:data:`SERVICE_HEADING` in a short heading that names no people (:data:`PEOPLE_HEADING`)."""
    return bool(SERVICE_HEADING.search(text)) and not PEOPLE_HEADING.search(text)


def is_label(text: str) -> bool:
    """Whether a text segment is a short friend label (at most 12 characters, a keyword)."""
    short = text.strip()
    return bool(short) and len(short) <= 12 and has_keyword(short)
