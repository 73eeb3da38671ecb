"""Dodis (Diplomatic Documents of Switzerland): its Solr API.

``POST {base}/solr/query`` with ``{query, start, rows}`` answers a bare JSON list of hits (the
recording), or an object with ``results`` (accepted as the original did; never recorded); no
total. ``GET {base}/solr/full/<id>`` answers one Solr document. Full-text fields of documents
(``doc_att_file_content``, ``doc_att_xmlTranscription_ids`` and any other field that carries a
file's content or a transcription) are never returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ...core.errors import CoreError
from ..egress import Egress, containers_for
from ..shape import Page, mapping_with, page_of, shape_error, text_of
from ..sources import DODIS

__all__ = [
    "FULLTEXT_FIELDS",
    "fetch_full",
    "fetch_query",
    "hit_item",
    "is_fulltext_field",
    "parse_full",
    "parse_query",
]

FULLTEXT_FIELDS = frozenset({"doc_att_file_content", "doc_att_xmlTranscription_ids"})
"""The original's two named full-text fields."""


def is_fulltext_field(name: str) -> bool:
    """True for a field that carries document text (never returned)."""
    lowered = name.lower()
    return (name in FULLTEXT_FIELDS or "file_content" in lowered
            or "transcription" in lowered or lowered.endswith("_fulltext"))


def _shape(message: str, **details: Any) -> CoreError:
    return shape_error("Dodis", message, **details)


def hit_item(hit: Mapping[str, Any]) -> dict[str, Any]:
    """One Solr hit as an item (full-text fields dropped)."""
    hid = text_of(hit.get("id")) or ""
    return {
        "source": DODIS.id,
        "collection": "dodis",
        "id": hid,
        "title": text_of(hit.get("name")) or text_of(hit.get("title")),
        "type": text_of(hit.get("type")),
        "date": text_of(hit.get("startDate")),
        "description": text_of(hit.get("description")),
        "info": text_of(hit.get("info")),
        "permalink": f"https://dodis.ch/{hid}" if hid else None,
        "licence": DODIS.licence,
        "licence_from": "source",
    }


def parse_query(payload: Any, *, offset: int = 0, limit: int = 100) -> Page:
    """The query answer (a bare list, or ``{results: [...]}``) → the page of hits (no total).

    Raises:
        CoreError: API_ERROR for neither shape, or a page whose every hit is unreadable.
    """
    hits = payload.get("results") if isinstance(payload, Mapping) else payload
    if not isinstance(hits, list):
        keys = sorted(payload) if isinstance(payload, Mapping) else type(payload).__name__
        raise _shape("neither a list of hits nor an object with results.", keys=keys)
    return page_of("Dodis", hits, None, offset=offset, limit=limit,
                   readable=mapping_with("id"), has_total=False, what="hits")


def parse_full(payload: Any, item_id: str | None = None) -> dict[str, Any]:
    """One Solr document → its item plus every field except full-text ones.

    Raises:
        CoreError: API_ERROR for a document without ``id``, or (``item_id`` given) another
            document than the one asked for.
    """
    if not isinstance(payload, Mapping) or not text_of(payload.get("id")):
        raise _shape("the document has no id.", reason="record_unreadable")
    record = {k: v for k, v in payload.items() if not is_fulltext_field(str(k))}
    item = hit_item(payload)
    if item_id is not None and item["id"] != item_id:
        raise _shape(f"asked for document {item_id}, it answered another one.",
                     reason="identifier_mismatch")
    if item["title"] is None:
        item["title"] = text_of(payload.get("geo_name_de")) or text_of(payload.get("title_s"))
    item["withheld_fields"] = sorted(str(k) for k in payload if is_fulltext_field(str(k)))
    item["record"] = record
    return item


async def fetch_query(egress: Egress, base: str, query: str, start: int, rows: int) -> Any:
    """The Solr query request."""
    return await egress.post_json(f"{base}/solr/query",
                                  {"query": query, "start": start, "rows": rows},
                                  max_containers=containers_for(rows))


async def fetch_full(egress: Egress, base: str, item_id: str) -> Any:
    """The full-document request."""
    return await egress.get_json(f"{base}/solr/full/{quote(item_id, safe='')}",
                                 max_containers=containers_for(1))
