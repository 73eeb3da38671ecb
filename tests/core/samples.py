"""Parametrising over the shared real samples, and the rule that each one has an expectation row.

A sample found in the shared folder but missing from a test's expectation table is a gap in the
tests, not in the sample: it skips visibly, and fails when ``READINGROOM_REQUIRE_SAMPLES=1``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn

import pytest

from ..conftest import _samples_missing, samples_dir

REQUIRE_ENV = "READINGROOM_REQUIRE_SAMPLES"


def sample_params(folder: str, pattern: str) -> list[Any]:
    """``pytest.param`` per shared sample ``<samples>/<folder>/<pattern>``, sorted by name.

    Without any such file a single ``None`` parameter stands in; pass it to
    :func:`require_sample`, which skips (or fails) visibly.
    """
    where = samples_dir() / folder
    files = sorted(where.glob(pattern)) if where.is_dir() else []
    if not files:
        return [pytest.param(None, id="samples-missing")]
    return [pytest.param(path, id=path.name) for path in files]


def require_sample(path: Path | None, folder: str) -> Path:
    """The sample path, or a visible skip (failure when samples are required) without one."""
    if path is None:
        _samples_missing(samples_dir() / folder)
    assert path is not None
    return path


def no_expectation(path: Path, table: str, *, also: Iterable[str] = ()) -> NoReturn:
    """Report a real sample that has no row in ``table``: fail when required, else skip."""
    names = [path.name, *also]
    message = f"no expectation row in {table} for real sample(s): {', '.join(names)}"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(message)
    pytest.skip(message)


def rows_cover(found: Mapping[str, Path], table: Mapping[str, Any], name: str) -> None:
    """Every real sample in ``found`` (row key → file) has a row in ``table``, and every row a
    sample: a sample without a row is :func:`no_expectation`, a row without one fails."""
    missing = sorted(set(found) - set(table))
    if missing:
        no_expectation(found[missing[0]], name, also=[Path(k).name for k in missing[1:]])
    assert set(table) <= set(found), sorted(set(table) - set(found))


Check = Callable[[Path, Any], None]


def sample_table_tests(folder: str, table: Mapping[str, Any], check: Check, *,
                       pattern: str = "*", name: str = "EXPECTED") -> tuple[Any, Any]:
    """The two tests a table of real samples needs, for a test module to bind::

        test_every_sample_has_an_expectation, test_every_sample_reads_as_expected = (
            sample_table_tests(FOLDER, EXPECTED, _check))

    The first holds the table and ``<samples>/<folder>/<pattern>`` equal (:func:`rows_cover`);
    the second runs ``check(path, row)`` once per sample, a parameter each (a sample without a
    row skips, or fails when samples are required).
    """

    def test_every_sample_has_an_expectation(samples: Path) -> None:
        where = samples / folder
        rows_cover({p.name: p for p in where.glob(pattern) if p.is_file()}, table, name)

    @pytest.mark.parametrize("path", sample_params(folder, pattern))
    def test_every_sample_reads_as_expected(path: Path | None) -> None:
        path = require_sample(path, folder)
        row = table.get(path.name)
        if row is None:
            no_expectation(path, name)
        check(path, row)

    return test_every_sample_has_an_expectation, test_every_sample_reads_as_expected
