"""Extraction rules configured by users: a TOML file of per-blog, per-host or per-theme rules.

The file (``BLOGFEEDS_RULES_FILE``, ``scrapy inspect --rules FILE``; a commented example is
``blogfeeds/data/rules.example.toml``) holds ``[[rule]]`` tables, whose conditions select pages
and whose keys set the encoding, the main feed, the abstract, extra blogroll pages or friend
cards, and, optionally, ``[[theme]]`` entries copied from the built-in theme table
``blogfeeds/data/friend_themes.toml``. Format: docs/user-rules.md.

It is validated when loaded: every problem raises :class:`RuleError` naming the file, the rule
(number and name) and the key. User rules run before the built-in theme rules and the
statistical detector.

This module is pure (no Scrapy); :func:`blogfeeds.extract.blog.analyze_page` applies a
:class:`RuleSet`.
"""

from __future__ import annotations

import codecs
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html
from lxml.cssselect import CSSSelector

from blogfeeds.extract.friends.themes import ThemeRule, rule_from_mapping
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.page import Page

CONDITION_KEYS = ("blog", "host", "generator", "fingerprint")
CARD_KEYS = ("cards", "link", "friend_name", "avatar", "group", "group_title", "blog_list")
RULE_KEYS = ("name", *CONDITION_KEYS, "encoding", "feed", "abstract", "friend_pages", *CARD_KEYS)
THEME_KEYS = ("name", "kind", "fingerprint", "require_fingerprint", *CARD_KEYS)
LOCATORS = ("xpath", "css", "id", "class", "snippet")
FIELD_KEYS = (*LOCATORS, "value", "take", "prefix", "suffix", "contains", "regex")
FIELDS = ("encoding", "feed", "abstract", "friend_pages", "friends")
"""What a rule can set; :attr:`blogfeeds.extract.blog.PageAnalysis.rules` maps each that fired
to the rule's name."""


class RuleError(ValueError):
    """A rules file that cannot be used; the message names the file, the rule and the key."""


def _where(source: str, kind: str, index: int, name: str = "") -> str:
    return f"{source}: {kind} {index}" + (f" ({name!r})" if name else "")


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        values = [value]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        values = value
    else:
        raise RuleError(f"{where}: {key!r} must be a string or a list of strings, not {value!r}")
    return tuple(v.strip() for v in values if v.strip())


def _text(node: Any) -> str:
    return " ".join(node.text_content().split()) if hasattr(node, "text_content") else str(node)


@dataclass(frozen=True)
class FieldRule:
    """Where a value is on a page and how to cut it out (see the module docstring)."""

    locator: str = ""
    """One of :data:`LOCATORS`, or ``""`` for the whole page source (or a fixed ``value``)."""
    target: str = ""
    """The locator's argument (an XPath, a CSS selector, an id, a class, a snippet)."""
    value: str | None = None
    take: str = "text"
    prefix: str = ""
    suffix: str = ""
    contains: str = ""
    regex: re.Pattern[str] | None = None
    _select: Any = field(default=None, repr=False, compare=False)

    def nodes(self, page: Page) -> list[Any]:
        """The located elements (or strings, for an XPath selecting text or attributes)."""
        if not self.locator:
            return [page.text]
        found = self._select(page.tree)
        return list(found) if isinstance(found, list) else [found]

    def _take(self, node: Any) -> str:
        if isinstance(node, str):  # the page source, or an XPath string result
            return str(node)
        if not isinstance(getattr(node, "tag", None), str):
            return ""
        if self.take == "html":
            return lxml.html.tostring(node, encoding="unicode")
        if self.take.startswith("@"):
            return str(node.get(self.take[1:]) or "")
        return _text(node)

    def _cut(self, text: str) -> str:
        if self.prefix:
            start = text.find(self.prefix)
            if start < 0:
                return ""
            text = text[start + len(self.prefix) :]
        if self.suffix:
            end = text.find(self.suffix)
            if end < 0:
                return ""
            text = text[:end]
        if self.contains and self.contains not in text:
            return ""
        if self.regex is not None:
            m = self.regex.search(text)
            if m is None:
                return ""
            text = m.group(1) if self.regex.groups else m.group(0)
        return text.strip()

    def extract(self, page: Page) -> str:
        """The first non-empty value on ``page``, or ``""``."""
        if self.value is not None:
            return self.value
        for node in self.nodes(page):
            value = self._cut(self._take(node))
            if value:
                return value
        return ""


def _snippet_selector(snippet: str, where: str) -> Any:
    """An XPath for a snippet: a start tag by tag and attributes, else an element's own text."""
    text = snippet.strip()
    if text.startswith("<"):
        try:
            fragment = lxml.html.fragment_fromstring(text, create_parent=False)
        except (lxml.etree.ParserError, ValueError) as exc:
            raise RuleError(f"{where}: cannot read {snippet!r} as a start tag: {exc}") from exc
        if not isinstance(fragment.tag, str):
            raise RuleError(f"{where}: snippet {snippet!r} is not a start tag")
        tests, variables = [], {}
        for n, (attr, val) in enumerate(fragment.attrib.items()):
            if attr == "class":  # every listed class, in any order, among others
                for m, token in enumerate(val.split()):
                    variables[f"c{n}_{m}"] = f" {token} "
                    tests.append(f"contains(concat(' ', normalize-space(@class), ' '), $c{n}_{m})")
            else:
                variables[f"a{n}"] = val
                tests.append(f"@{attr} = $a{n}")
        path = f"//{fragment.tag}" + "".join(f"[{t}]" for t in tests)
        xpath = lxml.etree.XPath(path)
        return lambda tree: xpath(tree, **variables)
    xpath = lxml.etree.XPath("//*[text()[contains(., $s)]]")
    return lambda tree: xpath(tree, s=text)


def field_rule(value: Any, where: str, default_take: str) -> FieldRule:
    """A :class:`FieldRule` from a rule's ``feed``/``abstract`` value; :class:`RuleError`."""
    if isinstance(value, str):
        return FieldRule(value=value.strip())
    if not isinstance(value, Mapping):
        raise RuleError(f"{where}: must be a string (a fixed value) or a table, not {value!r}")
    unknown = sorted(set(value) - set(FIELD_KEYS))
    if unknown:
        raise RuleError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(FIELD_KEYS)})")
    for key, val in value.items():
        if not isinstance(val, str):
            raise RuleError(f"{where}.{key}: must be a string, not {val!r}")
    locators = [k for k in LOCATORS if value.get(k)]
    if len(locators) > 1:
        raise RuleError(f"{where}: give one of {', '.join(LOCATORS)}, not {' and '.join(locators)}")
    if "value" in value:
        if locators or any(value.get(k) for k in FIELD_KEYS if k not in (*LOCATORS, "value")):
            raise RuleError(f"{where}: 'value' is a fixed value: it takes no locator or cut")
        return FieldRule(value=value["value"].strip())
    take = value.get("take", default_take)
    if take not in ("text", "html") and not re.fullmatch(r"@[\w:.-]+", take):
        raise RuleError(f"{where}.take: {take!r} is not 'text', 'html' or '@attribute'")
    regex = None
    if value.get("regex"):
        try:
            regex = re.compile(value["regex"])
        except re.error as exc:
            raise RuleError(f"{where}.regex: bad regular expression: {exc}") from exc
    locator = locators[0] if locators else ""
    target = value.get(locator, "") if locator else ""
    select: Any = None
    try:
        if locator == "xpath":
            select = lxml.etree.XPath(target)
        elif locator == "css":
            select = CSSSelector(target, translator="html")
        elif locator == "id":
            by_id = lxml.etree.XPath("//*[@id = $v]")
            select = lambda tree: by_id(tree, v=target)  # noqa: E731
        elif locator == "class":
            by_class = lxml.etree.XPath(
                "//*[contains(concat(' ', normalize-space(@class), ' '), $v)]"
            )
            select = lambda tree: by_class(tree, v=f" {target.strip()} ")  # noqa: E731
        elif locator == "snippet":
            select = _snippet_selector(target, f"{where}.snippet")
    except RuleError:
        raise
    except Exception as exc:  # lxml XPathSyntaxError, cssselect SelectorSyntaxError
        raise RuleError(f"{where}.{locator}: bad {locator} {target!r}: {exc}") from exc
    if not locator and not (value.get("prefix") or value.get("suffix") or regex):
        raise RuleError(
            f"{where}: locate it ({', '.join(LOCATORS)}), cut it from the page source "
            "(prefix/suffix, regex) or give a fixed 'value'"
        )
    return FieldRule(
        locator=locator,
        target=target,
        take=take if locator else "html",
        prefix=value.get("prefix", ""),
        suffix=value.get("suffix", ""),
        contains=value.get("contains", ""),
        regex=regex,
        _select=select,
    )


@dataclass(frozen=True)
class UserRule:
    """One ``[[rule]]`` of a rules file (see the module docstring for each key)."""

    name: str
    index: int
    """Position in the file, from 1."""
    blogs: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    generators: tuple[str, ...] = ()
    fingerprints: tuple[str, ...] = ()
    encoding: str = ""
    feed: FieldRule | None = None
    abstract: FieldRule | None = None
    friend_pages: tuple[str, ...] = ()
    friends: ThemeRule | None = None

    @property
    def needs_page(self) -> bool:
        """Whether a condition reads the page (generator, fingerprint), not only its URL."""
        return bool(self.generators or self.fingerprints)

    def matches_url(self, url: str) -> bool:
        """Whether the ``blog`` and ``host`` conditions hold for ``url``."""
        if self.blogs:
            try:
                if blog_id(url) not in self.blogs:
                    return False
            except ValueError:
                return False
        if self.hosts:
            host = (urlsplit(url).hostname or "").lower().rstrip(".")
            names = {host, host.removeprefix("www.")}
            if not any(fnmatchcase(n, p) for p in self.hosts for n in names):
                return False
        return True

    def matches(self, page: Page, generator: str) -> bool:
        """Whether every condition holds for ``page`` (``generator``: its generator meta)."""
        if not self.matches_url(page.url):
            return False
        if self.generators and not any(g in generator.lower() for g in self.generators):
            return False
        if self.fingerprints:
            source = page.text.lower()
            if not any(f in source for f in self.fingerprints):
                return False
        return True


def _rule(entry: Any, source: str, index: int, names: set[str]) -> UserRule:
    if not isinstance(entry, Mapping):
        raise RuleError(f"{_where(source, 'rule', index)}: must be a table, not {entry!r}")
    name = entry.get("name")
    where = _where(source, "rule", index, name if isinstance(name, str) else "")
    if not isinstance(name, str) or not name.strip():
        raise RuleError(f"{where}: needs a 'name' (it is reported when the rule fires)")
    name = name.strip()
    if name in names:
        raise RuleError(f"{where}: the name {name!r} is used by an earlier rule")
    names.add(name)
    unknown = sorted(set(entry) - set(RULE_KEYS))
    if unknown:
        raise RuleError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(RULE_KEYS)})")
    conditions = {k: _strings(entry[k], where, k) for k in CONDITION_KEYS if k in entry}
    if not any(conditions.values()):
        raise RuleError(
            f"{where}: applies nowhere: give at least one of {', '.join(CONDITION_KEYS)}"
        )
    blogs = []
    for value in conditions.get("blog", ()):
        try:
            blogs.append(blog_id(value if "://" in value else f"http://{value}"))
        except ValueError as exc:
            raise RuleError(f"{where}: blog {value!r} is not a blog identity or URL") from exc
    encoding = ""
    if "encoding" in entry:
        if not isinstance(entry["encoding"], str):
            raise RuleError(f"{where}: 'encoding' must be a string")
        try:
            encoding = codecs.lookup(entry["encoding"].strip()).name
        except LookupError as exc:
            raise RuleError(f"{where}: encoding {entry['encoding']!r} is unknown") from exc
    friends = None
    if any(k in entry for k in CARD_KEYS):
        if "cards" not in entry:
            raise RuleError(f"{where}: friend-card keys need 'cards' (a CSS selector)")
        theme = {k: entry[k] for k in CARD_KEYS if k in entry}
        try:
            friends = rule_from_mapping({**theme, "name": name, "kind": "user"})
        except ValueError as exc:
            raise RuleError(f"{where}: {exc}") from exc
    rule = UserRule(
        name=name,
        index=index,
        blogs=tuple(blogs),
        hosts=tuple(h.lower() for h in conditions.get("host", ())),
        generators=tuple(g.lower() for g in conditions.get("generator", ())),
        fingerprints=tuple(f.lower() for f in conditions.get("fingerprint", ())),
        encoding=encoding,
        feed=field_rule(entry["feed"], f"{where}: feed", "@href") if "feed" in entry else None,
        abstract=(
            field_rule(entry["abstract"], f"{where}: abstract", "text")
            if "abstract" in entry
            else None
        ),
        friend_pages=(
            _strings(entry["friend_pages"], where, "friend_pages")
            if "friend_pages" in entry
            else ()
        ),
        friends=friends,
    )
    if not (rule.encoding or rule.feed or rule.abstract or rule.friend_pages or rule.friends):
        raise RuleError(
            f"{where}: sets nothing: give encoding, feed, abstract, friend_pages or cards"
        )
    return rule


@dataclass(frozen=True)
class RuleSet:
    """The rules of one file, in file order."""

    rules: tuple[UserRule, ...] = ()
    themes: tuple[ThemeRule, ...] = ()
    """``[[theme]]`` entries (theme-table format), run on every page before the built-in ones."""
    source: str = "<rules>"

    def __bool__(self) -> bool:
        return bool(self.rules or self.themes)

    def for_url(self, url: str) -> list[UserRule]:
        """Rules that apply to ``url`` from its URL alone (no generator/fingerprint condition)."""
        return [r for r in self.rules if not r.needs_page and r.matches_url(url)]

    def for_page(self, page: Page, generator: str = "") -> list[UserRule]:
        """Rules that apply to ``page`` (``generator``: its ``<meta name=generator>``)."""
        return [r for r in self.rules if r.matches(page, generator)]

    def friend_rules(self, matched: Sequence[UserRule]) -> list[ThemeRule]:
        """Theme rules for :func:`~blogfeeds.extract.friends.extract_friends` ``user_rules``:
        the matched rules' cards, then the file's ``[[theme]]`` entries."""
        return [*(r.friends for r in matched if r.friends is not None), *self.themes]


def parse_rules(text: str, source: str = "<rules>") -> RuleSet:
    """Parse and validate rules (TOML text); raises :class:`RuleError`."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{source}: not valid TOML: {exc}") from exc
    unknown = sorted(set(raw) - {"rule", "theme"})
    if unknown:
        raise RuleError(
            f"{source}: unknown top-level key {unknown[0]!r}: "
            "write rules as [[rule]] tables and theme entries as [[theme]] tables"
        )
    for key in ("rule", "theme"):
        if key in raw and not isinstance(raw[key], list):
            raise RuleError(f"{source}: {key!r} must be an array of tables: write [[{key}]]")
    names: set[str] = set()
    rules = tuple(_rule(e, source, i, names) for i, e in enumerate(raw.get("rule", []), 1))
    themes = []
    for i, entry in enumerate(raw.get("theme", []), 1):
        name = entry.get("name", "") if isinstance(entry, Mapping) else ""
        where = _where(source, "theme", i, name if isinstance(name, str) else "")
        if not isinstance(entry, Mapping):
            raise RuleError(f"{where}: must be a table")
        unknown = sorted(set(entry) - set(THEME_KEYS))
        if unknown:
            raise RuleError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(THEME_KEYS)})")
        try:
            themes.append(rule_from_mapping({**entry, "kind": "user"}))
        except (ValueError, TypeError) as exc:
            raise RuleError(f"{where}: {exc}") from exc
    return RuleSet(rules, tuple(themes), source)


def load_rules(path: str | Path) -> RuleSet:
    """Read and validate a rules file; raises :class:`RuleError` (also for an unreadable file)."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(f"{path}: cannot read the rules file: {exc}") from exc
    return parse_rules(text, str(path))


def resolve_pages(page_url: str, paths: Sequence[str]) -> list[str]:
    """``paths`` resolved against ``page_url``; only http(s) URLs are kept."""
    out = []
    for path in paths:
        url = urljoin(page_url, path)
        if urlsplit(url).scheme in ("http", "https") and url not in out:
            out.append(url)
    return out
