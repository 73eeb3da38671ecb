"""MARC21-XML (``http://www.loc.gov/MARC21/slim``) → one Helveticat item. Pure, no I/O.

Read from the element the OAI reader (``core.oaipmh``) or the SRU reader (``core.sru``) hands
over, already parsed by ``core.xmlsafe``. The mapping was checked on the real Helveticat
``GetRecord`` (and on swisscovery's MARCXML, the same Alma software):

=====================  ==================================================================
MARC                   item key
=====================  ==================================================================
001                    ``mms_id`` and ``id`` (``oai:helveticat.nb.admin.ch:<mms>``)
024 $a with $2 uri     ``permalink`` (``https://permalink.snl.ch/bib/…``)
020 $a / 022 $a        ``identifiers.isbn`` / ``identifiers.issn``
035 $a                 ``identifiers.system_numbers`` (``(Sz)…``)
082 $a                 ``ddc``
100/110/111            ``creators``: ``{name, dates, gnd, roles}`` from $a $b $d $0 $4 $e
700/710/711            ``contributors`` (same shape)
245 $a $b $n $p        ``title`` (ISBD punctuation at the joins removed)
250 $a                 ``edition``
260/264 $a $b $c       ``places``, ``publishers``, ``dates`` (de-duplicated)
300                    ``extent``
336 $a (or $b)         ``types``
041 $a, 008/35-37      ``languages``
490 $a, 830 $a         ``series``
500/520/550 $a         ``notes``
506/540 $a (and $u)    ``rights``, and ``licence`` when the statement names a known one
600-655 $a (+ $x $y $z) ``subjects``
856 $u                 ``links``
=====================  ==================================================================
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lxml import etree

from .catalogue_values import dedupe, dedupe_dates, licence_of, oai_identifier

__all__ = ["MARC_NS", "is_marc", "parse_marc_record"]

MARC_NS = "http://www.loc.gov/MARC21/slim"
_Q = "{" + MARC_NS + "}"
_NAME_TAGS_MAIN = ("100", "110", "111")
_NAME_TAGS_ADDED = ("700", "710", "711")
_SUBJECT_TAGS = ("600", "610", "611", "630", "648", "650", "651", "653", "655")
_TRAILING_PUNCT = " /:;,=."


def is_marc(element: etree._Element | None) -> bool:
    """True if ``element`` is a MARC21-XML ``record`` (any prefix, the slim namespace)."""
    return element is not None and element.tag == f"{_Q}record"


def _text(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


def _control(record: etree._Element, tag: str) -> str | None:
    for el in record.iterfind(f"{_Q}controlfield"):
        if el.get("tag") == tag:
            # Fixed-length fields (008) are read by position: their spaces are kept.
            return (el.text or "").strip("\n") or None
    return None


def _fields(record: etree._Element, *tags: str) -> list[etree._Element]:
    return [el for el in record.iterfind(f"{_Q}datafield") if el.get("tag") in tags]


def _subfields(field: etree._Element, codes: str) -> list[str]:
    return [
        t for el in field.iterfind(f"{_Q}subfield")
        if (el.get("code") or "") in codes and (t := _text(el))
    ]


def _first(field: etree._Element, code: str) -> str | None:
    found = _subfields(field, code)
    return found[0] if found else None


def _strip(value: str) -> str:
    return value.strip().rstrip(_TRAILING_PUNCT).strip()


def _join(parts: Iterable[str], sep: str) -> str:
    return sep.join(p for p in (_strip(x) for x in parts) if p)


def _name(field: etree._Element) -> dict[str, Any] | None:
    main = _join(_subfields(field, "a"), " ")
    if not main:
        return None
    sub_units = _subfields(field, "b")
    name: dict[str, Any] = {"name": _join([main, *sub_units], ". ")}
    dates = _first(field, "d")
    if dates:
        name["dates"] = _strip(dates)
    gnd = [v.split(")", 1)[1] for v in _subfields(field, "0") if v.startswith("(DE-588)")]
    if gnd:
        name["gnd"] = gnd[0]
    roles = dedupe([*_subfields(field, "4"), *(_strip(e) for e in _subfields(field, "e"))])
    if roles:
        name["roles"] = roles
    return name


def _names(record: etree._Element, tags: tuple[str, ...]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for field in _fields(record, *tags):
        name = _name(field)
        if name is not None and name not in found:
            found.append(name)
    return found


def _title(record: etree._Element) -> str | None:
    for field in _fields(record, "245"):
        main = _join(_subfields(field, "a"), " ")
        rest = [_strip(p) for p in _subfields(field, "bnp")]
        title = " : ".join(p for p in [main, *rest] if p)
        if title:
            return title
    return None


def _languages(record: etree._Element) -> list[str]:
    coded = [v for f in _fields(record, "041") for v in _subfields(f, "a")]
    fixed = _control(record, "008")
    if fixed and len(fixed) >= 38 and fixed[35:38].strip(" |^"):
        coded.append(fixed[35:38])
    return dedupe(coded)


def parse_marc_record(record: etree._Element) -> dict[str, Any]:
    """One MARC21-XML ``record`` element → the Helveticat item dict (keys as the table says).

    Keys without a value are left out, so an item says only what the record holds.
    """
    mms = _control(record, "001")
    item: dict[str, Any] = {}
    if mms:
        item["id"] = oai_identifier(mms)
        item["mms_id"] = mms
    title = _title(record)
    if title:
        item["title"] = title
    creators = _names(record, _NAME_TAGS_MAIN)
    contributors = [n for n in _names(record, _NAME_TAGS_ADDED) if n not in creators]
    if creators:
        item["creators"] = creators
    if contributors:
        item["contributors"] = contributors
    imprint = _fields(record, "264", "260")
    places = dedupe(_strip(v) for f in imprint for v in _subfields(f, "a"))
    publishers = dedupe(_strip(v) for f in imprint for v in _subfields(f, "b"))
    dates = dedupe_dates(v for f in imprint for v in _subfields(f, "c"))
    _put(item, "edition", dedupe(_strip(v) for f in _fields(record, "250")
                                 for v in _subfields(f, "a")), single=True)
    _put(item, "places", places)
    _put(item, "publishers", publishers)
    _put(item, "dates", dates)
    if dates:
        item["date"] = dates[0]
    _put(item, "extent", dedupe(_join(_subfields(f, "abcf"), " ; ")
                                for f in _fields(record, "300")), single=True)
    _put(item, "types", dedupe(
        (_first(f, "a") or _first(f, "b") or "") for f in _fields(record, "336")))
    _put(item, "languages", _languages(record))
    _put(item, "subjects", dedupe(
        _join(_subfields(f, "axyz"), " -- ") for f in _fields(record, *_SUBJECT_TAGS)))
    _put(item, "ddc", dedupe(v for f in _fields(record, "082") for v in _subfields(f, "a")))
    _put(item, "series", dedupe(_strip(v) for f in _fields(record, "490", "830")
                                for v in _subfields(f, "a")))
    _put(item, "notes", dedupe(v for f in _fields(record, "500", "520", "550")
                               for v in _subfields(f, "a")))
    rights = dedupe(v for f in _fields(record, "506", "540") for v in _subfields(f, "au"))
    _put(item, "rights", rights)
    licence = licence_of(rights)
    if licence is not None:
        item["licence"] = licence
    identifiers: dict[str, Any] = {}
    _put(identifiers, "isbn", dedupe(_first(f, "a") for f in _fields(record, "020")))
    _put(identifiers, "issn", dedupe(_first(f, "a") for f in _fields(record, "022")))
    _put(identifiers, "system_numbers",
         dedupe(_first(f, "a") for f in _fields(record, "035")))
    permalinks: list[str] = []
    for field in _fields(record, "024"):
        value = _first(field, "a")
        if not value:
            continue
        if (_first(field, "2") or "").lower() == "uri" and value.startswith("https://"):
            permalinks.append(value)
        else:
            identifiers.setdefault("other", []).append(value)
    if identifiers:
        item["identifiers"] = identifiers
    if permalinks:
        item["permalink"] = permalinks[0]
    _put(item, "links", dedupe(v for f in _fields(record, "856") for v in _subfields(f, "u")))
    return item


def _put(target: dict[str, Any], key: str, values: list[str], *, single: bool = False) -> None:
    values = [v for v in values if v]
    if values:
        target[key] = values[0] if single else values
