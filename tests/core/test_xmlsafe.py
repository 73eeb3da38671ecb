"""The hardened XML parser: what it refuses, and that refusals never expand or quote anything."""

from __future__ import annotations

import codecs
import time
from pathlib import Path

import pytest
from lxml import etree

from readingroom.core import xmlsafe
from readingroom.core.errors import Code, CoreError
from readingroom.core.xmlsafe import UnsafeXmlError, XmlParseError, parse_xml

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ndl"

XXE = (
    b'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<r>&xxe;</r>'
)
XXE_PARAMETER = (
    b'<?xml version="1.0"?>\n'
    b'<!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:9/evil.dtd"> %p;]>\n'
    b"<r/>"
)
LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(
        f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'.encode() for i in range(8)
    )
    + b"]>\n<l>&i;</l>"
)


def test_parses_a_plain_document() -> None:
    root = parse_xml('<?xml version="1.0" encoding="UTF-8"?><a><b>漱石</b></a>'.encode())
    assert root.tag == "a"
    assert root[0].text == "漱石"


def test_accepts_str_input_whatever_its_declaration_says() -> None:
    root = parse_xml('<?xml version="1.0" encoding="Shift_JIS"?><a>こころ</a>')
    assert root.text == "こころ"


def test_accepts_a_utf8_bom_and_comments_before_the_root() -> None:
    root = parse_xml(codecs.BOM_UTF8 + b"<!-- note --><?pi x?>\n<a/>")
    assert root.tag == "a"


def test_errors_are_core_errors_with_api_error_code() -> None:
    for cls in (UnsafeXmlError, XmlParseError):
        assert issubclass(cls, CoreError)
    with pytest.raises(CoreError) as info:
        parse_xml(XXE)
    assert info.value.code is Code.API_ERROR
    assert info.value.remediation


@pytest.mark.parametrize(
    "payload",
    [
        XXE,
        XXE_PARAMETER,
        LAUGHS,
        b"<!doctype r><r/>",
        b'<?xml version="1.0"?>\n<!-- a comment -->\n<!DOCTYPE r SYSTEM "file:///etc/passwd"><r/>',
        b'<!DOCTYPE r PUBLIC "-//X//Y" "http://127.0.0.1:9/x.dtd"><r/>',
    ],
    ids=["xxe", "xxe-parameter-entity", "billion-laughs", "lowercase", "after-comment", "public"],
)
def test_any_doctype_is_refused(payload: bytes) -> None:
    with pytest.raises(UnsafeXmlError) as info:
        parse_xml(payload)
    assert info.value.details["reason"] == "doctype"


def test_doctype_in_utf16_document_is_refused() -> None:
    payload = XXE.decode().replace('"?>', '" encoding="UTF-16"?>', 1).encode("utf-16")
    with pytest.raises(UnsafeXmlError):
        parse_xml(payload)


def test_xxe_fixture_is_refused_and_never_expanded() -> None:
    body = (FIXTURES / "xxe_external_entity.xml").read_bytes()
    with pytest.raises(UnsafeXmlError) as info:
        parse_xml(body)
    text = f"{info.value} {info.value.details} {info.value.remediation}"
    assert "root:" not in text
    assert "passwd" not in text


def test_billion_laughs_fixture_is_refused_quickly() -> None:
    body = (FIXTURES / "billion_laughs.xml").read_bytes()
    started = time.monotonic()
    with pytest.raises(UnsafeXmlError):
        parse_xml(body)
    assert time.monotonic() - started < 1.0


def test_the_parser_itself_expands_no_entity() -> None:
    # Defence in depth: even were the DOCTYPE check bypassed, the parser resolves nothing.
    root = etree.fromstring(XXE, xmlsafe._parser())
    assert b"root:" not in etree.tostring(root)
    assert root.text is None


def test_post_parse_backstop_catches_a_doctype_the_prolog_scan_missed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(xmlsafe, "_doctype_in_prolog", lambda data: None)
    with pytest.raises(UnsafeXmlError):
        parse_xml(XXE)


def test_too_large_is_refused_before_parsing() -> None:
    with pytest.raises(UnsafeXmlError) as info:
        parse_xml(b"<a>" + b"x" * 200 + b"</a>", max_bytes=100)
    assert info.value.details["reason"] == "too_large"
    assert info.value.details["max_bytes"] == 100


def test_malformed_xml_raises_parse_error_without_quoting_the_body() -> None:
    secret = "ほかの人には見せない本文"
    with pytest.raises(XmlParseError) as info:
        parse_xml(f"<a><b>{secret}</a>".encode())
    assert info.value.details["reason"] == "malformed"
    assert secret not in f"{info.value} {info.value.details}"


@pytest.mark.parametrize("payload", [b"", b"   \n", "  "])
def test_empty_body_is_a_parse_error(payload: bytes | str) -> None:
    with pytest.raises(XmlParseError) as info:
        parse_xml(payload)
    assert info.value.details["reason"] == "empty"


def test_html_page_is_a_parse_error_not_an_unsafe_document() -> None:
    body = (FIXTURES / "maintenance_503.html").read_bytes()
    with pytest.raises(XmlParseError) as info:
        parse_xml(body)
    assert info.value.details["reason"] == "html"


def test_html_doctype_with_internal_subset_is_still_unsafe() -> None:
    with pytest.raises(UnsafeXmlError):
        parse_xml(b'<!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">]><html>&x;</html>')


def _nested(depth: int, *, closed: bool = True) -> bytes:
    return b"<r>" + b"<d>" * depth + b"x" + (b"</d>" * depth if closed else b"") + b"</r>"


def test_nesting_up_to_the_limit_parses() -> None:
    root = parse_xml(_nested(xmlsafe.MAX_DEPTH - 2))
    assert "".join(root.itertext()) == "x"


def test_nesting_past_the_limit_is_too_deep_not_malformed() -> None:
    with pytest.raises(XmlParseError) as info:
        parse_xml(_nested(xmlsafe.MAX_DEPTH + 10))
    assert info.value.details["reason"] == "too_deep"
    assert info.value.details["max_depth"] == xmlsafe.MAX_DEPTH
    assert str(xmlsafe.MAX_DEPTH) in info.value.message


def test_a_malformed_document_after_a_deep_one_is_still_malformed() -> None:
    # lxml's exception log can carry entries of earlier parses; they must not leak in.
    with pytest.raises(XmlParseError):
        parse_xml(_nested(xmlsafe.MAX_DEPTH + 10))
    with pytest.raises(XmlParseError) as info:
        parse_xml(_nested(10, closed=False))
    assert info.value.details["reason"] == "malformed"


def test_depth_limit_hit_reads_a_recovering_parsers_log() -> None:
    deep = etree.HTMLParser(no_network=True)
    etree.fromstring(_nested(xmlsafe.MAX_DEPTH + 10), deep)
    shallow = etree.HTMLParser(no_network=True)
    etree.fromstring(_nested(10, closed=False), shallow)
    assert xmlsafe.depth_limit_hit(deep.error_log)
    assert not xmlsafe.depth_limit_hit(shallow.error_log)


def test_exports() -> None:
    assert set(xmlsafe.__all__) == {
        "MAX_DEPTH",
        "MAX_TAGS",
        "UnsafeXmlError",
        "XmlParseError",
        "depth_limit_hit",
        "parse_xml",
        "strip_doctype",
    }


# --------------------------------------------------------------------------- strip_doctype


XHTML11 = ('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
           '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">')


@pytest.mark.parametrize("doctype", [
    XHTML11,
    '<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN"\n  "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">',
    "<!DOCTYPE html>",
    "<!doctype html SYSTEM 'about:legacy-compat' >",
])
def test_strip_doctype_removes_a_doctype_that_declares_nothing(doctype: str) -> None:
    text = f'<?xml version="1.0" encoding="utf-8"?>\n<!-- c -->\n{doctype}\n<html><p>x</p></html>'
    stripped = xmlsafe.strip_doctype(text)
    assert "DOCTYPE" not in stripped.upper() and "<?xml" not in stripped
    assert stripped.startswith("\n<!-- c -->\n") and stripped.endswith("<html><p>x</p></html>")
    assert parse_xml(stripped).tag == "html"


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE html [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
    f'{XHTML11[:-1]} [<!ENTITY lol "lol">]>',
    '<!DOCTYPE html PUBLIC "unterminated>',
    "<!DOCTYPE html junk>",
])
def test_strip_doctype_refuses_an_internal_subset_or_an_unreadable_doctype(doctype: str) -> None:
    with pytest.raises(UnsafeXmlError) as info:
        xmlsafe.strip_doctype(f"{doctype}<html/>")
    assert info.value.details["reason"] == "doctype"


def test_strip_doctype_leaves_documents_without_a_prolog_doctype_alone() -> None:
    assert xmlsafe.strip_doctype("<root><!-- <!DOCTYPE x> --></root>") == (
        "<root><!-- <!DOCTYPE x> --></root>")
    assert xmlsafe.strip_doctype('<?xml version="1.0"?><a/>') == "<a/>"


def test_a_document_of_too_many_tags_is_refused_unparsed() -> None:
    with pytest.raises(xmlsafe.UnsafeXmlError) as caught:
        xmlsafe.parse_xml(b"<r>" + b"<a/>" * (xmlsafe.MAX_TAGS + 1) + b"</r>")
    assert caught.value.details["reason"] == "too_many_values"
    assert xmlsafe.parse_xml(b"<r>" + b"<a/>" * 1000 + b"</r>").tag == "r"
