"""The house drawing: which module of ``readingroom`` imports which, read from the source.

Two promises of issue 19 §3 held here: no circle of files (every import counted, whether at the
top of a module, inside a function or under ``TYPE_CHECKING``), and no arrow smuggled in a
string (a ``"readingroom.x:attribute"`` reference in a server package names its own package).
Standard library only: :mod:`ast` over the files, no import of the code.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

import readingroom
from readingroom.catalog import SERVERS

PACKAGE = Path(readingroom.__file__).parent
_REFERENCE = re.compile(r"^readingroom(?:\.\w+)+:\w+$")


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``readingroom.book.commands.cli`` for ``…/readingroom/book/commands/cli.py``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the modules of the package it imports (``from . import x`` names module x)."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = _parsed(path) if root == PACKAGE else ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [source] + [f"{source}.{alias.name}" for alias in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in files and t != name}
    return graph


@functools.cache
def _package_graph() -> dict[str, set[str]]:
    return import_graph()


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_circle_of_files_in_the_package():
    circles = cycles(_package_graph())
    assert not circles, "modules importing each other in a circle: " + "; ".join(
        " ↔ ".join(c) for c in circles)


def test_no_circle_of_files_in_book():
    """book/ on its own (the room issue 19 §3 redrew): its front doors and the EPUB reader."""
    inside = {name: {t for t in targets if t.startswith("readingroom.book")}
              for name, targets in _package_graph().items() if name.startswith("readingroom.book")}
    assert len(inside) > 50 and "readingroom.book.commands.cli" in inside
    assert not cycles(inside)


def test_a_circle_would_be_seen(tmp_path: Path):
    """The reader really finds circles: lazy and TYPE_CHECKING imports count."""
    root = tmp_path / "readingroom"
    (root / "pkg").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "a.py").write_text("def f():\n    from .b import g\n")
    (root / "pkg" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (root / "pkg" / "c.py").write_text("from .a import f\n")
    assert cycles(import_graph(root)) == [["readingroom.pkg.a", "readingroom.pkg.b"]]


@functools.cache
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text("utf-8"))


@functools.cache
def _references(package: str) -> list[tuple[str, str]]:
    """(module, reference) for each ``"readingroom.x:attr"`` string constant in ``package``."""
    found = []
    for path in sorted((PACKAGE / package).rglob("*.py")):
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and _REFERENCE.match(node.value):
                found.append((module_name(path), node.value))
    return found


@pytest.mark.parametrize("package", sorted(info.entry_point.split(".")[1]
                                            for info in SERVERS.values()))
def test_no_reference_leaves_its_server(package: str):
    """A server names callables by ``"module:attribute"`` only inside its own package."""
    assert _references(package), f"{package}: its declaration names at least its entry"
    outside = [f"{module}: {ref}" for module, ref in _references(package)
               if not ref.startswith((f"readingroom.{package}.", f"readingroom.{package}:"))]
    assert not outside, f"string-smuggled arrows out of {package}/: {outside}"
