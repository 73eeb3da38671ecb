"""One host command carried out: install, print, verify or remove entries, and its exit status.

``readingroom install-host`` (:mod:`.cli`) and a server's own registration of an instance
(:mod:`readingroom.setup.instance`) differ in which entries they build; what they do with them,
what they print and how they exit is this module's.

Exit status: 0 done (or already so); 1 verify failed, or nothing was done (an entry of the same
name belongs to another program, the ``claude`` CLI is missing so its commands were only
printed, an executable is missing, or a write failed); 2 a host file that does not parse (it
is left untouched).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .entries import ServerEntry
from .host import Host
from .outcome import ConfigParseError, HostError, HostOutcome

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "MODES", "apply_entries", "exit_status"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

MODES = ("install", "print", "verify", "remove")


def exit_status(outcome: HostOutcome) -> int:
    """Print the host's report; 0 when every entry is done, else 1 (also for printed commands
    the user still has to run)."""
    print(outcome.render())
    if not outcome.ok or outcome.printed or not outcome.entries:
        return EXIT_FAILED
    return EXIT_OK


def apply_entries(
    host: Host,
    mode: str,
    entries: Sequence[ServerEntry],
    *,
    config: Path | None,
    force: bool,
    say: Callable[[str], None],
) -> int:
    """Carry out ``mode`` (one of :data:`MODES`) for ``entries`` in ``host``; the exit status.

    ``print`` writes the snippet on stdout and where it goes on stderr; the others print the
    host's report. ``say`` tells the user why nothing was done (a missing executable, a file
    that does not parse, a failed write).
    """
    try:
        if mode == "remove":
            return exit_status(host.remove([e.name for e in entries], config=config,
                                            force=force))
        if mode == "print":
            sys.stdout.write(host.render(entries))
            for target in [config] if config else host.target_paths():
                print(f"# for {host.title}: {target}", file=sys.stderr)
            return EXIT_OK
        if mode == "verify":
            return exit_status(host.verify(entries, config=config))
        missing = [e.command for e in entries if not Path(e.command).is_file()]
        if missing:
            say(f"not found: {', '.join(missing)}; pass --install-dir with the folder holding "
                "the server executables. Nothing was changed")
            return EXIT_FAILED
        return exit_status(host.install(entries, config=config, force=force))
    except ConfigParseError as exc:
        say(str(exc))
        return EXIT_USAGE
    except (HostError, ValueError) as exc:
        say(str(exc))
        return EXIT_FAILED
