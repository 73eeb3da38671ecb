"""Real Claude Code: ``install-host --host claude-code`` runs its ``claude mcp add``; it connects.

The installed ``claude`` is on the world's ``PATH``, so ``readingroom install-host`` runs the
real CLI (no login is needed for ``claude mcp``). ``claude mcp list`` starts every server and
must report each one connected; after ``install-host --remove`` it must list none of them.
Claude Code starts servers with its own environment, so the fakes' variables are set in the
environment ``claude`` runs in.
"""

from __future__ import annotations

import re
from contextlib import ExitStack

from .servers import catalogue, host_case
from .world import World


def _upstream_env(stack: ExitStack) -> dict[str, str]:
    env: dict[str, str] = {}
    for info in catalogue():
        env.update(host_case(info).contract.upstream(stack))
    return env


def _listed(output: str) -> dict[str, str]:
    """``claude mcp list`` lines ``NAME: COMMAND - STATUS``, by name."""
    found = {}
    for line in output.splitlines():
        match = re.match(r"^(\S+): .* - (.+)$", line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


def test_install_host_adds_through_claude_and_every_server_connects(world: World):
    done = world.install_host("claude-code")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "added" in done.stdout
    with ExitStack() as stack:
        listing = world.run([world.hosts.program("claude"), "mcp", "list"],
                            extra_env=_upstream_env(stack))
    assert listing.returncode == 0, listing.stdout + listing.stderr
    status = _listed(listing.stdout)
    for info in catalogue():
        assert info.name in status, listing.stdout
        assert "Connected" in status[info.name], listing.stdout

    again = world.install_host("claude-code")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "unchanged" in again.stdout


def test_remove_leaves_claude_without_our_servers(world: World):
    assert world.install_host("claude-code").returncode == 0
    done = world.install_host("claude-code", "--remove")
    assert done.returncode == 0, done.stdout + done.stderr
    listing = world.run([world.hosts.program("claude"), "mcp", "list"])
    assert listing.returncode == 0, listing.stdout + listing.stderr
    left = set(_listed(listing.stdout)) & {info.name for info in catalogue()}
    assert not left, listing.stdout
    for info in catalogue():
        got = world.run([world.hosts.program("claude"), "mcp", "get", info.name])
        assert got.returncode != 0, got.stdout
