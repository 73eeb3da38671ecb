"""Every module's ``__all__`` is honest: present, every name real, every public definition in it.

A public function or class defined in a module (not imported into it) is part of its interface
and is listed; a name listed must exist. ``__main__`` modules are programs, not interfaces.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil

import pytest

import readingroom


def module_names() -> list[str]:
    found = [readingroom.__name__]
    for info in pkgutil.walk_packages(readingroom.__path__, f"{readingroom.__name__}.",
                                      onerror=found.append):
        if info.name.rpartition(".")[2] != "__main__":
            found.append(info.name)
    return sorted(set(found))


@pytest.mark.parametrize("name", module_names())
def test_all_is_honest(name: str):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert len(exported) == len(set(exported)), f"{name}.__all__ repeats a name"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names it does not have: {missing}"
    defined = sorted(
        n for n, obj in vars(module).items()
        if not n.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == name
    )
    unlisted = [n for n in defined if n not in exported]
    assert not unlisted, f"{name} defines public {unlisted} but leaves them out of __all__"


def test_every_module_is_checked():
    names = module_names()
    assert "readingroom.hosts.entries" in names and "readingroom.core.platform" in names
    assert not any(n.endswith(".__main__") for n in names)


def _imported_names(name: str) -> list[tuple[str, str]]:
    """(module, name) for each ``from <readingroom module> import name`` in module ``name``."""
    module = importlib.import_module(name)
    source = inspect.getsource(module)
    package = name if module.__file__ and module.__file__.endswith("__init__.py") \
        else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
            if node.level else (node.module or "")
        if base.split(".")[0] == readingroom.__name__:
            found += [(base, alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize("name", module_names())
def test_only_exported_names_are_imported(name: str):
    """A name taken from another module of the suite is one that module exports."""
    outside = []
    for source, imported in _imported_names(name):
        if importlib.util.find_spec(f"{source}.{imported}") if _is_package(source) else False:
            continue  # ``from . import submodule``
        target = importlib.import_module(source)
        if imported not in getattr(target, "__all__", ()):
            outside.append(f"{imported} from {source}")
    assert not outside, f"{name} imports names their module does not export: {outside}"


def _is_package(name: str) -> bool:
    return hasattr(importlib.import_module(name), "__path__")
