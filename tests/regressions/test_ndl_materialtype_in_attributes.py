"""Regression: ``dcndl:materialType`` is an empty element; its information is in attributes.

``<dcndl:materialType rdf:resource="http://ndl.go.jp/ndltype/Article" rdfs:label="記事・論文"/>``
has no text. A client that read the element's text found nothing and typed every article as a
book.
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.upstreams.ndl_search import parse

_APP = Path(__file__).resolve().parents[2] / "app" / "readingroom"
# The canned self-test responses move from setup/ to ndl/ in issue 7; read them where they are.
CANNED = next(
    (p for p in (_APP / "ndl" / "canned", _APP / "setup" / "canned") if p.is_dir()),
    _APP / "ndl" / "canned",
)


def test_zassaku_article_is_typed_from_the_attributes(samples: Path) -> None:
    body = (samples / "ndl" / "ckgerteis-ndl-mcp_sru_article_zassaku.xml").read_bytes()
    [item] = parse(body).items
    [material] = item.material_type
    assert material.label == "記事・論文"
    assert material.uri == "http://ndl.go.jp/ndltype/Article"
    assert item.record_type == "article"


def test_several_material_types_are_all_kept(samples: Path) -> None:
    body = (samples / "ndl" / "jp-lit-mcp_sru_search-ndl-articles-online.xml").read_bytes()
    [item] = parse(body).items
    assert [m.uri for m in item.material_type] == [
        "http://ndl.go.jp/ndltype/Article",
        "http://ndl.go.jp/ndltype/OnlineResource",
    ]


def test_canned_articles_are_not_books() -> None:
    for item in parse((CANNED / "articles.xml").read_bytes()).items:
        assert [m.label for m in item.material_type] == ["記事・論文"]
