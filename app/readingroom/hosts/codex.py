"""OpenAI Codex (CLI, IDE extension and desktop app): ``$CODEX_HOME/config.toml``.

Each server is a ``[mcp_servers.NAME]`` table: ``command`` (absolute path, forward slashes:
an unescaped Windows backslash in a TOML string has frozen the Codex app at start-up),
``args``, ``env`` (literal non-secret settings such as ``MCP_RECEIPT_LOG``), ``env_vars``
(names of secrets Codex forwards from its own environment; never values),
``startup_timeout_sec`` and ``tool_timeout_sec``. Codex passes a stdio server only a short
whitelist of its environment plus ``env_vars`` and ``env``, so the ledger path must be in
``env``. The file is edited with tomlkit, so comments, formatting and every other table survive.

Any ``codex mcp add`` or ``remove`` makes Codex re-serialise the whole file: ``args = []``
dropped, ``30`` written ``30.0``, ``env`` moved to a ``[mcp_servers.NAME.env]`` sub-table, keys
in its own order, comments inside ``mcp_servers`` gone. Entries are compared by meaning, so
such a file with our values is ``unchanged``: not written, no backup.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import tomlkit
from tomlkit.exceptions import ParseError as TomlkitParseError
from tomlkit.items import InlineTable, Table

from .entries import STARTUP_TIMEOUT_S, TOOL_TIMEOUT_MARGIN_S, ServerEntry, same_meaning
from .files import MAX_NESTING, check_values
from .host import FileHost
from .outcome import ConfigParseError

__all__ = ["CodexHost"]


_INT64 = range(-(2**63), 2**63)
"""TOML integers are 64-bit: Codex's parser refuses any other (tomllib does not)."""


def _seconds(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


class _TooLarge(ValueError):
    pass


def _finite_float(token: str) -> float:
    """``nan`` and ``inf`` are TOML and stay; a literal too large for a double is refused."""
    value = float(token.replace("_", ""))
    if math.isinf(value) and token.lstrip("+-") != "inf":
        raise _TooLarge(f"the float {token[:40]} is too large for a double")
    return value


def _int64_only(value: Any, path: Path) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int) and item not in _INT64:
            raise ConfigParseError(f"{path}: the integer {str(item)[:40]} is outside TOML's "
                                   "64-bit range, which Codex cannot read; not changed")
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class CodexHost(FileHost):
    """Codex's ``config.toml`` (tomlkit round trip)."""

    name: ClassVar[str] = "codex"
    title: ClassVar[str] = "Codex"
    servers_key: ClassVar[str] = "mcp_servers"

    def candidate_paths(self) -> list[Path]:
        """``$CODEX_HOME/config.toml``, by default ``~/.codex/config.toml`` (every platform)."""
        codex_home = self.ctx.env.get("CODEX_HOME", "").strip()
        base = Path(codex_home) if codex_home else self.ctx.home / ".codex"
        return [base / "config.toml"]

    def _slashes(self, path: str) -> str:
        return path.replace("\\", "/") if self.ctx.is_windows else path

    def desired_value(self, entry: ServerEntry) -> dict[str, Any]:
        """The table's keys as plain Python, in the order they are written."""
        value: dict[str, Any] = {"command": self._slashes(entry.command),
                                 "args": list(entry.args)}
        if entry.secret_names:
            value["env_vars"] = list(entry.secret_names)
        value["startup_timeout_sec"] = STARTUP_TIMEOUT_S
        value["tool_timeout_sec"] = _seconds(entry.deadline_s + TOOL_TIMEOUT_MARGIN_S)
        value["env"] = {k: self._slashes(v) if k in entry.path_env else v
                        for k, v in entry.env.items()}
        return value

    def parse(self, text: str, path: Path) -> Any:
        """Parse strictly with tomllib first (tomlkit is more lenient), then with tomlkit.

        Also refused, as Codex could not read them: an integer outside 64 bits, a float literal
        beyond a double's range, nesting deeper than :data:`.files.MAX_NESTING` (``nan`` and
        ``inf`` are TOML, and kept).

        Raises:
            ConfigParseError: naming the file and the problem; never ``RecursionError``.
        """
        try:
            values = tomllib.loads(text, parse_float=_finite_float)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigParseError(f"{path}: not valid TOML ({exc}); not changed") from None
        except _TooLarge as exc:
            raise ConfigParseError(f"{path}: {exc}, which Codex cannot read; not changed") \
                from None
        except RecursionError:
            raise ConfigParseError(f"{path}: nested more than {MAX_NESTING} levels deep, more "
                                   "than Codex reads; not changed") from None
        check_values(values, path)
        _int64_only(values, path)
        try:
            return tomlkit.parse(text)
        except TomlkitParseError as exc:
            raise ConfigParseError(f"{path}: not valid TOML ({exc}); not changed") from None

    def dump(self, doc: Any, original: str | None) -> str:
        """The document as TOML text (untouched parts byte-identical)."""
        return tomlkit.dumps(doc)

    def new_document(self) -> Any:
        """An empty TOML document."""
        return tomlkit.document()

    def new_servers_table(self) -> Any:
        """An implicit ``mcp_servers`` table (no header of its own; only sub-tables)."""
        return tomlkit.table(is_super_table=True)

    def apply(self, servers: MutableMapping[str, Any], entry: ServerEntry, *,
              replace: bool) -> None:
        """Add a new table, or set only the keys whose values differ in an existing one."""
        desired = self.desired_value(entry)
        current = servers.get(entry.name)
        if replace or not isinstance(current, (Table, InlineTable)):
            servers[entry.name] = self._new_table(desired, inline=isinstance(servers, InlineTable))
            return
        for key, value in desired.items():
            existing = current.get(key)
            if self.key_matches(current, key, value):
                continue  # same meaning, however Codex last wrote it (30.0, a sub-table)
            if key == "env" and isinstance(existing, (Table, InlineTable)):
                for env_key, env_value in value.items():
                    if not same_meaning(existing.get(env_key), env_value):
                        existing[env_key] = env_value
            elif key == "env":
                current[key] = self._inline(value)
            else:
                current[key] = value

    @staticmethod
    def _inline(values: dict[str, Any]) -> InlineTable:
        table = tomlkit.inline_table()
        table.update(values)
        return table

    def _new_table(self, desired: dict[str, Any], *, inline: bool) -> Table | InlineTable:
        if inline:
            table: Table | InlineTable = tomlkit.inline_table()
            table.update(desired)
            return table
        table = tomlkit.table()
        for key, value in desired.items():
            table[key] = self._inline(value) if key == "env" else value
        # A blank line after our table keeps the next table visually apart; removing our
        # table removes it too, so an install + remove round trip gives the file back as it was.
        table.add(tomlkit.nl())
        return table

    def drop(self, doc: Any, servers: MutableMapping[str, Any], name: str) -> None:
        """Delete our table; an implicit ``mcp_servers`` left empty goes too."""
        del servers[name]
        if not servers and isinstance(servers, Table) and servers.is_super_table():
            del doc[self.servers_key]

    def render(self, entries: Sequence[ServerEntry]) -> str:
        """The TOML tables to paste into ``config.toml``."""
        doc = tomlkit.document()
        servers = tomlkit.table(is_super_table=True)
        for entry in entries:
            servers[entry.name] = self._new_table(self.desired_value(entry), inline=False)
        doc[self.servers_key] = servers
        return tomlkit.dumps(doc).rstrip("\n") + "\n"
