"""Negated terms in a query, found once so every provider can send them its own way.

The user's query is one string; the providers differ in how (and whether) they exclude a
term. :func:`split_negations` finds ``NOT term``, ``NOT "a phrase"``, ``NOT (a OR b)``,
``AND NOT …``, ``ANDNOT …`` (arXiv's spelling) and ``-term`` / ``-"a phrase"`` (a hyphen that
starts a word; ``COVID-19`` and ``T-cell`` are words, not negations) and returns the query
without them plus the excluded terms. Each provider then sends:

* PubMed and Europe PMC: the query as typed, ``-term`` written ``NOT term`` (both use ``NOT``);
* bioRxiv (Europe PMC's index): its keywords, then ``NOT term`` for each;
* OpenAlex: its keywords, then ``NOT term`` (its search documents uppercase Boolean ``NOT``);
* arXiv: ``all:`` terms, then ``ANDNOT all:term`` (``ANDNOT`` is arXiv's exclusion);
* Crossref and Semantic Scholar: their relevance search has no exclusion (Crossref: "our REST
  API does not support boolean operators"; Semantic Scholar's ``/paper/search``: "no special
  query syntax"), so the keywords without the negated terms, and the answer says which terms
  were left out (:func:`dropped_note`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import Code
from .models import Note

__all__ = ["Excluded", "QueryParts", "dropped_note", "minus_as_not", "split_negations"]

_TOKEN = re.compile(r'-?"[^"]*"|\S+')
_MINUS = re.compile(r'^-(?=[\w"(])', re.UNICODE)


@dataclass(frozen=True)
class Excluded:
    """One excluded term: a word, a ``"quoted phrase"`` (quotes kept) or a group's inside."""

    text: str
    group: bool = False

    def shown(self) -> str:
        """As the user wrote it (a group in parentheses)."""
        return f"({self.text})" if self.group else self.text


@dataclass(frozen=True)
class QueryParts:
    """A query split into what to search for and what to exclude."""

    positive: str
    """The query without its negations (and without an ``AND`` left dangling)."""
    excluded: tuple[Excluded, ...]
    minus_forms: bool = False
    """Whether any negation was written ``-term`` (which PubMed and Europe PMC do not read)."""


def split_negations(query: str) -> QueryParts:
    """``query`` without its negated terms, and the terms (see the module docstring)."""
    tokens = _TOKEN.findall(query)
    kept: list[str] = []
    excluded: list[Excluded] = []
    minus = False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("NOT", "ANDNOT") and i + 1 < len(tokens):
            if token == "NOT" and kept and kept[-1] == "AND":
                kept.pop()
            term, i = _term(tokens, i + 1)
            excluded.append(term)
            continue
        if _MINUS.match(token) and len(token) > 1:
            tokens[i] = token[1:]
            term, i = _term(tokens, i)
            excluded.append(term)
            minus = True
            continue
        kept.append(token)
        i += 1
    while kept and kept[-1] in ("AND", "OR"):
        kept.pop()
    while kept and kept[0] in ("AND", "OR"):
        kept.pop(0)
    return QueryParts(" ".join(kept), tuple(excluded), minus)


def _term(tokens: list[str], start: int) -> tuple[Excluded, int]:
    """The term starting at ``tokens[start]`` (a word, a phrase, or a parenthesised group)."""
    first = tokens[start]
    if not first.startswith("("):
        return Excluded(first), start + 1
    depth = 0
    parts: list[str] = []
    for index in range(start, len(tokens)):
        token = tokens[index]
        depth += token.count("(") - token.count(")")
        parts.append(token)
        if depth <= 0:
            inner = " ".join(parts)
            return Excluded(inner[1:-1].strip() if inner.endswith(")") else inner[1:].strip(),
                            group=True), index + 1
    inner = " ".join(parts)
    return Excluded(inner[1:].strip(), group=True), len(tokens)


def minus_as_not(query: str) -> str:
    """``query`` as typed, with each ``-term`` written ``NOT term`` (PubMed, Europe PMC)."""
    tokens = _TOKEN.findall(query)
    out = [f"NOT {t[1:]}" if _MINUS.match(t) and len(t) > 1 else t for t in tokens]
    return " ".join(out)


def dropped_note(excluded: tuple[Excluded, ...]) -> Note:
    """The warning for a provider that cannot exclude terms and was sent the query without."""
    shown = ", ".join(repr(e.shown()) for e in excluded)
    one = len(excluded) == 1
    return Note(
        Code.CAPABILITY_UNAVAILABLE,
        f"its search cannot exclude terms, so {shown} {'was' if one else 'were'} left out of "
        f"the query it was sent; its results may contain {'it' if one else 'them'}.",
        field="query",
    )
