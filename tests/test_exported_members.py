"""Every module's ``__all__`` is honest: present, every name real, every public definition in it.

A public function or class defined in a module (not imported into it) is part of its interface
and is listed; a name listed must exist. ``__main__`` modules are programs, not interfaces.
"""

from __future__ import annotations

import importlib
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
