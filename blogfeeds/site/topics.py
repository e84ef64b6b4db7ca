"""The topics a blog's own words name, each with the words that named it.

A topic is a row of :data:`TOPICS`: its names in the interface languages and the words that name
it (English words match whole, any letter case, a plural ``s`` allowed; Chinese words match
anywhere). A blog has a topic when its description or its abstract names one of its words, or
when at least :data:`POST_TITLES` of its stored post titles do: one post about coffee does not
make a coffee blog. :func:`topics_of` returns, per topic, where its words were found, so the
site can say why (``description: “旅行”``; ``2 post titles: “Rust”``). Nothing is inferred
beyond these words: a blog that names none has no topic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

POST_TITLES = 2
"""Post titles that must name a topic's words for the topic to count from the posts alone."""


@dataclass(frozen=True)
class Topic:
    key: str
    en: str
    zh: str
    words: tuple[str, ...]


TOPICS = (
    Topic("code", "Programming", "编程",
          ("code", "coding", "programming", "programmer", "developer", "software", "python",
           "rust", "golang", "javascript", "typescript", "java", "kotlin", "linux", "compiler",
           "algorithm", "frontend", "backend", "devops", "docker", "kubernetes",
           "编程", "代码", "程序员", "开发", "算法", "前端", "后端")),
    Topic("ai", "AI", "人工智能",
          ("ai", "llm", "machine learning", "deep learning", "neural network",
           "人工智能", "机器学习", "深度学习", "大模型")),
    Topic("security", "Security", "安全",
          ("security", "infosec", "ctf", "vulnerability", "pentest", "网络安全", "漏洞", "渗透")),
    Topic("design", "Design", "设计", ("design", "typography", "设计", "排版")),
    Topic("photo", "Photography", "摄影",
          ("photo", "photography", "camera", "摄影", "相机", "照片")),
    Topic("travel", "Travel", "旅行", ("travel", "trip", "旅行", "旅游", "游记")),
    Topic("books", "Books", "读书",
          ("book", "reading", "novel", "literature", "读书", "阅读", "书评", "小说", "文学")),
    Topic("music", "Music", "音乐", ("music", "album", "guitar", "piano", "音乐", "吉他", "钢琴")),
    Topic("film", "Film and TV", "影视",
          ("film", "movie", "cinema", "anime", "电影", "影评", "动漫", "番剧")),
    Topic("games", "Games", "游戏", ("game", "gaming", "游戏")),
    Topic("food", "Food", "美食",
          ("food", "cooking", "recipe", "coffee", "美食", "做饭", "菜谱", "咖啡")),
    Topic("science", "Science", "科学",
          ("science", "math", "mathematics", "physics", "biology", "chemistry",
           "科学", "数学", "物理", "生物", "化学")),
    Topic("life", "Life", "生活",
          ("life", "diary", "journal", "生活", "日记", "随笔", "日常", "碎碎念")),
)  # fmt: skip

_OWNER = {w: t.key for t in TOPICS for w in t.words}
_LATIN = sorted((w for w in _OWNER if w.isascii()), key=len, reverse=True)
_CJK = sorted((w for w in _OWNER if not w.isascii()), key=len, reverse=True)
# Latin words whole (no letter or digit on either side, so "AI" in "said" is no topic, while
# "AI" beside Chinese text is), a plural "s" allowed; Chinese words anywhere.
_WORDS = re.compile(
    r"(?<![a-z0-9])(" + "|".join(re.escape(w) for w in _LATIN) + r")s?(?![a-z0-9])"
    + "|(" + "|".join(re.escape(w) for w in _CJK) + ")",
    re.IGNORECASE,
)  # fmt: skip


def named(text: str) -> dict[str, str]:
    """Topic key -> the first of its words ``text`` names (as the vocabulary writes it)."""
    out: dict[str, str] = {}
    for match in _WORDS.finditer(text or ""):
        word = (match.group(1) or match.group(2)).lower()
        out.setdefault(_OWNER[word], word)
    return out


def topics_of(
    description: str, abstract: str, post_titles: Iterable[str]
) -> dict[str, list[tuple[str, str, int]]]:
    """Topic key -> why: ``(source, word, count)`` per source that names it (``description``,
    ``abstract``, ``posts`` with the post titles counted), for the topics that count (see the
    module docstring), in the order of :data:`TOPICS`."""
    why: dict[str, list[tuple[str, str, int]]] = {}
    for source, text in (("description", description), ("abstract", abstract)):
        for key, word in named(text).items():
            why.setdefault(key, []).append((source, word, 1))
    posts: dict[str, tuple[str, int]] = {}
    for title in post_titles:
        for key, word in named(title).items():
            first, count = posts.get(key, (word, 0))
            posts[key] = (first, count + 1)
    for key, (word, count) in posts.items():
        if key in why or count >= POST_TITLES:
            why.setdefault(key, []).append(("posts", word, count))
    order = {t.key: i for i, t in enumerate(TOPICS)}
    return dict(sorted(why.items(), key=lambda kv: order[kv[0]]))
