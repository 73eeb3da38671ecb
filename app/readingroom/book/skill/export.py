"""Exporting a Book Skill: a copy in a skills folder, or a deterministic zip.

Both are written aside and moved into place (:mod:`readingroom.core.files`), so a reader of
the destination sees the old skill or the new one, never half of one.
"""

from __future__ import annotations

import io
import shutil
import tempfile
import zipfile
from pathlib import Path

from ...core.errors import Code, CoreError
from ...core.files import replace_path, write_atomically
from .validate import read_frontmatter, validate_skill

__all__ = ["export_skill"]

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


# --------------------------------------------------------------------------- exporting


def _files(folder: Path) -> list[tuple[str, Path]]:
    """The skill's regular files as ``(posix path relative to folder, path)``, sorted."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            found.append((path.relative_to(folder).as_posix(), path))
    return sorted(found)


def _skill_identity(folder: Path) -> tuple[object, object] | None:
    meta = read_frontmatter(folder)
    if meta is None:
        return None
    metadata = meta.get("metadata")
    book = metadata.get("book-agent-book-id") if isinstance(metadata, dict) else None
    return meta.get("name"), book


def export_skill(skill_folder: Path, *, dir: Path | None = None, zip_path: Path | None = None,
                 overwrite: bool = False) -> Path:
    """Copy a Book Skill to ``dir/<name>/``, or write it as a zip with ``<name>/`` at its root.

    An existing copy of the same skill (same name and book id) is replaced; anything else at
    the destination is refused unless ``overwrite``. The zip is deterministic: sorted entries,
    1980-01-01 timestamps, fixed permissions. Returns the folder or zip written.

    Raises:
        CoreError: ``INVALID_ARGUMENT`` without exactly one destination, ``NOT_FOUND`` for a
            missing skill, ``INVALID_INPUT`` for an invalid skill or an occupied destination.
    """
    if (dir is None) == (zip_path is None):
        raise CoreError(Code.INVALID_ARGUMENT, "Give exactly one of a folder or a zip file.",
                        remediation="--dir ~/.agents/skills or --zip book-skill.zip")
    source = Path(skill_folder)
    if not (source / "SKILL.md").is_file():
        raise CoreError(Code.NOT_FOUND, "The Book Skill folder has no SKILL.md.",
                        details={"folder": str(source)},
                        remediation="Rebuild the book package (book-agent init --replace).")
    violations = validate_skill(source)
    if violations:
        raise CoreError(Code.INVALID_INPUT, "The Book Skill breaks the Agent Skills rules.",
                        details={"violations": violations},
                        remediation="Rebuild the book package (book-agent init --replace).")
    name = source.name
    target = Path(zip_path) if zip_path is not None else Path(dir or ".") / name
    inside = target.resolve().is_relative_to(source.resolve())
    if inside and (zip_path is not None or target.resolve() != source.resolve()):
        raise CoreError(Code.INVALID_INPUT, "The destination is inside the Book Skill itself.",
                        details={"path": str(target)},
                        remediation="Choose a destination outside the skill folder.")
    if zip_path is not None:
        return _export_zip(source, name, target, overwrite)
    return _export_dir(source, name, target.parent, overwrite)


def _occupied(where: Path) -> CoreError:
    return CoreError(Code.INVALID_INPUT, f"{where} already exists and is not this Book Skill.",
                     details={"path": str(where)},
                     remediation="Choose another destination, or pass --overwrite to replace it.")


def _export_dir(source: Path, name: str, parent: Path, overwrite: bool) -> Path:
    target = parent / name
    if target.exists() and target.resolve() == source.resolve():
        return target
    if target.exists() or target.is_symlink():
        same = target.is_dir() and not target.is_symlink() and (
            _skill_identity(target) == _skill_identity(source)
            or not any(target.iterdir())
        )
        if not (same or overwrite):
            raise _occupied(target)
    files = _files(source)
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
    try:
        staged = work / name
        staged.mkdir()
        for rel, path in files:
            dest = staged / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        replace_path(staged, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _zip_holds_skill(path: Path, name: str) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            return f"{name}/SKILL.md" in zf.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _zip_entry(name: str, is_dir: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
    info.create_system = 3  # Unix, on every platform, so the bytes do not depend on the OS
    if is_dir:
        info.external_attr = (0o40755 << 16) | 0x10
    else:
        info.external_attr = 0o100644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _export_zip(source: Path, name: str, zip_path: Path, overwrite: bool) -> Path:
    if zip_path.exists() and not (overwrite or (
        zip_path.is_file() and _zip_holds_skill(zip_path, name)
    )):
        raise _occupied(zip_path)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    files = _files(source)
    dirs = sorted({str(Path(rel).parent.as_posix()) for rel, _ in files} - {"."})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(_zip_entry(f"{name}/", True), b"")
        for rel in dirs:
            zf.writestr(_zip_entry(f"{name}/{rel}/", True), b"")
        for rel, path in files:
            zf.writestr(_zip_entry(f"{name}/{rel}", False), path.read_bytes(), compresslevel=9)
    write_atomically(zip_path, buffer.getvalue())
    return zip_path
