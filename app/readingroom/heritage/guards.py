"""The Helveticat catalogue's guards: every refusal before a request is sent.

Dates without a set, neither query nor set, an index outside the closed list, a malformed date
or set, a cursor of another query or collection: each is an ``INVALID_INPUT`` raised here, so
nothing reaches Alma that it would answer wrongly (an unknown index is the whole catalogue).
"""

from __future__ import annotations

import re
from datetime import date, datetime

from ..core.errors import Code, CoreError
from .catalogue_paging import OaiCursor, SruCursor, query_fingerprint
from .catalogue_values import OAI_ID_PREFIX, oai_identifier
from .cql import SRU_INDEXES
from .oai_sets import SET_SPEC_PATTERN, prefix_for

__all__ = ["RESULT_WINDOW", "check_oai_cursor", "check_search", "normalise_identifier",
           "valid_date"]

RESULT_WINDOW = 10_000
"""Ex Libris: past 10,000 records of a result set Alma's SRU answers with an error."""
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}Z)?$")
_MMS = re.compile(r"^\d{6,25}$")
_ALMA_BIB = re.compile(r"^alma:[A-Za-z0-9_]+/bibs/(\d{6,25})$")


def check_search(
    query: str | None, set_spec: str | None, from_date: str | None,
    until_date: str | None, index: str, cursor: SruCursor | OaiCursor | None,
) -> None:
    browsing = set_spec is not None or isinstance(cursor, OaiCursor)
    if (from_date or until_date) and not browsing:
        raise CoreError(
            Code.INVALID_INPUT,
            "from_date/until_date are catalogue change dates (OAI datestamps) and only "
            "work with set_spec; they are not publication years. Nothing was sent.",
            details={"fields": [f for f, v in (("from_date", from_date),
                                               ("until_date", until_date)) if v]},
            remediation="Add a set_spec from heritage_list_nb_collections, or drop the "
            "dates. For publication years search query with index='main_pub_date'.",
        )
    if not query and not browsing:
        raise CoreError(
            Code.INVALID_INPUT,
            "Give either query (a full-text search of the whole catalogue) or set_spec "
            "(page through one collection). Nothing was sent.",
            details={"fields": ["query", "set_spec"]},
            remediation="Pass query='…', or set_spec from heritage_list_nb_collections.",
        )
    if index not in SRU_INDEXES:
        raise CoreError(
            Code.INVALID_INPUT,
            f"index {index!r} is not one this tool sends: Alma answers an unknown index "
            "with the whole catalogue and no error. Nothing was sent.",
            details={"field": "index", "allowed": sorted(SRU_INDEXES)},
            remediation=f"Use one of {', '.join(sorted(SRU_INDEXES))}.",
        )
    for name, value in (("from_date", from_date), ("until_date", until_date)):
        if value and not valid_date(value):
            raise CoreError(
                Code.INVALID_INPUT,
                f"{name} {value!r} is not YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ.",
                details={"field": name},
                remediation="Write the change date as 2025-08-21.",
            )
    if from_date and until_date and from_date[:10] > until_date[:10]:
        raise CoreError(
            Code.INVALID_INPUT, "from_date is after until_date; nothing was sent.",
            details={"fields": ["from_date", "until_date"]},
            remediation="Swap the two dates.",
        )
    if set_spec is not None and not SET_SPEC_PATTERN.fullmatch(set_spec):
        raise CoreError(
            Code.INVALID_INPUT, f"set_spec {set_spec!r} is not an OAI set identifier.",
            details={"field": "set_spec"},
            remediation="Take a set_spec from heritage_list_nb_collections.",
        )
    if isinstance(cursor, SruCursor):
        if set_spec is not None:
            raise CoreError(
                Code.INVALID_INPUT,
                "This cursor continues a catalogue search, not a collection.",
                details={"field": "cursor"},
                remediation="Drop set_spec, or drop the cursor to start the collection.",
            )
        if not query or cursor.fingerprint != query_fingerprint(index, query):
            raise CoreError(
                Code.INVALID_INPUT,
                "This cursor belongs to another search: pass the same query and index "
                "as the answer that gave it. Nothing was sent.",
                details={"field": "cursor"},
                remediation="Repeat query and index unchanged with the cursor, or drop it.",
            )
        if cursor.start > RESULT_WINDOW:
            raise CoreError(
                Code.INVALID_INPUT,
                f"Alma's SRU serves no record past the {RESULT_WINDOW}th of a result set.",
                details={"field": "cursor", "window": RESULT_WINDOW},
                remediation="Narrow the query instead of paging further.",
            )
    if isinstance(cursor, OaiCursor):
        check_oai_cursor(cursor, set_spec, from_date, until_date)

def check_oai_cursor(cursor: OaiCursor, set_spec: str | None, from_date: str | None,
                      until_date: str | None) -> None:
    """A collection cursor, checked like fresh arguments: set, format, window, dates."""
    if set_spec not in (None, cursor.set_spec):
        raise CoreError(
            Code.INVALID_INPUT,
            f"This cursor continues the collection {cursor.set_spec!r}, not {set_spec!r}.",
            details={"field": "cursor"},
            remediation="Repeat the same set_spec with the cursor, or drop the cursor.",
        )
    window_ok = all(not v or valid_date(v) for v in (cursor.from_date, cursor.until_date))
    ordered = not (cursor.from_date and cursor.until_date
                   and cursor.from_date[:10] > cursor.until_date[:10])
    if (not SET_SPEC_PATTERN.fullmatch(cursor.set_spec)
            or cursor.prefix != prefix_for(cursor.set_spec) or not window_ok or not ordered):
        raise CoreError(
            Code.INVALID_INPUT,
            "The cursor is not one this tool handed out (its collection, format or "
            "change-date window is not valid); nothing was sent.",
            details={"field": "cursor", "reason": "invalid_values"},
            remediation="Pass data.next_cursor exactly as the previous answer gave it, or "
            "leave it out to start from the first page.",
        )
    if (from_date or until_date) and (from_date, until_date) != (cursor.from_date,
                                                                 cursor.until_date):
        raise CoreError(
            Code.INVALID_INPUT,
            "This cursor continues the change-date window it was made for "
            f"(from {cursor.from_date or 'the start'} until {cursor.until_date or 'now'}); "
            "a resumption token cannot change it. Nothing was sent.",
            details={"fields": ["cursor", "from_date", "until_date"],
                     "cursor_window": {"from_date": cursor.from_date,
                                       "until_date": cursor.until_date}},
            remediation="For another window start again: pass set_spec and the new dates "
            "without the cursor. To continue, pass the cursor with the same dates or none.",
        )


def normalise_identifier(identifier: str) -> str | None:
    """The OAI identifier for an OAI id, an MMS id or an ``alma:…/bibs/<mms>`` id; else None."""
    text = identifier.strip()
    if text.startswith(OAI_ID_PREFIX):
        text = text[len(OAI_ID_PREFIX):]
    alma = _ALMA_BIB.fullmatch(text)
    if alma is not None:
        text = alma.group(1)
    return oai_identifier(text) if _MMS.fullmatch(text) else None


def valid_date(value: str) -> bool:
    if not _DATE.fullmatch(value):
        return False
    try:
        if "T" in value:
            datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
        else:
            date.fromisoformat(value)
    except ValueError:
        return False
    return True
