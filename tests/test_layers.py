"""The import contracts of ``pyproject.toml`` hold (the same check as ``lint-imports`` in CI).

core sits below everything; the servers do not import each other; hosts do not import setup.
"""

from __future__ import annotations

import logging
import pkgutil
import tomllib
from typing import Any

import importlinter.cli

import readingroom
from readingroom.catalog import ADMIN, PROGRAMS

from .conftest import REPO_ROOT


def contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def test_every_import_contract_is_kept(monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    # import-linter configures logging with disable_existing_loggers: every logger that exists
    # now would stay disabled for the rest of the session (book-agent's --debug log, say).
    loggers = [lg for lg in logging.root.manager.loggerDict.values()
               if isinstance(lg, logging.Logger) and not lg.disabled]
    try:
        status = importlinter.cli.lint_imports(
            config_filename=str(REPO_ROOT / "pyproject.toml"), no_cache=True, no_logo=True
        )
    finally:
        for lg in loggers:
            lg.disabled = False
    report = capsys.readouterr().out
    assert status == 0, report
    assert f"{len(contracts())} kept, 0 broken" in report


def test_every_program_package_is_in_the_independence_contract():
    listed = set(contracts()["servers-independent"]["modules"])
    packages = {".".join(p.module.split(".")[:2]) for p in PROGRAMS.values() if p is not ADMIN}
    assert packages == listed, (f"add {sorted(packages - listed)} to the contract, "
                                f"remove {sorted(listed - packages)}")


def test_core_is_forbidden_every_package_above_it():
    above = {f"readingroom.{m.name}" for m in pkgutil.iter_modules(readingroom.__path__)
             if m.name not in {"core", "__main__"}}
    assert above <= set(contracts()["core-below-everything"]["forbidden_modules"])
