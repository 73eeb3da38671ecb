"""Searching a book: the lexical index and the ranking backends behind it.

- :mod:`.tokenize`: words, CJK bigrams and characters; the terms of a query;
- :mod:`.ranker`: the boundary every ranking backend implements;
- :mod:`.fts5` and :mod:`.bm25`: the SQLite FTS5 backend and the pure-Python BM25 fallback;
- :mod:`.proximity`: the phrase, proximity and heading rerank both backends share;
- :mod:`.snippet`: the marked window of raw text a hit shows;
- :mod:`.results`: the result models;
- :mod:`.index`: :func:`build_index` and :class:`BookIndex`, the public index API.
"""

from __future__ import annotations

from .bm25 import ENGINE_PYTHON
from .fts5 import ENGINE_FTS5, fts5_available
from .index import HINT_KEYS, MAX_QUERY_CHARS, MAX_TOP_K, BookIndex, build_index
from .results import HINT_BOOST, HintApplied, Hit, IndexStats, SearchModes, SearchResult, Term
from .tokenize import RUN_BREAK, tokenize

__all__ = [
    "ENGINE_FTS5",
    "ENGINE_PYTHON",
    "HINT_BOOST",
    "HINT_KEYS",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "RUN_BREAK",
    "BookIndex",
    "HintApplied",
    "Hit",
    "IndexStats",
    "SearchModes",
    "SearchResult",
    "Term",
    "build_index",
    "fts5_available",
    "tokenize",
]
