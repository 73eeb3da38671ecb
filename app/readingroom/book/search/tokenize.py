"""Search tokens: words, CJK bigrams and characters, and the terms of a query.

All text is folded by :func:`~readingroom.book.text.normalise` first (NFKC, casefold, Kangxi
radicals, full-width forms, ligatures, U+3000, soft hyphens, bidi controls); then

- a run of letters, digits and combining marks outside CJK is one *word*;
- a run of CJK characters (:func:`~readingroom.book.text.is_cjk`) becomes overlapping
  character *bigrams* (a one-character run is its own token). So a two-character word such as
  電燈 inside 古い電燈の下で is found; SQLite's ``trigram`` tokenizer misses it;
- every CJK character is also indexed alone, in a second column, for one-character queries;
- between two CJK runs the index places :data:`RUN_BREAK`, so a bigram phrase never bridges
  punctuation: 東京。京都 does not match 東京都;
- a hyphenated compound kept by the fold ("match-box") is indexed both ways: by its parts, in
  place, and as the joined whole ("matchbox"), after the record's tokens (:func:`compounds`);
- the heading path of a record is indexed in its own column (:func:`heading_tokens`);
- a plain ASCII word is indexed and searched by its singular (:func:`plural_stem`, Harman's
  "S" stemmer: ``metatopics`` → ``metatopic``, ``studies`` → ``study``), in the text and
  the query alike, so singular and plural find each other; other scripts are untouched.

A query chunk that folds to words joined only by hyphens or apostrophes ("match-box",
"alice's") is one phrase of those words, so its parts must be adjacent, as they are in the text.

Every backend (FTS5, the Python BM25) indexes these same tokens.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..text import is_cjk, normalise

__all__ = [
    "CHAR_CLASSES",
    "RUN_BREAK",
    "QueryTerm",
    "Segment",
    "TermKind",
    "compounds",
    "heading_tokens",
    "index_columns",
    "parse_query",
    "plural_stem",
    "split_runs",
    "token_stream",
    "tokenize",
]

RUN_BREAK = "\ue000"
"""Token placed between two adjacent CJK runs in the index (a private-use character that no
text ever tokenises to)."""
TermKind = Literal["word", "cjk_phrase", "phrase", "cjk_char"]
"""How a query term matches (see :class:`~.results.Term`)."""


class _CharClasses(dict):
    """Code point → "c" (CJK), "w" (word character) or " " (separator), learnt on first sight.

    Used as a ``str.translate`` table: a whole text is classified at C speed.
    """

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        if is_cjk(ch):
            kind = "c"
        elif ch.isalnum() or (
            unicodedata.category(ch)[0] == "M"
            # Variation selectors only pick a glyph; as word characters they would split a
            # CJK run into junk tokens.
            and not (0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF)
        ):
            kind = "w"
        else:
            kind = " "
        self[cp] = kind
        return kind


CHAR_CLASSES = _CharClasses()
"""Classifies code points for ``str.translate``: "c" CJK, "w" word, " " separator."""


_RUNS = re.compile(r"c+|w+")

Segment = tuple[bool, str]
"""A maximal run of the normalised text: ``(is_cjk_run, text)``."""


def split_runs(norm: str) -> list[Segment]:
    mask = norm.translate(CHAR_CLASSES)
    return [(mask[s] == "c", norm[s:e]) for s, e in map(re.Match.span, _RUNS.finditer(mask))]


def plural_stem(word: str) -> str:
    """The singular a plain ASCII word folds to, for search (Harman's "S" stemmer).

    -ies → -y (but not -eies, -aies); -sses, -xes, -zzes, -ches, -shes lose -es (classes,
    boxes, churches); -es → -e (but not -aes, -ees, -oes); -s → "" (but not -us, -ss, -is);
    words of fewer than four letters, with digits or outside ASCII are left alone.
    The same fold on the text and the query, so ``metatopics`` finds ``metatopic`` and the
    other way round; a light fold that never touches other scripts.
    """
    return _STEMS[word]


class _StemCache(dict):
    def __missing__(self, word: str) -> str:
        stem = word
        if len(word) >= 4 and word[-1] == "s" and word.isascii() and word.isalpha():
            if word.endswith("ies") and not word.endswith(("eies", "aies")):
                stem = word[:-3] + "y"
            elif word.endswith(("sses", "xes", "zzes", "ches", "shes")):
                stem = word[:-2]
            elif not word.endswith(("us", "ss", "is")) or (
                    word.endswith("es") and not word.endswith(("aes", "ees", "oes"))):
                stem = word[:-1]  # -es → -e, -s → ""
        if len(self) < 200_000:
            self[word] = stem
        return stem


_STEMS = _StemCache()


def token_stream(segments: Iterable[Segment], *, breaks: bool) -> list[str]:
    out: list[str] = []
    prev_cjk = False
    stems = _STEMS
    for cjk, text in segments:
        if cjk:
            if breaks and prev_cjk:
                out.append(RUN_BREAK)
            if len(text) == 1:
                out.append(text)
            else:
                out.extend(map(operator.add, text, text[1:]))
        else:
            out.append(stems[text])
        prev_cjk = cjk
    return out


def tokenize(text: str) -> list[str]:
    """The search tokens of ``text``, in order, after :func:`normalise`.

    Words (runs of letters, digits and combining marks outside CJK) are tokens; a CJK run
    gives its overlapping bigrams, or its one character when it has only one. The index
    additionally stores every CJK character alone (for one-character queries) and a
    :data:`RUN_BREAK` between adjacent CJK runs; neither appears here.

    Example: ``tokenize("ＡＢＣの古い電燈")`` → ``["abc", "の古", "古い", "い電", "電燈"]``.
    """
    return token_stream(split_runs(normalise(text)), breaks=False)


_COMPOUND = re.compile(r"[^\W\d_]+(?:[-\u2010\u2011][^\W\d_]+)+")
_PARTS = re.compile(r"[-\u2010\u2011]")


def compounds(norm: str) -> list[str]:
    """The joined wholes of the hyphenated compounds in normalised text ("match-box" →
    "matchbox"), in order; letters on both sides of every hyphen."""
    if "-" not in norm and "\u2010" not in norm and "\u2011" not in norm:
        return []
    out = []
    for found in _COMPOUND.finditer(norm):
        word = _PARTS.sub("", found.group())
        if all(CHAR_CLASSES[ord(c)] == "w" for c in word):  # no CJK inside
            out.append(_STEMS[word])
    return out


def index_columns(segments: Sequence[Segment], norm: str = "") -> tuple[list[str], str]:
    """A record's ``body`` tokens and its CJK characters (the ``chars`` column).

    With ``norm`` (the text ``segments`` were split from), the joined wholes of its hyphenated
    compounds follow the tokens, after a :data:`RUN_BREAK` so no phrase reaches them.
    """
    body = token_stream(segments, breaks=True)
    joined = compounds(norm) if norm else []
    if joined:
        body.append(RUN_BREAK)
        body.extend(joined)
    return body, "".join(text for cjk, text in segments if cjk)


def heading_tokens(heading_norm: Sequence[str]) -> list[str]:
    """The ``head`` column of a record: the tokens of its normalised heading path, one
    :data:`RUN_BREAK` between headings, then the joined wholes of their compounds."""
    out: list[str] = []
    for heading in heading_norm:
        if out:
            out.append(RUN_BREAK)
        out.extend(token_stream(split_runs(heading), breaks=True))
    joined = [w for h in heading_norm for w in compounds(h)]
    if joined:
        out.append(RUN_BREAK)
        out.extend(joined)
    return out


# --- query terms ----------------------------------------------------------------------


@dataclass(frozen=True)
class QueryTerm:
    kind: TermKind
    text: str
    segments: tuple[Segment, ...]
    column: Literal["body", "chars"]
    tokens: tuple[str, ...]


def _make_term(segments: tuple[Segment, ...], display: str) -> QueryTerm:
    if len(segments) > 1:
        return QueryTerm("phrase", display, segments, "body",
                     tuple(token_stream(segments, breaks=True)))
    cjk, text = segments[0]
    if cjk and len(text) == 1:
        return QueryTerm("cjk_char", text, segments, "chars", (text,))
    if cjk:
        return QueryTerm("cjk_phrase", text, segments, "body",
                     tuple(token_stream(segments, breaks=False)))
    return QueryTerm("word", text, segments, "body", (_STEMS[text],))


_JOINERS = re.compile(r"[^\W_]+(?:['\u2019\u2010\u2011-][^\W_]+)+")


def _joined(folded: str) -> str | None:
    """The chunk without outer punctuation when its words are joined only by hyphens or
    apostrophes: "match-box", "alice's", "(purple-colour'd)" → "purple-colour'd"."""
    mask = folded.translate(CHAR_CLASSES)
    core = folded[len(mask) - len(mask.lstrip()):len(mask.rstrip())]
    return core if _JOINERS.fullmatch(core) else None


_QUOTES = str.maketrans({"\uff02": '"', "\u201c": '"', "\u201d": '"'})


def parse_query(query: str) -> list[QueryTerm]:
    """Terms of a raw query: words, CJK runs, and double-quoted phrases.

    Outside quotes, whitespace separates terms even between two CJK characters (東京 交流 is
    two terms); inside quotes the text is folded like the book's text, where whitespace
    between CJK characters is a line wrap and is dropped.
    """
    parts = query.translate(_QUOTES).split('"')
    terms: list[QueryTerm] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for i, part in enumerate(parts):
        # An odd part is quoted unless it follows the last, unbalanced quote.
        if i % 2 == 1 and i != len(parts) - 1:
            folded = normalise(part)
            segments = tuple(split_runs(folded))
            # Shown from its first to its last token, inner punctuation kept (東京、京都).
            mask = folded.translate(CHAR_CLASSES)
            shown = folded[len(mask) - len(mask.lstrip()):len(mask.rstrip())]
            groups = [(segments, " ".join(shown.split()))] if segments else []
        else:
            groups = []
            for chunk in part.split():
                folded = normalise(chunk)
                segs = split_runs(folded)
                core = _joined(folded)
                if len(segs) > 1 and core and not any(cjk for cjk, _ in segs):
                    # "match-box", "alice's": the words of one chunk stay together.
                    groups.append((tuple(segs), core))
                else:
                    groups += [((seg,), seg[1]) for seg in segs]
        for group, display in groups:
            term = _make_term(group, display)
            key = (term.kind, term.column, term.tokens)
            if key not in seen:
                seen.add(key)
                terms.append(term)
    return terms
