"""The Markdown view of a book's records (``book.md``): how record parts read.

:func:`.records.build_book_text` cuts the records and asks this module for each part's lines.
The view, not the records, is tidied for reading:

- one heading per heading: a section's heading line is written once, and a unit's own first
  heading that repeats it is left out;
- running heads, folios and page-break markers are left out of the prose (PDF pages keep their
  ``<!-- page index=… label=… -->`` markers, EPUB printed pages a ``<!-- page label=… -->``
  before the block they begin in); note references in raw text read as ``<sup>…</sup>``; verse
  line numbers stay;
- verse keeps its lines: each verse line is a line of its own ending in a hard break (two
  trailing spaces, no ``<br>``), one stanza per paragraph, a blank line between stanzas. This
  holds for raw text and for verse an ingester gives as one block per line (three or more
  short one-line blocks in a row, most not ending a sentence; short lines of dialogue stay
  paragraphs); a block whose Markdown already breaks its lines is kept as it is;
- an over-long block (a long list, table or paragraph) is cut between items, rows (the table
  header repeated) or sentences where the cut can be placed in the raw text, and the parts of
  a list or paragraph are joined again in the view;
- raw PDF text: a paragraph's wrapped lines are joined into one paragraph (a short line ends a
  paragraph), end-of-line hyphenation ("exam-⏎ple") is joined, paragraphs are separated by a
  blank line, and short lines in a row (contents entries, figure labels, formulas) stay lines
  (hard breaks); raw EPUB text: every raw line is a paragraph, verse as above;
- long lines are soft-wrapped at spaces only, never between two CJK characters (a Markdown
  renderer turns a line break into a space) and never so that a continuation line would read
  as Markdown syntax;
- a PDF page without a text layer appears as a placeholder (and as an empty record of its own,
  in reading order): page index, label, "no text layer — render to read".
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from statistics import median

from .ingest.pdf.blocks import book_compounds, line_hyphen
from .model import SourceUnit
from .text import is_cjk, strip_controls

__all__ = ["BOLD_LINE", "HEADING_LINE", "HIDDEN_FURNITURE", "MD_SYNTAX", "NOT_LETTERS",
           "NO_TEXT_LAYER", "WRAP", "Nesting", "Piece", "View", "has_leader", "md_escape_heading",
           "view_furniture"]

WRAP = 100
"""Prose lines of ``book.md`` are soft-wrapped near this width (at spaces only)."""
NO_TEXT_LAYER = "no text layer — render to read"
"""What the placeholder of an image-only page says (book.md and the Book Skill)."""
MD_SYNTAX = re.compile(r"!\[[^\]]*\]\([^)]*\)|\]\([^)]*\)|[#*_>`|\[\]-]")
NOT_LETTERS = re.compile(r"[\W_]+")
_CONTROLS = re.compile("[\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069]")
"""What :func:`.text.strip_controls` removes (checked first: most text has none)."""
HIDDEN_FURNITURE = frozenset({"running_head", "folio", "page_break"})
HEADING_LINE = re.compile(r"^(#{1,6})(\s.*)$")
BOLD_LINE = re.compile(r"^(\*\*)([^*\n]{3,40})\*\*$")
_FENCE = ("```", "~~~")
_SYNTAX_START = re.compile(r"^\s{0,3}([#>]|[-*+] |\d+[.)] |```|~~~|<!--|---\s*$|===\s*$)")
_WORD_SYNTAX = re.compile(r"^([#>+=|<]|[-*]+$|\d+[.)]$|```|~~~)")
_LIST_PREFIX = re.compile(r"^((?:\s*>)*\s*)((?:[-*+]|\d+[.)])\s+)?")
_BULLET_START = re.compile(r"^([•◦▪‣·∙–—-]\s|\(?[0-9ivxlcIVXLC]{1,4}[.)]\s)")
_LEADER = re.compile(r"(?:\.\s?){4,}|…{2,}|_{4,}")
"""A dot leader: a contents entry, never a line of wrapped prose."""
_VERSE_LINE_CHARS = 60
_CJK_CLOSE = frozenset("。！？」』")
_SENTENCE_CLOSE = frozenset(".!?…\"”’'»)]。！？」』")
"""Raw EPUB lines up to this length, three or more in a row, keep their line breaks."""


@dataclass(frozen=True)
class Piece:
    """A stretch of one unit's raw text and how the view shows it."""

    unit: int
    start: int
    end: int
    kind: str
    """``md`` (an atomic rendered block), ``raw`` (raw text, may be cut anywhere sensible),
    ``ident`` (raw text that is Markdown already), ``gap`` (nothing to show) or ``image``
    (the placeholder of an image-only page)."""
    markdown: str = ""
    glued: bool = False
    """The rest of the block before it (a long paragraph or list cut in two): no blank line."""




class Nesting:
    """How a section's own headings sit below its heading line, and which one repeats it."""

    def __init__(self, pieces: list[Piece], title: str | None, depth: int) -> None:
        self.depth = depth
        self.drop: tuple[int, int, int] | None = None
        self.numbered_title: str | None = None
        """The printed heading, when it repeats the title with a section number the contents
        entry lacks ("2.2 Naming" for "Naming"): the number stays with its heading."""
        levels = []
        for p in pieces:
            if p.kind == "md":
                m = HEADING_LINE.match(p.markdown)
                if m:
                    levels.append(len(m.group(1)))
        base = min(levels) - 1 if levels else 0
        self.repeats: list[tuple[int, int, int]] = []
        """Further heading blocks right after the dropped one that repeat the title again (a
        title printed three times: the contents entry, a label heading, the heading)."""
        if title:
            # A heading among the first few blocks (after a cover image or a chapter label,
            # say), or the first lines of raw text, may repeat the section's title.
            key = _heading_key(title)
            shown = [p for p in pieces if p.kind != "gap"][:6]
            for n, p in enumerate(shown):
                if p.kind in ("raw", "ident"):
                    self.drop = (p.unit, p.start, p.end)  # its lines are dropped only if they match
                    break
                m = HEADING_LINE.match(p.markdown) if p.kind == "md" else None
                if m is None and n == 0 and p.kind == "md":
                    bold = BOLD_LINE.match(p.markdown.strip())  # a title set in bold type
                    if bold and _same_title(bold.group(2), title, key):
                        self.drop = (p.unit, p.start, p.end)
                        break
                if m and _same_title(m.group(2), title, key):
                    # (A label heading such as "Chapter One" may come before the title.)
                    self.drop = (p.unit, p.start, p.end)
                    printed = _plain_heading(m.group(2))
                    if (_SECTION_NUMBER.match(printed) or _CHAPTER_LABEL.match(printed)) and not (
                            _SECTION_NUMBER.match(title) or _CHAPTER_LABEL.match(title)):
                        self.numbered_title = printed
                    base = len(m.group(1))
                    for q in shown[n + 1:]:
                        again = HEADING_LINE.match(q.markdown) if q.kind == "md" else None
                        if again is None or "\n" in q.markdown.strip() or not _same_title(
                                again.group(2), title, key):
                            break
                        self.repeats.append((q.unit, q.start, q.end))
                    break
        self.base = base
        self.title_key = _heading_key(title) if title else ""

    def drops(self, p: Piece) -> bool:
        """Whether ``p`` opens with the section's repeated title (left out of the view)."""
        # A raw piece may have been cut since (its end moved); a rendered block never is.
        if p.kind == "md" and (p.unit, p.start, p.end) in self.repeats:
            return True
        return self.drop is not None and self.drop[:2] == (p.unit, p.start) and (
            p.kind != "md" or self.drop[2] == p.end)

    def heading(self, line: str) -> str:
        m = HEADING_LINE.match(line)
        if not m or self.depth <= 0:
            return line
        level = max(self.depth + 1, min(self.depth + len(m.group(1)) - self.base, 6))
        return f"{'#' * min(level, 6)}{m.group(2)}"


class View:
    """Renders record parts as ``book.md`` lines."""

    def __init__(self, units: Sequence[SourceUnit]) -> None:
        self.units = units
        widths = [len(line) for u in units if u.kind == "pdf_page"
                  for line in u.text.split("\n") if len(line) >= 20]
        self.pdf_width = median(widths) if widths else 0
        # Hyphenated compounds the book prints whole: a word broken after one keeps it.
        self.compounds = book_compounds(u.text for u in units if u.kind == "pdf_page")
        self._mark_offsets: dict[int, list[int]] = {}

    def render(self, part: list[Piece], nest: Nesting) -> list[str]:
        out: list[str] = []
        seen: set[int] = set()
        blocks: list[tuple[Piece, list[str], bool]] = []
        markers: list[list[str]] = []
        for p in part:
            unit = self.units[p.unit]
            if p.unit not in seen:
                seen.add(p.unit)
                if unit.kind == "pdf_page" and p.start == 0:
                    label = f' label="{_comment_safe(unit.label)}"' if unit.label else ""
                    out.append(f"<!-- page index={unit.index}{label} -->")
            if unit.page_marks and not p.glued:
                out += self._page_marks(unit, part, len(blocks))
            markers.append(out)
            # A gap of more than one line break (an empty paragraph) ends a stanza.
            stanza_break = p.kind == "gap" and unit.text[p.start:p.end] not in ("", "\n", " ")
            blocks.append((p, self._piece(p, unit, nest), stanza_break))
            out = []
        lines: list[str] = []
        verse_prev, verse_next = _verse_pieces(blocks)
        for i, (p, block, _) in enumerate(blocks):
            lines += markers[i]
            if not block:
                continue
            glued = p.glued or (i in verse_prev and not markers[i])
            if lines and lines[-1] != "" and not lines[-1].startswith("<!--") and not glued:
                lines.append("")
            if i in verse_next:
                block = [*block[:-1], block[-1] + "  "]
            lines += block
        return _no_dangling_breaks(lines)

    def _piece(self, p: Piece, unit: SourceUnit, nest: Nesting) -> list[str]:
        if p.kind == "gap":
            return []
        if p.kind == "image":
            label = f", label {_md_inline(unit.label)}" if unit.label else ""
            return [f"*[Page index {unit.index}{label}: {NO_TEXT_LAYER}]*"]
        if p.kind == "md":
            md = p.markdown.strip("\n")
            if nest.drops(p):
                md = md.split("\n", 1)[1].lstrip("\n") if "\n" in md else ""
            return _render_markdown(md, nest) if md else []
        text = unit.text[p.start:p.end]
        if p.kind == "ident":
            lines = text.strip("\n").split("\n")
            if nest.drops(p):
                lines = _drop_title_lines(lines, nest.title_key, markdown=True)
            md = "\n".join(lines).strip("\n")
            return _render_markdown(md, nest) if md.strip() else []
        text = view_furniture(text, unit.furniture, p.start, p.end)
        if _CONTROLS.search(text):
            text = strip_controls(text)
        lines = [line.strip() for line in text.split("\n")]
        if nest.drops(p):
            lines = _drop_title_lines(lines, nest.title_key)
        if unit.kind == "pdf_page":
            paragraphs = _pdf_paragraphs(lines, self.pdf_width, self.compounds)
        elif unit.kind == "epub_chapter":
            paragraphs = _line_paragraphs(lines)
        else:
            paragraphs = [[line] for line in lines if line]
        out: list[str] = []
        for para in paragraphs:
            if out:
                out.append("")
            out += _wrap([_escape_line(line) for line in para])
        return out

    def _page_marks(self, unit: SourceUnit, part: list[Piece], i: int) -> list[str]:
        """EPUB printed pages that begin in ``part[i]`` (or its glued continuation), as
        HTML comments."""
        p = part[i]
        marks = unit.page_marks
        if p.unit not in self._mark_offsets:
            self._mark_offsets[p.unit] = [offset for offset, _ in marks]
        offsets = self._mark_offsets[p.unit]
        end = p.end
        for q in part[i + 1:]:  # glued pieces after p are shown with it
            if q.unit != p.unit or not q.glued:
                break
            end = q.end
        lo = bisect.bisect_left(offsets, p.start)
        hi = bisect.bisect_left(offsets, end)
        return [f'<!-- page label="{_comment_safe(label)}" -->' for _, label in marks[lo:hi]]


def _no_dangling_breaks(lines: list[str]) -> list[str]:
    """A hard break (backslash or two spaces) at the end of a paragraph is removed.

    A block cut in two ends its first part where the Markdown had a line break; CommonMark
    would show a backslash there literally.
    """
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith(_FENCE):
            fenced = not fenced
        if fenced or (i + 1 < len(lines) and lines[i + 1].strip()
                      and not lines[i + 1].startswith("<!--")):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            lines[i] = line[:-1].rstrip()
        elif line.endswith("  "):
            lines[i] = line.rstrip()
    return lines


def _render_markdown(markdown: str, nest: Nesting) -> list[str]:
    """Rendered Markdown lines: headings nested, prose wrapped, fenced code left alone."""
    out: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        if line.startswith(_FENCE):
            fenced = not fenced
            out.append(line)
        elif fenced:
            out.append(line)
        else:
            out += _wrap([nest.heading(line)])
    return out


def view_furniture(text: str, spans, a: int, b: int) -> str:
    """The raw slice as the reader sees it: hidden furniture out, note references marked."""
    if not spans:
        return text
    out, pos = [], a
    for s, e, kind in spans:
        if e <= a or s >= b or s < pos:
            continue
        e = min(e, b)
        if kind in HIDDEN_FURNITURE:
            out.append(text[pos - a:s - a])
            pos = e
            own_line = (s == a or text[s - a - 1] == "\n") and (e == b or text[e - a] == "\n")
            if own_line and e < b:
                pos = e + 1  # a furniture line goes, not only its characters
        elif kind == "note_ref":
            ref = text[s - a:e - a].strip()
            out.append(text[pos - a:s - a])
            out.append(f"<sup>{ref}</sup>" if ref and "<" not in ref else text[s - a:e - a])
            pos = e
    out.append(text[pos - a:])
    return "".join(out)


def _drop_title_lines(lines: list[str], key: str, markdown: bool = False) -> list[str]:
    """Leave out the first one to three lines when together they repeat the section title."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or not key:
        return lines
    joined = ""
    for k in range(first, min(first + 3, len(lines))):
        line = lines[k]
        if markdown:
            m = HEADING_LINE.match(line)
            if k == first and not m:
                return lines
            line = m.group(2) if m else line
        joined += _heading_key(line)
        if joined == key:
            return lines[:first] + lines[k + 1:]
        if not key.startswith(joined) or markdown:
            break
    return lines


def _pdf_paragraphs(lines: list[str], width: float,
                    compounds: AbstractSet[str] = frozenset()) -> list[list[str]]:
    """A PDF page's lines as paragraphs.

    A full-width line runs on into the next (wrapped prose: joined, end-of-line hyphenation
    joined, no space between CJK); a short line, a line far longer than the text width (a
    paragraph the extractor joined already) and a CJK sentence end end a paragraph. Short
    lines in a row (contents entries, figure labels, formulas, verse) stay lines of one block
    with hard breaks. A short line without closing punctuation after the end of a sentence is
    a heading of its own, not the tail of the paragraph before.
    """
    full = width * 0.8 if width else float("inf")
    paragraphs: list[list[str]] = []
    cur: list[str] = []
    prose = False  # the block in ``cur`` has joined wrapped lines
    prev_full = False

    def flush() -> None:
        nonlocal cur, prose
        if cur:
            paragraphs.append([line + "  " for line in cur[:-1]] + [cur[-1]])
        cur, prose = [], False

    for line in lines:
        if not line:
            flush()
            prev_full = False
            continue
        short = len(line) < full or has_leader(line)
        last = cur[-1] if cur else ""
        heading_like = short and last[-1:] in ".!?:" and line[-1] not in ".!?:;,)" and (
            line[0].isupper() or line[0].isdigit())
        if cur and prev_full and not _BULLET_START.match(line) and not heading_like:
            how = line_hyphen(last, line, compounds)
            if how is not None:
                cur[-1] = (last[:-1] if how == "drop" else last) + line
            elif (last[-1] >= "\u2e80" or line[0] >= "\u2e80") and (
                    _unspaced(last[-1]) or _unspaced(line[0])):
                cur[-1] = last + line
            else:
                cur[-1] = last + " " + line
            prose = True
        elif cur and short and not prev_full and not prose:
            cur.append(line)
        else:
            flush()
            cur = [line]
            prose = not short  # a long line begins prose, never a block of short lines
        # Wrapped lines are about as long as the text width; a line much longer is a whole
        # paragraph already (the extractor joined it), and a CJK sentence end ends one too.
        prev_full = not short and len(line) <= full * 1.5 and line[-1] not in _CJK_CLOSE
    flush()
    return paragraphs


def has_leader(line: str) -> bool:
    if "..." in line or ". . ." in line or "……" in line or "____" in line:
        return _LEADER.search(line) is not None
    return False


def _unspaced(ch: str) -> bool:
    """A character of a script written without spaces between words (Chinese, Japanese)."""
    if "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef":
        return True  # CJK punctuation, full-width forms
    return is_cjk(ch) and not ("\uac00" <= ch <= "\ud7af" or "\u1100" <= ch <= "\u11ff")


def _is_verse(lines: list[str]) -> bool:
    """Whether a run of one-line blocks reads as verse (or lines printed as lines).

    Three or more short lines, most of them not ending a sentence: verse lines end with a word,
    a comma or a semicolon, where short paragraphs of dialogue end with a full stop.
    """
    if len(lines) < 3 or any(len(line) > _VERSE_LINE_CHARS for line in lines):
        return False
    open_ = sum(1 for line in lines if line.rstrip()[-1:] not in _SENTENCE_CLOSE)
    return open_ * 2 >= len(lines)


def _verse_pieces(blocks: list[tuple[Piece, list[str], bool]]) -> tuple[set[int], set[int]]:
    """Rendered one-line blocks that form verse runs (kept as hard-broken lines of a stanza).

    Returns the indexes of those with a verse line before them and of those with one after.
    """
    verse_prev: set[int] = set()
    verse_next: set[int] = set()
    run: list[int] = []

    def flush() -> None:
        if _is_verse([blocks[i][1][0] for i in run]):
            verse_prev.update(run[1:])
            verse_next.update(run[:-1])
        run.clear()

    for i, (p, block, stanza_break) in enumerate(blocks):
        if p.kind == "gap" and not block and not stanza_break:
            continue
        line = block[0].strip() if len(block) == 1 else ""
        if p.kind == "md" and line and not _SYNTAX_START.match(line) and not line.startswith(
                ("|", "!", "*[", "\\")) and not line.endswith(("  ", "\\")):
            run.append(i)
        else:
            flush()
    flush()
    return verse_prev, verse_next


def _line_paragraphs(lines: list[str]) -> list[list[str]]:
    """Raw EPUB lines (one per block) as paragraphs; verse runs keep their breaks."""
    paragraphs: list[list[str]] = []
    run: list[str] = []

    def flush() -> None:
        if _is_verse(run):
            paragraphs.append([line + "  " for line in run[:-1]] + [run[-1]])
        else:
            paragraphs.extend([line] for line in run)
        run.clear()

    for line in lines:
        if not line:
            flush()
        elif len(line) <= _VERSE_LINE_CHARS:
            run.append(line)
        else:
            flush()
            paragraphs.append([line])
    flush()
    return paragraphs


def _escape_line(line: str) -> str:
    """A raw line that would read as Markdown syntax, escaped."""
    if _SYNTAX_START.match(line):
        return "\\" + line.lstrip()
    return line


def _wrap(lines: list[str]) -> list[str]:
    """Soft-wrap long prose lines (Markdown joins them again) so line-based reads can page.

    Lines break at spaces only: text without spaces (CJK) is never cut, so a renderer never
    puts a space inside a word. Headings, table rows and HTML comments keep their lines; a
    continuation line never starts with something Markdown would read as syntax, and keeps
    the block-quote and list indentation of its line.
    """
    out: list[str] = []
    for line in lines:
        if len(line) <= WRAP or line.startswith(("#", "|", "<!--")):
            out.append(line)
            continue
        out += _wrap_line(line)
    return out


def _wrap_line(line: str) -> list[str]:
    m = _LIST_PREFIX.match(line)
    assert m is not None  # every part of the pattern is optional: it always matches
    quote, marker = m.group(1), m.group(2) or ""
    head = quote + marker
    cont = quote.rstrip() + (" " if quote.strip() else "") + " " * min(len(marker), 4)
    if not quote.strip():
        cont = " " * (len(quote) + min(len(marker), 4))
    rest = line[len(head):]
    out: list[str] = []
    prefix = head
    while len(prefix) + len(rest) > WRAP:
        limit = WRAP - len(prefix)
        k = rest.rfind(" ", 0, limit + 1)
        while k > 0 and not _breakable(rest, k):
            k = rest.rfind(" ", 0, k)
        if k <= 0:  # nothing fits: break at the first possible space after the width
            k = rest.find(" ", limit + 1)
            while k > 0 and not _breakable(rest, k):
                k = rest.find(" ", k + 1)
            if k <= 0:
                break
        out.append(prefix + rest[:k])
        rest, prefix = rest[k + 1:], cont
    out.append(prefix + rest)
    return out


def _breakable(rest: str, k: int) -> bool:
    """Whether the single space at ``rest[k]`` may become a line break."""
    if rest[k - 1] == " " or k + 1 >= len(rest) or rest[k + 1] == " ":
        return False  # runs of spaces (and hard-break spaces) stay as they are
    end = rest.find(" ", k + 1)
    return not _WORD_SYNTAX.match(rest[k + 1:end if end >= 0 else len(rest)])


def _heading_key(text: str) -> str:
    # A leading section number ("2.2 Naming") is not part of the title the outline may give
    # without it ("Naming"): the printed heading still repeats the section's title.
    text = _SECTION_NUMBER.sub("", text.replace("\\", ""), count=1)
    return NOT_LETTERS.sub("", MD_SYNTAX.sub("", text).casefold())


_SECTION_NUMBER = re.compile(r"^\W*\d+(?:\.\d+)*\.?\s+")
_CHAPTER_LABEL = re.compile(
    r"^\W*(?:(?:chapter|part|section|book|lecture|appendix|kapitel|teil|abschnitt|chapitre|"
    r"partie|cap[ií]tulo|capitolo|parte|hoofdstuk|rozdział|глава|часть)\s+"
    r"(?:\d+(?:\.\d+)*|[ivxlcdm]+|[a-z])\b[.:]?|第[0-9０-９一二三四五六七八九十百千]+[章節部編回])\s*",
    re.IGNORECASE)
"""A chapter label before a title ("Chapter 1.", "Part IV:", "第3章"): a printed heading
"Chapter 1. Introduction" repeats the contents entry "1. Introduction"."""


def _plain_heading(text: str) -> str:
    """A heading's text without Markdown emphasis or escapes, whitespace collapsed."""
    return " ".join(re.sub(r"\\(?=[\\`*_\[\]#])|(?<!\\)[*_`]+", "", text).split())


def _same_title(printed: str, title: str, key: str) -> bool:
    """Whether a printed heading repeats the section title, chapter labels and section
    numbers aside ("Chapter 1. Introduction" and "1. Introduction" are one title)."""
    if _heading_key(printed) == key:
        return True
    bare = _heading_key(_CHAPTER_LABEL.sub("", _plain_heading(printed), count=1))
    return bool(bare) and bare == _heading_key(_CHAPTER_LABEL.sub("", title, count=1))


def md_escape_heading(title: str) -> str:
    return title.replace("\n", " ").strip()


def _md_inline(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|])", r"\\\1", " ".join(strip_controls(text).split()))


def _comment_safe(text: str) -> str:
    return strip_controls(text).replace("--", "‐‐").replace('"', "'").replace("\n", " ")
