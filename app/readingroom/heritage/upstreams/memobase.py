"""Memobase (Memoriav's audiovisual heritage portal): JSON-LD with Hydra paging.

``GET {base}/?q=&size=&offset=`` answers a ``hydra:Collection`` (``hydra:member``,
``hydra:totalItems``); ``GET {base}/record/<id>`` one ``rico:Record``. Both asked with
``Accept: application/ld+json``. Parsing is pure and tested on the real recordings; pages
follow :mod:`.shape`'s rule. Record ids may be given with the ``mbr:`` prefix the records carry
(the original stripped it too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ...core.errors import CoreError
from ..egress import Egress, containers_for
from ..shape import Page, listed, mapping_with, page_of, shape_error, text_of
from ..sources import MEMOBASE

__all__ = [
    "ACCEPT",
    "fetch_record",
    "fetch_search",
    "parse_record",
    "parse_search",
    "record_id",
    "record_item",
]

ACCEPT = "application/ld+json"


def _shape(message: str, **details: Any) -> CoreError:
    return shape_error("Memobase", message, **details)


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _mappings(value: Any, name: str, problems: set[str]) -> list[Mapping[str, Any]]:
    return [v for v in listed(value, name, problems) if isinstance(v, Mapping)]


def _usage_rule(record: Mapping[str, Any], problems: set[str]
                ) -> tuple[str | None, str | None]:
    """The item's usage rule (name, URI): the digital object's first, else the physical one's."""
    found: dict[str, tuple[str | None, str | None]] = {}
    for inst in _mappings(record.get("hasInstantiation"), "hasInstantiation", problems):
        for rule in _mappings(inst.get("isOrWasRegulatedBy"), "isOrWasRegulatedBy", problems):
            if rule.get("type") == "usage":
                uris = _texts(rule.get("sameAs"))
                found.setdefault(text_of(inst.get("type")) or "",
                                 (text_of(rule.get("name")), uris[0] if uris else None))
    return found.get("digitalObject") or found.get("physicalObject") or (None, None)


def record_item(record: Mapping[str, Any], problems: set[str] | None = None) -> dict[str, Any]:
    """One ``rico:Record`` as an item, with the metadata licence and the object's own rule.

    Fields of the wrong type are treated as absent; their names go to ``problems``.
    """
    noted: set[str] = problems if problems is not None else set()
    raw_id = text_of(record.get("@id")) or ""
    rid = raw_id.removeprefix("mbr:")
    created = record.get("created")
    date = text_of(created.get("normalizedDateValue")) if isinstance(created, Mapping) else None
    holder = next((text_of(r.get("name")) for r in
                   _mappings(record.get("isOrWasRegulatedBy"), "isOrWasRegulatedBy", noted)
                   if r.get("type") == "holder"), None)
    usage, rights_url = _usage_rule(record, noted)
    notes = _texts(record.get("abstract")) + _texts(record.get("descriptiveNote"))
    return {
        "source": MEMOBASE.id,
        "collection": "memobase",
        "id": rid,
        "title": text_of(record.get("title")),
        "type": text_of(record.get("type")),
        "date": date,
        "description": notes[0] if notes else None,
        "permalink": f"https://memobase.ch/record/{rid}" if rid else None,
        "licence": usage or MEMOBASE.licence,
        "licence_from": "record" if usage else "source",
        "licence_metadata": MEMOBASE.licence,
        "licence_item": usage,
        "rights_url": rights_url,
        "rights_holder": holder,
        "conditions_of_use": _texts(record.get("conditionsOfUse")) or None,
    }


def parse_search(payload: Any, *, offset: int = 0, limit: int = 100) -> Page:
    """A Hydra collection → the page of ``rico:Record`` members (each with an ``@id``)."""
    if not isinstance(payload, Mapping) or "hydra:member" not in payload:
        keys = sorted(payload) if isinstance(payload, Mapping) else type(payload).__name__
        raise _shape("no hydra:member list in the answer.", keys=keys)
    return page_of("Memobase", payload["hydra:member"], payload.get("hydra:totalItems"),
                   offset=offset, limit=limit, readable=mapping_with("@id"), what="records")


def record_id(item_id: str) -> str:
    """The id Memobase's ``/record/`` takes: the original stripped an ``mbr:`` prefix too."""
    return item_id.removeprefix("mbr:")


def parse_record(payload: Any, item_id: str | None = None) -> dict[str, Any]:
    """One ``rico:Record`` → its item, plus the record's titles and identifiers.

    Raises:
        CoreError: API_ERROR for an answer without ``@id``, or (``item_id`` given) the record
            of another id.
    """
    if not isinstance(payload, Mapping) or not text_of(payload.get("@id")):
        raise _shape("the record has no @id.", reason="record_unreadable")
    problems: set[str] = set()
    item = record_item(payload, problems)
    if item_id is not None and item["id"] != record_id(item_id):
        raise _shape(f"asked for record {record_id(item_id)}, it answered another one.",
                     reason="identifier_mismatch")
    item["titles"] = [t for r in _mappings(payload.get("hasOrHadTitle"), "hasOrHadTitle",
                                           problems) if (t := text_of(r.get("title")))]
    item["identifiers"] = [i for r in _mappings(payload.get("hasOrHadIdentifier"),
                                                "hasOrHadIdentifier", problems)
                           if (i := text_of(r.get("identifier")))]
    item["same_as"] = _texts(payload.get("sameAs"))
    item["part_of"] = payload.get("isOrWasPartOf")
    if problems:
        item["unreadable_fields"] = sorted(problems)
    return item


async def fetch_search(egress: Egress, base: str, query: str, size: int, offset: int) -> Any:
    """The search request."""
    return await egress.get_json(f"{base}/", {"q": query, "size": str(size),
                                              "offset": str(offset)}, accept=ACCEPT,
                                 max_containers=containers_for(size))


async def fetch_record(egress: Egress, base: str, item_id: str) -> Any:
    """The record request."""
    return await egress.get_json(f"{base}/record/{quote(record_id(item_id), safe='')}",
                                 accept=ACCEPT, max_containers=containers_for(1))
