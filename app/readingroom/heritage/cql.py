"""The SRU query Helveticat is sent: a closed list of indexes, CQL quoting, the fuzzy step.

Alma answers an index it does not know with the **whole catalogue** (2,244,233 records, HTTP
200, no diagnostic; measured for ``alma.unknown_index`` and the plausible typo ``dc.title``),
so only the indexes below are ever sent, and anything else is refused before a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "LOOSENED_RELATION",
    "PHRASE_RELATION",
    "SRU_INDEXES",
    "WORD_INDEXES",
    "BuiltCql",
    "IndexName",
    "build_cql",
    "can_loosen",
    "quote_term",
]

IndexName = Literal["all_for_ui", "title", "creator", "subjects", "main_pub_date", "mms_id"]
SRU_INDEXES: dict[str, str] = {
    "all_for_ui": "all fields, as the catalogue's own search box",
    "title": "title words",
    "creator": "author, editor or corporate body ('Keller, Gottfried')",
    "subjects": "subject headings ('Schulwesen')",
    "main_pub_date": "publication year ('1960')",
    "mms_id": "the record's MMS id (991016034239703976)",
}
"""The measured indexes (``alma.<name>``): the only ones sent."""
WORD_INDEXES = frozenset({"all_for_ui", "title", "creator", "subjects"})
"""Indexes where ``all`` (every word anywhere) is a real loosening of ``=`` (the phrase)."""
PHRASE_RELATION = "="
LOOSENED_RELATION = "all"


@dataclass(frozen=True)
class BuiltCql:
    """A CQL query and how it was made."""

    cql: str
    index: str
    relation: str
    term: str


def quote_term(term: str) -> str:
    """``term`` as a quoted CQL term: ``"`` and ``\\`` backslash-escaped inside the quotes."""
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_cql(index: str, term: str, relation: str = PHRASE_RELATION) -> BuiltCql:
    """``alma.<index> <relation> "<term>"``; no ``sortBy`` (see :mod:`.service` on order).

    Raises:
        ValueError: ``index`` is not one of :data:`SRU_INDEXES`, ``relation`` is not ``=`` or
            ``all``, or the term is blank (callers refuse these before sending).
    """
    if index not in SRU_INDEXES:
        raise ValueError(f"index {index!r} is not one of {sorted(SRU_INDEXES)}")
    if relation not in (PHRASE_RELATION, LOOSENED_RELATION):
        raise ValueError(f"relation {relation!r} is not '=' or 'all'")
    clean = " ".join(term.split())
    if not clean:
        raise ValueError("the search term is blank")
    op = "=" if relation == PHRASE_RELATION else " all "
    return BuiltCql(cql=f"alma.{index}{op}{quote_term(clean)}", index=index,
                    relation=relation, term=clean)


def can_loosen(index: str, term: str) -> bool:
    """True when ``all`` would find more than ``=``: a word index and at least two words."""
    return index in WORD_INDEXES and len(term.split()) > 1
