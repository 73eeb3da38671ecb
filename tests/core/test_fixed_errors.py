"""core.errors.FixedError: one constructor for every error kind with a fixed code and remedy."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import readingroom
from readingroom.core.errors import Code, CoreError, FixedError


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _all_fixed_errors() -> list[type]:
    for info in pkgutil.walk_packages(readingroom.__path__, "readingroom."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    abstract = {"readingroom.core.http.UpstreamError"}  # the HTTP client's kinds' own base
    return [k for k in _subclasses(FixedError) if f"{k.__module__}.{k.__name__}" not in abstract]


def test_a_fixed_error_carries_its_kinds_code_and_remedy_and_the_raisers_words():
    class Refused(FixedError):
        error_code = Code.API_ERROR
        remediation_text = "Ask elsewhere."

    err = Refused("The upstream said no.", details={"status": 403})
    assert isinstance(err, CoreError)
    assert (err.code, err.message, err.details, err.remediation) == (
        Code.API_ERROR, "The upstream said no.", {"status": 403}, "Ask elsewhere.")


@pytest.mark.parametrize("kind", _all_fixed_errors(), ids=lambda k: f"{k.__module__}.{k.__name__}")
def test_every_kind_in_the_suite_declares_its_code_and_remedy(kind: type) -> None:
    assert isinstance(kind.error_code, Code)
    assert kind.remediation_text.strip().endswith(".")
