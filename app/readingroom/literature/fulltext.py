"""Europe PMC JATS full text → title, abstract, structured sections, joined text (pure).

``GET {EUROPEPMC_URL}/{PMCID}/fullTextXML`` answers the article as JATS
(``research/literature-apis.md`` §2). :func:`parse_jats` reads it with the suite's hardened
parser (the DOCTYPE naming the JATS DTD is stripped, never fetched) and walks the body *in
document order*: each ``sec`` is a section whose ``path`` joins its ancestors' titles
(``Results > Kinetic analysis``); paragraphs, lists, formulas and figure/table captions are
its text; bare paragraphs before the first ``sec`` form an untitled leading section;
acknowledgements and appendices from ``back`` follow. References are counted, not returned.

An article whose XML has front matter but no ``body`` (publishers who do not allow the XML
download) has no sections: the service answers ``NOT_FOUND`` for it.

:func:`answer_part` is what the tool sends: ``max_chars`` bounds every character of text in the
answer — title, abstract (first part only), metadata, the section outline and the part of the
joined text — and ``next_offset`` continues the reading. The text goes out once: sections are
an outline of where each starts in ``full_text``, not a second copy of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from ..core.xmlsafe import parse_xml, strip_doctype
from ..core.xmltree import first_child, first_descendant, tag_name
from .identifiers import normalize_doi, normalize_pmcid, normalize_pmid
from .markup import collapse, element_text

__all__ = [
    "MAX_TITLE_CHARS",
    "Article",
    "Section",
    "answer_part",
    "join_full_text",
    "outline",
    "parse_jats",
]

MAX_TITLE_CHARS = 500
"""A title longer than this is cut in the answer (the rest of the budget is the text's)."""

_XLINK = "{http://www.w3.org/1999/xlink}"
_SKIP = frozenset({"ref-list", "fn-group", "glossary", "notes", "title", "label",
                   "object-id", "sec-meta"})
_CAPTIONED = frozenset({"fig", "table-wrap", "fig-group", "supplementary-material",
                        "media", "boxed-text"})


@dataclass(frozen=True)
class Section:
    """One section of the article: its own title, the title path, depth and its own text."""

    title: str | None
    path: str
    level: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"title": self.title, "path": self.path, "level": self.level, "text": self.text}


@dataclass
class Article:
    """What the JATS document says, sections in document order."""

    title: str | None = None
    abstract: str | None = None
    sections: list[Section] = field(default_factory=list)
    pmcid: str | None = None
    pmid: str | None = None
    doi: str | None = None
    journal: str | None = None
    year: int | None = None
    authors: list[str] = field(default_factory=list)
    licence: str | None = None
    article_type: str | None = None
    keywords: list[str] = field(default_factory=list)
    references: int = 0
    has_body: bool = False

    def metadata(self) -> dict[str, Any]:
        """The bibliographic fields (everything but title, abstract and text)."""
        data: dict[str, Any] = {
            "pmcid": self.pmcid, "pmid": self.pmid, "doi": self.doi, "journal": self.journal,
            "year": self.year, "authors": self.authors, "licence": self.licence,
            "article_type": self.article_type, "keywords": self.keywords,
            "references": self.references,
        }
        return {k: v for k, v in data.items() if v not in (None, [], "")}


def parse_jats(body: bytes) -> Article:
    """Read one JATS ``article`` (bare, or the first inside a ``pmc-articleset``).

    Raises:
        XmlParseError, UnsafeXmlError: the body is not safe, well-formed XML.
        ValueError: the document holds no ``article``.
    """
    root = parse_xml(strip_doctype(body.decode("utf-8", errors="replace")))
    article = root if tag_name(root) == "article" else first_descendant(root, "article")
    if article is None:
        raise ValueError("no JATS article in the document")
    meta = _path(article, "front", "article-meta")
    out = Article(article_type=article.get("article-type"))
    if meta is not None:
        _read_meta(meta, out)
    journal_meta = _path(article, "front", "journal-meta")
    if journal_meta is not None:
        out.journal = element_text(first_descendant(journal_meta, "journal-title"))
    body_el = first_child(article, "body")
    if body_el is not None:
        out.has_body = True
        _read_container(body_el, [], 0, out.sections)
    back = first_child(article, "back")
    if back is not None:
        for part in back:
            name = tag_name(part)
            if name == "ack":
                _section(part, [], 1, out.sections, default_title="Acknowledgements")
            elif name == "app-group":
                for app in part:
                    if tag_name(app) == "app":
                        _section(app, [], 1, out.sections, default_title="Appendix")
            elif name == "app":
                _section(part, [], 1, out.sections, default_title="Appendix")
        out.references = sum(1 for e in back.iter() if tag_name(e) == "ref")
    return out


def join_full_text(article: Article) -> str:
    """Every section with its heading path, as one plain text (title and abstract apart)."""
    return "\n\n".join(_section_text(s) for s in article.sections)


def outline(article: Article) -> list[dict[str, Any]]:
    """Where each section starts in :func:`join_full_text` and how long it is there."""
    entries = []
    start = 0
    for section in article.sections:
        chars = len(_section_text(section))
        entries.append({"title": section.title, "path": section.path, "level": section.level,
                        "start": start, "chars": chars})
        start += chars + 2
    return entries


def _section_text(section: Section) -> str:
    return f"{section.path}\n{section.text}" if section.path else section.text


def answer_part(article: Article, *, max_chars: int, offset: int = 0) -> dict[str, Any]:
    """The ``data`` of one part of the article, every text field within ``max_chars``.

    The budget is spent on the title (cut at :data:`MAX_TITLE_CHARS`), the metadata (a fifth
    of it at most: long author and keyword lists are cut and counted), the abstract (first
    part only, a third of what is left at most), the outline of the sections from the one
    ``offset`` falls in (a quarter of what is left at most) and then the joined text from
    ``offset``.

    Raises:
        ValueError: ``offset`` is past the end of the text.
    """
    full = join_full_text(article)
    if offset > len(full):
        raise ValueError(f"offset {offset} is past the end of the text ({len(full)} characters)")
    title = _cut(article.title, min(MAX_TITLE_CHARS, max_chars // 4))
    meta = _bounded_metadata(article.metadata(), max_chars // 5)
    used = len(title or "") + _chars(meta)
    data: dict[str, Any] = {"title": title}
    if offset == 0 and article.abstract:
        abstract = _cut(article.abstract, max(0, (max_chars - used) // 3))
        data["abstract"] = abstract
        if abstract is not None and len(abstract) < len(article.abstract):
            data["abstract_truncated"] = True
        used += len(abstract or "")
    entries = outline(article)
    room = max(0, (max_chars - used) // 4)
    shown: list[dict[str, Any]] = []
    for entry in entries:
        if entry["start"] + entry["chars"] < offset:
            continue
        cost = _chars(entry)
        if cost > room:
            break
        shown.append(entry)
        room -= cost
    used += _chars(shown)
    part = full[offset:offset + max(0, max_chars - used)]
    end = offset + len(part)
    data.update({
        "sections": shown,
        "sections_total": len(entries),
        "full_text": part,
        "offset": offset,
        "full_text_chars": len(full),
        "truncated": end < len(full),
        "metadata": meta,
    })
    if end < len(full):
        data["next_offset"] = end
    return data


def _cut(text: str | None, limit: int) -> str | None:
    if text is None:
        return None
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _bounded_metadata(meta: dict[str, Any], budget: int) -> dict[str, Any]:
    """``meta`` within ``budget`` characters: long strings cut, lists cut and counted."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        extra: dict[str, Any] = {}
        if isinstance(value, str):
            value = _cut(value, 200)
        elif isinstance(value, list):
            total = len(value)
            value = [_cut(str(v), 120) for v in value[:50]]
            extra = {f"{key}_total": total}
            while value and _chars({**out, key: value, **extra}) > budget:
                value.pop()
            if len(value) == total:
                extra = {}
        candidate = {**out, key: value, **extra}
        if _chars(candidate) <= budget:
            out = candidate
    return out


def _path(element: etree._Element, *names: str) -> etree._Element | None:
    current: etree._Element | None = element
    for name in names:
        if current is None:
            return None
        current = first_child(current, name)
    return current


def _read_meta(meta: etree._Element, out: Article) -> None:
    for ident in meta:
        if tag_name(ident) != "article-id":
            continue
        kind = (ident.get("pub-id-type") or "").lower()
        value = (ident.text or "").strip()
        if kind in ("pmc", "pmcid"):
            out.pmcid = normalize_pmcid(value)
        elif kind == "pmid":
            out.pmid = normalize_pmid(value)
        elif kind == "doi":
            out.doi = normalize_doi(value)
    out.title = element_text(_path(meta, "title-group", "article-title"))
    for contrib in meta.iter():
        if tag_name(contrib) != "contrib" or contrib.get("contrib-type") != "author":
            continue
        name = first_child(contrib, "name")
        collab = first_child(contrib, "collab")
        if name is not None:
            given = element_text(first_child(name, "given-names"))
            surname = element_text(first_child(name, "surname"))
            full = " ".join(p for p in (given, surname) if p)
            if full:
                out.authors.append(full)
        elif collab is not None:
            text = element_text(collab)
            if text:
                out.authors.append(text)
    out.year = _year(meta)
    licence = _path(meta, "permissions", "license")
    if licence is not None:
        out.licence = (licence.get(f"{_XLINK}href") or licence.get("license-type")
                       or element_text(licence))
    for group in meta:
        if tag_name(group) == "kwd-group":
            out.keywords += [k for k in (element_text(e) for e in group if tag_name(e) == "kwd")
                             if k]
    out.abstract = _abstract(meta)


def _year(meta: etree._Element) -> int | None:
    dates = [d for d in meta if tag_name(d) == "pub-date"]
    preferred = ("epub", "ppub", "pub", "collection")
    dates.sort(key=lambda d: preferred.index(d.get("pub-type") or d.get("date-type") or "pub")
               if (d.get("pub-type") or d.get("date-type") or "pub") in preferred else 9)
    for date in dates:
        year = first_child(date, "year")
        text = (year.text or "") if year is not None else ""
        if text.strip().isdigit():
            return int(text.strip())
    return None


def _abstract(meta: etree._Element) -> str | None:
    abstracts = [a for a in meta if tag_name(a) == "abstract"]
    plain = [a for a in abstracts if a.get("abstract-type") in (None, "", "structured")]
    chosen = (plain or abstracts)[:1]
    if not chosen:
        return None
    sections: list[Section] = []
    _read_container(chosen[0], [], 0, sections, nested_titles=False)
    parts = [f"{s.title}: {s.text}" if s.title else s.text for s in sections if s.text]
    return "\n".join(parts) or None


def _read_container(
    element: etree._Element,
    path: list[str],
    level: int,
    sections: list[Section],
    *,
    nested_titles: bool = True,
) -> None:
    """Read a ``body`` (or an abstract): leading paragraphs, then each ``sec`` in order."""
    loose: list[str] = []
    for child in element:
        name = tag_name(child)
        if name == "sec":
            if loose:
                sections.append(Section(None, " > ".join(path), level, "\n".join(loose)))
                loose = []
            _section(child, path if nested_titles else [], level + 1, sections)
        elif name not in _SKIP:
            loose += _blocks(child)
    if loose:
        sections.append(Section(None, " > ".join(path), level, "\n".join(loose)))


def _section(
    element: etree._Element,
    path: list[str],
    level: int,
    sections: list[Section],
    *,
    default_title: str | None = None,
) -> None:
    title = element_text(first_child(element, "title")) or default_title
    label = element_text(first_child(element, "label"))
    if title and label and not title.startswith(label):
        title = f"{label} {title}"
    here = [*path, title] if title else list(path)
    own: list[str] = []
    position = len(sections)
    for child in element:
        name = tag_name(child)
        if name == "sec":
            _section(child, here, level + 1, sections)
        elif name not in _SKIP:
            own += _blocks(child)
    # The section's own text comes before its subsections in the output, as in the document.
    sections.insert(position, Section(title, " > ".join(here), level, "\n".join(own)))


def _blocks(element: etree._Element) -> list[str]:
    """The text blocks of one body element: a paragraph, a list, a captioned figure …"""
    name = tag_name(element)
    if name in ("list",):
        items = []
        for item in element:
            if tag_name(item) == "list-item":
                text = element_text(item)
                if text:
                    items.append(f"- {text}")
        return items
    if name in _CAPTIONED:
        label = element_text(first_child(element, "label"))
        caption = element_text(first_child(element, "caption"))
        if name == "boxed-text":
            inner: list[str] = []
            for child in element:
                if tag_name(child) not in {"label", "caption"} | _SKIP:
                    inner += _blocks(child)
            head = " ".join(p for p in (label, caption) if p)
            return ([head] if head else []) + inner
        text = " ".join(p for p in (label, caption) if p)
        return [f"[{text}]"] if text else []
    if name in ("disp-quote", "def-list", "statement", "disp-formula-group"):
        inner = []
        for child in element:
            inner += _blocks(child) if tag_name(child) not in _SKIP else []
        if inner:
            return inner
    text = collapse(element_text(element))
    return [text] if text else []
