"""``book-agent search --all`` (and ``--book``, ``--collection``, ``--tag``) on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from readingroom.book.commands import cli


def _run(data: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli.main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_search_all_prints_hits_with_their_books(template_library: Path, capsys):
    status, out, _err = _run(template_library, "search", "--all", "zephyr4 whale",
                             capsys=capsys)
    assert status == 0
    first = out.splitlines()[0]
    assert "matching records in 12 of 12 books" in first
    assert "book-04" in out and "Generated Book 4" in out and "(Author 4)" in out
    assert "«whale»" in out


def test_search_all_json_is_the_library_envelope(template_library: Path, capsys):
    status, out, _err = _run(template_library, "--json", "search", "--all", "harbour",
                             "--top-k", "5", capsys=capsys)
    assert status == 0
    env = json.loads(out)
    assert env["data"]["scope"] == "library" and len(env["items"]) == 5
    assert all({"book_id", "version", "book", "record_id"} <= h.keys() for h in env["items"])


def test_books_and_filters(template_library: Path, capsys):
    status, out, _err = _run(template_library, "--json", "search", "harbour", "--book",
                             "book-01", "--book", "nope", capsys=capsys)
    env = json.loads(out)
    assert status == 0 and {h["book_id"] for h in env["items"]} == {"book-01"}
    assert env["data"]["books_skipped"][0]["reason"] == "not_registered"
    status, out, _err = _run(template_library, "search", "harbour", "--tag", "essay",
                             capsys=capsys)
    assert status == 0 and "1 of 1 books" in out.splitlines()[0]
    assert "not searched" not in out


@pytest.mark.parametrize(("args", "says"), [
    (("search", "harbour"), "--all"),
    (("search", "book-01", "harbour", "--all"), "not both"),
    (("search", "--all", "harbour", "--hint", "page=1"), "--hint"),
])
def test_refused(template_library: Path, capsys, args: tuple[str, ...], says: str):
    status, _out, err = _run(template_library, *args, capsys=capsys)
    assert status == 1 and "INVALID_ARGUMENT" in err and says in err


def test_one_book_search_is_unchanged(template_library: Path, capsys):
    status, out, _err = _run(template_library, "--json", "search", "book-02", "harbour",
                             capsys=capsys)
    env = json.loads(out)
    assert status == 0 and env["data"]["book_id"] == "book-02"
