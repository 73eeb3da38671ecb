"""The cross-index of the Japanese catalogues: for each topic, which were searched, how, and what
they answered.

A scholar of Japan searches NDL Search (ndl-mcp), CiNii Research (cinii-mcp) and J-STAGE
(jstage-mcp) for the same topic, and a methods section must say which of the three were
searched for it, through which fields, and with what result. This module reads that from the
receipts alone (``readingroom receipts report`` appends it to the Markdown disclosure): a topic
is one free-text term as the assistant chose it (an identifier or a date range is not a topic),
folded with NFKC and case so that ``漱石`` and ``漱石 `` are one topic. A search of several terms
counts for each of them and names the others.

Counts come from the receipts: an unknown result (``RATE_LIMITED``, ``API_ERROR`` …) is written
as unknown, never as zero.
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .shown import visible

__all__ = ["CATALOGUES", "CatalogueSearch", "Topic", "cross_index", "cross_index_markdown"]

CATALOGUES: tuple[tuple[str, str], ...] = (
    ("ndl-mcp", "NDL Search"),
    ("cinii-mcp", "CiNii Research"),
    ("jstage-mcp", "J-STAGE"),
)
"""The servers of the Japanese catalogues, and the names a methods section uses."""

_NOT_TOPICS = frozenset({"range", "exact"})


@dataclass(frozen=True)
class CatalogueSearch:
    """One search of a topic in one catalogue, as its receipt records it."""

    seq: Any
    operation: str
    field: str
    index: str
    match: str
    others: tuple[str, ...]
    total: int | None
    outcome: str


@dataclass
class Topic:
    """One topic (a term), as first written, and its searches by server."""

    term: str
    searches: dict[str, list[CatalogueSearch]] = field(default_factory=dict)


def _fold(term: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", term).casefold().split())


def _terms(line: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    terms = line.get("normalized_terms")
    return [t for t in terms if isinstance(t, Mapping)] if isinstance(terms, list) else []


def cross_index(receipts: Iterable[Mapping[str, Any]]) -> list[Topic]:
    """The topics searched in at least one Japanese catalogue, in the order first searched."""
    servers = {name for name, _ in CATALOGUES}
    topics: dict[str, Topic] = {}
    for line in receipts:
        server = line.get("server")
        if server not in servers:
            continue
        terms = _terms(line)
        chosen = [t for t in terms if isinstance(t.get("term"), str) and t.get("term")
                  and t.get("match") not in _NOT_TOPICS]
        for term in chosen:
            text = str(term["term"])
            key = _fold(text)
            if not key:
                continue
            topic = topics.setdefault(key, Topic(term=text))
            others = tuple(f"{o.get('field')} {o.get('term')}" for o in terms if o is not term)
            total = line.get("total")
            topic.searches.setdefault(str(server), []).append(CatalogueSearch(
                seq=line.get("seq"), operation=str(line.get("operation") or "?"),
                field=str(term.get("field") or "?"), index=str(term.get("index") or "?"),
                match=str(term.get("match") or "?"), others=others,
                total=total if isinstance(total, int) and not isinstance(total, bool) else None,
                outcome=str(line.get("outcome") or "?")))
    return list(topics.values())


def _cell(text: str) -> str:
    return visible(text.replace("\\", "\\\\").replace("|", "\\|"))


def _result(search: CatalogueSearch) -> str:
    if search.total is None:
        return f"unknown ({search.outcome})"
    return f"{search.total:,}"


def _how(search: CatalogueSearch) -> str:
    text = f"{search.operation}: {search.field} → {search.index}, {search.match}"
    if search.others:
        text += f" (with {', '.join(search.others)})"
    return text


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _sentence(topic: Topic) -> str:
    done, missing = [], []
    for server, name in CATALOGUES:
        searches = topic.searches.get(server, [])
        if not searches:
            missing.append(name)
            continue
        fields = ", ".join(dict.fromkeys(s.field for s in searches))
        results = "; ".join(_result(s) for s in searches)
        done.append(f"{name} {_times(len(searches))} ({fields}; results: {results})")
    text = f"“{topic.term}” was searched in " + ", ".join(done)
    if missing:
        text += f"; it was not searched in {' or '.join(missing)}"
    return text + "."


def cross_index_markdown(receipts: Sequence[Mapping[str, Any]]) -> str:
    """The cross-index as a Markdown section ("" when no Japanese catalogue was searched)."""
    topics = cross_index(receipts)
    if not topics:
        return ""
    out = io.StringIO()
    out.write("\n## The Japanese catalogues, topic by topic\n\n")
    out.write(
        "For each term searched in NDL Search (ndl-mcp), CiNii Research (cinii-mcp) or J-STAGE "
        "(jstage-mcp): which of the three were searched for it, through which field and index, "
        "and with how many results. The three overlap (CiNii Research holds NDL records, "
        "J-STAGE articles appear in both), so their counts are not to be added up; an unknown "
        "result is not a zero.\n")
    for topic in topics:
        out.write(f"\n### “{_cell(topic.term)}”\n\n")
        out.write("| Catalogue | Searched | With (operation: field → index, match) | Results |\n")
        out.write("|---|---|---|---|\n")
        for server, name in CATALOGUES:
            searches = topic.searches.get(server, [])
            if not searches:
                out.write(f"| {name} | not searched | — | — |\n")
                continue
            count = f"yes, {len(searches)} search{'es' if len(searches) != 1 else ''}"
            how = "; ".join(_how(s) for s in searches)
            results = "; ".join(_result(s) for s in searches)
            out.write(f"| {name} | {count} | {_cell(how)} | {_cell(results)} |\n")
        out.write(f"\n{_cell(_sentence(topic))}\n")
    return out.getvalue()
