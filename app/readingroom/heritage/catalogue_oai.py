"""Reading Helveticat's OAI-PMH answers for the collections: errors, paging, items."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.envelope import MatchKind, SearchedFor, TermUse
from ..core.errors import Code, CoreError
from ..core.oaipmh import OaiError, OaiErrorCode, OaiOutcome, OaiRecord
from ..core.script import Script, detect_script
from .catalogue_paging import OaiCursor
from .dublin_core import is_dc, parse_dc_record
from .marc21 import is_marc, parse_marc_record
from .sources import HELVETICAT_ID

__all__ = ["describe_oai", "haystack", "is_no_profile", "list_records_params", "oai_error",
           "oai_item", "oai_searched_for", "page_match"]

_NO_PROFILE = "publishing profile"
_FILTER_KEYS = ("title", "subjects", "notes", "series")


def is_no_profile(error: OaiError) -> bool:
    return _NO_PROFILE in (error.message or "").lower()


def oai_error(first: OaiError, errors: Sequence[OaiError], page: OaiCursor | None) -> CoreError:
    """The failure an OAI ``<error>`` stands for; never an empty result."""
    details: dict[str, Any] = {"oai_errors": [{"code": e.code, "message": e.message}
                                              for e in errors]}
    if first.known is OaiErrorCode.NO_RECORDS_MATCH:
        prefix = page.prefix if page else "?"
        return CoreError(
            Code.API_ERROR,
            f"Helveticat publishes the set {page.set_spec if page else '?'!r} in another "
            f"format than {prefix} (OAI noRecordsMatch: no publishing profile). This is not "
            "an empty collection: nothing was listed.",
            details={**details, "meaning": "wrong_metadata_prefix"},
            remediation="The set's format map needs an update; report it. Other sets work.",
        )
    if first.known is OaiErrorCode.BAD_RESUMPTION_TOKEN:
        return CoreError(
            Code.API_ERROR,
            "The collection's cursor has expired or is invalid at Helveticat "
            "(OAI badResumptionToken). Nothing was listed.",
            details=details,
            remediation="Start the collection again without cursor.",
        )
    outcome = first.outcome
    remediation = {
        OaiOutcome.CALLER_MISTAKE: "Check set_spec and the dates; the result is unknown.",
        OaiOutcome.UPSTREAM_CANNOT_ANSWER: "Try again later; the result is unknown.",
    }.get(outcome, "The result is unknown.")
    return CoreError(
        Code.API_ERROR,
        f"Helveticat answered with OAI error {first.code}"
        + (f": {first.message}" if first.message else "")
        + ". This is not an empty result.",
        details={**details, "outcome": str(outcome)},
        remediation=remediation,
    )


def list_records_params(page: OaiCursor) -> dict[str, str]:
    if page.token is not None:
        return {"verb": "ListRecords", "resumptionToken": page.token}
    params = {"verb": "ListRecords", "metadataPrefix": page.prefix, "set": page.set_spec}
    if page.from_date:
        params["from"] = page.from_date
    if page.until_date:
        params["until"] = page.until_date
    return params


def describe_oai(params: Mapping[str, str]) -> str:
    return "&".join(f"{k}={v}" for k, v in params.items())


def oai_item(rec: OaiRecord) -> dict[str, Any] | None:
    metadata = rec.metadata
    if is_marc(metadata):
        assert metadata is not None
        item = parse_marc_record(metadata)
    elif is_dc(metadata):
        assert metadata is not None
        item = parse_dc_record(metadata)
    else:
        return None
    if rec.header.identifier:
        item["id"] = rec.header.identifier
    item["source"] = HELVETICAT_ID
    item["path"] = "oai"
    if rec.header.datestamp:
        item["datestamp"] = rec.header.datestamp
    if rec.header.set_specs:
        item["set_specs"] = list(rec.header.set_specs)
    return item


def haystack(item: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for key in _FILTER_KEYS:
        value = item.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(str(v) for v in value)
    for key in ("creators", "contributors"):
        parts.extend(str(n.get("name", "")) for n in item.get(key, []))
    return " ".join(parts).casefold()


def page_match(item: Mapping[str, Any], term: str) -> bool:
    hay = haystack(item)
    return all(word in hay for word in term.casefold().split())



def oai_searched_for(term: str | None, set_spec: str) -> SearchedFor:
    terms = [] if not term else [TermUse(
        field="query", term=term, index="page_filter", match=MatchKind.partial,
        script=detect_script(term))]
    return SearchedFor(terms=terms, script=detect_script(term) if term else Script.none,
                       matching="page_filter" if term else "collection_browse",
                       providers=[set_spec])
