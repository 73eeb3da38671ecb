"""Source locators: finding a passage in the raw source text and proving where it is.

A :class:`Locator` pins a span of the *raw* source text of one package version: unit range,
character range, page index and label (PDF), chapter href and fragment (EPUB) or source lines
(Markdown), a short quote, a SHA-256 of the span's folded text, and a checksum over all of it.

The checksum is unkeyed: anyone can recompute it, so it only catches accidents (a truncated
paste, a mangled field). Verification comes from the package: :func:`check_locator` rebuilds
the locator of the same range from the package's own text and compares every field with it, so
a locator whose quote, page, label, kind, chapter or hash was edited is INVALID_LOCATOR naming
the fields, whether or not its checksum was recomputed. A locator from another version is
STALE_LOCATOR.

Matching steps over page furniture: each unit is folded with its furniture spans masked
(:func:`.furniture.mask_furniture`), so a quote typed as the reader sees it — across a folio
at a page break, past a note marker, through a verse line number — is found; the locator
still spans the raw text, furniture included, and lists what it stepped over.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import Code, CoreError
from .furniture import MASK, mask_furniture, spans_within
from .model import SourceUnit
from .text import cjk_joins, folds_between, is_cjk, normalise, normalise_with_offsets

__all__ = [
    "MAX_CANDIDATES",
    "MAX_LOCATOR_CHARS",
    "QUOTE_CHARS",
    "Locator",
    "SourceText",
    "check_locator",
    "parse_locator",
    "strip_typed_ruby",
]

QUOTE_CHARS = 300
MAX_LOCATOR_CHARS = 64_000
"""A locator's JSON text is a few hundred characters; anything far longer is not one."""
MAX_CANDIDATES = 50

_KIND = {"pdf_page": "pdf_page", "epub_chapter": "epub_chapter",
         "markdown_section": "markdown_lines"}


class Locator(BaseModel):
    """A verifiable pointer to a span of one package version's raw source text."""

    model_config = ConfigDict(extra="forbid")

    book_id: str
    package_version: int
    source_sha256: str
    kind: Literal["pdf_page", "epub_chapter", "markdown_lines"]
    unit_index: int = Field(description="First unit (PDF page index, EPUB spine position).")
    unit_end_index: int = Field(description="Last unit of the span (inclusive).")
    char_start: int = Field(description="Start offset in the first unit's raw text.")
    char_end: int = Field(description="End offset (exclusive) in the last unit's raw text.")
    page_index: int | None = Field(None, description="PDF: zero-based page index.")
    page_label: str | None = Field(
        None, description="Printed page label where the span starts: PDF page label (or the "
        "folio printed on the page), EPUB page list / page-break marker.")
    page_label_inferred: bool | None = Field(
        None, description="PDF: true when the label was inferred from the printed folios, "
        "not read from the PDF's page labels.")
    page_end_index: int | None = None
    page_end_label: str | None = Field(None, description="Printed page label where it ends.")
    href: str | None = Field(None, description="EPUB: chapter path in the container.")
    fragment: str | None = Field(None, description="EPUB: nearest id at or before the start.")
    line_start: int | None = Field(None, description="Markdown: first source line.")
    line_end: int | None = None
    quote: str = Field(description=f"The span's raw text (first {QUOTE_CHARS} characters).")
    quote_truncated: bool = False
    span_sha256: str = Field(description="SHA-256 of the span's normalised text.")
    stepped_over: list[dict[str, Any]] = Field(
        default_factory=list, description="Page furniture inside the span that matching "
        "stepped over: {kind, text, unit_index} (running heads, folios, page breaks, note "
        "markers, line numbers).")
    text_source: Literal["ocr", "mixed"] | None = Field(
        None, description="Set when the span's text was read by OCR from page images "
        "(mixed: partly): machine-read, not the publisher's text.")
    ocr: dict[str, Any] | None = Field(
        None, description="For OCR text: engine, engine_version, language, the OCR'd pages "
        "and their mean word confidence (0-100).")
    checksum: str = Field(description="Integrity check over every other field.")
    reference: dict[str, Any] | None = Field(
        None, description="The book's reference (compact CSL-JSON: type, title, author, "
        "issued, publisher, DOI/ISBN, URL) with CSL's label and locator for this passage. "
        "Informational: it follows the library's metadata, so neither the checksum nor "
        "verification covers it.")


_OPTIONAL = ("stepped_over", "page_label_inferred", "text_source", "ocr")
"""Fields added after locators were first issued: left out of the checksum when empty, so an
older locator (which has none of them) keeps its checksum."""


_UNCHECKED = frozenset({"checksum", "reference"})
"""Fields outside the checksum and the field-by-field verification."""


def _checksum(fields: dict[str, Any]) -> str:
    body = {k: v for k, v in fields.items()
            if k not in _UNCHECKED and not (k in _OPTIONAL and v in (None, [], False))}
    canon = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:32]


def parse_locator(value: str | dict[str, Any] | Locator) -> Locator:
    """A locator from JSON text or a dict; INVALID_LOCATOR when it does not parse."""
    if isinstance(value, Locator):
        return value
    if isinstance(value, str) and len(value) > MAX_LOCATOR_CHARS:
        raise CoreError(Code.INVALID_LOCATOR, f"The locator text is longer than "
                        f"{MAX_LOCATOR_CHARS} characters; it is not a book-agent locator.",
                        remediation="Pass the `locator` object exactly as book_locate_source "
                        "returned it.")
    try:
        data = json.loads(value) if isinstance(value, str) else value
        return Locator.model_validate(data)
    except (ValueError, ValidationError, RecursionError) as exc:
        raise CoreError(
            Code.INVALID_LOCATOR,
            "The locator does not parse as a book-agent locator.",
            details={"error": str(exc).splitlines()[0]},
            remediation="Pass the `locator` object exactly as book_locate_source returned it.",
        ) from None


class SourceText:
    """The raw units of one package, folded once, searchable as one string across units.

    Each unit is folded with its furniture masked; units are joined as the reader reads them
    (a word hyphenated across a page break joins, a CJK line runs on, otherwise one space).
    """

    def __init__(self, units: Sequence[SourceUnit], *, book_id: str, version: int,
                 source_sha256: str,
                 reference: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
                 ) -> None:
        self.units = list(units)
        self.book_id, self.version, self.source_sha256 = book_id, version, source_sha256
        # The book's reference for a locator's fields (adds the passage's CSL locator).
        self.reference = reference
        parts: list[str] = []
        self._unit_starts: list[int] = []  # folded position where each unit starts
        self._offsets: list[list[int]] = []
        self._masked: list[str] = []  # the unit text with furniture masked (same length)
        last = -1  # the last unit with folded text
        for n, unit in enumerate(self.units):
            masked = mask_furniture(unit.text, unit.furniture) if unit.furniture else unit.text
            folded, offs = normalise_with_offsets(masked)
            if last >= 0 and folded:
                prev = parts[last]
                broken = self._broken(last, prev) if folded[0].isalpha() else None
                if broken == "hyphen":
                    # A word hyphenated across a page break: drop the hyphen, join the halves.
                    parts[last] = prev[:-1]
                    self._offsets[last] = self._offsets[last][:-2] + self._offsets[last][-1:]
                elif broken == "soft":
                    pass  # broken after a soft hyphen (already dropped): the halves join
                elif not (prev[-1] in _NO_SPACE_AFTER or folded[0] in _NO_SPACE_BEFORE
                          or prev.endswith("...") or folded.startswith("...")
                          or (cjk_joins(prev[-1], self._masked[last][self._offsets[last][-2]])
                              and cjk_joins(folded[0], masked[offs[0]]))):
                    parts[last] += " "
                    self._offsets[last].insert(-1, self._offsets[last][-1])
            self._unit_starts.append(0)
            self._offsets.append(offs)
            self._masked.append(masked)
            parts.append(folded)
            if folded:
                last = n
        # Unit starts follow the parts as finally joined (a join changes the earlier part).
        pos = 0
        for n, part in enumerate(parts):
            self._unit_starts[n] = pos
            pos += len(part)
        self.folded = "".join(parts)

    def _broken(self, u: int, folded: str) -> str | None:
        """How unit ``u`` ends a word broken at its end: "hyphen" (a hyphen proper after a
        letter, not a dash), "soft" (a soft hyphen after a letter), or None."""
        if not folded or (not folded[-1].isalpha() and folded[-1] != "-"):
            return None
        offs, masked = self._offsets[u], self._masked[u]
        if folded[-1] == "-":
            if len(folded) > 1 and folded[-2].isalpha() and masked[offs[-2]] in _HYPHENS:
                return "hyphen"
            return None
        return "soft" if "\u00ad" in masked[offs[-2] + 1:] else None

    # ------------------------------------------------------------------ positions
    def _unit_at(self, pos: int) -> int:
        return max(0, bisect.bisect_right(self._unit_starts, pos) - 1)

    def _raw_pos(self, pos: int, *, end: bool) -> tuple[int, int]:
        """A folded position → (unit, raw offset); ``end`` maps an exclusive end."""
        if not end:
            u = self._unit_at(pos)
            offs = self._offsets[u]
            return u, offs[min(pos - self._unit_starts[u], len(offs) - 1)]
        u = self._unit_at(max(pos - 1, 0))
        offs = self._offsets[u]
        last = min(pos - 1 - self._unit_starts[u], len(offs) - 2)
        if last < 0:
            return u, 0
        # One past the raw cluster of the last folded character (an NFKC expansion such as
        # "ﬁ" → "fi" maps both characters to one raw position; combining marks stay with
        # their letter), without the whitespace or furniture that follows it.
        lo = offs[last] + 1
        stop = max(offs[last + 1], lo)
        masked = self._masked[u]
        while stop > lo and (masked[stop - 1].isspace() or masked[stop - 1] in _TRIM):
            stop -= 1
        return u, stop

    def find(self, text: str, *, unit_range: tuple[int, int] | None = None) -> tuple[str, list]:
        """All occurrences of ``text`` (folded) as raw spans, optionally within a unit range.

        A hyphen between letters in ``text`` also matches where the book has none (a
        compound the book broke at a line end). :meth:`match_folds` says which folds a match
        needed. Only whole matches count: a quote that begins or ends with a letter or digit
        must not continue a longer word or number in the book (``273.879.750`` is not found
        in ``273.879.7501``); :meth:`find_with_partials` also returns those.

        Returns:
            (folded query, [((unit, char), (unit, char)), ...]) in reading order.
        """
        needle, spans, _partial = self.find_with_partials(text, unit_range=unit_range)
        return needle, spans

    def find_with_partials(self, text: str, *, unit_range: tuple[int, int] | None = None
                           ) -> tuple[str, list, list]:
        """Like :meth:`find`, and the raw spans where ``text`` occurs only as part of a longer
        word or number (a partial match), in reading order.

        A quote typed with ruby readings after kanji, as Aozora Bunko writes them
        (寛容《くつろげ》て) or in parentheses (寛容（くつろげ）て), is matched without them
        when it does not occur as typed (the raw text keeps ruby bases, not readings);
        :meth:`match_folds` then names the ``ruby`` fold.
        """
        needle, spans, partial = self._find(text, unit_range)
        if not spans:
            bare = strip_typed_ruby(text)
            if bare != text and bare.strip():
                found = self._find(bare, unit_range)
                if found[1] or found[2]:
                    return found
        return needle, spans, partial

    def _find(self, text: str, unit_range: tuple[int, int] | None) -> tuple[str, list, list]:
        needle = normalise(text).strip()
        if not needle:
            raise CoreError(Code.INVALID_ARGUMENT, "The text to locate is empty after "
                            "normalisation.", remediation="Pass a passage of the book.")
        lo, hi = 0, len(self.folded)
        if unit_range is not None:
            a, b = unit_range
            lo = self._unit_starts[a] if 0 <= a < len(self.units) else len(self.folded)
            hi = self._unit_starts[b + 1] if b + 1 < len(self.units) else len(self.folded)
        found: list[tuple[int, int]] = []
        if _COMPOUND.search(needle):
            pieces = _COMPOUND.split(needle)
            pattern = re.compile("(?=(" + "-?".join(map(re.escape, pieces)) + "))")
            found = [m.span(1) for m in pattern.finditer(self.folded, lo, hi)]
        else:
            start = self.folded.find(needle, lo, hi)
            while start != -1 and start + len(needle) <= hi:
                found.append((start, start + len(needle)))
                start = self.folded.find(needle, start + 1, hi)
        whole = [(a, b) for a, b in found if self._whole(a, b)]
        partial = [(a, b) for a, b in found if not self._whole(a, b)] if len(whole) < len(
            found) else []
        spans = [(self._raw_pos(a, end=False), self._raw_pos(b, end=True)) for a, b in whole]
        parts = [(self._raw_pos(a, end=False), self._raw_pos(b, end=True)) for a, b in partial]
        return needle, spans, parts

    def _whole(self, a: int, b: int) -> bool:
        """Whether the folded match ``[a, b)`` neither starts inside nor runs on into a word or
        number (letters and digits outside CJK scripts, which have no word boundaries)."""
        folded = self.folded
        first, last = folded[a], folded[b - 1]
        if a > 0 and _word_char(first) and _word_char(folded[a - 1]):
            return False
        return not (b < len(folded) and _word_char(last) and _word_char(folded[b]))

    def match_folds(self, text: str, spans: Sequence) -> list[str]:
        """The folds (:data:`.text.FOLD_NAMES`) that ``text`` needed to match ``spans``.

        E.g. ``["punctuation"]`` when a straight apostrophe matched the book's ’, or
        ``["kanji_variant"]`` for 假 against 仮; empty when the text matched as typed (case
        and whitespace aside). Computed on the first few spans.
        """
        names: list[str] = []
        bare = strip_typed_ruby(text)
        for start, end in list(spans)[:5]:
            found = self._masked_span(start, end).replace(MASK, "")
            typed = text
            if bare != text and normalise(text) != normalise(found):
                typed = bare  # matched without the readings typed after its kanji
                if "ruby" not in names:
                    names.append("ruby")
            for name in folds_between(typed, found):
                if name not in names:
                    names.append(name)
        return names

    def stepped_over(self, start: tuple[int, int], end: tuple[int, int]) -> list[dict]:
        """The furniture inside a raw span: ``{"kind", "text", "unit_index"}`` in order."""
        (u0, c0), (u1, c1) = start, end
        out = []
        for u in range(u0, u1 + 1):
            unit = self.units[u]
            if not unit.furniture:
                continue
            lo, hi = (c0 if u == u0 else 0), (c1 if u == u1 else len(unit.text))
            for s, e, kind in spans_within(unit.furniture, lo, hi):
                if e > s:
                    out.append({"kind": kind, "text": unit.text[s:e], "unit_index": u})
        return out

    def _masked_span(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        (u0, c0), (u1, c1) = start, end
        pieces = []
        for u in range(u0, u1 + 1):
            text = self._masked[u]
            pieces.append(text[c0 if u == u0 else 0: c1 if u == u1 else len(text)])
        return "\n".join(pieces)

    # ------------------------------------------------------------------ locators
    def span_text(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        """Raw text of a span, unit slices joined with ``\\n``."""
        (u0, c0), (u1, c1) = start, end
        pieces = []
        for u in range(u0, u1 + 1):
            text = self.units[u].text
            pieces.append(text[c0 if u == u0 else 0: c1 if u == u1 else len(text)])
        return "\n".join(pieces)

    def locator(self, start: tuple[int, int], end: tuple[int, int]) -> Locator:
        """Build the checksummed locator of a raw span."""
        (u0, c0), (u1, c1) = start, end
        first, last = self.units[u0], self.units[u1]
        raw = self.span_text(start, end)
        fields: dict[str, Any] = {
            "book_id": self.book_id,
            "package_version": self.version,
            "source_sha256": self.source_sha256,
            "kind": _KIND[first.kind],
            "unit_index": u0,
            "unit_end_index": u1,
            "char_start": c0,
            "char_end": c1,
            "quote": raw[:QUOTE_CHARS],
            "quote_truncated": len(raw) > QUOTE_CHARS,
            "span_sha256": hashlib.sha256(_span_fold(raw).encode("utf-8")).hexdigest(),
            "stepped_over": self.stepped_over(start, end),
        }
        read = [self.units[u] for u in range(u0, u1 + 1) if self.units[u].text_source == "ocr"]
        if read:
            own = any(self.units[u].text_source != "ocr" and self.units[u].text.strip()
                      for u in range(u0, u1 + 1))
            fields.update(text_source="mixed" if own else "ocr", ocr=_ocr_label(read))
        if first.kind == "pdf_page":
            fields.update(page_index=first.index, page_label=_label(first.label),
                          page_end_index=last.index, page_end_label=_label(last.label),
                          page_label_inferred=True if (
                              (first.label and first.label_inferred)
                              or (last.label and last.label_inferred)) else None)
        elif first.kind == "epub_chapter":
            before = [fid for fid, off in first.anchors if off <= c0]
            fields.update(href=first.href, fragment=before[-1] if before else None,
                          page_label=self._page_mark(u0, c0, inclusive=True),
                          page_end_label=self._page_mark(u1, c1, inclusive=c1 == c0))
        else:
            fields.update(line_start=first.line_start, line_end=last.line_end)
        loc = Locator(**fields, checksum="")
        loc = loc.model_copy(update={"checksum": _checksum(loc.model_dump(mode="json"))})
        if self.reference is not None:
            loc = loc.model_copy(update={"reference": self.reference(
                loc.model_dump(mode="json", exclude_none=True))})
        return loc

    def _page_mark(self, u: int, offset: int, *, inclusive: bool) -> str | None:
        """The printed page at ``offset`` of EPUB unit ``u``: its last page mark at (or, for
        an exclusive end, before) the offset, else the last mark of an earlier chapter; None
        when the chapter has no page marks."""
        marks = self.units[u].page_marks
        if not marks:
            return None
        here = [label for off, label in marks if off < offset or (inclusive and off == offset)]
        if here:
            return _label(here[-1])
        for v in range(u - 1, -1, -1):
            if self.units[v].page_marks:
                return _label(self.units[v].page_marks[-1][1])
        return None

    def candidate(self, start, end) -> dict[str, Any]:
        """A locate candidate: the locator and a little context."""
        loc = self.locator(start, end)
        (u0, c0), (u1, c1) = start, end
        before = self.units[u0].text[max(0, c0 - 60):c0]
        after = self.units[u1].text[c1:c1 + 60]
        return {"locator": loc.model_dump(mode="json", exclude_none=True),
                "prefix": " ".join(before.split()), "suffix": " ".join(after.split())}


def check_locator(loc: Locator, source: SourceText) -> tuple[tuple[int, int], tuple[int, int]]:
    """Verify a locator against the package it names, now; returns its raw span.

    The package's own locator of the same range is rebuilt from its text and every field is
    compared (kind, units, page indexes and labels, href and fragment, lines, quote, span
    hash); the checksum is checked last and only catches accidents.

    Raises:
        CoreError: STALE_LOCATOR (another version or source), INVALID_LOCATOR (another book,
            out of range, or any field that differs from the package, named in ``fields``).
    """
    if loc.book_id != source.book_id:
        raise CoreError(Code.INVALID_LOCATOR, f"The locator is for book {loc.book_id!r}, not "
                        f"{source.book_id!r}.", details={"locator_book": loc.book_id},
                        remediation="Use a locator returned for this book.")
    if loc.package_version != source.version or loc.source_sha256 != source.source_sha256:
        raise CoreError(
            Code.STALE_LOCATOR,
            f"The locator was issued for version {loc.package_version} of {loc.book_id!r}; the "
            f"current version is {source.version}.",
            details={"locator_version": loc.package_version, "current_version": source.version},
            remediation="Locate the passage again (book_locate_source) to get a current "
            "locator.",
        )
    n = len(source.units)
    if not (0 <= loc.unit_index <= loc.unit_end_index < n):
        raise _invalid("its unit range is outside the book",
                       fields=["unit_index", "unit_end_index"])
    start, end = (loc.unit_index, loc.char_start), (loc.unit_end_index, loc.char_end)
    if not (0 <= loc.char_start <= len(source.units[loc.unit_index].text)
            and 0 <= loc.char_end <= len(source.units[loc.unit_end_index].text)
            and start <= end):
        raise _invalid("its character range is outside the units",
                       fields=["char_start", "char_end"])
    given = loc.model_dump(mode="json")
    truth = source.locator(start, end).model_dump(mode="json")
    absent = {k for k in _OPTIONAL if k not in loc.model_fields_set}
    differ = [k for k in truth if k not in _UNCHECKED and k not in absent
              and given.get(k) != truth[k]]
    if differ:
        raise _invalid(
            f"{', '.join(differ)} {'differs' if len(differ) == 1 else 'differ'} from what the "
            "package has at its range", fields=differ)
    if _checksum(given) != loc.checksum:
        raise _invalid("its checksum does not match its fields (damaged in transit?)",
                       fields=["checksum"])
    return start, end


def _invalid(why: str, *, fields: list[str] | None = None) -> CoreError:
    return CoreError(Code.INVALID_LOCATOR, f"The locator is not valid: {why}.",
                     details={"fields": fields} if fields else None,
                     remediation="Pass the locator exactly as book_locate_source returned it, "
                     "or locate the passage again.")


_HYPHENS = frozenset("-\u2010\u2011")
_NO_SPACE_AFTER = frozenset("-'\"")
_NO_SPACE_BEFORE = frozenset("-'\";:!?")
_TRIM = frozenset(MASK + "\u00ad\u200c\u200d\u2060\ufeff")
_COMPOUND = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")


_TYPED_RUBY = re.compile(
    r"《[^《》\n]{1,40}》"
    r"|(?<=[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヶ])[（(][\u3041-\u309f\u30a0-\u30ffー・]{1,40}[）)]")
"""A reading typed after kanji: Aozora Bunko's 《かな》, or （かな） in parentheses."""


def strip_typed_ruby(text: str) -> str:
    """``text`` without ruby readings typed after kanji (寛容《くつろげ》て → 寛容て; also
    （くつろげ） and (くつろげ)); Aozora's ｜ that marks where a ruby base begins goes too."""
    if "《" not in text and "（" not in text and "(" not in text:
        return text
    bare = _TYPED_RUBY.sub("", text)
    return bare.replace("｜", "") if bare != text else text


def _word_char(ch: str) -> bool:
    return ch.isalnum() and not is_cjk(ch)


def _ocr_label(units: Sequence[SourceUnit]) -> dict[str, Any]:
    """What read the OCR'd units of a span: the engine label, the pages, and the mean word
    confidence weighted by words."""
    first = units[0].ocr or {}
    known = [(u.ocr["mean_word_confidence"], u.ocr.get("words") or 0) for u in units
             if u.ocr and u.ocr.get("mean_word_confidence") is not None]
    words = sum(w for _c, w in known)
    return {**{k: first[k] for k in ("engine", "engine_version", "language") if k in first},
            "pages": [u.index for u in units],
            "mean_word_confidence": round(sum(c * w for c, w in known) / words, 1)
            if words else None}


def _label(label: str | None) -> str | None:
    return label if label and label != "None" else None


# ---------------------------------------------------------------------- the span hash fold
# Frozen: the normalisation ``span_sha256`` was first computed with. The search fold keeps
# improving (text.py); a locator's hash must not change with it, or every locator issued
# before would stop verifying.
_SPAN_DROP = frozenset(
    "\u00ad\u200b\u200c\u200d\u2060\ufeff"
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)


def _span_fold(text: str) -> str:
    chars: list[str] = []
    offs: list[int] = []
    start, n = 0, len(text)
    while start < n:
        end = start + 1
        while end < n and unicodedata.combining(text[end]):
            end += 1
        cluster = text[start:end]
        if cluster[0] not in _SPAN_DROP:
            for ch in unicodedata.normalize("NFKC", cluster).casefold():
                if ch not in _SPAN_DROP:
                    chars.append(" " if ch.isspace() else ch)
                    offs.append(start)
        start = end
    out: list[str] = []
    i, n = 0, len(chars)
    while i < n:
        ch = chars[i]
        if ch in _HYPHENS and out and out[-1].isalpha():
            j = i + 1
            while j < n and chars[j] == " ":
                j += 1
            if j < n and chars[j].isalpha() and (
                    j == i + 1 or "\n" in text[offs[i]:offs[j]]):
                i = j
                continue
        if ch == " ":
            j = i
            while j < n and chars[j] == " ":
                j += 1
            prev = out[-1] if out else ""
            nxt = chars[j] if j < n else ""
            if prev and nxt and not (is_cjk(prev) and is_cjk(nxt)):
                out.append(" ")
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)
