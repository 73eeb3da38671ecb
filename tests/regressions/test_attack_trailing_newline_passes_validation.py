"""A validation pattern anchored with ``$`` accepts a value with a trailing newline.

``re.match(r"^X$", "X\\n")`` matches (``$`` matches before a final newline), so every input
validated that way let ``"X\\n"`` through. Every validator now matches the whole value.
"""

from __future__ import annotations

from datetime import date

import pytest

from readingroom.core.errors import CoreError
from readingroom.core.secrets import valid_name
from readingroom.literature.identifiers import normalize_arxiv, normalize_doi, normalize_pmcid
from readingroom.ndl import cql
from readingroom.ndl.notification import NotificationDateError, parse_filed_date


def test_a_secret_name_with_a_newline_is_refused():
    assert valid_name("NCBI_API_KEY") and not valid_name("NCBI_API_KEY\n")


def test_a_filing_date_with_a_newline_inside_is_refused():
    with pytest.raises(NotificationDateError):
        parse_filed_date("2026-08-19\nX", today=date(2026, 9, 1))


@pytest.mark.parametrize("fields", [{"ndc": "913.6\nX"}, {"issn": "0387-3250\n1234"}])
def test_ndl_identifiers_with_a_newline_inside_are_refused(fields):
    # Surrounding whitespace is trimmed on purpose; a newline inside never passes.
    with pytest.raises(CoreError):
        cql.build_search_query(fields, ("iss-ndl-opac",))


def test_literature_identifiers_keep_to_their_whole_shape():
    assert normalize_doi("10.1000/xyz\n") in (None, "10.1000/xyz")
    assert normalize_pmcid("PMC123\nPMC9") is None
    assert normalize_arxiv("2104.12255\nx") is None
