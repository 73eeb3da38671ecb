"""Attack: book ids a folder name should never have.

`--id $'abc\\n'` was accepted: the id pattern ended in ``$``, which matches before a trailing
newline, so a folder ``abc\\n`` was created that the Skill could not find. ``con``, ``nul``,
``com1``, ``aux.txt`` and ``abc.`` were accepted although Windows reserves them (a data folder
synced to Windows, or the same books opened there, breaks). Now the whole id is matched
(``fullmatch``) and these are refused with the reason; an id made from a file name avoids them.
"""

from __future__ import annotations

import pytest
from tests.book.make_books import make_pdf
from tests.forked import book_agent

from readingroom.book.package import book_id_from_name, check_book_id
from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError

REFUSED = {
    "abc\n": "'\\n'",
    "abc\r": "'\\r'",
    "con": "Windows reserves",
    "nul": "Windows reserves",
    "com1": "Windows reserves",
    "lpt9": "Windows reserves",
    "aux.txt": "Windows reserves",
    "prn.tar.gz": "Windows reserves",
    "abc.": "ends with '.'",
    "Abc": "'A'",
    "-abc": "start with a letter or a digit",
    "a..b": "'..'",
    "x" * 65: "longer than 64",
    "": "empty",
}


@pytest.mark.parametrize("bad", sorted(REFUSED), ids=repr)
def test_bad_ids_are_refused_with_the_reason(bad):
    with pytest.raises(CoreError) as e:
        check_book_id(bad)
    assert e.value.code is Code.INVALID_ARGUMENT
    assert REFUSED[bad] in e.value.message and e.value.details["reason"]


@pytest.mark.parametrize("good", ["abc", "console", "con-book", "com10", "a.b_c-d", "nul1",
                                  "auxiliary.v2", "x" * 64])
def test_near_misses_are_still_good_ids(good):
    assert check_book_id(good) == good


def test_ids_from_file_names_avoid_reserved_names():
    assert book_id_from_name("CON.pdf") == "con-book"
    assert book_id_from_name("Aux.epub") == "aux-book"
    check_book_id(book_id_from_name("x" * 200 + ".pdf"))


@pytest.mark.stdio
def test_cli_refuses_a_trailing_newline_and_creates_no_folder(tmp_path):
    src = make_pdf(tmp_path / "b.pdf", ["Some text."])
    data = tmp_path / "data"
    for bad in ("abc\n", "con", "aux.txt", "abc."):
        done = book_agent(["--data-dir", str(data), "init", str(src), "--id", bad],
                          text=True, encoding="utf-8", timeout=60)
        assert done.returncode == 1
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "INVALID_ARGUMENT" in lines[0]
    books = data / "books"
    assert not books.exists() or [p.name for p in books.iterdir()
                                  if not p.name.startswith(".")] == []
    service = BookService(data)
    assert service.list().items == []
