"""Fixtures of the search tests: the hand-made book, indexed once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.book.search.index import BookIndex, build_index

from .corpus import LABELS, RECORDS


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("index") / "index.sqlite"
    build_index(RECORDS, path, unit_labels=LABELS)
    return path


@pytest.fixture(scope="module")
def ix(built: Path):
    with BookIndex.open(built) as index:
        yield index
