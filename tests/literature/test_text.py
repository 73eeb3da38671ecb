"""Abstract and title cleaning: the markup providers really put in their strings."""

from __future__ import annotations

from readingroom.core.xmlsafe import parse_xml
from readingroom.literature.markup import clean_markup, collapse, element_text, join_parts


def test_europepmc_headings_become_labels() -> None:
    raw = "<h4>Objective</h4>This <i>TERT</i> study.<h4>Design</h4>r<sup>2</sup> &lt; 0.25"
    assert clean_markup(raw) == "Objective: This TERT study.\nDesign: r2 < 0.25"


def test_crossref_jats_abstract_heading_dropped() -> None:
    raw = "<jats:title>Abstract</jats:title>\n   <jats:p>One\n two.</jats:p><jats:p>Three.</jats:p>"
    assert clean_markup(raw) == "One two.\nThree."


def test_entities_decoded_once() -> None:
    assert clean_markup("Big Data &amp;amp; Society") == "Big Data &amp; Society"
    assert clean_markup("Big Data &amp; Society") == "Big Data & Society"


def test_nothing_left_is_none() -> None:
    assert clean_markup(None) is None
    assert clean_markup("") is None
    assert clean_markup("<p> </p><h4>Abstract</h4>") is None
    assert clean_markup("text<h4>Trailing</h4>") == "text\nTrailing"


def test_collapse_and_join() -> None:
    assert collapse("  Deep\n  learning  ") == "Deep learning"
    assert collapse(" \n") is None
    assert join_parts(["a", "", "b"]) == "a\nb"
    assert join_parts([]) is None


def test_element_text_reads_mathml_tokens_together() -> None:
    root = parse_xml(
        '<AbstractText>max <mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML">'
        "<mml:mi>V</mml:mi>\n   <mml:mo>.</mml:mo></mml:math> uptake <i>in</i>\n vivo"
        "<!-- c --> end</AbstractText>"
    )
    assert element_text(root) == "max V. uptake in vivo end"
    assert element_text(None) is None
