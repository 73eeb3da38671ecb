"""Package integrity: what init records, what check() finds, how a damaged book is repaired.

Issue 18 §8 (the attack itself is ``tests/regressions/test_attack_book_damaged_packages.py``).
"""

from __future__ import annotations

import hashlib
import json

import pytest

from readingroom.book.package import Damage, file_digest
from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError
from tests.forked import book_agent

from .make_books import make_pdf

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio


@pytest.fixture
def book(tmp_path):
    service = BookService(tmp_path / "data")
    pdf = make_pdf(tmp_path / "b.pdf", ["Whales swim in the sea.", "Ships sail home."])
    service.init(pdf, book_id="b")
    return service, service.registry.get("b"), pdf


def test_init_records_the_size_and_hash_of_every_file(book):
    _service, pkg, _pdf = book
    files = pkg.manifest["files"]
    assert {"units.jsonl", "toc.json", "records.jsonl", "book.md", "index.sqlite"} <= set(files)
    assert any(name.startswith("skill/") and name.endswith("/SKILL.md") for name in files)
    assert "manifest.json" not in files and not any(n.startswith("source/") for n in files)
    for name, want in files.items():
        raw = (pkg.path / name).read_bytes()
        assert want == {"size": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    assert pkg.check(deep=True) == []


def test_a_same_size_edit_is_found_only_by_the_deep_check(book):
    _service, pkg, _pdf = book
    md = pkg.path / "book.md"
    raw = bytearray(md.read_bytes())
    raw[-2] = ord("X") if raw[-2] != ord("X") else ord("Y")
    md.write_bytes(bytes(raw))
    assert pkg.check() == []
    assert pkg.check(deep=True) == [Damage("book.md", "differs from the file recorded at build "
                                                      "(its SHA-256 changed)")]


def test_a_package_built_before_files_were_recorded_is_checked_for_presence(book):
    service, pkg, _pdf = book
    manifest = json.loads((pkg.path / "manifest.json").read_text(encoding="utf-8"))
    del manifest["files"]
    (pkg.path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    status = service.status("b").data
    assert status["integrity"]["state"] == "ok"
    assert "built before" in status["integrity"]["checked"]
    (pkg.path / "toc.json").unlink()
    assert [d.file for d in pkg.check()] == ["toc.json"]
    assert service.status("b").data["integrity"]["damaged"] == [
        {"file": "toc.json", "problem": "is missing"}]


def test_the_digest_is_recomputed_when_the_file_changes(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"one")
    first = file_digest(path)
    path.write_bytes(b"two!")
    assert file_digest(path) == hashlib.sha256(b"two!").hexdigest() != first


def test_a_damaged_book_can_be_removed(book):
    service, pkg, _pdf = book
    (pkg.path / "manifest.json").write_text("{", encoding="utf-8")
    assert service.remove("b").data["versions_removed"] == 1
    assert service.registry.list_ids() == []


def test_a_book_whose_current_names_a_missing_version_can_be_removed(book):
    service, pkg, _pdf = book
    (pkg.path.parent / "CURRENT").write_text("7\n")
    with pytest.raises(CoreError) as err:
        service.read_entry("b", "r0001")
    assert err.value.code is Code.BOOK_DAMAGED and err.value.details["file"] == "CURRENT"
    service.remove("b")
    with pytest.raises(CoreError) as gone:
        service.status("b")
    assert gone.value.code is Code.BOOK_NOT_FOUND


def test_init_replace_repairs_a_damaged_book_from_its_own_source_copy(book):
    service, pkg, _pdf = book
    (pkg.path / "units.jsonl").unlink()
    with pytest.raises(CoreError) as err:
        service.search("b", "whales")
    remedy = err.value.remediation
    assert "--replace" in remedy and str(pkg.source_file) in remedy
    service.init(pkg.source_file, book_id="b", replace=True)
    assert service.status("b").data["integrity"]["state"] == "ok"
    assert service.search("b", "whales").items


def test_status_of_a_damaged_book_on_the_command_line(book, tmp_path):
    _service, pkg, _pdf = book
    (pkg.path / "index.sqlite").write_bytes(b"not a database")
    done = book_agent(["--data-dir", str(tmp_path / "data"), "status", "b"], text=True,
                      timeout=120)
    assert done.returncode == 0, done.stderr
    assert "DAMAGED files:" in done.stdout and "index.sqlite" in done.stdout
    assert "--replace" in done.stdout, "the repair is printed with the warning"


def test_a_garbage_manifest_status_says_what_it_could_not_check(book, tmp_path):
    service, pkg, _pdf = book
    (pkg.path / "manifest.json").write_bytes(b"\x00\xff garbage")
    data = service.status("b").data
    assert data["integrity"]["state"] == "damaged"
    assert data["integrity"]["damaged"][0]["file"] == "manifest.json"
    done = book_agent(["--data-dir", str(tmp_path / "data"), "status", "b"], text=True,
                      timeout=120)
    assert done.returncode == 0 and "b, version 1: DAMAGED" in done.stdout, done


def test_a_same_size_edit_of_the_records_is_refused_when_they_load(book):
    service, pkg, _pdf = book
    records = pkg.path / "records.jsonl"
    raw = records.read_bytes()
    records.write_bytes(raw.replace(b"Whales", b"Wholes", 1))
    assert len(records.read_bytes()) == len(raw) and pkg.check() == []
    with pytest.raises(CoreError) as err:
        service.search("b", "whales")
    assert err.value.code is Code.BOOK_DAMAGED and err.value.details["file"] == "records.jsonl"
    assert "SHA-256" in err.value.message
