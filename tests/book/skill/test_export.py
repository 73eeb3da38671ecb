"""Exporting a Book Skill to a folder or a deterministic zip."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from readingroom.book.skill.build import build_skill
from readingroom.book.skill.export import export_skill
from readingroom.book.skill.validate import (
    validate_skill,
)
from readingroom.core.errors import Code, CoreError

from .books import fm, frontmatter, german_pdf_book, japanese_epub_book, make_skill

# --------------------------------------------------------------------------- export


def test_export_to_a_folder_copies_the_skill(tmp_path: Path) -> None:
    folder = build_skill(german_pdf_book(), tmp_path / "pkg")
    out = export_skill(folder, dir=tmp_path / "skills")
    assert out == tmp_path / "skills" / "geometrie-topologie"
    assert validate_skill(out) == []
    assert (out / "SKILL.md").read_bytes() == (folder / "SKILL.md").read_bytes()
    # Exporting the same skill again (a newer package) replaces it.
    newer = build_skill(replace(german_pdf_book(), package_version=9), tmp_path / "pkg2")
    export_skill(newer, dir=tmp_path / "skills")
    assert frontmatter(out)["metadata"]["book-agent-package-version"] == "9"
    assert sorted(p.name for p in (tmp_path / "skills").iterdir()) == ["geometrie-topologie"]


def test_export_refuses_to_overwrite_something_else_unless_asked(tmp_path: Path) -> None:
    folder = build_skill(german_pdf_book(), tmp_path / "pkg")
    other = tmp_path / "skills" / "geometrie-topologie"
    other.mkdir(parents=True)
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(CoreError) as info:
        export_skill(folder, dir=tmp_path / "skills")
    assert info.value.code is Code.INVALID_INPUT
    assert (other / "notes.txt").exists()
    export_skill(folder, dir=tmp_path / "skills", overwrite=True)
    assert not (other / "notes.txt").exists() and (other / "SKILL.md").is_file()


def test_export_as_zip_has_the_name_at_its_root_and_is_deterministic(tmp_path: Path) -> None:
    folder = build_skill(japanese_epub_book(), tmp_path / "pkg")
    first = export_skill(folder, zip_path=tmp_path / "out" / "neko.zip")
    data = first.read_bytes()
    with zipfile.ZipFile(first) as zf:
        names = zf.namelist()
        assert names == ["wagahai-wa-neko/", "wagahai-wa-neko/references/",
                         "wagahai-wa-neko/SKILL.md", "wagahai-wa-neko/references/contents.md"]
        assert zf.read("wagahai-wa-neko/SKILL.md") == (folder / "SKILL.md").read_bytes()
        assert {info.date_time for info in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    # Same skill again: replaced with the same bytes.
    assert export_skill(folder, zip_path=first).read_bytes() == data
    second = export_skill(folder, zip_path=tmp_path / "again.zip")
    assert second.read_bytes() == data


def test_export_zip_refuses_a_foreign_file_unless_asked(tmp_path: Path) -> None:
    folder = build_skill(japanese_epub_book(), tmp_path / "pkg")
    target = tmp_path / "taken.zip"
    target.write_bytes(b"not mine")
    with pytest.raises(CoreError):
        export_skill(folder, zip_path=target)
    assert target.read_bytes() == b"not mine"
    export_skill(folder, zip_path=target, overwrite=True)
    assert zipfile.is_zipfile(target)


def test_export_argument_errors(tmp_path: Path) -> None:
    folder = build_skill(german_pdf_book(), tmp_path / "pkg")
    with pytest.raises(CoreError) as info:
        export_skill(folder)
    assert info.value.code is Code.INVALID_ARGUMENT
    with pytest.raises(CoreError) as info:
        export_skill(folder, dir=tmp_path, zip_path=tmp_path / "x.zip")
    assert info.value.code is Code.INVALID_ARGUMENT
    with pytest.raises(CoreError) as info:
        export_skill(tmp_path / "nothing", dir=tmp_path / "skills")
    assert info.value.code is Code.NOT_FOUND
    with pytest.raises(CoreError) as info:
        export_skill(folder, zip_path=folder / "references" / "self.zip")
    assert info.value.code is Code.INVALID_INPUT


def test_export_refuses_an_invalid_skill(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, fm(name='"other"', description='"d"'))
    with pytest.raises(CoreError) as info:
        export_skill(folder, dir=tmp_path / "skills")
    assert info.value.code is Code.INVALID_INPUT
    assert info.value.details["violations"]
