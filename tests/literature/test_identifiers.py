"""Identifier normalisation: the forms each provider really sends, reduced to one."""

from __future__ import annotations

import pytest

from readingroom.literature import identifiers
from readingroom.literature.identifiers import (
    ArxivId,
    arxiv_from_doi,
    find_doi,
    normalize_arxiv,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
    normalize_title,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("10.1093/MIND/LIX.236.433", "10.1093/mind/lix.236.433"),  # Semantic Scholar case
        ("https://doi.org/10.7717/peerj.4375", "10.7717/peerj.4375"),  # OpenAlex URL form
        ("http://dx.doi.org/10.1002/ece3.2314", "10.1002/ece3.2314"),
        ("doi:10.1016/S0140-6736(24)02600-X", "10.1016/s0140-6736(24)02600-x"),
        ("DOI: 10.1000/abc", "10.1000/abc"),
        ("10.1000%2Fabc%20def", None),  # a space after decoding is not a DOI
        ("10.1000%2Fabc", "10.1000/abc"),
        ("  10.1101/2020.01.30.927871 ", "10.1101/2020.01.30.927871"),
        ("", None),
        (None, None),
        ("not a doi", None),
        ("11.1000/abc", None),
    ],
)
def test_normalize_doi(raw: str | None, expected: str | None) -> None:
    assert normalize_doi(raw) == expected


def test_trailing_punctuation_only_from_text() -> None:
    assert normalize_doi("10.1000/abc.") == "10.1000/abc."
    assert normalize_doi("10.1000/abc.", from_text=True) == "10.1000/abc"
    assert find_doi("see doi:10.1101/2020.01.30.927871). Then") == "10.1101/2020.01.30.927871"
    assert find_doi("no identifier here") is None
    assert find_doi(None) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://arxiv.org/abs/2202.12139v1", ArxivId("2202.12139", "v1")),
        ("https://arxiv.org/pdf/2104.12255v1.pdf", ArxivId("2104.12255", "v1")),
        ("arXiv:1707.08567", ArxivId("1707.08567", None)),
        ("0704.0001", ArxivId("0704.0001", None)),
        ("astro-ph/0601001", ArxivId("astro-ph/0601001", None)),
        ("http://arxiv.org/abs/astro-ph/0601001v1", ArxivId("astro-ph/0601001", "v1")),
        ("math.gt/0309136V2", ArxivId("math.GT/0309136", "v2")),
        ("abc", None),
        ("0000.000", None),
        (None, None),
    ],
)
def test_normalize_arxiv(raw: str | None, expected: ArxivId | None) -> None:
    assert normalize_arxiv(raw) == expected


def test_arxiv_datacite_doi() -> None:
    assert arxiv_from_doi("https://doi.org/10.48550/arxiv.2304.05376") == "2304.05376"
    assert arxiv_from_doi("10.48550/arXiv.2304.05376v2") == "2304.05376"
    assert arxiv_from_doi("10.1038/s42256-024-00832-8") is None
    assert arxiv_from_doi(None) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("29456894", "29456894"),
        (29456894, "29456894"),
        ("PMID: 29456894", "29456894"),
        ("https://pubmed.ncbi.nlm.nih.gov/29456894", "29456894"),
        ("https://pubmed.ncbi.nlm.nih.gov/29456894/", "29456894"),
        ("0", None),
        ("PMC123", None),
        ("١٢٣", None),  # Arabic-Indic digits are digits to str.isdigit, not to PubMed
        (None, None),
    ],
)
def test_normalize_pmid(raw: str | int | None, expected: str | None) -> None:
    assert normalize_pmid(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("PMC5815332", "PMC5815332"),
        ("pmc5815332", "PMC5815332"),
        ("5815332", "PMC5815332"),  # Semantic Scholar PubMedCentral, JATS pub-id-type="pmc"
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/5815332", "PMC5815332"),  # OpenAlex ids
        ("https://europepmc.org/articles/pmc5815332", "PMC5815332"),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC11116106/", "PMC11116106"),
        ("PMC", None),
        ("NIHMS857349", None),
        (None, None),
    ],
)
def test_normalize_pmcid(raw: str | None, expected: str | None) -> None:
    assert normalize_pmcid(raw) == expected


def test_titles_compare_across_providers() -> None:
    pubmed = 'A &quot;<i>Blood Relationship&quot;</i> Between the Overlooked Minimum.'
    other = "A “Blood Relationship” between the overlooked minimum"
    assert normalize_title(pubmed) == normalize_title(other) == (
        "a blood relationship between the overlooked minimum"
    )
    assert normalize_title("Ｆｕｌｌｗｉｄｔｈ") == "fullwidth"
    assert normalize_title("...") is None
    assert normalize_title(None) is None


def test_urls() -> None:
    assert identifiers.doi_url("10.1/x") == "https://doi.org/10.1/x"
    assert identifiers.pubmed_url("1") == "https://pubmed.ncbi.nlm.nih.gov/1/"
    assert identifiers.pmc_url("PMC1") == "https://pmc.ncbi.nlm.nih.gov/articles/PMC1/"
    assert identifiers.arxiv_abs_url("2104.12255", "v1") == "https://arxiv.org/abs/2104.12255v1"
    assert identifiers.arxiv_pdf_url("astro-ph/0601001") == "https://arxiv.org/pdf/astro-ph/0601001"
