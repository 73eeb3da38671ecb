"""Text from the ledger as a reader and a spreadsheet may be shown it: nothing hidden, no formula.

The terms in a receipt were chosen by an assistant (which injected text can steer), so every
report shows them with their invisible and direction-changing characters escaped, and a CSV
cell never starts a formula. The receipts report and the cross-index both write through here.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["csv_cell", "visible"]

_HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
    "\ud800-\udfff]"
)
"""Characters a reader cannot see, or that change what is displayed around them: C0 and C1
controls, DEL, the Arabic letter mark, zero-width characters, LRM/RLM, line and paragraph
separators, bidi embeddings, overrides and isolates, word joiners, the BOM, lone surrogates."""
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP, CSV Injection)."""


def visible(text: str) -> str:
    """``text`` with every character of :data:`_HIDDEN` shown as its escape (``\\u202e``)."""
    return _HIDDEN.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def csv_cell(value: Any) -> Any:
    """A cell fit for a spreadsheet: controls shown escaped, a formula start neutralised.

    Numbers stay numbers. A text cell whose first character a spreadsheet would read as the
    start of a formula is prefixed with ``'`` (checked before escaping, so a leading tab or
    CR, escaped to ``\\x09``, is still marked).
    """
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return "" if value is None else value
    text = str(value)
    shown = visible(text)
    return "'" + shown if text.startswith(_FORMULA_START) else shown
