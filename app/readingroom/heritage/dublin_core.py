"""Dublin Core → one Helveticat item, in the same shape as :mod:`.marc`. Pure, no I/O.

Three Dublin Core shapes reach this reader, all found by element namespace, not prefix:

* Helveticat SRU ``recordSchema=dc`` (``srw_dc:dc``): the search path's records. Every name
  is a ``dc:contributor`` carrying GND and relator noise, ``dc:creator`` stays empty, dates
  repeat, DDC numbers sit among the subjects, identifiers are mixed (real samples).
* OAI ``oai_dc`` (``oai_dc:dc``): Helveticat's ``RFN`` set (no real Helveticat sample) and,
  in the same shape, e-rara and e-manuscripta (real samples), whose ``dc:rights`` carries the
  item's licence (``PDM 1.0``).
* OAI ``oai_qdc`` (Helveticat's ``RFN2`` set): no real sample exists. Elements of the DC
  and DCMI Terms namespaces are read by local name; anything else is ignored.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

from .catalogue_values import (
    classify_identifiers,
    dedupe,
    dedupe_dates,
    licence_of,
    oai_identifier,
    parse_name,
    split_subjects,
)

__all__ = ["DCTERMS_NS", "DC_NS", "is_dc", "parse_dc_record"]

DC_NS = "http://purl.org/dc/elements/1.1/"
DCTERMS_NS = "http://purl.org/dc/terms/"
_NAMESPACES = (DC_NS, DCTERMS_NS)


def is_dc(element: etree._Element | None) -> bool:
    """True if ``element`` holds Dublin Core elements as children (srw_dc, oai_dc, qdc)."""
    if element is None:
        return False
    return any(isinstance(c.tag, str) and c.tag[1:].partition("}")[0] in _NAMESPACES
               for c in element)


def _values(element: etree._Element) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for child in element:
        if not isinstance(child.tag, str):
            continue
        namespace, _, local = child.tag[1:].partition("}")
        if namespace not in _NAMESPACES:
            continue
        text = " ".join("".join(child.itertext()).split())
        if text:
            found.setdefault(local, []).append(text)
    return found


def parse_dc_record(element: etree._Element, *, record_id: str | None = None) -> dict[str, Any]:
    """One Dublin Core record element → the item dict (keys as in :mod:`.marc`).

    Args:
        element: the ``dc`` container (``srw_dc:dc``, ``oai_dc:dc`` or a qualified-DC root).
        record_id: an MMS id known from outside the record (SRU ``recordIdentifier``), used
            when no ``alma:…/bibs/<mms>`` identifier is inside.
    """
    dc = _values(element)
    item: dict[str, Any] = {}
    identifiers = classify_identifiers(dc.get("identifier", []))
    mms = identifiers.pop("mms_id", None) or record_id
    if mms:
        item["id"] = oai_identifier(mms)
        item["mms_id"] = mms
    titles = dedupe(dc.get("title", []))
    if titles:
        item["title"] = titles[0]
    # Helveticat files every name under contributor and none under creator; the creators are
    # then the contributors (the original's fallback), so a reader finds names in one place.
    creators = _names(dc.get("creator", []))
    contributors = [n for n in _names(dc.get("contributor", [])) if n not in creators]
    if creators:
        item["creators"] = creators
        if contributors:
            item["contributors"] = contributors
    elif contributors:
        item["creators"] = contributors
    publishers = dedupe(dc.get("publisher", []))
    if publishers:
        item["publishers"] = publishers
    dates = dedupe_dates([*dc.get("date", []), *dc.get("issued", []), *dc.get("created", [])])
    if dates:
        item["dates"] = dates
        item["date"] = dates[0]
    for key, source in (("types", "type"), ("languages", "language"), ("extent", "format"),
                        ("notes", "description"), ("coverage", "coverage"),
                        ("relations", "relation")):
        values = dedupe(dc.get(source, []))
        if values:
            item[key] = values[0] if key == "extent" else values
    subjects, ddc = split_subjects(dc.get("subject", []))
    if subjects:
        item["subjects"] = subjects
    if ddc:
        item["ddc"] = ddc
    rights = dedupe([*dc.get("rights", []), *dc.get("license", []),
                     *dc.get("accessRights", [])])
    if rights:
        item["rights"] = rights
        licence = licence_of(rights)
        if licence is not None:
            item["licence"] = licence
    urls = identifiers.pop("urls", [])
    if identifiers:
        item["identifiers"] = identifiers
    if urls:
        # A landing page the record names itself (e-rara's DOI resolver page); Helveticat's
        # Dublin Core names none, so its items get their permalink from MARC 024 only.
        item["permalink"] = urls[0]
        if len(urls) > 1:
            item["links"] = urls[1:]
    return item


def _names(values: list[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for value in values:
        name = parse_name(value)
        if name is not None and name not in found:
            found.append(name)
    return found
