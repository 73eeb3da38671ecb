"""Real Gemini CLI: the servers ``install-host --host gemini`` wrote connect in a trusted folder.

Gemini starts no MCP server, user-level ones included, in a folder it does not trust. Trust is
Gemini's own file, ``~/.gemini/trustedFolders.json`` (Gemini CLI 0.61.0: a JSON object from an
absolute path to ``"TRUST_FOLDER"``, ``"TRUST_PARENT"`` or ``"DO_NOT_TRUST"``); the test writes
it for its work folder, as Gemini's trust prompt would. The ``GEMINI_CLI_TRUST_WORKSPACE``
override is removed from the environment so the file is what decides.
"""

from __future__ import annotations

import json
import re
from contextlib import ExitStack

from .servers import catalogue, host_case
from .world import World


def _listed(output: str) -> dict[str, str]:
    """``gemini mcp list`` lines ``<mark> NAME: COMMAND (stdio) - STATUS``, by name."""
    found = {}
    for line in output.splitlines():
        match = re.match(r"^\S+\s+(\S+): .* - (\S+)\s*$", line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


def _gemini_mcp_list(world: World) -> tuple[dict[str, str], str]:
    with ExitStack() as stack:
        extra: dict[str, str] = {}
        for info in catalogue():
            extra.update(host_case(info).contract.upstream(stack))
        done = world.run([world.hosts.program("gemini"), "mcp", "list"], extra_env=extra)
    said = done.stdout + done.stderr  # Gemini prints the list on stderr
    assert done.returncode == 0, said
    return _listed(said), said


def _trust(world: World) -> None:
    path = world.home / ".gemini" / "trustedFolders.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({str(world.workdir): "TRUST_FOLDER"}), encoding="utf-8")


def test_every_server_connects_in_a_trusted_folder(world: World):
    done = world.install_host("gemini")
    assert done.returncode == 0, done.stdout + done.stderr
    _trust(world)
    status, said = _gemini_mcp_list(world)
    for info in catalogue():
        assert status.get(info.name) == "Connected", said


def test_an_untrusted_folder_disables_them(world: World):
    """What Gemini does without trust: the reason ``--verify`` must report the trust state."""
    assert world.install_host("gemini").returncode == 0
    status, said = _gemini_mcp_list(world)
    for info in catalogue():
        assert status.get(info.name) == "Disabled", said
    assert "untrusted" in said
