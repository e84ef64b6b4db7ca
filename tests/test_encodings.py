"""The decoding chain of :func:`blogfeeds.extract.page.decode_html` on labelled real pages and on
one hand-made page per step (BOM, header, late ``<meta>``, BOM-less UTF-16, TLD fallback, ...).

The labelled pages are read from ``../shared/corpus/pages/encoding`` (not copied: mixed
licences); that test skips without the shared folder.
"""

from __future__ import annotations

import json

import pytest

from blogfeeds.extract.page import decode_html, parse_page, tld_encoding
from tests.littleweb import find_shared


def _labelled() -> list[tuple[str, str, str | None]]:
    shared = find_shared()
    if shared is None:
        return []
    rows = []
    for line in (shared / "corpus" / "labels.jsonl").read_text("utf-8").splitlines():
        label = json.loads(line)
        encoding = label.get("encoding")
        if label["file"].startswith("pages/encoding/") and encoding and "?" not in encoding:
            rows.append((label["file"], encoding, label.get("url")))
    return rows


LABELLED = _labelled()


@pytest.mark.skipif(not LABELLED, reason="the shared corpus is not available")
@pytest.mark.parametrize(("file", "encoding", "url"), LABELLED, ids=[r[0] for r in LABELLED])
def test_labelled_page_decodes_as_labelled(file: str, encoding: str, url: str | None) -> None:
    shared = find_shared()
    assert shared is not None
    body = (shared / "corpus" / file).read_bytes()
    expected = body.decode(encoding, errors="replace").removeprefix("\ufeff")
    used, text = decode_html(body, "", url or "")
    assert text == expected, f"decoded as {used}, labelled {encoding}"


def test_labelled_pages_cover_the_hard_cases() -> None:
    if not LABELLED:
        pytest.skip("the shared corpus is not available")
    names = " ".join(f for f, _, _ in LABELLED)
    for needle in ("meta-after-1024", "UTF-16LE", "gb2312-declared", "shift_jis", "_none_"):
        assert needle in names


GBK_ONLY = "镕旸"  # in GBK, not in GB2312
PAGE = "<html><head>{head}</head><body><p>{text}</p></body></html>"


def test_bom_wins_over_header_and_meta() -> None:
    body = b"\xef\xbb\xbf" + PAGE.format(head='<meta charset="gbk">', text="é").encode()
    assert decode_html(body, "text/html; charset=iso-8859-1") == ("utf-8", body[3:].decode())


def test_header_wins_over_meta() -> None:
    body = PAGE.format(head='<meta charset="utf-8">', text="博客").encode("gbk")
    assert decode_html(body, "text/html; charset=GBK")[1].count("博客") == 1


def test_meta_late_in_a_long_head_is_found() -> None:
    head = "<title>t</title>" + "<script>var x = 1;</script>" * 300 + '<meta charset="gbk">'
    body = PAGE.format(head=head, text="友情链接").encode("gbk")
    assert len(body) > 4096
    assert decode_html(body) == ("gb18030", body.decode("gbk"))


def test_meta_in_a_comment_or_the_body_is_not_a_declaration() -> None:
    head = "<title>t</title>" + " " * 5000 + '<!-- <meta charset="koi8-r"> -->'
    body = PAGE.format(head=head, text='<meta charset="koi8-r">ok é').encode()
    assert decode_html(body)[0] == "utf-8"


def test_gb2312_declared_with_gbk_bytes() -> None:
    body = PAGE.format(head='<meta charset="gb2312">', text=GBK_ONLY).encode("gbk")
    assert GBK_ONLY in decode_html(body)[1]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_wide_encodings_without_bom(codec: str) -> None:
    text = PAGE.format(head="<title>博客</title>", text="友情链接")
    assert decode_html(text.encode(codec)) == (codec, text)


def test_shift_jis_decodes_like_a_browser() -> None:
    # 0x817C is U+2212 MINUS SIGN in the Encoding Standard's Shift_JIS, U+FF0D in cp932
    body = b'<meta charset="shift_jis"><p>\x81\x7c1 \x83\x75\x83\x8d\x83\x4f</p>'
    assert "\u2212" + "1 ブログ" in decode_html(body)[1]
    # NEC row 13 (cp932 only) keeps cp932
    assert "①" in decode_html(b'<meta charset="shift_jis"><p>\x87\x40</p>')[1]


@pytest.mark.parametrize(
    ("text", "codec", "url", "fallback"),
    [
        ("你好", "gbk", "https://blog.example.cn/", "gb18030"),
        ("我的博客", "gbk", "http://x.com.cn/", "gb18030"),
        ("블로그", "euc-kr", "https://b.example.kr/", "cp949"),
        ("Привет мир", "cp1251", "https://b.example.ru/", "cp1251"),
    ],
)
def test_tld_fallback_before_detection(text: str, codec: str, url: str, fallback: str) -> None:
    body = f"<p>{text}</p>".encode(codec)
    assert decode_html(body, "", url) == (fallback, f"<p>{text}</p>")
    # without the TLD, detection alone gets these short undeclared pages wrong
    assert decode_html(body)[1] != f"<p>{text}</p>"
    assert parse_page(url, body).encoding == fallback


def test_tld_fallback_never_overrides_valid_utf8_or_a_declaration() -> None:
    assert decode_html("<p>你好</p>".encode(), "", "https://b.example.cn/")[0] == "utf-8"
    body = PAGE.format(head='<meta charset="big5">', text="部落格").encode("big5")
    assert decode_html(body, "", "https://b.example.cn/")[1].count("部落格") == 1


def test_tld_table() -> None:
    assert tld_encoding("https://a.b.cn/x") == "gb18030"
    assert tld_encoding("https://a.tw") == "big5"
    assert tld_encoding("https://a.jp./") == "shift_jis"
    assert tld_encoding("https://a.com/") is None
    assert tld_encoding("http://[::1/") is None


def test_utf7_is_refused() -> None:
    # UTF-7 would turn "+ADw-script+AD4-" into markup; w3lib refuses the label
    body = b'<meta charset="utf-7"><p>+ADw-script+AD4-</p>'
    assert "<script>" not in decode_html(body)[1]


def test_undecodable_bytes_never_raise() -> None:
    assert decode_html(b"\xff\xfe\x00", "text/html; charset=bogus")[1]
    assert decode_html(b"", "")[1] == ""
