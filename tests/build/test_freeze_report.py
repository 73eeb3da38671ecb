"""build/freeze.py counts what the disk holds: a hard-linked file once, a symbolic link never."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "build"))
import freeze


def test_a_file_reached_twice_is_counted_once(tmp_path: Path):
    (tmp_path / "_internal").mkdir()
    library = tmp_path / "_internal" / "libbig.so"
    library.write_bytes(b"x" * 10_000)
    (tmp_path / "small").write_bytes(b"y" * 100)
    try:
        (tmp_path / "libbig.so").symlink_to(Path("_internal") / "libbig.so")
        os.link(library, tmp_path / "_internal" / "libbig-again.so")
    except (OSError, NotImplementedError) as exc:  # e.g. Windows without symlink rights
        pytest.skip(f"links cannot be made here: {exc}")
    size, allocated, files, links = freeze.disk_usage(tmp_path)
    assert (size, files, links) == (10_100, 2, 1)
    assert allocated >= size
    line = freeze.describe(tmp_path)
    assert line.startswith("0.0 MiB in 2 files (") and "1 symbolic links not followed" in line


def test_a_licence_keeps_its_folder_inside_the_distribution_metadata():
    assert freeze.licence_name(("numpy-2.4.6.dist-info", "licenses", "LICENSE.txt")) == (
        "LICENSE.txt")
    assert freeze.licence_name(("numpy-2.4.6.dist-info", "licenses", "numpy", "random", "src",
                                "pcg64", "LICENSE.md")) == "numpy/random/src/pcg64/LICENSE.md"
    assert freeze.licence_name(("lxml-6.0.dist-info", "LICENSE.txt")) == "LICENSE.txt"
    assert freeze.licence_name(("x-1.dist-info", "licenses")) == "licenses"


def test_no_two_licence_files_of_a_bundled_distribution_share_a_name():
    """The release archive stores them as licenses/<name-version>/<name>: one name, one file."""
    licences = freeze.third_party_licences()
    assert licences, "the bundled distributions have licence files"
    for label, files in licences.items():
        names = [name for name, _ in files]
        assert len(names) == len(set(names)), (label, sorted(names))
        assert all(data for _, data in files), label
