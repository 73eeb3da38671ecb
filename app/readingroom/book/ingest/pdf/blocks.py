"""Markdown blocks of a PDF page, each tied to the raw span it renders.

A page's text is made of MuPDF text blocks (:class:`.layout.PageText` pieces); each becomes one
or more Markdown blocks (:data:`..model.Block`):

* Emphasis comes from MuPDF's own XHTML rendering of the same text page (``<b>``, ``<i>``),
  which costs about what the plain pass costs (a ``dict`` pass costs 2-3×). Its runs are placed
  in the raw block text by search, in order; where one cannot be placed the block keeps its
  text without emphasis. A run is shown as emphasis only when it holds a word of three letters
  or more (maths italic, ``*x*``, would be noise).
* A block that holds an outline entry is a heading of the entry's level; in a PDF without an
  outline, a one-line block set in type that stands out (:func:`font_headings`) is one.
* Lines are joined with spaces; end-of-line hyphenation is joined (``exam-⏎ple`` →
  ``example``; ``Schwarz-⏎Weiß`` keeps its hyphen); a short line ending a sentence ends a
  paragraph. A block of verse (it carries line numbers, or all its lines are much shorter
  than the page's prose lines) keeps its line breaks as hard breaks.
* Running heads and folios are left out: a block that is all furniture gives no Markdown (the
  raw gap is furniture), and furniture lines at a block's edges are left outside its span.
"""

from __future__ import annotations

import html
import re
import statistics
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from itertools import pairwise

from ...model import Block, FurnitureSpan

__all__ = [
    "Emphasis",
    "book_compounds",
    "emphasis_runs",
    "font_headings",
    "heading_levels",
    "line_hyphen",
    "page_blocks",
    "place_emphasis",
]

Emphasis = tuple[int, int, bool, bool]
"""``(start, end, bold, italic)``: an emphasised span, relative to its block's raw text."""

CODE = -1
"""The kind :func:`heading_levels` gives a block set wholly in monospace."""
_MONOSPACE = re.compile(r"(?:\s*<tt>[^<]*</tt>\s*)+")
_BULLET_CHARS = frozenset("•◦▪▫‣⁃●○■□")
_ELEMENT = re.compile(r"<(p|h[1-6])>(.*?)</\1>", re.DOTALL)
_TAG = re.compile(r"</?[a-z0-9]+[^>]*>")
_RUN = re.compile(r"<(b|i)>(<(?:b|i)>)?([^<]+)(?:</(?:b|i)>)?</\1>")
_WORD = re.compile(r"[^\W\d_]{3,}")
_SENTENCE_END = frozenset(".!?:;\"”’»)")
_HIDDEN = frozenset({"running_head", "folio", "page_break"})
_ESCAPE = re.compile(r"([\\`*_<])")
_LINE_SYNTAX = re.compile(r"^(\s*)([#>+=|-]|\d+(?=[.)]\s))")


def heading_levels(xhtml: str) -> list[int]:
    """Each text block's kind in MuPDF's XHTML: its heading level (``<h2>`` → 2), 0 for a
    paragraph, :data:`CODE` for a paragraph set wholly in monospace (``<tt>``).

    MuPDF assigns heading levels to one-line blocks by absolute type size (12 pt and up is
    ``<h3>``), so they name a heading only where the type also stands out from the book's own
    (see :func:`font_headings`).
    """
    kinds = []
    for match in _ELEMENT.finditer(xhtml):
        if match.group(1) != "p":
            kinds.append(int(match.group(1)[1]))
        elif "<tt>" in match.group(2) and _MONOSPACE.fullmatch(match.group(2)):
            kinds.append(CODE)
        else:
            kinds.append(0)
    return kinds


def font_headings(
    pages: dict[int, tuple[Sequence[tuple[int, int]], Sequence[float], Sequence[int]]],
    texts: dict[int, str],
) -> dict[int, dict[int, int]]:
    """Headings told by type size, for a PDF without an outline.

    A candidate is a one-line block that MuPDF's XHTML makes a heading and that reads like one
    (letters, at most 150 characters, not ending in a full stop or comma). MuPDF's levels are
    absolute (12 pt and up is ``<h3>``), so they are trusted only when most one-line blocks
    are plain paragraphs (the body is set smaller); otherwise a candidate must also be at
    least 30 % taller than a line of the book's paragraphs. Levels follow MuPDF's.

    Args:
        pages: page index → (piece spans, piece heights, MuPDF levels).
        texts: page index → the page text.

    Returns:
        page index → {raw offset of the heading → level}.
    """
    single = tagged = 0
    line_heights: list[float] = []
    candidates: list[tuple[int, int, float, int]] = []
    for index, (spans, heights, levels) in pages.items():
        text = texts[index]
        for (s, e), height, level in zip(spans, heights, levels, strict=False):
            breaks = text.count("\n", s, e)
            if breaks:
                line_heights.append(height / (breaks + 1))
                continue
            single += 1
            if level <= 0:
                continue
            tagged += 1
            line = text[s:e].strip()
            if 0 < len(line) <= 150 and line[-1] not in ".,;" and _WORD.search(line):
                candidates.append((index, s, height, level))
    if not candidates:
        return {}
    trusted = tagged < 0.5 * single
    body = statistics.median(line_heights) if line_heights else None
    found: dict[int, dict[int, int]] = {}
    for index, start, height, level in candidates:
        if trusted or (body is not None and height >= 1.3 * body):
            found.setdefault(index, {})[start] = level
    return found


def emphasis_runs(xhtml: str) -> list[list[tuple[int, str, bool, bool]]]:
    """Each text block of MuPDF's XHTML page as its emphasised runs.

    A run is ``(offset, text, bold, italic)``, the offset counted in the block's plain text
    (tags removed, entities decoded). Only runs holding a word of three letters or more are
    kept, and only simple ones (``<b>…</b>``, ``<i>…</i>``, ``<b><i>…</i></b>``), so a page
    of maths italics costs one search per block.
    """
    blocks: list[list[tuple[int, str, bool, bool]]] = []
    for match in _ELEMENT.finditer(xhtml):
        inner = match.group(2)
        runs: list[tuple[int, str, bool, bool]] = []
        if "<b>" in inner or "<i>" in inner:
            for run in _RUN.finditer(inner):
                text = run.group(3)
                if not _WORD.search(text):
                    continue
                tags = f"<{run.group(1)}>{run.group(2) or ''}"
                offset = len(html.unescape(_TAG.sub("", inner[: run.start(3)])))
                runs.append((offset, html.unescape(text), "<b>" in tags, "<i>" in tags))
        blocks.append(runs)
    return blocks


def place_emphasis(raw: str, runs: Sequence[tuple[int, str, bool, bool]]) -> list[Emphasis]:
    """The emphasised runs placed in the block's raw text (lines joined by ``\n``).

    A run sits at its XHTML offset when the raw text has it there (a line break stands for
    the space MuPDF writes between lines), else at its next occurrence in order; a run found
    nowhere gives up the block's emphasis (none is better than emphasis in the wrong place).
    """
    flat = raw.replace("\n", " ")
    placed: list[Emphasis] = []
    pos = 0
    for offset, text, bold, italic in runs:
        core = text.strip()
        at = offset + len(text) - len(text.lstrip())
        if flat.startswith(core, at) and at >= pos:
            pass
        else:
            at = flat.find(core, pos)
            if at < 0:
                return []
        end = at + len(core)
        if placed and placed[-1][1] >= at - 1 and placed[-1][2:] == (bold, italic):
            placed[-1] = (placed[-1][0], end, bold, italic)
        else:
            placed.append((at, end, bold, italic))
        pos = end
    return placed


def _escape(text: str) -> str:
    return _ESCAPE.sub(r"\\\1", text)


def _guard_line(text: str) -> str:
    """Escape what would read as Markdown syntax at the start of a line."""
    match = _LINE_SYNTAX.match(text)
    if not match:
        return text
    lead, token = match.group(1), match.group(2)
    if token[0].isdigit():
        cut = len(lead) + len(token)
        return text[:cut] + "\\" + text[cut:]
    return f"{lead}\\{text[len(lead):]}"


_BROKEN_WORD = re.compile(r"([^\W\d_]+)([-\u2010\u00ad])$")
_WORD_START = re.compile(r"[^\W\d_]+")
_COMPOUND_WORD = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)+")


def book_compounds(texts: Iterable[str]) -> frozenset[str]:
    """The hyphenated compounds a book prints whole on one line (casefolded), e.g.
    ``single-document``: the dictionary :func:`line_hyphen` asks."""
    found: set[str] = set()
    for text in texts:
        if "-" not in text and "\u2010" not in text:
            continue
        for match in _COMPOUND_WORD.finditer(text):
            found.add(match.group().replace("\u2010", "-").casefold())
    return frozenset(found)


def line_hyphen(prev: str, nxt: str, compounds: AbstractSet[str] = frozenset()) -> str | None:
    """How a line ending in a hyphen after a letter joins the next line beginning with a
    letter: ``"drop"`` (a word hyphenated at the line end: ``exam-⏎ple``, ``LO-⏎CATION``),
    ``"keep"`` (a compound: ``Schwarz-⏎Weiß``, or one the book prints whole elsewhere:
    ``single-⏎document``), or None (no such break). The word's case decides where the book
    does not: a break continues the case it was broken in; a capital after lower case begins
    the second word of a compound.

    One rule for every PDF view (Markdown blocks and raw-text paragraphs).
    """
    if not prev or prev[-1] not in "-\u2010\u00ad" or not nxt[:1].isalpha():
        return None
    left = _BROKEN_WORD.search(prev, max(0, len(prev) - 64))
    right = _WORD_START.match(nxt)
    if left is None or right is None:
        return None
    a, b = left.group(1), right.group()
    if left.group(2) == "\u00ad":
        return "drop"  # a soft hyphen marks a break, never a compound
    if f"{a}-{b}".casefold() in compounds:
        return "keep"
    if b[0].isupper() and not (a.isupper() and (b.isupper() or len(b) == 1)):
        return "keep"
    return "drop"


def _joiner(prev: str, nxt: str,
            compounds: AbstractSet[str] = frozenset()) -> tuple[str, int]:
    """How two lines join: (text between them, characters to drop from the end of ``prev``)."""
    how = line_hyphen(prev, nxt, compounds)
    if how is not None:
        return ("", 1) if how == "drop" else ("", 0)
    return " ", 0


def _render(raw: str, emphasis: Sequence[Emphasis], lines_mode: bool,
            paragraph_width: int, compounds: AbstractSet[str] = frozenset()) -> str:
    """The block's Markdown from its raw lines and emphasis."""
    if not emphasis:
        # The common case: escape once, no offsets to keep.
        plain = _escape(raw).split("\n")
        if len(plain) == 1 and raw.lstrip()[:1] not in _BULLET_CHARS:
            return _guard_line(plain[0]).strip()
        return _join(raw.split("\n"), plain, [False] * len(plain), lines_mode, paragraph_width,
                     compounds)
    lines = raw.split("\n")
    starts = []
    pos = 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    marks: dict[int, list[str]] = {}
    for s, e, bold, italic in emphasis:
        marker = "***" if bold and italic else "**" if bold else "*"
        marks.setdefault(s, []).append(marker)
        marks.setdefault(e, []).insert(0, marker)
    inside = [False] * len(lines)
    for s, e, _b, _i in emphasis:
        for k, start in enumerate(starts):
            if s < start + len(lines[k]) + 1 and e > start + len(lines[k]):
                inside[k] = True  # emphasis runs over this line's end: no paragraph break
    styled = [_styled(line, starts[k], marks) for k, line in enumerate(lines)]
    return _join(lines, styled, inside, lines_mode, paragraph_width, compounds)


def _join(lines: list[str], styled: list[str], inside: list[bool], lines_mode: bool,
          paragraph_width: int, compounds: AbstractSet[str] = frozenset()) -> str:
    """Raw lines (``lines``, rendered as ``styled``) joined into paragraphs or hard breaks."""
    out: list[str] = []
    for k, line in enumerate(lines):
        text = styled[k]
        item = line.lstrip()[:1] in _BULLET_CHARS
        if item:
            # A bulleted line is a list item of its own: "• Foo" → "- Foo".
            text = "- " + text.lstrip()[1:].lstrip()
            out.append(("\n" if k else "") + text)
            continue
        if k == 0:
            out.append(_guard_line(text))
            continue
        prev = lines[k - 1].rstrip()
        if lines_mode:
            out.append("  \n" + _guard_line(text))
            continue
        ends_paragraph = (
            not inside[k - 1]
            and prev[-1:] in _SENTENCE_END
            and len(prev) < 0.8 * paragraph_width
        )
        if ends_paragraph:
            out.append("\n\n" + _guard_line(text))
            continue
        between, drop = _joiner(prev, line.lstrip(), compounds)
        if drop and out and out[-1].endswith(("-", "\u2010")):
            out[-1] = out[-1][:-1]
        out.append(between + text.lstrip())
    return "".join(out).strip()


def _styled(line: str, start: int, marks: dict[int, list[str]]) -> str:
    """One raw line escaped, with emphasis markers at their offsets (placed runs are stripped
    of spaces, so markers always touch the words they enclose)."""
    cuts = sorted(k - start for k in marks if start <= k <= start + len(line))
    if not cuts:
        return _escape(line)
    out: list[str] = []
    pos = 0
    for cut in cuts:
        out.append(_escape(line[pos:cut]))
        out.append("".join(marks[start + cut]))
        pos = cut
    out.append(_escape(line[pos:]))
    return "".join(out)


def page_blocks(
    text: str,
    pieces: Sequence[tuple[int, int]],
    emphasis: Sequence[Sequence[Emphasis]] | None,
    furniture: Sequence[FurnitureSpan] = (),
    headings: dict[int, int] | None = None,
    *,
    contents: bool = False,
    kinds: Sequence[int] | None = None,
    notes: dict[int, tuple[int, str]] | None = None,
    footnotes: dict[int, tuple[str, ...]] | None = None,
    heading_ends: dict[int, int] | None = None,
    measure: int | None = None,
    compounds: AbstractSet[str] = frozenset(),
) -> tuple[Block, ...]:
    """A page's Markdown blocks in reading order.

    Args:
        text: the page's raw text.
        pieces: ``(start, end)`` of each text block in ``text``, in reading order.
        emphasis: per piece, its emphasised spans (relative to the piece); None: no emphasis.
        furniture: the page's furniture spans.
        headings: raw offset of an outline entry on this page → its level.
        contents: the page is a printed contents page: each entry (its number, title and
            page, however MuPDF split them into lines) becomes one line, dot leaders
            shortened to an ellipsis.
        kinds: per piece, :func:`heading_levels`' kind; consecutive :data:`CODE` pieces
            become one fenced code block, their lines as they are.
        notes: raw start of a note marker (``note_ref`` furniture) → its end and the label
            of its footnote in ``book.md``: shown as ``[^label]``.
        footnotes: raw offset where a footnote block starts → the labels of its footnotes
            (its first line's, then those of later lines that begin one): each is shown as
            ``[^label]: text``.
        heading_ends: raw offset of a heading → where its text ends, when known: the rest
            of its block is a paragraph of its own.
        measure: the book's prose line length (characters), for a page set in one column:
            a page of short lines (verse, aphorisms, a list) has no prose of its own to
            measure them by.
        compounds: the hyphenated compounds the book prints whole (:func:`book_compounds`),
            for words broken at a line end (:func:`line_hyphen`).
    """
    hidden = [(s, e) for s, e, kind in furniture if kind in _HIDDEN]
    numbered = [(s, e) for s, e, kind in furniture if kind == "line_number"]
    headings = headings or {}
    widths = [max(len(line) for line in text[s:e].split("\n")) for s, e in pieces
              if text.count("\n", s, e) >= 2]
    width = int(statistics.median(widths)) if widths else 80
    if measure:
        width = max(width, measure)
    pieces, emphasis, kinds = _split_at_headings(text, pieces, emphasis, kinds, headings,
                                                 heading_ends or {})
    blocks: list[Block] = []
    code: list[tuple[int, int]] = []

    def flush_code() -> None:
        if code:
            body = text[code[0][0] : code[-1][1]]
            fence = "~~~" if "```" in body else "```"
            blocks.append((code[0][0], code[-1][1], f"{fence}\n{body}\n{fence}"))
            code.clear()

    for number, (start, end) in enumerate(pieces):
        kept = _kept_lines(text, start, end, hidden)
        if kept is None:
            continue  # all furniture
        start, end = kept
        if kinds is not None and number < len(kinds) and kinds[number] == CODE and not contents:
            code.append((start, end))
            continue
        flush_code()
        raw = text[start:end]
        marks = [] if emphasis is None or number >= len(emphasis) else list(emphasis[number])
        shift = start - pieces[number][0]
        marks = [(s - shift, e - shift, b, i) for s, e, b, i in marks
                 if s - shift >= 0 and e - shift <= len(raw)]
        level = next((lvl for at, lvl in headings.items() if start <= at < end), None)
        if level is not None and raw.count("\n") < 3:
            title = " ".join(_escape(raw).split())
            blocks.append((start, end, "#" * min(level, 6) + " " + title))
            continue
        if contents:
            markdown = _contents_entries(raw)
            if markdown:
                blocks.append((start, end, markdown))
            continue
        group = (footnotes or {}).get(pieces[number][0])
        if group:
            blocks.append((start, end, _footnotes(raw, marks, group, width)))
            continue
        refs = sorted((at, z, label) for at, (z, label) in (notes or {}).items()
                      if start <= at and z <= end)
        if refs:
            raw = _mark_notes(raw, start, refs)
        lines = raw.split("\n")
        verse = any(s < end and e > start for s, e in numbered) or (
            not any(line.strip()[:1] in _BULLET_CHARS for line in lines) and (
                (len(lines) >= 2 and width >= 40 and max(len(x) for x in lines) < 0.6 * width)
                or _short_lines(lines, width)))
        markdown = _render(raw, marks, verse, width, compounds)
        if refs:
            markdown = _note_refs(markdown, [label for _at, _z, label in refs])
        if markdown:
            blocks.append((start, end, markdown))
    flush_code()
    return tuple(blocks)


_NOTE_HOLD = "\ue000"
"""Stands in for a note marker's characters while a block renders (same length, so emphasis
offsets hold; never escaped)."""
_NOTE_RUN = re.compile(_NOTE_HOLD + "+")


def _note_label(label: str) -> str:
    return re.sub(r"[^\w.-]", lambda m: f"{ord(m.group()):x}", label)


def _footnotes(raw: str, marks: Sequence[Emphasis], labels: Sequence[str],
               width: int) -> str:
    """A footnote block as ``[^label]: text`` notes, one per footnote it holds."""
    lines = raw.split("\n")
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    wanted = list(labels)
    # The block's first line begins the first note; a later line begins the next note when
    # it starts with that note's printed label.
    printed = [label.split(".p", 1)[0] for label in wanted]
    cuts = [0]
    for k in range(1, len(lines)):
        if len(cuts) < len(wanted) and lines[k].lstrip().startswith(printed[len(cuts)]):
            cuts.append(k)
    notes = []
    for n, first in enumerate(cuts):
        last = cuts[n + 1] if n + 1 < len(cuts) else len(lines)
        a = starts[first]
        b = starts[last - 1] + len(lines[last - 1])
        part = raw[a:b]
        lead = len(part) - len(part.lstrip())
        body_at = lead + part.find(printed[n], lead) - lead + len(printed[n])
        body = part[body_at:]
        skip = len(body) - len(body.lstrip())
        shift = a + body_at + skip
        own = [(s - shift, e - shift, bo, it) for s, e, bo, it in marks
               if s >= shift and e <= b]
        notes.append(f"[^{_note_label(wanted[n])}]: {_render(body.lstrip(), own, False, width)}")
    return "\n\n".join(notes)


def _mark_notes(raw: str, start: int, refs: Sequence[tuple[int, int, str]]) -> str:
    """``raw`` with each note marker's characters replaced by :data:`_NOTE_HOLD`."""
    chars = list(raw)
    for at, end, _label in refs:
        for k in range(at - start, end - start):
            chars[k] = _NOTE_HOLD
    return "".join(chars)


def _note_refs(markdown: str, labels: Sequence[str]) -> str:
    """The held note markers of a rendered block as footnote references, in order."""
    queue = iter(labels)
    return _NOTE_RUN.sub(lambda m: f"[^{_note_label(next(queue, 'note'))}]", markdown)


def _short_lines(lines: Sequence[str], width: int) -> bool:
    """Whether a block's lines are lines of their own (an aphorism, a verse or a list item per
    line), not wrapped prose: three or more lines, most of them (the last aside) well short of
    the text width, where wrapped prose fills it."""
    body = [line for line in lines[:-1] if line.strip()]
    if len(lines) < 3 or width < 40 or not body:
        return False
    return sum(1 for line in body if len(line.strip()) < 0.75 * width) >= 0.6 * len(body)


def _kept_lines(text: str, start: int, end: int,
                hidden: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """The block's span without furniture lines at its edges; None when nothing is left."""
    if not hidden:
        return start, end
    lines: list[tuple[int, int]] = []
    pos = start
    for line in text[start:end].split("\n"):
        lines.append((pos, pos + len(line)))
        pos += len(line) + 1

    def furniture(span: tuple[int, int]) -> bool:
        s, e = span
        body = text[s:e]
        covered = sum(min(e, b) - max(s, a) for a, b in hidden if a < e and b > s)
        return covered >= len(body.strip())

    while lines and furniture(lines[0]):
        lines.pop(0)
    while lines and furniture(lines[-1]):
        lines.pop()
    if not lines:
        return None
    return lines[0][0], lines[-1][1]


_LEADER_RUN = re.compile(r"(?:\s*[.\u00b7\u2024\u2026…_]){3,}\s*")
_PAGE_NUMBER = re.compile(r"\d{1,4}|[ivxlcdm]{1,7}|[IVXLCDM]{1,7}")


def _contents_entries(raw: str) -> str:
    """A contents block as one line per entry, hard breaks between them."""
    entries: list[str] = []
    current: list[str] = []
    for line in raw.split("\n"):
        line = line.strip()
        if not line:
            continue
        shortened = _LEADER_RUN.sub(" … ", line).strip()
        if not shortened.strip(" …"):
            if current:
                current.append("…")  # a line of dot leaders alone, between title and page
            continue
        last = shortened.rsplit(None, 1)[-1]
        page_ref = _PAGE_NUMBER.fullmatch(last) is not None
        if page_ref and len(shortened.split()) == 1 and not current:
            current.append(shortened)  # a section number before its title
            continue
        current.append(shortened)
        if page_ref:
            entries.append(_guard_line(_escape(" ".join(current))))
            current = []
    if current:
        entries.append(_guard_line(_escape(" ".join(current))))
    return "  \n".join(entries)


def _split_at_headings(
    text: str,
    pieces: Sequence[tuple[int, int]],
    emphasis: Sequence[Sequence[Emphasis]] | None,
    kinds: Sequence[int] | None,
    headings: dict[int, int],
    ends: dict[int, int],
) -> tuple[list[tuple[int, int]], list[list[Emphasis]] | None, list[int] | None]:
    """Pieces cut where an outline entry starts inside one (a section never starts mid-block),
    and after the entry's line when a paragraph follows it in the same block (after its
    known end, if ``ends`` has it)."""
    cuts_at: set[int] = set()
    for at in headings:
        for s, e in pieces:
            if s <= at < e:
                if at > s:
                    cuts_at.add(at)
                stop = ends.get(at)
                if stop is not None and stop < e and text[stop:e].strip():
                    line_end = text.find("\n", stop, e)
                    if line_end >= 0:
                        cuts_at.update((line_end, line_end + 1))
                elif text.count("\n", at, e) >= 3:
                    line_end = text.find("\n", at, e)
                    cuts_at.update((line_end, line_end + 1))
                break
    if not cuts_at:
        return list(pieces), None if emphasis is None else [list(x) for x in emphasis], (
            None if kinds is None else list(kinds))
    out: list[tuple[int, int]] = []
    out_emphasis: list[list[Emphasis]] = []
    out_kinds: list[int] = []
    for number, (start, end) in enumerate(pieces):
        marks = list(emphasis[number]) if emphasis is not None and number < len(emphasis) else []
        kind = kinds[number] if kinds is not None and number < len(kinds) else 0
        inner = sorted(c for c in cuts_at if start < c < end)
        bounds = [start, *inner, end]
        # A cut pair (line end, line end + 1) leaves the newline between two pieces.
        for a, b in pairwise(bounds):
            while b > a and text[b - 1] == "\n":
                b -= 1  # the newline before a cut belongs to the gap
            if b == a:
                continue
            out.append((a, b))
            out_emphasis.append([(s - (a - start), e - (a - start), bo, it)
                                 for s, e, bo, it in marks
                                 if s >= a - start and e <= b - start])
            out_kinds.append(kind)
    return out, out_emphasis, out_kinds
