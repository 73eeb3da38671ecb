"""opendata.swiss's CKAN action API: SIKART artists (DataStore) and SNM datasets.

Pure parsers (``parse_*``: payload in, records out) are kept apart from the calls
(``fetch_*``: :class:`~.egress.Egress` in, payload out). Every payload passes
:func:`checked_result` first: CKAN's ``success``/``result`` envelope, and the list field the
caller reads, must be there (an empty list is a normal result; a missing one is an error).
Then :func:`~.shape.page_of` holds the page to the rule on counts and records (a ``total``
that is not a number is unknown, never the end of paging).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...core.errors import Code, CoreError, FixedError
from ..egress import Egress, containers_for
from ..shape import Page, listed, mapping_with, page_of, text_of
from ..sources import SIKART, SIKART_RESOURCE_ID, SNM, SNM_ORGANIZATION

__all__ = [
    "SIKART_ROW",
    "CkanShapeError",
    "artist_item",
    "artists_params",
    "checked_result",
    "dataset_item",
    "datasets_params",
    "fetch_artist",
    "fetch_artists",
    "fetch_datasets",
    "fetch_resource",
    "fetch_rows",
    "licence_of_row",
    "longest_term",
    "parse_datastore",
    "parse_package_search",
    "prefix_or_query",
    "row_item",
]

_LANGS = ("de", "fr", "en", "it", "rm")
_TITLE_FIELDS = ("Titel", "Title", "Bezeichnung", "Name", "Objekt", "Beschriftung")


class CkanShapeError(FixedError):
    """A CKAN answer without the envelope or the field that was asked for."""

    error_code = Code.API_ERROR
    remediation_text = ("CKAN answered in an unexpected shape; the result is unknown, not "
                        "empty. Try again later.")


def checked_result(payload: Any, field: str | None) -> dict[str, Any]:
    """CKAN's ``result`` object, after checking ``success`` and (if named) ``field``.

    Raises:
        CoreError: NOT_FOUND for CKAN's ``Not Found Error``; API_ERROR for any other
            ``success: false`` or a missing ``result``/``field``.
    """
    if not isinstance(payload, Mapping):
        raise CkanShapeError("CKAN answered something that is not a JSON object.",
                             details={"type": type(payload).__name__})
    if payload.get("success") is not True:
        raw = payload.get("error")
        error: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        kind = str(error.get("__type", ""))
        if kind == "Not Found Error":
            raise CoreError(Code.NOT_FOUND, f"CKAN: {error.get('message') or 'not found'}.",
                            details={"ckan_error": kind})
        raise CkanShapeError(f"CKAN reported failure: {kind or 'no error type'}.",
                             details={"ckan_error": kind, "keys": sorted(payload)})
    result = payload.get("result")
    if not isinstance(result, Mapping):
        raise CkanShapeError("CKAN answered success without a result object.",
                             details={"keys": sorted(payload)})
    if field is not None and not isinstance(result.get(field), list):
        raise CkanShapeError(f"CKAN's result has no {field!r} list.",
                             details={"keys": sorted(result)})
    return dict(result)


def parse_datastore(payload: Any, *, offset: int = 0, limit: int = 100,
                    readable: Callable[[Any], bool] | None = None) -> tuple[Page, list[str]]:
    """A ``datastore_search`` answer → (the page of rows, the field names).

    ``readable`` decides which rows count (default: any JSON object); see
    :func:`~.shape.page_of` for the rule on counts, empty pages and unreadable rows.
    """
    result = checked_result(payload, "records")
    page = page_of("CKAN", result["records"], result.get("total"), offset=offset, limit=limit,
                   readable=readable or _is_mapping, what="rows")
    problems: set[str] = set()
    fields = [str(text_of(f.get("id")) or "") for f in listed(result.get("fields"), "fields",
                                                               problems)
              if isinstance(f, Mapping)]
    if problems:
        page.notes.append((Code.UPSTREAM_DIAGNOSTIC,
                           "CKAN's field list is not a list; the columns are unknown."))
    return page, fields


def parse_package_search(payload: Any, *, offset: int = 0, limit: int = 100) -> Page:
    """A ``package_search`` answer → the page of datasets (each with a ``name``)."""
    result = checked_result(payload, "results")
    return page_of("CKAN", result["results"], result.get("count"), offset=offset, limit=limit,
                   readable=mapping_with("name"), what="datasets")


def _is_mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


SIKART_ROW = mapping_with("HAUPTNR")
"""A SIKART row is readable when it has its HAUPTNR (the id every other call needs)."""


def licence_of_row(row: Mapping[str, Any]) -> str | None:
    """A SIKART row's own licence: ``"Nutzungslizenz: CC-BY-NC-SA"`` → ``"CC BY-NC-SA"``."""
    raw = row.get("NUTZUNGSLIZENZ")
    if not isinstance(raw, str) or not raw.strip():
        return None
    text = re.sub(r"^\s*Nutzungslizenz\s*:\s*", "", raw).strip()
    return re.sub(r"^CC-", "CC ", text)


def artist_item(row: Mapping[str, Any]) -> dict[str, Any]:
    """One SIKART row as an item: provenance, id, name, link, licence, and the row itself."""
    record = {k: v for k, v in row.items() if k not in ("_id", "rank")}
    first, last = text_of(row.get("VORNAME")), text_of(row.get("NAME"))
    name = " ".join(p for p in (first, last) if p) or text_of(row.get("NAMIDENT")) or ""
    licence = licence_of_row(row)
    return {
        "source": SIKART.id,
        "id": text_of(row.get("HAUPTNR")) or "",
        "title": name,
        "life_dates": text_of(row.get("LEBENSDATEN")),
        "canton": text_of(row.get("GEBURTSKANTON")),
        "vita": text_of(row.get("VITAZEILE")),
        "permalink": text_of(row.get("SIKART_LINK")),
        "licence": licence or SIKART.licence,
        "licence_from": "record" if licence else "source",
        "record": record,
    }


def _pick(value: Any) -> str:
    """A multilingual CKAN value in de > fr > en > it > rm, or the plain string."""
    if isinstance(value, Mapping):
        for lang in _LANGS:
            text = value.get(lang)
            if isinstance(text, str) and text.strip():
                return text.strip()
        return ""
    return value.strip() if isinstance(value, str) else ""


def dataset_item(package: Mapping[str, Any], problems: set[str] | None = None
                 ) -> dict[str, Any]:
    """One SNM dataset: title (de>fr>en), description, its resources with their licences.

    Fields of the wrong type (a ``resources`` that is not a list) are treated as absent and
    their names added to ``problems``.
    """
    noted: set[str] = problems if problems is not None else set()
    resources = []
    for res in listed(package.get("resources"), "resources", noted):
        if not isinstance(res, Mapping):
            noted.add("resources[]")
            continue
        resources.append({
            "id": text_of(res.get("id")),
            "name": _pick(res.get("name")),
            "format": text_of(res.get("format")),
            "url": text_of(res.get("url")),
            "datastore_active": res.get("datastore_active") is True,
            "licence": text_of(res.get("license")) or text_of(res.get("rights")),
        })
    licences = sorted({str(r["licence"]) for r in resources if r["licence"]})
    description = _pick(package.get("description"))
    name = text_of(package.get("name")) or ""
    return {
        "source": SNM.id,
        "id": name,
        "title": _pick(package.get("title")) or name,
        "description": description[:500] + ("…" if len(description) > 500 else ""),
        "permalink": f"https://opendata.swiss/de/dataset/{name}" if name else None,
        "licence": "; ".join(licences) if licences else SNM.licence,
        "licence_from": "record" if licences else "source",
        "modified": text_of(package.get("modified")),
        "resources": resources,
    }


def row_item(row: Mapping[str, Any], resource_id: str, fields: Sequence[str]) -> dict[str, Any]:
    """One DataStore row of a museum resource: a title picked from the usual columns."""
    record = {k: v for k, v in row.items() if k not in ("_id", "rank")}
    title = next((t for f in _TITLE_FIELDS if (t := text_of(record.get(f)))), "")
    if not title:
        first = next((f for f in fields if f not in ("_id", "rank")), None)
        title = (text_of(record.get(first)) or "") if first else ""
    return {"source": SNM.id, "id": text_of(row.get("_id")) or "", "title": title,
            "resource_id": resource_id, "licence": SNM.licence, "licence_from": "source",
            "record": record}


def longest_term(query: str) -> str | None:
    """SIKART's one loosening: the longest word, when there are at least two."""
    words = query.split()
    return max(words, key=len) if len(words) >= 2 else None


def prefix_or_query(query: str) -> str | None:
    """SNM's one loosening: every word a Solr prefix wildcard, OR-ed (None for no words)."""
    words = [re.sub(r"[^\w-]", "", w) for w in query.split()]
    words = [w for w in words if w]
    return " OR ".join(f"{w}*" for w in words) if words else None


def artists_params(q: str, limit: int, offset: int) -> dict[str, str]:
    """The ``datastore_search`` parameters of an artist search (``q`` left out when empty)."""
    params = {"resource_id": SIKART_RESOURCE_ID, "limit": str(limit), "offset": str(offset)}
    if q:
        params["q"] = q
    return params


def datasets_params(q: str, rows: int, start: int) -> dict[str, str]:
    """The ``package_search`` parameters; no ``q`` lists every SNM dataset."""
    params = {"fq": f"organization:{SNM_ORGANIZATION}", "rows": str(rows), "start": str(start)}
    if q:
        params["q"] = q
    return params


async def fetch_artists(egress: Egress, base: str, q: str, limit: int, offset: int) -> Any:
    """``datastore_search`` on the SIKART resource with CKAN full-text ``q``."""
    return await egress.get_json(f"{base}/datastore_search", artists_params(q, limit, offset),
                                 max_containers=containers_for(limit))


async def fetch_artist(egress: Egress, base: str, artist_id: str) -> Any:
    """``datastore_search`` filtered by ``HAUPTNR``."""
    return await egress.get_json(f"{base}/datastore_search", {
        "resource_id": SIKART_RESOURCE_ID, "filters": json.dumps({"HAUPTNR": artist_id}),
        "limit": "1"}, max_containers=containers_for(1))


async def fetch_datasets(egress: Egress, base: str, q: str, rows: int, start: int) -> Any:
    """``package_search`` within the SNM organisation."""
    return await egress.get_json(f"{base}/package_search", datasets_params(q, rows, start),
                                 max_containers=containers_for(rows))


async def fetch_resource(egress: Egress, base: str, resource_id: str) -> dict[str, Any]:
    """``resource_show``: the resource's metadata (``datastore_active`` among it)."""
    return checked_result(await egress.get_json(f"{base}/resource_show", {"id": resource_id},
                                                max_containers=containers_for(1)), None)


async def fetch_rows(egress: Egress, base: str, resource_id: str, q: str | None, limit: int,
                     offset: int) -> Any:
    """``datastore_search`` on any DataStore resource."""
    params = {"resource_id": resource_id, "limit": str(limit), "offset": str(offset)}
    if q:
        params["q"] = q
    return await egress.get_json(f"{base}/datastore_search", params,
                                 max_containers=containers_for(limit))
