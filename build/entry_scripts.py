"""The frozen entry scripts, generated from the catalogue: one template for every program.

``build/readingroom.spec`` calls :func:`write_entry_scripts` into PyInstaller's work folder, so
a program added to ``readingroom.catalog`` is frozen with nothing else to edit. The spec analyses
every entry script at once and gives each executable its own script with
:func:`program_scripts`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

__all__ = ["TEMPLATE", "entry_script", "program_scripts", "write_entry_scripts"]

TEMPLATE = '''"""Frozen entry point of ``{name}`` (made from readingroom.catalog; do not edit)."""

import multiprocessing
import sys

if __name__ == "__main__":
    # First: a spawned child of a frozen program must not start a second copy on our stdin.
    multiprocessing.freeze_support()
    from {module} import {function}

    sys.exit({function}())
'''


class _Program(Protocol):
    name: str
    entry_point: str


def entry_script(program: _Program) -> str:
    """The entry script of one program (``module:function`` from its declaration)."""
    module, _, function = program.entry_point.partition(":")
    if not module or not function.isidentifier():
        raise ValueError(f"{program.name}: entry point {program.entry_point!r} is not "
                         "'module:function'")
    return TEMPLATE.format(name=program.name, module=module, function=function)


def write_entry_scripts(programs: Iterable[_Program], folder: Path) -> list[tuple[str, Path]]:
    """Write one script per program into ``folder``; returns ``(name, path)`` pairs in order."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for program in programs:
        # Never the program's own name: "readingroom.py" would shadow the readingroom package.
        path = folder / f"entry_{program.name.replace('-', '_')}.py"
        path.write_text(entry_script(program), encoding="utf-8", newline="\n")
        written.append((program.name, path))
    return written


def program_scripts(scripts: Sequence[tuple[str, str, str]], own: Path,
                    every: Iterable[Path]) -> list[tuple[str, str, str]]:
    """One executable's scripts from an Analysis of every entry script: its own, no other's.

    ``scripts`` is the Analysis' TOC (``(name, path, typecode)``: PyInstaller's run-time hooks,
    then the entry scripts); the run-time hooks stay, in order, ahead of ``own``.
    """
    mine = own.resolve()
    others = {p.resolve() for p in every} - {mine}
    kept = [entry for entry in scripts if not entry[1] or Path(entry[1]).resolve() not in others]
    if sum(1 for entry in kept if entry[1] and Path(entry[1]).resolve() == mine) != 1:
        raise ValueError(f"{own} is not exactly once among the analysed scripts")
    return kept
