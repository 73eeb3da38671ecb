"""Parametrising over the shared real samples, and the rule that each one has an expectation row.

A sample found in the shared folder but missing from a test's expectation table is a gap in the
tests, not in the sample: it skips visibly, and fails when ``READINGROOM_REQUIRE_SAMPLES=1``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
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
