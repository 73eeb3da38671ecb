"""Reading CiNii's JSON-LD values: language-tagged texts, typed identifiers, cross-links.

Pure helpers shared by the OpenSearch and the CRID readers. CiNii writes a value as a plain
string, as ``{"@value": …, "@language": …}``, or as a list of either; a plain string takes the
document's default ``@language`` (its ``@context``), as JSON-LD defines. Nothing here looks at
the script of a text to guess its language.

Every read is bounded: at most :data:`MAX_VALUES` values per property and
:data:`MAX_TEXT_CHARS` characters per text, whatever an answer holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..models import Creator, LangText, Related

__all__ = [
    "CRID_PATTERN",
    "MAX_TEXT_CHARS",
    "MAX_VALUES",
    "add_identifier",
    "choose",
    "creators_of",
    "crid_of",
    "first_text",
    "related_links",
    "texts",
    "year_of",
]

MAX_VALUES = 50
"""The most values one property contributes to an item."""
MAX_TEXT_CHARS = 2000
"""The longest text kept (abstracts are cut there)."""
CRID_PATTERN = re.compile(r"^[0-9]{1,30}$")
"""A CRID: digits (19 in every record seen)."""

_CRID_IN_URL = re.compile(r"/crid/([0-9]{1,30})(?:\.json)?/?$")
_NDL_BIB_URL = re.compile(r"^https?://id\.ndl\.go\.jp/bib/([0-9]{1,20})/?$")
_NDL_SEARCH_URL = re.compile(
    r"^https?://(?:ndlsearch\.ndl\.go\.jp/books|iss\.ndl\.go\.jp/books)/(R[0-9]{9}-I[0-9A-Za-z]{1,40})"
    r"(?:-[0-9]{2})?/?$")
_NDL_OAI = re.compile(r"^oai:iss\.ndl\.go\.jp:(R[0-9]{9}-I[0-9A-Za-z]{1,40})(?:-[0-9]{2})?$")
_DIGITS = re.compile(r"^[0-9]{1,20}$")
_YEAR = re.compile(r"^\s*([0-9]{4})")
_SPACES = re.compile(r"\s+")


def _clean(text: str) -> str:
    return _SPACES.sub(" ", text).strip()[:MAX_TEXT_CHARS]


def _as_language(value: Any) -> str | None:
    return value.strip()[:35] if isinstance(value, str) and value.strip() else None


def texts(value: Any, default_language: str | None = None) -> list[LangText]:
    """Every text of a JSON-LD value, each with its language tag (own, else the default)."""
    out: list[LangText] = []
    items = value if isinstance(value, list) else [value]
    for item in items[:MAX_VALUES]:
        if isinstance(item, str):
            text, language = item, default_language
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            text, language = str(item), default_language
        elif isinstance(item, Mapping) and isinstance(item.get("@value"), (str, int, float)) \
                and not isinstance(item.get("@value"), bool):
            text = str(item["@value"])
            language = _as_language(item.get("@language")) or default_language
        else:
            continue
        cleaned = _clean(text)
        if cleaned:
            out.append(LangText(value=cleaned, language=language))
    return out


def first_text(value: Any) -> str | None:
    """The first text of a value (its language does not matter: a number, a date, a code)."""
    found = texts(value)
    return found[0].value if found else None


def _tag(entry: LangText) -> str:
    return (entry.language or "").casefold()


def choose(found: Iterable[LangText]) -> tuple[str | None, str | None, str | None, str | None]:
    """(shown, tagged ja, tagged en, the ja-Kana reading) of a list of language-tagged texts.

    Shown is the ja text, else the en text, else the first text that is not a reading, else
    the first text.
    """
    entries = list(found)
    ja = next((e.value for e in entries if _tag(e) == "ja"), None)
    en = next((e.value for e in entries if _tag(e) == "en" or _tag(e).startswith("en-")), None)
    reading = next((e.value for e in entries if _tag(e) == "ja-kana"), None)
    plain = next((e.value for e in entries if _tag(e) != "ja-kana"), None)
    shown = ja or en or plain or (entries[0].value if entries else None)
    return shown, ja, en, reading


def year_of(date: str | None) -> int | None:
    """The year a date starts with (``2017-04`` → 2017), or None."""
    match = _YEAR.match(date or "")
    return int(match.group(1)) if match else None


def crid_of(value: Any) -> str | None:
    """The CRID in a record's ``@id`` (``https://cir.nii.ac.jp/crid/<id>[.json]``), or None."""
    if not isinstance(value, str):
        return None
    path = value.strip().split("#", 1)[0].split("?", 1)[0]
    match = _CRID_IN_URL.search(path)
    return match.group(1) if match else None


def creators_of(value: Any, default_language: str | None) -> list[Creator]:
    """Creators from ``dc:creator`` (strings) or ``creator`` (researchers with ``foaf:name``)."""
    out: list[Creator] = []
    items = value if isinstance(value, list) else [value]
    for item in items[:MAX_VALUES]:
        researcher = None
        if isinstance(item, Mapping) and ("foaf:name" in item or "@id" in item):
            names = texts(item.get("foaf:name"), default_language)
            researcher = crid_of(item.get("@id"))
        else:
            names = texts(item, default_language)
        shown, ja, en, _reading = choose(names)
        if shown is None:
            continue
        out.append(Creator(name=shown, name_ja=ja, name_en=en, names=names,
                           researcher_crid=researcher))
    return out


def add_identifier(identifiers: dict[str, list[str]], kind: Any, value: Any) -> None:
    """Record one typed identifier (``cir:NAID`` and ``NAID`` are one kind), without repeats."""
    if not isinstance(kind, str) or not kind.strip():
        kind = "untyped"
    name = kind.strip().removeprefix("cir:")[:40]
    text = first_text(value)
    if text is None or (len(identifiers) >= MAX_VALUES and name not in identifiers):
        return
    values = identifiers.setdefault(name, [])
    if text not in values and len(values) < MAX_VALUES:
        values.append(text)


def related_links(identifiers: Mapping[str, list[str]], urls: Iterable[str],
                  data_sources: Iterable[str]) -> list[Related]:
    """Links to NDL Search from a record's NDL identifiers, each ready for ndl_get_record.

    ``NDL_BIB_ID`` values and ``id.ndl.go.jp/bib/<id>`` URLs give an NDL bibliographic id; an
    NDL Search page URL or an ``oai:iss.ndl.go.jp:R…-I…`` data-source id gives the NDL Search
    token. Only values of those exact shapes are used.
    """
    found: dict[tuple[str, str], Related] = {}

    def bib(value: str) -> None:
        if _DIGITS.match(value):
            found.setdefault(("ndl_bib_id", value), Related(
                rel="ndl", id_type="ndl_bib_id", id=value,
                url=f"https://id.ndl.go.jp/bib/{value}", server="ndl-mcp",
                tool="ndl_get_record", arguments={"ndl_bib_id": value}))

    def token(value: str) -> None:
        found.setdefault(("ndl_search_id", value), Related(
            rel="ndl", id_type="ndl_search_id", id=value,
            url=f"https://ndlsearch.ndl.go.jp/books/{value}", server="ndl-mcp",
            tool="ndl_get_record", arguments={"ndl_search_id": value}))

    for value in identifiers.get("NDL_BIB_ID", []):
        bib(value.strip())
    candidates = [*identifiers.get("URI", []), *urls]
    for url in candidates:
        text = url.strip()
        if match := _NDL_BIB_URL.match(text):
            bib(match.group(1))
        elif match := _NDL_SEARCH_URL.match(text):
            token(match.group(1))
    for source in data_sources:
        if match := _NDL_OAI.match(source.strip()):
            token(match.group(1))
    return list(found.values())[:MAX_VALUES]
