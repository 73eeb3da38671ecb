"""Attack: ``readingroom receipts report --out`` naming a folder.

Issue 9 §4. Before, ``os.replace`` raised IsADirectoryError and the user saw a traceback (exit
1). Now it is a one-line error, exit 2, and nothing is written or replaced.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.cli import main
from readingroom.core.ledger import Ledger


@pytest.mark.parametrize("fmt", ["md", "csv"])
def test_report_out_onto_a_directory_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    path = tmp_path / "receipts.jsonl"
    Ledger(path).append({"server": "ndl-mcp", "operation": "search", "query": "q"})
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "keep.txt").write_text("kept")

    assert main(["receipts", "report", str(path), "--format", fmt, "--out", str(folder)]) == 2

    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"error: cannot write the report to {folder}: it is a folder; name a file\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert [p.name for p in folder.iterdir()] == ["keep.txt"]
