"""The site's interface in the reader's language: one catalog of messages per language.

The pages are written in English (they read the same without JavaScript); every interface
string is a ``<span data-t="key">`` (:func:`tag`), and ``assets/site.js`` rewrites them in the
language the reader chose, else the first of the browser's languages the catalog has, else
English. A message is a string with ``{name}`` parameters, or, when it counts something, a
dict of plural forms (``one``, ``other``: the categories of ``Intl.PluralRules``; Chinese has
only ``other``). ``assets/messages.js`` is this catalog as a script (:func:`catalog_script`).

What the web wrote (titles, descriptions, posts) is never translated: each carries its own
``lang`` instead, so that a Chinese title gets a Chinese font on an English page.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from markupsafe import Markup, escape

from blogfeeds.site.topics import TOPICS

Message = str | dict[str, str]

LANGUAGE_NAMES = {"en": "English", "zh": "中文"}
"""The interface languages, each named in itself (the switcher's options)."""

MESSAGES: dict[str, dict[str, Message]] = {
    "en": {
        "nav_overview": "Overview",
        "nav_directory": "Directory",
        "nav_river": "River",
        "nav_graph": "Graph",
        "ui_language": "Language",
        "built": "Built by blogfeeds",
        "directory": "Directory",
        "search": "Search title, address, description…",
        "language": "Language",
        "platform": "Platform",
        "status": "Status",
        "activity": "Activity",
        "topic": "Topic",
        "any": "any",
        "unknown": "(unknown)",
        "has_feed": "has a feed",
        "min_in": "In-degree ≥",
        "sort": "Sort",
        "sort_in": "most linked",
        "sort_last": "latest post",
        "sort_title": "title",
        "th_blog": "Blog",
        "th_latest": "Latest post",
        "th_in": "Listed by",
        "browse_topics": "Topics",
        "browse_activity": "Activity",
        "all": "all",
        "n_blogs": {"one": "{n} blog", "other": "{n} blogs"},
        "k_of_n_blogs": "{k} of {n} blogs",
        "page_of": "Page {p} of {n}",
        "river_page": "page {p} of {n}",
        "previous": "← Previous",
        "next": "Next →",
        "newer": "← Newer",
        "older": "Older →",
        "feed": "Feed",
        "copy": "Copy",
        "copied": "Copied",
        "copy_feed": "Copy the feed's address",
        "no_feed": "no feed",
        "no_post": "no post known",
        "act_active": "active",
        "act_slowing": "slowing",
        "act_dormant": "dormant",
        "act_dead": "dead",
        "act_": "unknown",
        "blog_id": "Blog id",
        "also_at": "Also at",
        "known": "known",
        "listed_by": "Listed by",
        "lists": "Lists",
        "depth": "Depth",
        "hops_from_seed": {"one": "{n} hop from a seed", "other": "{n} hops from a seed"},
        "first_seen": "First seen",
        "last_fetched": "Last fetched",
        "last_post": "Last post",
        "description": "Description",
        "author": "Author",
        "topics": "Topics",
        "topics_why": "Named by",
        "why_description": "description",
        "why_abstract": "abstract",
        "why_posts": {"one": "{n} post title", "other": "{n} post titles"},
        "feeds": "Feeds",
        "main": "main",
        "alternate": "alternate",
        "no_feed_found": "No feed found.",
        "revisits": "Revisits",
        "level": "Level",
        "interval": "Interval",
        "last_change": "Last change",
        "next_visit": "Next visit",
        "last_answer": "Last answer",
        "share_304": "Share of 304s",
        "failures": "Failures",
        "not_recorded": "not recorded",
        "none": "none",
        "newest_entry": "newest entry",
        "in_a_row": "{n} in a row",
        "friends_it_lists": "Friends it lists",
        "blogs_that_list_it": "Blogs that list it",
        "none_found": "none found",
        "not_crawled": "not crawled",
        "latest_entries": "Latest entries",
        "untitled": "(untitled)",
        "no_feed_no_posts": "This blog has no feed: blogfeeds cannot follow its posts.",
        "no_entries_yet": "No entries stored yet.",
        "not_reached": "Its home page could not be fetched: no feed of it is known.",
        "connect": "How am I connected to…",
        "connect_hint": "another blog of this site: its title or address",
        "connect_go": "Find the path",
        "path_loading": "Loading the friend graph…",
        "path_unknown": "No blog of this site matches “{q}”.",
        "path_self": "That is this blog.",
        "path_found": {
            "one": "{n} hop, following the friends each blog lists:",
            "other": "{n} hops, following the friends each blog lists:",
        },
        "path_back": {
            "one": "No path from here; {n} hop the other way, from the other blog:",
            "other": "No path from here; {n} hops the other way, from the other blog:",
        },
        "path_none": "No chain of friend links joins these two blogs, in either direction.",
        "river": "River",
        "circle_of": "Friend circle of",
        "river_count": {"one": "{n} entry", "other": "{n} entries"},
        "river_newest": "the newest {k} shown",
        "river_also": "Also as",
        "random_blog": "Random blog",
        "random_post": "Random post",
        "random_title": "A blog or post drawn at random, active blogs more often",
        "post_search": "Search post titles and openings…",
        "post_hits": {"one": "{n} post matches", "other": "{n} posts match"},
        "post_more": "More",
        "by": "by",
        "friend_graph": "Friend graph",
        "find_blog": "Find a blog…",
        "run_layout": "Run layout",
        "stop_layout": "Stop layout",
        "graph_help": "Scroll to zoom, drag to move, click a blog to open its page. "
        "Node size: how many blogs list it; colour: platform. "
        "Blogs without a friend link among those drawn stand in a row below the others.",
        "graph_count": "{n} blogs, {m} links",
        "graph_most_linked": "(the {n} most linked of {m})",
        "layout_fa2": "layout: ForceAtlas2",
        "layout_built": "layout: as built",
        "home_page_fetched": "Home page, fetched",
        "failed_in_a_row": {
            "one": "{n} failed fetch in a row",
            "other": "{n} failed fetches in a row",
        },
        "the_last_at": "the last at",
        "given_up": "given up as dead, checked weekly",
        "failures_none": "None: the home page answered the last fetch.",
        "failures_none_feeds": "None: the home page and every scheduled feed answered the last "
        "fetch.",
        "comma": ", ",
        "semicolon": "; ",
        "stop": ". ",
        "overview": "Overview",
        "ov_blogs": "blogs",
        "ov_with_feed": "with a feed",
        "ov_feeds": "feeds found",
        "ov_entries": "entries",
        "ov_links": "friend links",
        "by_status": "By status",
        "by_language": "By language",
        "by_platform": "By platform",
        "most_linked": "Most linked",
        "last_runs": "Last runs",
        "health": "Health",
        "health_history": "Health history",
        "n_checks": {"one": "{n} check", "other": "{n} checks"},
        "th_health": "Health",
        "th_from": "From",
        "th_to": "To",
        "th_checks": "Checks",
        "th_http": "HTTP",
        "th_reason": "Why",
        "n_earlier_spans": {
            "one": "and {n} earlier period, not shown",
            "other": "and {n} earlier periods, not shown",
        },
        "since": "since",
        "removed": "no longer listed; last seen",
        "by_health": "By health",
        "health_changes": "Health changed at the last check",
        "and_n_more": "and {n} more",
        "no_health_changes": "No blog changed its health at its last check.",
        "hk_ok": "ok",
        "hk_dead": "dead",
        "hk_failing": "failing",
        "hk_blocked": "blocked",
        "hk_parked": "parked",
        "hk_moved": "moved",
        "hk_empty": "empty",
        "hk_unchecked": "not checked",
    },
    "zh": {
        "nav_overview": "概览",
        "nav_directory": "博客目录",
        "nav_river": "最新文章",
        "nav_graph": "关系图",
        "ui_language": "语言",
        "built": "由 blogfeeds 生成",
        "directory": "博客目录",
        "search": "搜索标题、网址、简介…",
        "language": "语言",
        "platform": "平台",
        "status": "状态",
        "activity": "活跃度",
        "topic": "主题",
        "any": "全部",
        "unknown": "（未知）",
        "has_feed": "有订阅源",
        "min_in": "被链接数 ≥",
        "sort": "排序",
        "sort_in": "被链接最多",
        "sort_last": "最近更新",
        "sort_title": "标题",
        "th_blog": "博客",
        "th_latest": "最新文章",
        "th_in": "被链接",
        "browse_topics": "主题",
        "browse_activity": "活跃度",
        "all": "全部",
        "n_blogs": "{n} 个博客",
        "k_of_n_blogs": "{n} 个博客中的 {k} 个",
        "page_of": "第 {p} 页，共 {n} 页",
        "river_page": "第 {p} 页，共 {n} 页",
        "previous": "← 上一页",
        "next": "下一页 →",
        "newer": "← 更新的",
        "older": "更早的 →",
        "feed": "订阅源",
        "copy": "复制",
        "copied": "已复制",
        "copy_feed": "复制订阅源地址",
        "no_feed": "无订阅源",
        "no_post": "未知",
        "act_active": "活跃",
        "act_slowing": "放缓",
        "act_dormant": "休眠",
        "act_dead": "停更",
        "act_": "未知",
        "blog_id": "博客 ID",
        "also_at": "其他地址",
        "known": "已知",
        "listed_by": "被链接",
        "lists": "链接了",
        "depth": "深度",
        "hops_from_seed": "距种子 {n} 跳",
        "first_seen": "首次发现",
        "last_fetched": "最近抓取",
        "last_post": "最新文章",
        "description": "简介",
        "author": "作者",
        "topics": "主题",
        "topics_why": "依据",
        "why_description": "简介",
        "why_abstract": "摘要",
        "why_posts": "{n} 篇文章标题",
        "feeds": "订阅源",
        "main": "主",
        "alternate": "备选",
        "no_feed_found": "未找到订阅源。",
        "revisits": "回访",
        "level": "级别",
        "interval": "间隔",
        "last_change": "最近变化",
        "next_visit": "下次访问",
        "last_answer": "最近应答",
        "share_304": "304 占比",
        "failures": "失败",
        "not_recorded": "未记录",
        "none": "无",
        "newest_entry": "最新一篇",
        "in_a_row": "连续 {n} 次",
        "friends_it_lists": "它的友链",
        "blogs_that_list_it": "链接它的博客",
        "none_found": "没有",
        "not_crawled": "未抓取",
        "latest_entries": "最新文章",
        "untitled": "（无标题）",
        "no_feed_no_posts": "这个博客没有订阅源：blogfeeds 无法跟踪它的文章。",
        "no_entries_yet": "还没有存储文章。",
        "not_reached": "无法抓取它的主页：不知道它的订阅源。",
        "connect": "我和……有什么联系",
        "connect_hint": "本站的另一个博客：标题或网址",
        "connect_go": "查找路径",
        "path_loading": "正在加载友链关系…",
        "path_unknown": "本站没有与“{q}”相符的博客。",
        "path_self": "就是这个博客。",
        "path_found": "{n} 跳，沿着每个博客列出的友链：",
        "path_back": "从这里出发没有路径；反方向 {n} 跳，从另一个博客出发：",
        "path_none": "这两个博客之间没有友链相连，两个方向都没有。",
        "river": "最新文章",
        "circle_of": "朋友圈：",
        "river_count": "{n} 篇文章",
        "river_newest": "显示最新的 {k} 篇",
        "river_also": "另有",
        "random_blog": "随机博客",
        "random_post": "随机文章",
        "random_title": "随机抽取一个博客或一篇文章，活跃的博客更常被抽到",
        "post_search": "搜索文章标题和开头…",
        "post_hits": "{n} 篇文章匹配",
        "post_more": "更多",
        "by": "作者",
        "friend_graph": "友链关系图",
        "find_blog": "查找博客…",
        "run_layout": "运行布局",
        "stop_layout": "停止布局",
        "graph_help": "滚轮缩放，拖动移动，点击博客打开它的页面。"
        "圆点大小：链接它的博客数；颜色：平台。"
        "在所画博客中没有友链的博客排在下方一行。",
        "graph_count": "{n} 个博客，{m} 条友链",
        "graph_most_linked": "（{m} 个中被链接最多的 {n} 个）",
        "layout_fa2": "布局：ForceAtlas2",
        "layout_built": "布局：构建时计算",
        "home_page_fetched": "主页，抓取于",
        "failed_in_a_row": "连续 {n} 次抓取失败",
        "the_last_at": "最近一次在",
        "given_up": "已判定停更，每周检查一次",
        "failures_none": "无：主页最近一次抓取正常。",
        "failures_none_feeds": "无：主页和每个回访的订阅源最近一次抓取都正常。",
        "comma": "，",
        "semicolon": "；",
        "stop": "。",
        "overview": "概览",
        "ov_blogs": "个博客",
        "ov_with_feed": "有订阅源",
        "ov_feeds": "个订阅源",
        "ov_entries": "篇文章",
        "ov_links": "条友链",
        "by_status": "按状态",
        "by_language": "按语言",
        "by_platform": "按平台",
        "most_linked": "被链接最多",
        "last_runs": "最近运行",
        "health": "健康",
        "health_history": "健康记录",
        "n_checks": {"other": "{n} 次检查"},
        "th_health": "健康",
        "th_from": "从",
        "th_to": "到",
        "th_checks": "次数",
        "th_http": "HTTP",
        "th_reason": "原因",
        "n_earlier_spans": {"other": "另有 {n} 段更早的记录未显示"},
        "since": "始于",
        "removed": "已不再列出；最后见于",
        "by_health": "按健康",
        "health_changes": "最近一次检查时健康变化",
        "and_n_more": "另有 {n} 个",
        "no_health_changes": "最近一次检查时没有博客的健康发生变化。",
        "hk_ok": "正常",
        "hk_dead": "已失效",
        "hk_failing": "故障",
        "hk_blocked": "被拦截",
        "hk_parked": "域名停放",
        "hk_moved": "已迁移",
        "hk_empty": "空页面",
        "hk_unchecked": "未检查",
    },
}

for _topic in TOPICS:  # the topics' names live beside their words
    MESSAGES["en"][f"topic_{_topic.key}"] = _topic.en
    MESSAGES["zh"][f"topic_{_topic.key}"] = _topic.zh


def say(key: str, lang: str = "en", **params: Any) -> str:
    """The message ``key`` in ``lang`` (English when that language lacks it), its ``{name}``
    parameters filled; a plural message chooses its form by ``n`` (English rules)."""
    message = MESSAGES.get(lang, {}).get(key) or MESSAGES["en"][key]
    if isinstance(message, dict):
        n = params.get("n")
        message = message["one"] if n == 1 and "one" in message else message["other"]
    return message.format(**params) if params else message


def tag(key: str, **params: Any) -> Markup:
    """``<span data-t="key">`` holding the English message; ``site.js`` rewrites it in the
    reader's language (its parameters in ``data-p``)."""
    if not params:
        return _plain_tag(key)
    attrs = f' data-p="{escape(json.dumps(params, ensure_ascii=False))}"'
    return Markup(f'<span data-t="{escape(key)}"{attrs}>{escape(say(key, **params))}</span>')


@cache
def _plain_tag(key: str) -> Markup:  # 100,000 blog pages say the same words
    return Markup(f'<span data-t="{escape(key)}">{escape(say(key))}</span>')


def time_tag(iso: str | None, rel: bool = False) -> Markup:
    """``<time>`` of an ISO 8601 UTC time (nothing when None), written in UTC; ``site.js``
    shows it in the reader's zone, ``rel``: as "3 days ago" with the time on hover."""
    if not iso:
        return Markup("")
    cls = ' class="rel"' if rel else ""
    return Markup(f'<time datetime="{escape(iso)}"{cls}>{escape(utc_text(iso))}</time>')


def utc_text(iso: str | None) -> str:
    """``2026-11-29 20:36:29 UTC`` of ``2026-11-29T20:36:29Z`` (what a page says without
    JavaScript)."""
    return (iso or "").replace("T", " ").replace("Z", " UTC")


def catalog_script() -> str:
    """``assets/messages.js``: the catalog and the languages' names, as globals."""
    value = {"names": LANGUAGE_NAMES, "messages": MESSAGES}
    return f"window.BLOGFEEDS_MESSAGES = {json.dumps(value, ensure_ascii=False)};\n"
