"""One CiNii Research record by CRID: the fetch and the pure parse of its JSON-LD.

**The request.** ``GET <base>/crid/<CRID>.json`` (with the application id, as every request to
the Web API carries it). An unknown CRID is HTTP 404.

**The record** (a real Book record in ``shared/fixtures/cinii``; an Article record of the same
shape is published in the JSON-LD-in-the-wild notes): a schema of its own, unlike the search
items. ``@type`` (Article, Book …) is the record type; ``dc:title`` is a list of
language-tagged values (``ja``, ``en``, ``ja-Kana`` for the reading, and untagged ones);
``creator[]`` are researchers with ``foaf:name`` lists; ``productIdentifier[].identifier``
carries typed identifiers (DOI, NAID, NCID, ISBN, NDL_BIB_ID, URI); ``publication`` the journal
data of an article, ``dcterms:publisher[]`` the imprint of a book; ``dataSourceIdentifier[]``
where CiNii took the record from (an NDL one reads ``oai:iss.ndl.go.jp:R…-I…-00``, the NDL
Search token).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...core.http import HttpClient
from ...core.offload import run_blocking
from ..models import CiniiItem, LangText, RecordPage
from .jsonld import (
    CRID_PATTERN,
    MAX_TEXT_CHARS,
    MAX_VALUES,
    add_identifier,
    choose,
    creators_of,
    crid_of,
    first_text,
    related_links,
    texts,
    year_of,
)
from .opensearch import decode, record_type_of

__all__ = ["MAX_RECORD_CONTAINERS", "CridClient", "RecordExchange", "parse"]

MAX_RECORD_CONTAINERS = 20_000
"""JSON objects and arrays one record may hold (the largest real one has about a hundred)."""


def _list(value: Any) -> list[Any]:
    return (value if isinstance(value, list) else [value])[:MAX_VALUES]


def parse(payload: Any) -> RecordPage:
    """One CRID record (decoded JSON) as a :class:`RecordPage` (pure; never raises)."""
    if not isinstance(payload, Mapping):
        return RecordPage(None, f"the record is a {type(payload).__name__}, not a JSON object")
    crid = crid_of(payload.get("@id"))
    if crid is None:
        return RecordPage(None, "the record has no CRID (@id)")
    try:
        return RecordPage(_item(payload, crid))
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        return RecordPage(None, f"the record could not be read ({type(exc).__name__})")


def _item(raw: Mapping[str, Any], crid: str) -> CiniiItem:
    record_type, label = record_type_of(raw.get("@type"), "unknown")
    titles = texts(raw.get("dc:title"))
    title, title_ja, title_en, reading = choose(titles)
    identifiers: dict[str, list[str]] = {}
    for entry in _list(raw.get("productIdentifier")):
        inner = entry.get("identifier") if isinstance(entry, Mapping) else None
        if isinstance(inner, Mapping):
            add_identifier(identifiers, inner.get("@type"), inner.get("@value"))
    publication = raw.get("publication")
    publication = publication if isinstance(publication, Mapping) else {}
    issn: list[str] = []
    for entry in _list(publication.get("publicationIdentifier")):
        if isinstance(entry, Mapping) and entry.get("@type") in ("PISSN", "EISSN", "ISSN"):
            value = first_text(entry.get("@value"))
            if value and value not in issn:
                issn.append(value)
    publishers = texts(publication.get("dc:publisher"))
    place = None
    date = first_text(publication.get("prism:publicationDate"))
    for imprint in _list(raw.get("dcterms:publisher")):
        if isinstance(imprint, Mapping):
            publishers += texts(imprint.get("dc:publisher"))
            place = place or first_text(imprint.get("publicationPlace"))
            date = date or first_text(imprint.get("prism:publicationDate"))
    date = date or first_text(raw.get("dc:date"))
    subjects: list[LangText] = []
    for subject in _list(raw.get("dcterms:subject")):
        if isinstance(subject, Mapping):
            subjects += texts(subject.get("notation"))
        else:
            subjects += texts(subject)
    descriptions: list[LangText] = []
    for note in _list(raw.get("description")):
        if isinstance(note, Mapping):
            descriptions += texts(note.get("notation"))
    urls = [u for u in (_link(v) for v in _list(raw.get("url"))) if u]
    sources: list[str] = []
    source_ids: list[str] = []
    for entry in _list(raw.get("dataSourceIdentifier")):
        if isinstance(entry, Mapping):
            kind = first_text(entry.get("@type"))
            if kind and kind not in sources:
                sources.append(kind[:40])
            value = first_text(entry.get("@value"))
            if value:
                source_ids.append(value)
    start_page = first_text(publication.get("prism:startingPage"))
    end_page = first_text(publication.get("prism:endingPage"))
    journal_names = texts(publication.get("prism:publicationName"))
    isbn = list(identifiers.get("ISBN", []))
    return CiniiItem(
        crid=crid,
        url=f"https://cir.nii.ac.jp/crid/{crid}",
        record_type=record_type,
        type_label=label,
        title=title,
        title_ja=title_ja,
        title_en=title_en,
        title_reading=reading,
        titles=titles,
        title_missing=title is None,
        creators=creators_of(raw.get("creator") or raw.get("dc:creator"), None),
        publication_name=choose(journal_names)[0],
        publication_names=journal_names,
        publishers=publishers[:MAX_VALUES],
        publication_place=place,
        date=date,
        year=year_of(date),
        volume=first_text(publication.get("prism:volume")),
        number=first_text(publication.get("prism:number")),
        starting_page=start_page,
        ending_page=end_page,
        pages=f"{start_page}-{end_page}" if start_page and end_page else start_page or end_page,
        doi=_first(identifiers, "DOI"),
        naid=_first(identifiers, "NAID"),
        ncid=_first(identifiers, "NCID"),
        isbn=isbn,
        issn=issn,
        identifiers=identifiers,
        languages=[t.value for t in texts(raw.get("dc:language"))],
        subjects=subjects[:MAX_VALUES],
        descriptions=[d.model_copy(update={"value": d.value[:MAX_TEXT_CHARS]})
                      for d in descriptions[:MAX_VALUES]],
        data_sources=sources,
        related=related_links(identifiers, urls, source_ids),
    )


def _first(identifiers: Mapping[str, list[str]], kind: str) -> str | None:
    values = identifiers.get(kind)
    return values[0] if values else None


def _link(value: Any) -> str | None:
    if isinstance(value, Mapping):
        value = value.get("@id")
    return value.strip() if isinstance(value, str) else None


@dataclass(frozen=True)
class RecordExchange:
    """One record fetch and its parsed answer (``endpoint`` has no query string)."""

    crid: str
    endpoint: str
    page: RecordPage


class CridClient:
    """Record fetches over the shared, paced CiNii client; read off the event loop."""

    def __init__(self, http: HttpClient, base_url: str) -> None:
        self._http = http
        self.base_url = base_url.rstrip("/")

    def endpoint(self, crid: str) -> str:
        """The JSON-LD URL of one record.

        Raises:
            ValueError: ``crid`` is not a CRID (digits only).
        """
        if not CRID_PATTERN.match(crid):
            raise ValueError("not a CRID")
        return f"{self.base_url}/crid/{crid}.json"

    async def fetch(self, crid: str, appid: str) -> RecordExchange:
        """Fetch and parse one record.

        Raises:
            CoreError: RATE_LIMITED, TRANSPORT_ERROR, API_ERROR (details.status 404 for an
                unknown CRID; a body that is not JSON or too large).
        """
        endpoint = self.endpoint(crid)
        response = await self._http.get(endpoint, {"appid": appid})
        page = await run_blocking(_decode_and_parse, response.content)
        return RecordExchange(crid=crid, endpoint=endpoint, page=page)


def _decode_and_parse(body: bytes) -> RecordPage:
    return parse(decode(body, MAX_RECORD_CONTAINERS))
