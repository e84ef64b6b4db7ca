"""The one extraction entry point: :func:`extract_blog` reads a blog from its home page.

The ``blogs`` spider, ``scrapy inspect`` and the tests call it with the home page and a fetch
function; it returns a :class:`~blogfeeds.extract.report.BlogReport`. A feed URL stands for the
blog of its site link, read as below with that feed as its main feed. In order:

1. :func:`analyze_page` reads the home page in one parse (identity, metadata, friend-link
   pages, user rules);
2. its robots directives: noindex keeps the identity only, nofollow records no friends;
3. feeds: the one a user rule names, else :func:`~blogfeeds.extract.discovery.find_feeds`
   (candidates validated by fetching them); then the abstract, the opening of the newest post
   (:mod:`~blogfeeds.extract.abstract`: the main feed's newest entry, else the home page), and
   the profile;
4. friends: from the first friend-link page that lists any, else from the home page; then,
   merged, the OPML and JSON lists that page points to; capped at ``max_friends``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import urljoin

from blogfeeds.extract.abstract import PAGE, PostCards, lead_abstract, post_link
from blogfeeds.extract.aliases import Observation, local_posts
from blogfeeds.extract.config import ExtractConfig
from blogfeeds.extract.directives import robots_directives
from blogfeeds.extract.discovery import (
    DiscoveredFeed,
    FeedCandidate,
    Fetch,
    Fetched,
    FetchRequest,
    find_feeds,
)
from blogfeeds.extract.discovery.candidates import http_url
from blogfeeds.extract.discovery.fetching import HTML_ACCEPT
from blogfeeds.extract.discovery.vocabulary import url_key
from blogfeeds.extract.feedreader import FeedDocument, read_feed
from blogfeeds.extract.friends import (
    FriendConfig,
    FriendExtraction,
    extract_friends,
    find_friend_pages,
    friends_from_data_source,
)
from blogfeeds.extract.friends.filters import friend_key
from blogfeeds.extract.friends.pages import may_list_friends
from blogfeeds.extract.friends.themes import ThemeRule
from blogfeeds.extract.health import NOT_THE_BLOG, Health, page_text_of, read_health
from blogfeeds.extract.icon import favicon_is_image
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.metadata import TEXT, PageMetadata, cut, extract_metadata, page_abstract
from blogfeeds.extract.page import DecodeError, Page, PageLimits, header_value, parse_page
from blogfeeds.extract.pagesignals import page_signals
from blogfeeds.extract.pathblog import path_blog
from blogfeeds.extract.profile import read_profile
from blogfeeds.extract.report import DATA_SOURCE, FRIEND_PAGE, BlogReport, Followed
from blogfeeds.extract.runner import Run, inline
from blogfeeds.extract.settings import (
    ABSTRACT_CHARS,
    ABSTRACT_TEXT,
)
from blogfeeds.extract.text import collapse
from blogfeeds.extract.userrules import RuleSet, UserRule, resolve_pages


@dataclass(frozen=True)
class FetchedPage(Fetched):
    """A :class:`~blogfeeds.extract.discovery.Fetched` that says whether the fetcher took the body
    for text: a friend-link page that is not (an image, a PDF) is skipped unread."""

    is_text: bool = True


async def extract_blog(
    url: str,
    body: bytes | str,
    headers: Mapping[str, str] | None,
    fetch: Fetch,
    config: ExtractConfig,
    *,
    run: Run = inline,
) -> BlogReport:
    """Read the blog whose home page ``body`` was fetched from ``url`` (the final URL).

    ``fetch`` performs every further GET (feed candidates, friend-link pages, data sources);
    it returns ``None`` for a network failure. A ``body`` that is a feed (a seed or friend URL
    that names the feed) stands for its blog: the feed's site link is fetched and read, with
    that feed as the main feed (counter ``feed_as_seed``, the feed's reasons say so). Raises
    :class:`~blogfeeds.extract.page.DecodeError` when the home page is not usable HTML and
    ``ValueError`` when ``url`` is not http(s); never for a bad further page.

    ``run`` runs every CPU-bound step (parsing and reading a page, a feed, a friend list;
    :mod:`~blogfeeds.extract.runner`): the crawl passes a thread pool's, so that the reactor
    is not held while a page is read. Each page is read up to ``config.limits``;
    :attr:`BlogReport.truncated` says which bounds the home page reached.
    """
    if not isinstance(body, str):
        doc = await run(read_feed, body, header_value(headers, "content-type"), url)
        site = doc.site_url if doc is not None else ""
        if doc is not None and http_url(site) and url_key(site) != url_key(url):
            resp = await fetch(FetchRequest(site, {"Accept": HTML_ACCEPT}))
            if (
                resp is not None
                and 200 <= resp.status < 300
                and await run(read_feed, resp.body) is None
            ):
                seed = (url, doc, site)
                return await _extract_home(
                    resp.url, resp.body, resp.headers, fetch, config, run=run, seed=seed
                )
    return await _extract_home(url, body, headers, fetch, config, run=run)


def _seed_feed(report: BlogReport, url: str, doc: FeedDocument, site: str) -> None:
    """Make the feed the crawl reached the blog through its main feed."""
    _count(report.counters, "feed_as_seed")
    feed = DiscoveredFeed(
        url=url,
        type=doc.sniff.format,
        title=doc.title,
        reasons=[f"the crawled URL is this feed; the blog is its site link {site}"],
        source="seed",
        item_count=doc.item_count,
        newest=doc.newest,
        self_url=doc.self_url,
        site_url=doc.site_url,
        document=doc,
    )
    if report.robots.noindex:
        return
    rest = [f for f in report.feeds if url_key(f.url) != url_key(url)]
    report.feeds = [feed, *rest]


async def _extract_home(
    url: str,
    body: bytes | str,
    headers: Mapping[str, str] | None,
    fetch: Fetch,
    config: ExtractConfig,
    *,
    run: Run = inline,
    seed: tuple[str, FeedDocument, str] | None = None,
) -> BlogReport:
    """:func:`extract_blog` for an HTML home page (``seed``: the feed URL the crawl reached it
    through, that feed read, and its site link)."""
    analysis, health = await run(_read_home, url, body, headers, config)
    counters: dict[str, int] = {}
    for what in analysis.truncated:
        _count(counters, f"truncated/{what}")
    for what, rule in analysis.rules.items():
        _count(counters, f"rule_fired/{rule}/{what}")
    robots = robots_directives(analysis.page)
    for name in ("noindex", "nofollow"):
        if getattr(robots, name):
            _count(counters, f"robots/{name}")
    report = BlogReport(
        url=url,
        blog_id=analysis.blog_id,
        encoding=analysis.page.encoding,
        metadata=PageMetadata("", "", "", "") if robots.noindex else analysis.metadata,
        robots=robots,
        feeds=[],
        rejected=[],
        discovery=None,
        friends=[],
        friend_extraction=analysis.friends or FriendExtraction([], []),  # set by _friends
        friend_source=url,
        container_score=0.0,
        friend_pages=analysis.friend_pages,
        rules_fired=analysis.rules,
        counters=counters,
        truncated=list(analysis.truncated),
        health=health,
    )
    if health.kind in NOT_THE_BLOG:  # nothing more is read or fetched of a page not the blog's
        _count(counters, f"health/{health.kind}_page")
        return report
    if robots.nofollow:  # no friends are recorded; the report still shows the page's reading
        await _home_friends(analysis, config, run, counters)
    if not robots.noindex and analysis.rule_feed is not None:
        report.feeds = [analysis.rule_feed]
    elif not robots.noindex:  # noindex: keep the blog's identity, not its content
        found = await find_feeds(analysis.page, fetch, config=config.discovery, run=run)
        _count(counters, "feed_discovery/requests", found.requests)
        if found.budget_exhausted:
            _count(counters, "feed_discovery/budget_exhausted")
        report.discovery, report.feeds, report.rejected = found, [*found.feeds], found.rejected
    if seed is not None:
        _seed_feed(report, *seed)
    report.observation = await run(_observation, report, analysis.page)
    # a blog under a path of a host the platform table does not know is a blog of its own
    report.blog_id = path_blog(report.observation) or report.blog_id
    if not robots.noindex:
        await _abstract(report, analysis, fetch, config, run)
        await _profile(report, analysis.page, fetch, config, run)
    if not robots.nofollow:
        await _friends(report, analysis, fetch, config, run)
    return report


def _read_home(
    url: str, body: bytes | str, headers: Mapping[str, str] | None, config: ExtractConfig
) -> tuple[PageAnalysis, Health]:
    """The home page's :func:`analyze_page` and what the page says of the blog's health, off
    the one parse (:func:`~blogfeeds.extract.health.read_health`; a home page is an answered
    page, HTTP 200)."""
    analysis = analyze_page(
        url,
        body,
        headers,
        friend_config=config.friends,
        user_rules=config.user_rules,
        abstract_chars=config.abstract_chars,
        limits=config.limits,
        abstract_text=config.abstract_text,
        read_friends=False,
        read_abstract=False,
    )
    return analysis, read_health(url, 200, headers, None, page=page_text_of(analysis.page))


def _observation(report: BlogReport, page: Page) -> Observation:
    """The home page's :class:`~blogfeeds.extract.aliases.Observation`: its signals and the
    main feed as discovery read it (its URL after redirects, its entries)."""
    main = next(iter(report.feeds), None)
    doc = main.document if isinstance(main, DiscoveredFeed) else None
    return Observation(
        url=report.url,
        page=page_signals(page),
        feed_url=main.url if main is not None else "",
        entries=doc.item_keys if doc is not None else frozenset(),
        feed_title=doc.title if doc is not None else "",
        local_posts=local_posts(doc.entries) if doc is not None else frozenset(),
    )


def _main_document(report: BlogReport) -> FeedDocument | None:
    """The main feed as feed discovery read it (None when no feed was validated)."""
    main = next((f for f in report.feeds if isinstance(f, DiscoveredFeed)), None)
    return main.document if main is not None else None


async def _abstract(
    report: BlogReport, analysis: PageAnalysis, fetch: Fetch, config: ExtractConfig, run: Run
) -> None:
    """The blog's abstract (:mod:`blogfeeds.extract.abstract`): a user rule's, else the
    opening of the main feed's newest entry, else the home page's newest post card, else its
    main text (trafilatura, the one costly step: counter ``abstract/page``). The newest
    post's own page is fetched once when the feed gives no content for it, or there is no
    feed (counter ``abstract/post_page``)."""
    if config.abstract_chars <= 0 or "abstract" in analysis.rules:
        return
    meta = report.metadata
    doc = _main_document(report)
    post = None
    cards = PostCards(analysis.page)
    if config.abstract_post_page:
        link = await run(post_link, doc, analysis.page, cards)
        post = await _post_page(link, report, fetch, config, run)
    text, source = await run(lead_abstract, doc, analysis.page, config.abstract_chars, post, cards)
    if text:
        report.metadata = replace(meta, abstract=text, abstract_source=source)
        return
    _count(report.counters, "abstract/page")
    text, cut_text = await run(
        page_abstract, analysis.page, config.abstract_chars, config.abstract_text
    )
    truncated = (TEXT,) if cut_text else ()
    report.metadata = replace(
        meta, abstract=text, abstract_source=PAGE if text else "", truncated=truncated
    )
    for what in truncated:
        _count(report.counters, f"truncated/{what}")
    report.truncated += truncated  # before the friend page's, as the docstring says


async def _post_page(
    link: str, report: BlogReport, fetch: Fetch, config: ExtractConfig, run: Run
) -> Page | None:
    """The newest post's page at ``link`` (``""``: none wanted), parsed; None when it did not
    answer 2xx with a readable page."""
    if not link:
        return None
    _count(report.counters, "abstract/post_page")
    resp = await fetch(FetchRequest(link, {"Accept": HTML_ACCEPT}))
    if resp is None or not 200 <= resp.status < 300 or not resp.body:
        _count(report.counters, "abstract/post_page_failed")
        return None
    try:
        return await run(parse_page, resp.url, resp.body, resp.headers, config.limits)
    except DecodeError:
        _count(report.counters, "abstract/post_page_failed")
        return None


async def _profile(
    report: BlogReport, page: Page, fetch: Fetch, config: ExtractConfig, run: Run
) -> None:
    """The blog's profile from the home page and the main feed discovery read; one request for
    ``/favicon.ico`` when the page declares no icon (counter ``profile/favicon_requests``), once
    per host for blogs under a path of a host (:class:`~blogfeeds.extract.icon.HostIcons`)."""
    now = config.clock()
    profile = await run(
        read_profile,
        page,
        _main_document(report),
        declared_language=report.metadata.language,
        now=now,
        config=config.profile,
    )
    if not profile.icon_url and config.profile.favicon_check:
        icon = await _favicon(urljoin(page.url, "/favicon.ico"), report, fetch, config)
        if icon:
            profile = replace(profile, icon_url=icon, icon_source="favicon")
    report.profile = profile


async def _favicon(favicon: str, report: BlogReport, fetch: Fetch, config: ExtractConfig) -> str:
    """The URL of ``favicon`` when it is an image (after redirects), else ``""``."""
    shared = "/" in report.blog_id  # a blog under a path: the host's icon is every blog's there
    if shared and (known := config.host_icons.known(favicon)) is not None:
        return known
    _count(report.counters, "profile/favicon_requests")
    resp = await fetch(FetchRequest(favicon, {"Accept": "image/*"}))
    ok = (
        resp is not None
        and 200 <= resp.status < 300
        and favicon_is_image(resp.body, resp.header("Content-Type"))
    )
    icon = (resp.url or favicon) if ok and resp is not None else ""
    if shared:
        config.host_icons.record(favicon, icon)
    return icon


async def _friends(
    report: BlogReport, analysis: PageAnalysis, fetch: Fetch, config: ExtractConfig, run: Run
) -> None:
    """Friend links from the blog's friend-link page if one lists any, united with the home
    page's own (a sidebar blogroll), else from the home page, plus the machine-readable lists
    that page points to; into ``report``."""
    counters = report.counters
    found: FriendExtraction | None = None
    source = analysis.page.url
    for page_url in analysis.friend_pages[: config.max_pages - 1]:
        resp = await _get(fetch, page_url, report)
        if resp is None:
            continue
        if isinstance(resp, FetchedPage) and not resp.is_text:
            _count(counters, "not_html")
            report.followed.append(Followed(page_url, FRIEND_PAGE, "not_html", resp.url))
            continue
        try:  # a friend-link page: its friends are read, its abstract never (no trafilatura)
            sub = await run(
                analyze_page,
                resp.url,
                resp.body,
                resp.headers,
                friend_config=config.friends,
                user_rules=config.user_rules,
                abstract_chars=0,
                limits=config.limits,
                read_friend_pages=False,
            )
        except (DecodeError, ValueError) as exc:
            _count(counters, "decode_error")
            report.followed.append(
                Followed(page_url, FRIEND_PAGE, "unreadable", resp.url, detail=str(exc))
            )
            continue
        assert sub.friends is not None  # read_friends=True
        listed = len(sub.friends.friends)
        cut = f"truncated: {', '.join(sub.truncated)}" if sub.truncated else ""
        for what in sub.truncated:
            _count(counters, f"truncated/friend_page/{what}")
        if robots_directives(sub.page).nofollow:
            _count(counters, "robots/nofollow_friend_page")
            report.followed.append(
                Followed(page_url, FRIEND_PAGE, "nofollow", resp.url, listed, cut)
            )
            continue
        if sub.friends.friends or sub.friends.data_sources:
            _count(counters, "friend_page_used")
            report.followed.append(Followed(page_url, FRIEND_PAGE, "used", resp.url, listed, cut))
            report.truncated += [f"friend_page/{what}" for what in sub.truncated]
            found, source = sub.friends, sub.page.url
            break
        report.followed.append(Followed(page_url, FRIEND_PAGE, "no_friends", resp.url, 0, cut))
    home: FriendExtraction | None = None
    if found is None:
        found = await _home_friends(analysis, config, run, counters)
    elif may_list_friends(analysis.page, analysis.friend_rules):
        # the home page's own list (a sidebar blogroll) may differ from the friend page's
        home = await _home_friends(analysis, config, run, counters)
    friends = list(found.friends)
    if home is not None and home.friends:
        keys = {friend_key(f.url) for f in friends}
        more = [f for f in home.friends if friend_key(f.url) not in keys]
        if more:
            _count(counters, "home_friends_united", len(more))
            friends += more
    known = {f.url for f in friends}
    invalid = list(found.invalid_urls)
    for list_url in found.data_sources[: config.max_pages]:
        resp = await _get(fetch, list_url, report, DATA_SOURCE)
        if resp is None:
            continue
        from_list = await run(
            friends_from_data_source, resp.url, resp.body, resp.header("Content-Type"), invalid
        )
        _count(counters, "data_source_friends", len(from_list))
        report.followed.append(Followed(list_url, DATA_SOURCE, "read", resp.url, len(from_list)))
        for friend in from_list:
            if friend.url not in known:
                known.add(friend.url)
                friends.append(friend)
    report.invalid_urls = list(dict.fromkeys(invalid))
    if report.invalid_urls:
        _count(counters, "invalid_url", len(report.invalid_urls))
    if len(friends) > config.max_friends:
        _count(counters, "friends_over_cap", len(friends) - config.max_friends)
        friends = friends[: config.max_friends]
    report.friends, report.friend_extraction = friends, found
    report.friend_source, report.container_score = source, found.best_score


async def _home_friends(
    analysis: PageAnalysis, config: ExtractConfig, run: Run, counters: dict[str, int]
) -> FriendExtraction:
    """The home page's friend links, read into ``analysis`` when first needed: when a friend
    page lists friends, the home page's reading would be thrown away. A user rule whose cards
    gave them is counted as fired."""
    if analysis.friends is None:
        friends, rule = await run(
            page_friends, analysis.page, config.friends, analysis.friend_rules
        )
        analysis.friends = friends
        if rule:
            analysis.rules["friends"] = rule
            _count(counters, f"rule_fired/{rule}/friends")
    return analysis.friends


async def _get(
    fetch: Fetch, url: str, report: BlogReport, kind: str = FRIEND_PAGE
) -> Fetched | None:
    """A further page of the blog, or None (recorded as ``failed``) unless it answered 2xx."""
    resp = await fetch(FetchRequest(url))
    if resp is None or not 200 <= resp.status < 300:
        detail = "no response" if resp is None else f"status {resp.status}"
        final = "" if resp is None else resp.url
        report.followed.append(Followed(url, kind, "failed", final, detail=detail))
        return None
    return resp


def _count(counters: dict[str, int], name: str, n: int = 1) -> None:
    counters[name] = counters.get(name, 0) + n


# --- One page --------------------------------------------------------------------------------


@dataclass
class PageAnalysis:
    """The result of :func:`analyze_page`.

    ``friends`` holds every scored container and the chosen friend links (None when
    :func:`analyze_page` was told not to read them: :func:`page_friends` does it later);
    ``friend_pages`` lists same-blog pages that look like a blogroll, best first.
    """

    page: Page
    blog_id: str
    metadata: PageMetadata
    friends: FriendExtraction | None
    friend_pages: list[str]
    rule_feed: FeedCandidate | None = None
    """The feed a user rule names (``rules["feed"]`` says which rule), else ``None``."""
    rules: dict[str, str] = field(default_factory=dict)
    """User rules that fired (:mod:`blogfeeds.extract.userrules`): what they set (``encoding``,
    ``feed``, ``abstract``, ``friend_pages``, ``friends``) -> rule name."""
    friend_rules: list[ThemeRule] = field(default_factory=list)
    """The user rules' friend cards that apply to the page (:func:`page_friends`)."""

    @property
    def truncated(self) -> tuple[str, ...]:
        """The bounds the page reached: ``elements`` or ``links`` (the page was read up to
        there), ``text`` (the abstract read the first characters only)."""
        return (*self.page.truncated, *self.metadata.truncated)


def analyze_page(
    url: str,
    body: bytes | str,
    headers: Mapping[str, str] | None = None,
    *,
    friend_config: FriendConfig | None = None,
    user_rules: RuleSet | None = None,
    abstract_chars: int = ABSTRACT_CHARS,
    limits: PageLimits | None = None,
    abstract_text: int = ABSTRACT_TEXT,
    read_friends: bool = True,
    read_friend_pages: bool = True,
    read_abstract: bool = True,
) -> PageAnalysis:
    """Decode, parse and run every page extractor over one page (nothing is fetched).

    ``url`` is the final URL after redirects. Raises :class:`~blogfeeds.extract.page.DecodeError`
    when the body is not usable HTML and ``ValueError`` when ``url`` is not http(s).
    ``user_rules`` (a :class:`~blogfeeds.extract.userrules.RuleSet`) run before the built-in
    extractors: a rule's encoding, feed, abstract, friend pages and friend cards win; ``rules``
    says which fired. ``abstract_chars`` is the abstract's length (a user rule's abstract too); 0
    leaves it empty without running trafilatura or a rule's abstract (a friend-link page).
    ``limits`` and ``abstract_text`` bound what is read (:attr:`PageAnalysis.truncated` says
    which bounds the page reached). ``read_friends=False`` leaves :attr:`PageAnalysis.friends`
    None (:func:`page_friends`); ``read_friend_pages=False`` leaves its friend pages empty (a
    friend-link page's own are never followed); ``read_abstract=False`` leaves the abstract to
    the caller (a user rule's is still read): :func:`extract_blog` takes the main feed's first.
    """
    bid = blog_id(url)
    page_chars = abstract_chars if read_abstract else 0
    if not user_rules:
        page = parse_page(url, body, headers, limits)
        return PageAnalysis(
            page=page,
            blog_id=bid,
            metadata=extract_metadata(page, page_chars, abstract_text),
            friends=page_friends(page, friend_config)[0] if read_friends else None,
            friend_pages=find_friend_pages(page) if read_friend_pages else [],
        )
    fired: dict[str, str] = {}
    early = _first(user_rules.for_url(url), "encoding")
    page = _parse(url, body, headers, early, limits)
    metadata = extract_metadata(page, page_chars, abstract_text)
    matched = user_rules.for_page(page, metadata.generator)
    rule = _first(matched, "encoding")
    if rule is not None and not isinstance(body, str):
        if rule is not early:
            page = _parse(url, body, headers, rule, limits)
            metadata = extract_metadata(page, page_chars, abstract_text)
        fired["encoding"] = rule.name
    rule_feed = None
    for rule in matched:
        value = rule.feed.extract(page) if rule.feed is not None else ""
        if value and (feed_url := page.absolute(value)).startswith(("http://", "https://")):
            rule_feed = FeedCandidate(feed_url, "", source="rule", reasons=[f"rule {rule.name}"])
            fired["feed"] = rule.name
            break
    for rule in matched if abstract_chars > 0 else ():
        text = collapse(rule.abstract.extract(page)) if rule.abstract is not None else ""
        if text:
            metadata = replace(metadata, abstract=cut(text, abstract_chars), abstract_source=PAGE)
            fired["abstract"] = rule.name
            break
    friend_pages = find_friend_pages(page) if read_friend_pages else []
    for rule in matched:
        if read_friend_pages and rule.friend_pages:
            extra = resolve_pages(page.url, rule.friend_pages)
            friend_pages = [*extra, *(u for u in friend_pages if u not in extra)]
            fired["friend_pages"] = rule.name
            break
    theme_rules = user_rules.friend_rules(matched)
    friends = None
    if read_friends:
        friends, rule_name = page_friends(page, friend_config, theme_rules)
        if rule_name:
            fired["friends"] = rule_name
    return PageAnalysis(
        page=page,
        blog_id=bid,
        metadata=metadata,
        friends=friends,
        friend_pages=friend_pages,
        rule_feed=rule_feed,
        rules=fired,
        friend_rules=theme_rules,
    )


def page_friends(
    page: Page, config: FriendConfig | None, theme_rules: Sequence[ThemeRule] = ()
) -> tuple[FriendExtraction, str]:
    """The friend links of a parsed page, with the user rules' friend cards, and the name of
    the first of those rules whose cards gave a friend (``""`` when none did)."""
    friends = extract_friends(page, config=config, user_rules=list(theme_rules) or None)
    hows = {f.how for f in friends.friends}
    return friends, next((t.name for t in theme_rules if t.how in hows), "")


def _first(rules: Sequence[UserRule], what: str) -> UserRule | None:
    return next((r for r in rules if getattr(r, what)), None)


def _parse(
    url: str,
    body: bytes | str,
    headers: Mapping[str, str] | None,
    rule: UserRule | None,
    limits: PageLimits | None,
) -> Page:
    """Parse with ``rule``'s encoding in place of the HTTP charset (a BOM still wins)."""
    if rule is None or isinstance(body, str):
        return parse_page(url, body, headers, limits)
    kept = {k: v for k, v in (headers or {}).items() if k.lower() != "content-type"}
    charset = {"Content-Type": f"text/html; charset={rule.encoding}"}
    return parse_page(url, body, {**kept, **charset}, limits)
