"""Golden-file comparison for generated folders (Book Skill, Markdown views).

A golden folder holds the expected files byte for byte. Regenerate every golden folder a test
run touches with ``READINGROOM_UPDATE_GOLDEN=1 python -m pytest tests/book``, then review the
diff before committing it.
"""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest

UPDATE_ENV = "READINGROOM_UPDATE_GOLDEN"
_MAX_DIFF_LINES = 80


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}


def _diff(rel: str, expected: bytes, actual: bytes) -> str:
    try:
        lines = list(difflib.unified_diff(
            expected.decode("utf-8").splitlines(keepends=True),
            actual.decode("utf-8").splitlines(keepends=True),
            fromfile=f"golden/{rel}", tofile=f"actual/{rel}",
        ))
    except UnicodeDecodeError:
        return f"{rel}: binary files differ ({len(expected)} vs {len(actual)} bytes)\n"
    if not lines:  # same text, different bytes: line endings or encoding
        return f"{rel}: same text, different bytes (line endings?)\n"
    cut = lines[:_MAX_DIFF_LINES]
    if len(lines) > len(cut):
        cut.append(f"… {len(lines) - len(cut)} more diff lines\n")
    return "".join(cut)


def assert_matches_golden(folder: Path, golden_dir: Path) -> None:
    """Fail unless ``folder`` holds exactly the files of ``golden_dir``, byte for byte.

    With ``READINGROOM_UPDATE_GOLDEN=1`` the golden folder is replaced by a copy of
    ``folder`` instead, and the test passes.
    """
    folder, golden_dir = Path(folder), Path(golden_dir)
    if os.environ.get(UPDATE_ENV) == "1":
        if golden_dir.exists():
            shutil.rmtree(golden_dir)
        shutil.copytree(folder, golden_dir)
        return
    if not golden_dir.is_dir():
        pytest.fail(f"no golden folder {golden_dir}; create it with {UPDATE_ENV}=1")
    actual, expected = _files(folder), _files(golden_dir)
    problems = []
    for rel in sorted(expected.keys() - actual.keys()):
        problems.append(f"missing file: {rel}\n")
    for rel in sorted(actual.keys() - expected.keys()):
        problems.append(f"unexpected file: {rel}\n")
    for rel in sorted(actual.keys() & expected.keys()):
        want, got = expected[rel].read_bytes(), actual[rel].read_bytes()
        if want != got:
            problems.append(_diff(rel, want, got))
    if problems:
        pytest.fail(f"{folder} differs from golden {golden_dir} (regenerate with "
                    f"{UPDATE_ENV}=1 and review):\n" + "".join(problems), pytrace=False)
