"""References for books: a compact CSL-JSON item per book, and what is printed from it.

Every book has a reference. A book imported from a library (Zotero, Calibre) carries the one
its library gave (Zotero's is mapped through the ``csl`` section of Zotero's own schema, see
:mod:`.zotero`); any other book gets one from its file's metadata (title, authors, language,
an EPUB's publisher, date and ISBN). The compact reference keeps the fields a citation needs —
``type``, ``title``, ``author``/``editor``, ``issued``, ``container-title``, ``publisher``,
``publisher-place``, ``DOI``, ``ISBN``, ``URL``, ``language`` — and a passage adds CSL's
``locator`` and ``label`` (page, chapter, line).

Printed forms: CSL-JSON (an array of one item, as citeproc takes it), BibTeX with a stable key
(the library's own citation key when it has one, else ``familyYEARword`` from the reference)
and RIS. Everything here is pure: a dict in, text out.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "COMPACT_FIELDS",
    "MAX_NAMES",
    "bibtex_key",
    "citation_line",
    "compact",
    "date_parts",
    "file_reference",
    "name_parts",
    "passage_locator",
    "reference_for",
    "to_bibtex",
    "to_csl_json",
    "to_ris",
    "with_locator",
]

COMPACT_FIELDS = ("id", "type", "title", "author", "editor", "issued", "container-title",
                  "collection-title", "collection-number", "edition", "volume", "publisher",
                  "publisher-place", "DOI", "ISBN", "URL", "language", "citation-key")
"""The CSL-JSON variables a compact reference keeps (abstracts, notes and tags stay out)."""
MAX_NAMES = 20
"""Names kept per role in a compact reference (a locator must stay small)."""
_MAX_TEXT = 500

_BIBTEX_TYPES = {"book": "book", "chapter": "incollection", "article-journal": "article",
                 "article-magazine": "article", "article-newspaper": "article",
                 "article": "article", "paper-conference": "inproceedings",
                 "thesis": "phdthesis", "report": "techreport", "manuscript": "unpublished"}
_RIS_TYPES = {"book": "BOOK", "chapter": "CHAP", "article-journal": "JOUR",
              "article-magazine": "MGZN", "article-newspaper": "NEWS", "article": "JOUR",
              "paper-conference": "CPAPER", "thesis": "THES", "report": "RPRT",
              "webpage": "ELEC", "manuscript": "MANSCPT", "map": "MAP", "dataset": "DATA",
              "software": "COMP", "entry-encyclopedia": "ENCYC", "entry-dictionary": "DICT"}
_KEY_STOPWORDS = frozenset({
    "a", "an", "the", "of", "on", "in", "and", "der", "die", "das", "ein", "eine", "le", "la",
    "les", "un", "une", "des", "du", "de", "el", "los", "las", "il", "lo", "gli", "i", "una"})


# --------------------------------------------------------------------------- building


def name_parts(name: str) -> dict[str, str]:
    """A CSL name from one name as text: ``Family, Given`` splits; anything else is literal.

    ``Given Family`` is not split: which word is the family name is not knowable from text
    (Chinese, Hungarian, particles such as "van der"), and a wrong split is worse than none.
    """
    name = " ".join(name.split())
    family, sep, given = name.partition(",")
    if sep and family.strip() and given.strip() and "," not in given:
        return {"family": family.strip(), "given": given.strip()}
    return {"literal": name}


def date_parts(text: str | None) -> dict[str, Any] | None:
    """CSL ``issued`` from a date as libraries write it, or None when none is there.

    Reads Zotero's multipart form (``2019-05-00 May 2019``: ``00`` is an unknown part),
    ISO dates and timestamps (``2011-08-05T06:00:00+00:00``) and a bare year anywhere
    (``c. 1850``). Calibre's "no date" (year 101 and before) is none.
    """
    if not text:
        return None
    text = str(text).strip()
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", text)
    if m:
        year, month, day = (int(g) for g in m.groups())
        if year <= 101:
            return None
        parts = [year] + ([month] if month else []) + ([day] if month and day else [])
        return {"date-parts": [parts]}
    m = re.match(r"(\d{4})-(\d{2})\b", text)
    if m and 1 <= int(m.group(2)) <= 12:
        return {"date-parts": [[int(m.group(1)), int(m.group(2))]]}
    m = re.search(r"(?<!\d)(\d{4})(?!\d)", text)
    if m and int(m.group(1)) > 101:
        return {"date-parts": [[int(m.group(1))]]}
    return {"literal": text[:100]}


def _isbn(text: str) -> str | None:
    digits = re.sub(r"[^0-9Xx]", "", text.split(":")[-1])
    return digits.upper() if len(digits) in (10, 13) else None


def file_reference(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The reference of a book from its own file's metadata (what its manifest recorded)."""
    raw = manifest.get("metadata")
    meta: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    ref: dict[str, Any] = {"id": str(manifest.get("id") or "book"), "type": "book"}
    title = manifest.get("title")
    if isinstance(title, str) and title.strip():
        ref["title"] = title.strip()[:_MAX_TEXT]
    authors = [a for a in manifest.get("authors") or () if isinstance(a, str) and a.strip()]
    if authors:
        ref["author"] = [name_parts(a) for a in authors[:MAX_NAMES]]
    issued = date_parts(meta.get("date"))
    if issued:
        ref["issued"] = issued
    if isinstance(meta.get("publisher"), str) and meta["publisher"].strip():
        ref["publisher"] = meta["publisher"].strip()[:_MAX_TEXT]
    ident = meta.get("identifier")
    if isinstance(ident, str):
        if "isbn" in ident.lower() or (_isbn(ident) and re.fullmatch(r"[\d\-Xx ]+", ident)):
            isbn = _isbn(ident)
            if isbn:
                ref["ISBN"] = isbn
        m = re.search(r"10\.\d{4,9}/\S+", ident)
        if m and ("doi" in ident.lower() or ident.startswith("10.")):
            ref["DOI"] = m.group(0)
    language = manifest.get("language")
    if isinstance(language, str) and language.strip():
        ref["language"] = language.strip()[:35]
    return ref


def compact(csl: Mapping[str, Any], book_id: str | None = None) -> dict[str, Any]:
    """The compact reference of a CSL-JSON item: the fields of :data:`COMPACT_FIELDS`, names
    capped at :data:`MAX_NAMES` per role, long text cut; ``id`` is the book id when given."""
    out: dict[str, Any] = {}
    for key in COMPACT_FIELDS:
        value = csl.get(key)
        if value in (None, "", [], {}):
            continue
        if key in ("author", "editor") and isinstance(value, list):
            value = [dict(n) for n in value[:MAX_NAMES] if isinstance(n, Mapping)]
        elif isinstance(value, str):
            value = value[:_MAX_TEXT]
        out[key] = value
    if book_id is not None:
        out["id"] = book_id
    out.setdefault("type", "book")
    return out


def reference_for(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The compact reference of a book's manifest: the library's, else the file's own."""
    stored = manifest.get("reference")
    book_id = str(manifest.get("id") or "book")
    if isinstance(stored, Mapping) and stored:
        ref = compact(stored, book_id)
    else:
        ref = compact(file_reference(manifest), book_id)
    ref.setdefault("citation-key", bibtex_key(ref))
    return ref


def passage_locator(locator: Mapping[str, Any]) -> tuple[str, str] | None:
    """CSL ``(label, locator)`` for a book-agent locator: the printed page (or page index + 1
    when a PDF has no labels), else the EPUB chapter, else the Markdown source lines."""
    kind = locator.get("kind")
    first, last = locator.get("page_label"), locator.get("page_end_label")
    if first:
        return "page", str(first) if last in (None, "", first) else f"{first}–{last}"
    if kind == "pdf_page" and isinstance(locator.get("page_index"), int):
        a = locator["page_index"] + 1
        b = (locator.get("page_end_index") or locator["page_index"]) + 1
        return "page", str(a) if a == b else f"{a}–{b}"
    if kind == "epub_chapter" and isinstance(locator.get("unit_index"), int):
        a, b = locator["unit_index"] + 1, (locator.get("unit_end_index") or 0) + 1
        return "chapter", str(a) if b <= a else f"{a}–{b}"
    if kind == "markdown_lines" and locator.get("line_start") is not None:
        a, b = locator.get("line_start"), locator.get("line_end")
        return "line", str(a) if b in (None, a) else f"{a}–{b}"
    return None


def with_locator(reference: Mapping[str, Any], label: str | None,
                 where: str | None) -> dict[str, Any]:
    """The reference with CSL's ``label`` and ``locator`` for a passage (when known)."""
    out = dict(reference)
    if label and where:
        out["label"], out["locator"] = label, where
    return out


# --------------------------------------------------------------------------- printing


def _year(ref: Mapping[str, Any]) -> str | None:
    issued = ref.get("issued")
    if isinstance(issued, Mapping):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return str(parts[0][0])
        if isinstance(issued.get("literal"), str):
            m = re.search(r"\d{4}", issued["literal"])
            return m.group(0) if m else None
    return None


def _display(name: Mapping[str, Any], *, initials: bool = False) -> str:
    if name.get("literal"):
        return str(name["literal"])
    family, given = str(name.get("family") or ""), str(name.get("given") or "")
    if initials and given:
        given = " ".join(p[0] + "." for p in re.split(r"[\s.]+", given) if p)
    return f"{family}, {given}" if family and given else family or given


_MAX_LINE_TITLE = 200
"""The most of a title a citation line shows (as book-agent shows titles elsewhere)."""


def citation_line(ref: Mapping[str, Any], *, label: str | None = None,
                  where: str | None = None) -> str:
    """One readable line: ``Family, G.; Other, H. (2019). Title. Place: Publisher. DOI.``

    Not a citation style: a plain line an assistant can show beside a quote. ``label`` and
    ``where`` (or the reference's own ``label``/``locator``) add the passage (``p. 5``).
    """
    names = [n for n in ref.get("author") or ref.get("editor") or [] if isinstance(n, Mapping)]
    shown = [_display(n, initials=True) for n in names[:3]]
    who = "; ".join(shown) + (" et al." if len(names) > 3 else "")
    if not ref.get("author") and ref.get("editor") and who:
        who += " (ed.)" if len(names) == 1 else " (eds.)"
    year = _year(ref)
    parts = [f"{who} ({year})." if who and year else f"{who}." if who else
             f"({year})." if year else ""]
    title = str(ref.get("title") or "").strip()
    if len(title) > _MAX_LINE_TITLE:  # a line for the eye; the reference keeps the whole title
        title = title[: _MAX_LINE_TITLE - 1] + "…"
    if title:
        parts.append(title if title.endswith((".", "?", "!")) else title + ".")
    if ref.get("container-title"):
        parts.append(f"In {ref['container-title']}.")
    pub = str(ref.get("publisher") or "")
    place = str(ref.get("publisher-place") or "")
    if pub or place:
        parts.append(f"{place}: {pub}." if place and pub else f"{pub or place}.")
    if ref.get("DOI"):
        parts.append(f"https://doi.org/{ref['DOI']}")
    elif ref.get("ISBN"):
        parts.append(f"ISBN {ref['ISBN']}.")
    elif ref.get("URL"):
        parts.append(str(ref["URL"]))
    label = label or ref.get("label")
    where = where or ref.get("locator")
    if label and where:
        short = {"page": "p.", "chapter": "chap.", "line": "l."}.get(str(label), str(label))
        if short == "p." and "–" in str(where):
            short = "pp."
        parts.append(f"{short} {where}.")
    return " ".join(p for p in parts if p).strip()


def _ascii_word(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]", "", text)


def bibtex_key(ref: Mapping[str, Any]) -> str:
    """A stable BibTeX key: the library's ``citation-key`` when it has one, else
    ``familyYEARword`` (first name's family, year, first significant title word), ASCII."""
    own = ref.get("citation-key")
    if isinstance(own, str) and re.fullmatch(r"[A-Za-z0-9_:.\-+/]{1,100}", own.strip()):
        return own.strip()
    names = [n for n in ref.get("author") or ref.get("editor") or [] if isinstance(n, Mapping)]
    who = ""
    if names:
        first = names[0]
        raw = str(first.get("family") or first.get("literal") or "")
        words = raw.split()
        who = _ascii_word(words[-1] if first.get("literal") and words else raw)
    year = _year(ref) or ""
    word = ""
    for token in re.split(r"\W+", str(ref.get("title") or "")):
        candidate = _ascii_word(token)
        if candidate and token.lower() not in _KEY_STOPWORDS:
            word = candidate
            break
    key = (who + year + word)[:60]
    return key or _ascii_word(str(ref.get("id") or "")) or "book"


_BIBTEX_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "%": r"\%", "&": r"\&",
                   "$": r"\$", "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}",
                   "^": r"\textasciicircum{}"}


def _tex(text: Any) -> str:
    """Text for a BibTeX field: special characters escaped, whitespace folded."""
    text = " ".join(str(text).split())
    return "".join(_BIBTEX_SPECIAL.get(c, c) for c in text)


def _bib_names(names: Sequence[Any]) -> str:
    out = []
    for n in names:
        if not isinstance(n, Mapping):
            continue
        if n.get("literal"):
            out.append("{" + _tex(n["literal"]) + "}")
        else:
            family, given = _tex(n.get("family") or ""), _tex(n.get("given") or "")
            out.append(f"{family}, {given}" if given else family)
    return " and ".join(o for o in out if o)


def to_bibtex(ref: Mapping[str, Any]) -> str:
    """One BibTeX entry (UTF-8; LaTeX specials escaped, names joined with ``and``)."""
    kind = _BIBTEX_TYPES.get(str(ref.get("type")), "misc")
    fields: list[tuple[str, str]] = []
    if ref.get("title"):
        fields.append(("title", "{" + _tex(ref["title"]) + "}"))
    if ref.get("author"):
        fields.append(("author", _bib_names(ref["author"])))
    if ref.get("editor"):
        fields.append(("editor", _bib_names(ref["editor"])))
    if ref.get("container-title"):
        fields.append(("booktitle" if kind in ("incollection", "inproceedings") else
                       "journal", _tex(ref["container-title"])))
    year = _year(ref)
    if year:
        fields.append(("year", year))
    simple = (("collection-title", "series"), ("collection-number", "number"),
              ("edition", "edition"), ("volume", "volume"), ("publisher", "publisher"),
              ("publisher-place", "address"), ("DOI", "doi"), ("ISBN", "isbn"),
              ("URL", "url"), ("language", "language"))
    for csl_key, bib_key in simple:
        if ref.get(csl_key) not in (None, ""):
            value = str(ref[csl_key])
            fields.append((bib_key, value if bib_key in ("doi", "url") and "}" not in value
                           and "{" not in value else _tex(value)))
    if ref.get("label") == "page" and ref.get("locator"):
        fields.append(("pages", _tex(str(ref["locator"]).replace("–", "--"))))
    if kind == "phdthesis" and ref.get("publisher"):
        fields.append(("school", _tex(ref["publisher"])))
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields if v)
    return f"@{kind}{{{bibtex_key(ref)},\n{body}\n}}\n"


def to_ris(ref: Mapping[str, Any]) -> str:
    """One RIS record (``TY`` … ``ER``), one name per ``AU``/``A2`` line."""

    def clean(value: Any) -> str:
        return " ".join(str(value).split())

    lines = [f"TY  - {_RIS_TYPES.get(str(ref.get('type')), 'GEN')}"]
    for n in ref.get("author") or []:
        if isinstance(n, Mapping) and _display(n):
            lines.append(f"AU  - {clean(_display(n))}")
    for n in ref.get("editor") or []:
        if isinstance(n, Mapping) and _display(n):
            lines.append(f"A2  - {clean(_display(n))}")
    if ref.get("title"):
        lines.append(f"TI  - {clean(ref['title'])}")
    if ref.get("container-title"):
        lines.append(f"T2  - {clean(ref['container-title'])}")
    if ref.get("collection-title"):
        lines.append(f"T3  - {clean(ref['collection-title'])}")
    year = _year(ref)
    if year:
        lines.append(f"PY  - {year}")
        issued = ref.get("issued") or {}
        parts = (issued.get("date-parts") or [[]])[0] if isinstance(issued, Mapping) else []
        if len(parts) >= 2:
            day = f"{parts[2]:02d}" if len(parts) >= 3 else ""
            lines.append(f"DA  - {parts[0]}/{parts[1]:02d}/{day}/")
    for csl_key, tag in (("publisher", "PB"), ("publisher-place", "CY"), ("edition", "ET"),
                         ("volume", "VL"), ("ISBN", "SN"), ("DOI", "DO"), ("URL", "UR"),
                         ("language", "LA")):
        if ref.get(csl_key) not in (None, ""):
            lines.append(f"{tag}  - {clean(ref[csl_key])}")
    if ref.get("label") == "page" and ref.get("locator"):
        first, _, last = str(ref["locator"]).partition("–")
        lines.append(f"SP  - {clean(first)}")
        if last:
            lines.append(f"EP  - {clean(last)}")
    lines.append(f"ID  - {bibtex_key(ref)}")
    lines.append("ER  - ")
    return "\n".join(lines) + "\n"


def to_csl_json(ref: Mapping[str, Any]) -> str:
    """CSL-JSON: an array holding the one item, as citeproc processors read it."""
    return json.dumps([dict(ref)], ensure_ascii=False, indent=2) + "\n"
