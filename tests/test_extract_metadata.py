"""Page metadata: one hand-made page per rule, plus the labelled real pages of the corpus."""

from __future__ import annotations

import gzip
import json

import justext
import justext.core
import lxml.html
import pytest
import trafilatura.external

from blogfeeds.extract import metadata
from blogfeeds.extract.metadata import (
    PageMetadata,
    abstract,
    cut,
    extract_metadata,
    generator,
    language,
    load_stop_words,
    main_text,
    stop_words,
    title,
)
from blogfeeds.extract.page import Page, parse_page
from blogfeeds.extract.text import _ANY_CONTROL, _CONTROLS, collapse, strip_controls
from tests.cases import shared_dir

URL = "https://alice.example/"

LEAD = (
    "Last spring I moved my whole blog from a hosted platform to a static site generator, and "
    "this is what I learned about feeds, links and the people who still read them."
)
BODY = "".join(
    f"<p>Paragraph {n} goes on about static sites, feed readers and friend links for a while. "
    "It has enough words to count as main text, and a full stop.</p>"
    for n in range(6)
)


def page(html: str, headers: dict[str, str] | None = None) -> Page:
    return parse_page(URL, html.encode("utf-8"), headers or {})


def article(head: str = "", before: str = "", lead: str = LEAD) -> Page:
    return page(
        f"<html><head>{head}</head><body><nav><a href='/'>Home</a> <a href='/a'>About</a></nav>"
        f"<article>{before}<p>{lead}</p>{BODY}</article><footer>© Alice</footer></body></html>"
    )


# --- title ---------------------------------------------------------------------------------


def test_title_collapses_whitespace() -> None:
    assert title(page("<title>\n  Alice's\t blog \n</title><p>x</p>")) == "Alice's blog"


def test_control_characters_are_stripped_from_every_metadata_field() -> None:
    """C0/C1 controls (terminal escapes) never reach storage: title, generator, abstract."""
    head = (
        "<head><title>A\x01\x02\x1b[31mlice\x7f \x9b blog</title>"
        "<meta name=generator content='Word\x1bPress 6.1'>"
        "<meta name=description content='Notes\x07 on\x0c things'></head>"
    )
    meta = extract_metadata(page(head + "<p>x</p>"))
    assert (meta.title, meta.generator, meta.platform) == (
        "A[31mlice blog",
        "WordPress 6.1",
        "WordPress",
    )
    assert meta.abstract == "Notes on things"


def test_the_control_scan_finds_every_control_and_nothing_else() -> None:
    """``collapse`` and ``strip_controls`` translate only a text the scan finds a control in:
    the scan must find exactly the table's characters, in ASCII and other text alike."""
    found = {c for c in range(0x110000) if _ANY_CONTROL.fullmatch(chr(c))}
    assert found == set(_CONTROLS)
    assert collapse("博客\x1b[0m\x85笔记\u3000 \x9b") == "博客[0m 笔记"
    assert strip_controls("a\x00b\tc\x0bd") == "ab\tc d"


def test_title_falls_back_to_og_site_name() -> None:
    html = "<head><title> </title><meta property='og:site_name' content=' Alice  Writes '></head>"
    assert title(page(html + "<p>x</p>")) == "Alice Writes"
    assert title(page(html.replace("<title> </title>", "") + "<p>x</p>")) == "Alice Writes"


def test_title_prefers_title_over_og_site_name() -> None:
    html = "<title>Post</title><meta property='og:site_name' content='Site'><p>x</p>"
    assert title(page(html)) == "Post"


def test_title_ignores_svg_titles_and_is_empty_when_absent() -> None:
    assert title(page("<body><svg><title>icon</title></svg><p>x</p></body>")) == ""
    html = "<body><svg><title>icon</title></svg></body><title>Real</title>"
    assert title(page(html)) == "Real"


# --- language ------------------------------------------------------------------------------


def test_language_from_html_lang_as_written() -> None:
    assert language(page("<html lang=' zh-Hans-CN '><body><p>x</p></body></html>")) == "zh-Hans-CN"


def test_language_falls_back_to_meta_then_header() -> None:
    meta = "<html><head><meta http-equiv='Content-Language' content='de-AT'></head><p>x</p></html>"
    headers = {"content-language": " fr "}
    assert language(page(meta, headers)) == "de-AT"
    assert language(page("<html><p>x</p></html>", headers)) == "fr"
    assert language(page("<html lang='en'><p>x</p></html>", headers)) == "en"
    assert language(page("<html><p>x</p></html>")) == ""


# --- generator -----------------------------------------------------------------------------


def test_generator_first_case_insensitive() -> None:
    html = (
        "<meta name='viewport' content='width=device-width'>"
        "<meta name='Generator' content=' WordPress  6.4.2 '>"
        "<meta name='generator' content='Site Kit by Google'><p>x</p>"
    )
    assert generator(page(html)) == "WordPress 6.4.2"


def test_generator_skips_empty_and_absent() -> None:
    assert (
        generator(page("<meta name='generator' content=''><meta name=GENERATOR content=Hexo>"))
        == "Hexo"
    )
    assert generator(page("<p>x</p>")) == ""


# --- cut -----------------------------------------------------------------------------------


def test_cut_keeps_short_text_and_respects_word_boundaries() -> None:
    assert cut("short text", 100) == "short text"
    text = "alpha beta gamma delta"
    assert cut(text, 13) == "alpha beta"  # "gamma" would be split after "gam"
    assert cut(text, 16) == "alpha beta gamma"  # the cut falls on a space
    assert cut(text, 11) == "alpha beta"
    assert cut(text, 0) == ""


def test_cut_drops_dangling_separators() -> None:
    assert cut("one, two — three", 10) == "one, two"
    assert cut("first: second", 7) == "first"


def test_cut_hard_cuts_a_single_overlong_word() -> None:
    assert cut("https://example.com/" + "a" * 200, 30) == ("https://example.com/" + "a" * 200)[:30]


def test_cut_anywhere_in_cjk() -> None:
    text = "我最近把博客从托管平台搬到了静态网站生成器上，这篇文章记录了迁移过程中的体会。"
    assert cut(text, 10) == text[:10]
    mixed = "我用 Hugo 写博客已经三年了"
    assert cut(mixed, 5) == "我用"  # "Hu|go" is Latin: not split, back to the space
    assert cut(mixed, 9) == "我用 Hugo 写"  # ends on a Han character: a boundary
    assert cut(mixed, 8) == "我用 Hugo"  # the cut falls on the space


# --- abstract ------------------------------------------------------------------------------


def test_abstract_is_the_lead_cut_on_a_word_boundary() -> None:
    got = abstract(article())
    assert len(got) <= 100
    assert LEAD.startswith(got)
    assert LEAD[len(got)] == " "  # ends on a whole word
    assert len(got) > 90


def test_abstract_skips_title_kicker_and_byline_lines() -> None:
    head = "<title>Moving my blog to a static site | Alice Writes</title>"
    before = (
        "<h1>Moving my blog to a static site</h1><p>Reading time: 4 min</p>"
        "<p>By Alice, 12 March 2024</p>"
    )
    assert abstract(article(head, before)) == cut(LEAD)


def test_abstract_skips_long_title_like_lines() -> None:
    head = "<title>Why I moved my whole blog to a static site generator in 2024 - Alice</title>"
    same = "<p>Why I moved my whole blog to a static site generator in 2024</p>"
    assert abstract(article(head, same)) == cut(LEAD)
    reworded = "<p>Why I moved the whole blog to a static site generator in 2024!</p>"
    assert abstract(article(head, reworded)) == cut(LEAD)  # 11 of 12 words are title words
    unrelated = "<p>Nothing here repeats the headline, so it stays where it is!</p>"
    assert abstract(article(head, unrelated)).startswith("Nothing here repeats the headline")


def test_abstract_skips_a_leading_bare_url() -> None:
    url_line = "<p>https://alice.example/2024/03/12/moving-my-blog-to-a-static-site-generator</p>"
    assert abstract(article("", url_line)) == cut(LEAD)


def test_abstract_keeps_a_short_lead_sentence() -> None:
    lead = "I moved."
    assert abstract(article(lead=lead)).startswith("I moved. Paragraph 0 goes on")


def test_abstract_respects_max_chars() -> None:
    assert abstract(article(), max_chars=30) == cut(LEAD, 30) == "Last spring I moved my whole"


def test_abstract_cjk() -> None:
    lead = (
        "去年春天我把整个博客从托管平台搬到了静态网站生成器上，这篇文章记录了我对订阅源、友情链接"
        "以及仍在阅读它们的人们的一些体会，希望对你有所帮助。"
    )
    body = "".join(
        f"<p>第{n}段继续讨论静态网站、订阅阅读器和友情链接，内容足够长，可以算作正文，句号结尾。</p>"
        for n in range(8)
    )
    html = (
        "<html lang='zh-CN'><head><title>博客迁移记 - 爱丽丝</title></head><body>"
        f"<article><h1>博客迁移记</h1><p>{lead}</p>{body}</article></body></html>"
    )
    # paragraphs join without a space; the cut falls mid-sentence, exactly at 100 characters
    first = "第0段继续讨论静态网站、订阅阅读器和友情链接，内容足够长，可以算作正文，句号结尾。"
    assert abstract(page(html)) == (lead + first)[:100]


def test_abstract_falls_back_to_og_description_then_meta_description() -> None:
    both = (
        "<meta name='description' content='Meta description.'>"
        "<meta property='og:description' content=' Open  Graph description. '>"
    )
    empty_body = "<html><head>{}</head><body></body></html>"
    assert abstract(page(empty_body.format(both))) == "Open Graph description."
    only_meta = "<meta name='description' content='Meta description.'>"
    assert abstract(page(empty_body.format(only_meta))) == "Meta description."


def _trafilatura_inputs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Characters of body text of every tree the abstract hands trafilatura, in call order."""
    seen: list[int] = []
    precise = metadata._precise

    def spy(tree: lxml.html.HtmlElement, url: str, fast: bool) -> str | None:
        seen.append(len(tree.find("body").text_content()))
        return precise(tree, url, fast)

    monkeypatch.setattr(metadata, "_precise", spy)
    return seen


def test_abstract_reads_the_opening_of_a_long_page(monkeypatch: pytest.MonkeyPatch) -> None:
    long_body = BODY * 8  # about 6,800 characters of main text
    p = page(f"<html><body><article><p>{LEAD}</p>{long_body}</article></body></html>")
    seen = _trafilatura_inputs(monkeypatch)
    assert abstract(p) == cut(LEAD)
    # one run, on the window: whole paragraphs up to the first past ABSTRACT_WINDOW characters
    assert len(seen) == 1
    assert metadata.ABSTRACT_WINDOW <= seen[0] < metadata.ABSTRACT_WINDOW + 200


def test_abstract_reads_the_whole_page_when_the_window_holds_little_main_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    links = "".join(f"<li><a href='/tag/{n}'>tag number {n}</a></li>" for n in range(300))
    p = page(
        f"<html><body><div class='tags'><ul>{links}</ul></div>"
        f"<article><p>{LEAD}</p>{BODY * 4}</article></body></html>"
    )
    seen = _trafilatura_inputs(monkeypatch)
    assert abstract(p) == cut(LEAD)
    assert len(seen) == 2 and seen[0] < seen[1]  # the window fell short, then the whole page


def test_cut_window_keeps_whole_elements_and_counts_no_whitespace() -> None:
    tree = lxml.html.document_fromstring(
        "<html><body><p>aaaa</p>\n    <p>bb<b>bb</b></p>\n  <p>cccc</p><p>dddd</p></body></html>"
    )
    assert not metadata.cut_window(tree, 100)  # the page is shorter: nothing cut
    assert metadata.cut_window(tree, 7)  # the window ends inside the second paragraph
    assert [p.text_content() for p in tree.iter("p")] == ["aaaa", "bbbb"]


def test_abstract_of_an_empty_page_is_empty() -> None:
    assert abstract(page("<html><head><title>Nothing</title></head><body></body></html>")) == ""


def test_abstract_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(metadata.trafilatura, "extract", broken)
    html = "<meta name='description' content='Still here.'><p>x</p>"
    assert abstract(page(html)) == "Still here."
    assert abstract(page("<p>x</p>")) == ""


def test_abstract_does_not_mutate_the_shared_tree() -> None:
    p = article(
        "<title>T</title><script>var x = 1;</script><style>p {}</style>",
        "<aside><p>Related: other posts</p></aside><!-- c --><table><tr><td>cell</td></tr></table>",
    )
    before = lxml.html.tostring(p.tree)
    assert abstract(p)
    assert lxml.html.tostring(p.tree) == before


def test_extract_metadata_bundles_every_field() -> None:
    html = (
        "<html lang='en'><head><title>Alice Writes</title>"
        "<meta name='generator' content='Hugo 0.120'></head><body>"
        f"<article><p>{LEAD}</p>{BODY}</article></body></html>"
    )
    assert extract_metadata(page(html)) == PageMetadata(
        title="Alice Writes",
        language="en",
        generator="Hugo 0.120",
        abstract=cut(LEAD),
        abstract_source="page",
        platform="Hugo",
        platform_version="0.120",
    )


# --- real pages ----------------------------------------------------------------------------


def labelled_pages() -> list[tuple[dict[str, object], Page]]:
    shared = shared_dir()
    if shared is None or not (shared / "corpus" / "labels.jsonl").is_file():
        pytest.skip("shared corpus not found (set BLOGFEEDS_SHARED)")
    corpus = shared / "corpus"
    out = []
    for line in (corpus / "labels.jsonl").read_text("utf-8").splitlines():
        label = json.loads(line)
        path = corpus / str(label["file"])
        body = path.read_bytes()
        if path.suffix == ".gz":
            body = gzip.decompress(body)
        out.append((label, parse_page(str(label["url"]), body)))
    return out


def test_generator_and_lang_match_the_corpus_labels() -> None:
    """labels.jsonl lists every ``<meta name=generator>`` (we return the first) and ``<html lang>``
    (null when absent, where we may still find ``content-language``)."""
    pages = labelled_pages()
    generators = langs = 0
    for label, p in pages:
        expected_gen = collapse((label["generator"] or [""])[0])  # type: ignore[index]
        assert generator(p) == expected_gen, label["file"]
        generators += bool(expected_gen)
        if label["lang"]:
            assert language(p) == label["lang"], label["file"]
            langs += 1
        title(p)  # no crash on any real page
    assert len(pages) >= 600
    assert generators >= 300
    assert langs >= 500


def test_jusText_keeps_one_stop_list_the_set_it_would_build() -> None:
    """The stop list trafilatura hands jusText is the lower-cased frozenset jusText's own
    ``define_stoplist`` makes of trafilatura's tuple, and jusText uses it as it is (no second
    copy is cached beside it)."""
    load_stop_words()
    words = trafilatura.external.JT_STOPLIST
    assert words is stop_words()
    assert justext.core.define_stoplist(words) is words
    from_tuple = tuple({w for lang in justext.get_stoplists() for w in justext.get_stoplist(lang)})
    assert justext.core.define_stoplist(from_tuple) == words  # jusText's own lower-casing


def test_the_full_extraction_runs_jusText_with_that_stop_list() -> None:
    seen: list[object] = []
    classify = trafilatura.external.classify_paragraphs

    def spy(paragraphs: object, stoplist: object, *args: object, **kwargs: object) -> object:
        seen.append(stoplist)
        return classify(paragraphs, stoplist, *args, **kwargs)

    page = parse_page(URL, b"<html><body><div><p>Short.</p></div><ul><li>a</li></ul></body></html>")
    trafilatura.external.classify_paragraphs = spy
    try:
        main_text(page, precise=False)
    finally:
        trafilatura.external.classify_paragraphs = classify
    assert seen and all(s is stop_words() for s in seen)
