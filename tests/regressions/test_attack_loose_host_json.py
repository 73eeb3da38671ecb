"""Attack: host configs a host cannot read were accepted, and written back worse.

``NaN`` and ``1e400`` in an existing JSON config were accepted and written back as ``NaN`` and
``Infinity``, which ``JSON.parse`` (every JSON host) refuses, and the re-read check passed;
200 000-deep JSON raised a ``RecursionError`` traceback. Now host JSON is parsed strictly: no
``NaN``/``Infinity``, no number beyond a double, at most ``MAX_NESTING`` levels, no unpaired
surrogate; such a file is refused with ``ConfigParseError`` naming it (and the position), left
untouched, on install, remove and verify alike.

The same class on the TOML side (Codex): ``nan`` and ``inf`` *are* TOML and Codex reads them, so
they are kept and written back as they were; an integer beyond 64 bits, a float literal beyond
a double and deep nesting are refused (tomllib accepts the first two, and raised
``RecursionError`` on the last).
"""

from __future__ import annotations

import json
import math
import tomllib
from datetime import datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import Action, ConfigParseError, build_entries
from readingroom.hosts.claude_code import ClaudeCodeHost
from readingroom.hosts.codex import CodexHost
from readingroom.hosts.cursor import CursorHost
from readingroom.hosts.files import MAX_NESTING

NOW = datetime(2026, 9, 1, 9, 0, 0)
DEEP = 200_000

LOOSE_JSON = {
    "NaN": ('{"mcpServers": {}, "x": NaN}', "line 1, column 25: NaN is not JSON"),
    "Infinity": ('{"mcpServers": {},\n "x": -Infinity}', "line 2, column 7: -Infinity"),
    "1e400": ('{"mcpServers": {}, "x": 1e400}', "1e400 is too large"),
    "400 digits": ('{"mcpServers": {}, "x": 1' + "0" * 400 + "}", "too large"),
    "deep arrays": ('{"x": ' + "[" * DEEP + "]" * DEEP + "}", "nested more than"),
    "deep objects": ('{"x": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}", "nested more than"),
    "just too deep": ('{"x": ' + "[" * MAX_NESTING + "]" * MAX_NESTING + "}",
                      "nested more than"),
    "lone surrogate": ('{"mcpServers": {}, "x": "\\ud800"}', "unpaired surrogate"),
}

LOOSE_TOML = {
    "1e400": ("x = 1e400\n", "too large for a double"),
    "int beyond 64 bits": (f"x = {2**63}\n", "64-bit range"),
    "deep arrays": ("x = " + "[" * DEEP + "]" * DEEP + "\n", "nested more than"),
    "deep inline tables": ("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
                           "nested more than"),
    "deep tables": ("[" + ".".join(["a"] * (MAX_NESTING + 2)) + "]\nx = 1\n",
                    "nested more than"),
}


def _setup(tmp_path: Path, host_class):
    install = tmp_path / "install"
    install.mkdir()
    (install / "ndl-mcp").write_text("#!/bin/sh\n")
    ctx = Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW)
    host = host_class(ctx)
    path = host.candidate_paths()[0]
    path.parent.mkdir(parents=True)
    return host, path, build_entries([SERVERS["ndl-mcp"]], install, tmp_path / "data", ctx)


def _refused_untouched(host, path: Path, entries, text: str, message: str) -> None:
    path.write_text(text, encoding="utf-8")
    for operation in (lambda: host.install(entries), lambda: host.remove(["ndl-mcp"]),
                      lambda: host.verify(entries)):
        with pytest.raises(ConfigParseError, match=message) as caught:
            operation()
        assert str(path) in str(caught.value)
    assert path.read_text(encoding="utf-8") == text
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no backup, no lock file


@pytest.mark.parametrize("case", list(LOOSE_JSON))
def test_json_a_host_cannot_read_is_refused(tmp_path: Path, case: str):
    host, path, entries = _setup(tmp_path, CursorHost)
    _refused_untouched(host, path, entries, *LOOSE_JSON[case])


def test_claude_codes_state_file_is_read_as_strictly(tmp_path: Path):
    ctx = Machine(home=tmp_path, platform="linux", which=lambda name: None)
    path = tmp_path / ".claude.json"
    path.write_text('{"mcpServers": ' + "[" * DEEP + "]" * DEEP + "}", encoding="utf-8")
    with pytest.raises(ConfigParseError, match="nested more than"):
        ClaudeCodeHost(ctx).verify(build_entries([SERVERS["ndl-mcp"]], tmp_path, tmp_path, ctx))


def test_json_at_the_nesting_bound_is_still_read(tmp_path: Path):
    host, path, entries = _setup(tmp_path, CursorHost)
    inner = MAX_NESTING - 2  # the top object, then "x" holding the arrays
    path.write_text('{"x": ' + "[" * inner + "]" * inner + "}", encoding="utf-8")
    assert host.install(entries).entries[0].action is Action.ADDED
    assert "ndl-mcp" in json.loads(path.read_text(encoding="utf-8"))["mcpServers"]


@pytest.mark.parametrize("case", list(LOOSE_TOML))
def test_toml_codex_cannot_read_is_refused(tmp_path: Path, case: str):
    host, path, entries = _setup(tmp_path, CodexHost)
    _refused_untouched(host, path, entries, *LOOSE_TOML[case])


def test_toml_nan_and_inf_are_kept_as_toml(tmp_path: Path):
    host, path, entries = _setup(tmp_path, CodexHost)
    path.write_text("a = nan\nb = -inf\nc = +inf\nd = 1.7976931348623157e308\n",
                    encoding="utf-8")
    assert host.install(entries).entries[0].action is Action.ADDED
    written = path.read_text(encoding="utf-8")
    assert written.startswith("a = nan\nb = -inf\nc = +inf\nd = 1.7976931348623157e308\n")
    values = tomllib.loads(written)
    assert math.isnan(values["a"]) and values["b"] == -math.inf and values["c"] == math.inf
    assert "ndl-mcp" in values["mcp_servers"]
