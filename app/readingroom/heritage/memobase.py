"""Memobase (Memoriav's audiovisual heritage portal): JSON-LD with Hydra paging.

``GET {base}/?q=&size=&offset=`` answers a ``hydra:Collection`` (``hydra:member``,
``hydra:totalItems``); ``GET {base}/record/<id>`` one ``rico:Record``. Both asked with
``Accept: application/ld+json``. Parsing is pure and tested on the real recordings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ..core.errors import Code, CoreError
from .egress import Egress
from .sources import MEMOBASE

__all__ = [
    "ACCEPT",
    "fetch_record",
    "fetch_search",
    "parse_record",
    "parse_search",
    "record_item",
]

ACCEPT = "application/ld+json"


def _shape(message: str, **details: Any) -> CoreError:
    return CoreError(Code.API_ERROR, f"Memobase: {message}", details=details,
                     remediation="Memobase answered in an unexpected shape; the result is "
                     "unknown, not empty.")


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _usage_rule(record: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The item's usage rule (name, URI): the digital object's first, else the physical one's."""
    found: dict[str, tuple[str | None, str | None]] = {}
    for inst in record.get("hasInstantiation") or []:
        if not isinstance(inst, Mapping):
            continue
        for rule in inst.get("isOrWasRegulatedBy") or []:
            if isinstance(rule, Mapping) and rule.get("type") == "usage":
                same = rule.get("sameAs")
                uris = _texts(same)
                uri = uris[0] if uris else None
                found.setdefault(str(inst.get("type")), (rule.get("name"), uri))
    return found.get("digitalObject") or found.get("physicalObject") or (None, None)


def record_item(record: Mapping[str, Any]) -> dict[str, Any]:
    """One ``rico:Record`` as an item, with the metadata licence and the object's own rule."""
    raw_id = str(record.get("@id") or "")
    rid = raw_id.removeprefix("mbr:")
    created = record.get("created")
    date = created.get("normalizedDateValue") if isinstance(created, Mapping) else None
    holder = next((r.get("name") for r in record.get("isOrWasRegulatedBy") or []
                   if isinstance(r, Mapping) and r.get("type") == "holder"), None)
    usage, rights_url = _usage_rule(record)
    notes = _texts(record.get("abstract")) + _texts(record.get("descriptiveNote"))
    return {
        "source": MEMOBASE.id,
        "collection": "memobase",
        "id": rid,
        "title": record.get("title"),
        "type": record.get("type"),
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


def parse_search(payload: Any) -> tuple[list[dict[str, Any]], int | None]:
    """A Hydra collection → (items, ``hydra:totalItems``)."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("hydra:member"), list):
        keys = sorted(payload) if isinstance(payload, Mapping) else type(payload).__name__
        raise _shape("no hydra:member list in the answer.", keys=keys)
    total = payload.get("hydra:totalItems")
    items = [record_item(m) for m in payload["hydra:member"] if isinstance(m, Mapping)]
    return items, total if isinstance(total, int) and not isinstance(total, bool) else None


def parse_record(payload: Any) -> dict[str, Any]:
    """One ``rico:Record`` → its item, plus the record's titles and identifiers."""
    if not isinstance(payload, Mapping) or not payload.get("@id"):
        raise _shape("the record has no @id.")
    item = record_item(payload)
    item["titles"] = [t.get("title") for t in payload.get("hasOrHadTitle") or []
                      if isinstance(t, Mapping) and t.get("title")]
    item["identifiers"] = [i.get("identifier") for i in payload.get("hasOrHadIdentifier") or []
                           if isinstance(i, Mapping) and i.get("identifier")]
    item["same_as"] = _texts(payload.get("sameAs"))
    item["part_of"] = payload.get("isOrWasPartOf")
    return item


async def fetch_search(egress: Egress, base: str, query: str, size: int, offset: int) -> Any:
    """The search request."""
    return await egress.get_json(f"{base}/", {"q": query, "size": str(size),
                                              "offset": str(offset)}, accept=ACCEPT)


async def fetch_record(egress: Egress, base: str, item_id: str) -> Any:
    """The record request."""
    return await egress.get_json(f"{base}/record/{quote(item_id, safe='')}", accept=ACCEPT)
