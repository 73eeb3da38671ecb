"""References: CSL-JSON, BibTeX and RIS that real parsers read back; stable keys; dates."""

from __future__ import annotations

import json
import shutil

import bibtexparser
import pytest
import rispy

from readingroom.book.library.citation import (
    bibtex_key,
    citation_line,
    date_parts,
    file_reference,
    name_parts,
    passage_locator,
    to_bibtex,
    to_csl_json,
    to_ris,
    with_locator,
)
from tests.forked import book_agent

from ..conftest import fixture_books

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

REF = {
    "id": "quellen", "type": "chapter", "title": "Über {Quellen} & 50% der_Theorie #1",
    "author": [{"family": "Thoma", "given": "Martin"}, {"family": "Lovelace", "given": "Ada"},
               {"literal": "World Health Organization"}],
    "editor": [{"family": "Noether", "given": "Emmy"}],
    "container-title": "Handbuch der Topologie", "issued": {"date-parts": [[2019, 5]]},
    "publisher": "Springer", "publisher-place": "Berlin", "DOI": "10.1000/xyz_123",
    "ISBN": "9783161484100", "URL": "https://example.org/a?b=c&d=e", "language": "de",
}


def test_zotero_multipart_and_other_dates():
    assert date_parts("2019-00-00 2019") == {"date-parts": [[2019]]}
    assert date_parts("2020-05-00 May 2020") == {"date-parts": [[2020, 5]]}
    assert date_parts("2018-03-14 2018-03-14") == {"date-parts": [[2018, 3, 14]]}
    assert date_parts("2011-08-05 06:00:00+00:00") == {"date-parts": [[2011, 8, 5]]}
    assert date_parts("0101-01-01 00:00:00+00:00") is None  # calibre's "undefined"
    assert date_parts("c. 1850") == {"date-parts": [[1850]]}
    assert date_parts("spring") == {"literal": "spring"}
    assert date_parts("") is None


def test_names_split_only_when_written_family_first():
    assert name_parts("Thoma, Martin") == {"family": "Thoma", "given": "Martin"}
    assert name_parts("Martin Thoma") == {"literal": "Martin Thoma"}
    assert name_parts("  Ludwig  van Beethoven ") == {"literal": "Ludwig van Beethoven"}


def test_bibtex_parses_back_with_bibtexparser():
    text = to_bibtex(with_locator(REF, "page", "12–14"))
    library = bibtexparser.parse_string(text)
    assert not library.failed_blocks
    (entry,) = library.entries
    assert entry.entry_type == "incollection" and entry.key == "thoma2019uber"
    fields = {f.key: f.value for f in entry.fields}
    assert fields["title"] == r"{Über \{Quellen\} \& 50\% der\_Theorie \#1}"
    assert fields["author"] == "Thoma, Martin and Lovelace, Ada and {World Health Organization}"
    assert fields["booktitle"] == "Handbuch der Topologie" and fields["year"] == "2019"
    assert fields["doi"] == "10.1000/xyz_123" and fields["pages"] == "12--14"
    assert fields["address"] == "Berlin" and fields["editor"] == "Noether, Emmy"


def test_ris_parses_back_with_rispy():
    (entry,) = rispy.loads(to_ris(with_locator(REF, "page", "12–14")))
    assert entry["type_of_reference"] == "CHAP"
    assert entry["authors"] == ["Thoma, Martin", "Lovelace, Ada", "World Health Organization"]
    assert entry["title"] == REF["title"] and entry["year"] == "2019"
    assert entry["doi"] == "10.1000/xyz_123" and entry["start_page"] == "12"
    assert entry["end_page"] == "14" and entry["publisher"] == "Springer"
    assert entry["urls"] == ["https://example.org/a?b=c&d=e"] and entry["issn"] == "9783161484100"


def test_csl_json_is_an_array_of_one_item():
    items = json.loads(to_csl_json(REF))
    assert items == [REF]


def test_keys_are_stable_and_prefer_the_library_key():
    assert bibtex_key(REF) == bibtex_key(dict(REF)) == "thoma2019uber"
    assert bibtex_key({**REF, "citation-key": "Thoma:2019"}) == "Thoma:2019"
    assert bibtex_key({"title": "The Art of Computer Programming"}) == "art"
    assert bibtex_key({"id": "x", "title": "論語"}) == "x"


def test_citation_line_and_passages():
    line = citation_line(with_locator(REF, "page", "12–14"))
    assert line == ("Thoma, M.; Lovelace, A.; World Health Organization (2019). Über {Quellen}"
                    " & 50% der_Theorie #1. In Handbuch der Topologie. Berlin: Springer. "
                    "https://doi.org/10.1000/xyz_123 pp. 12–14.")
    assert passage_locator({"kind": "pdf_page", "page_index": 4, "page_end_index": 5}) == (
        "page", "5–6")
    assert passage_locator({"kind": "pdf_page", "page_label": "iv", "page_end_label": "iv",
                            "page_index": 3}) == ("page", "iv")
    assert passage_locator({"kind": "epub_chapter", "unit_index": 2, "unit_end_index": 2}) == (
        "chapter", "3")
    assert passage_locator({"kind": "markdown_lines", "line_start": 3, "line_end": 9}) == (
        "line", "3–9")


def test_file_reference_from_epub_metadata():
    ref = file_reference({"id": "b", "title": "T", "authors": ["Doe, Jane"], "language": "en",
                          "metadata": {"publisher": "P", "date": "2012-04-01",
                                       "identifier": "urn:isbn:978-0-14-070721-2"}})
    assert ref == {"id": "b", "type": "book", "title": "T",
                   "author": [{"family": "Doe", "given": "Jane"}],
                   "issued": {"date-parts": [[2012, 4, 1]]}, "publisher": "P",
                   "ISBN": "9780140707212", "language": "en"}


@pytest.fixture(scope="module")
def cited(tmp_path_factory):
    """A book added by the CLI and a locator into it."""
    root = tmp_path_factory.mktemp("cite")
    folder = root / "in"
    folder.mkdir()
    shutil.copyfile(fixture_books() / "regime-anticancer-arabic.epub", folder / "regime.epub")
    cli = ["--data-dir", str(root / "data")]
    book_agent([*cli, "add", str(folder)], check=True, timeout=120)
    loc = json.loads(book_agent([*cli, "--json", "locate", "regime", "--record", "r0002"],
                                text=True, timeout=60).stdout)
    return cli, loc["items"][0]["locator"]


@pytest.mark.parametrize("fmt", ["bibtex", "ris", "csl-json"])
def test_cite_command_prints_a_parseable_reference(cited, fmt):
    cli, locator = cited
    done = book_agent([*cli, "cite", "regime", "--format", fmt, "--locator",
                       json.dumps(locator)], text=True, encoding="utf-8", timeout=60)
    assert done.returncode == 0, done.stderr
    if fmt == "bibtex":
        (entry,) = bibtexparser.parse_string(done.stdout).entries
        assert entry.key == "khayat2012vrai"
        assert entry.fields_dict["publisher"].value == "Hachette Antoine"
    elif fmt == "ris":
        (entry,) = rispy.loads(done.stdout)
        assert entry["year"] == "2012" and entry["id"] == "khayat2012vrai"
    else:
        (item,) = json.loads(done.stdout)
        assert item["title"] == "Le Vrai Régime anti-cancer"
        assert item["label"] == "chapter" and item["locator"] == str(locator["unit_index"] + 1)
        assert item["citation-key"] == "khayat2012vrai"
