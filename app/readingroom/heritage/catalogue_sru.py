"""Reading Helveticat's SRU answers for the catalogue search: failures, damage, items."""

from __future__ import annotations

from typing import Any

from ..core.envelope import MatchKind, SearchedFor, TermUse
from ..core.errors import Code, CoreError
from ..core.script import detect_script
from ..core.sru import SruRecord, SruResponse
from .cql import PHRASE_RELATION, BuiltCql
from .dublin_core import is_dc, parse_dc_record
from .marc21 import is_marc, parse_marc_record
from .sources import HELVETICAT_ID

__all__ = ["sru_damage", "sru_failure", "sru_item", "sru_searched_for"]


def sru_failure(resp: SruResponse) -> CoreError | None:
    """An SRU answer that is an error: diagnostics and no records is never an empty result."""
    if not resp.diagnostics or resp.records:
        return None
    d = resp.diagnostics[0]
    return CoreError(
        Code.API_ERROR,
        f"Helveticat refused the search: {d.message or d.uri}"
        + (f" ({d.details})" if d.details else "")
        + ". This is not an empty result: nothing was searched.",
        details={"uri": d.uri, "message": d.message, "details": d.details},
        remediation="Simplify the term (no brackets or CQL operators); the result is unknown.",
    )


def sru_damage(resp: SruResponse, start: int) -> CoreError | None:
    """An SRU answer too damaged to be a result: never read as zero records.

    A count or records block that is not what SRU sends, no count and no records at all, or a
    count that covers ``start`` with nothing delivered.
    """
    remediation = "Try again later; the result is unknown, not empty."
    if resp.problems:
        return CoreError(
            Code.API_ERROR,
            f"Helveticat's SRU answer is damaged: {'; '.join(resp.problems)}. This is not an "
            "empty result.",
            details={"reason": "malformed_sru", "problems": list(resp.problems)},
            remediation=remediation,
        )
    total = resp.number_of_records
    if total is None and not resp.records:
        return CoreError(
            Code.API_ERROR,
            "Helveticat's SRU answer has neither numberOfRecords nor records: an empty result "
            "cannot be told from a failed one. Nothing is reported as found or not found.",
            details={"reason": "no_count_no_records"},
            remediation=remediation,
        )
    if total is not None and total >= start and not resp.records:
        return CoreError(
            Code.API_ERROR,
            f"Helveticat claims {total} records but delivered none from position {start}. "
            "This is not an empty result.",
            details={"reason": "count_without_records", "number_of_records": total,
                     "start": start},
            remediation=remediation,
        )
    return None


def sru_item(rec: SruRecord) -> dict[str, Any] | str:
    """One SRU record as an item (Dublin Core or MARCXML), or why it could not be read."""
    payload = rec.payload
    if rec.surrogate_diagnostic is not None:
        diagnostic = rec.surrogate_diagnostic
        return diagnostic.message or diagnostic.uri or "a surrogate diagnostic"
    if is_dc(payload):
        assert payload is not None
        item = parse_dc_record(payload, record_id=rec.identifier)
    elif is_marc(payload):
        assert payload is not None
        item = parse_marc_record(payload)
    else:
        return f"schema {rec.schema!r} is neither Dublin Core nor MARCXML"
    return {**item, "source": HELVETICAT_ID, "path": "sru"}



def sru_searched_for(built: BuiltCql) -> SearchedFor:
    exact = built.index in ("mms_id", "main_pub_date")
    return SearchedFor(
        terms=[TermUse(field="query", term=built.term, index=f"alma.{built.index}",
                       match=MatchKind.exact if exact else MatchKind.partial,
                       script=detect_script(built.term))],
        script=detect_script(built.term),
        matching="phrase" if built.relation == PHRASE_RELATION else "all_words_anywhere",
        providers=[HELVETICAT_ID],
    )
