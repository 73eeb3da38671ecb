"""core.files: atomic replace through symlinks, read-only refusal, replace only if unchanged."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from readingroom.core.files import (
    FileChangedError,
    ReadOnlyFileError,
    write_atomically,
    write_target,
)


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path):
    target = tmp_path / "real.txt"
    target.write_bytes(b"old")
    link = tmp_path / "link.txt"
    try:
        link.symlink_to(target)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"symlinks are not permitted here: {exc}")
    assert write_target(link) == Path(os.path.realpath(target))
    write_atomically(link, "new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]


def test_a_read_only_file_is_refused_untouched(tmp_path: Path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"keep")
    os.chmod(path, stat.S_IREAD)
    try:
        with pytest.raises(ReadOnlyFileError):
            write_atomically(path, "x")
        assert path.read_bytes() == b"keep"
        assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]
    finally:
        os.chmod(path, stat.S_IREAD | stat.S_IWRITE)


def test_expect_replaces_only_what_was_read(tmp_path: Path):
    path = tmp_path / "f.txt"
    write_atomically(path, "one", expect=None)
    write_atomically(path, "two", expect=b"one")
    assert path.read_bytes() == b"two"
    with pytest.raises(FileChangedError):
        write_atomically(path, "three", expect=b"one")
    with pytest.raises(FileChangedError):
        write_atomically(path, "three", expect=None)  # it exists now
    assert path.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]  # no temp file left
    write_atomically(path, "four")  # unchecked by default
    assert path.read_bytes() == b"four"
