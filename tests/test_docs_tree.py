"""docs/architecture.md's module tree is the code's: every folder and module named, none invented.

For ``core`` and every server each module and sub-folder of the package has its own line in the
tree, and each line names a real one; for the rest of the package (hosts/, setup/, admin/) the
tree names every top-level folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import readingroom

from .conftest import REPO_ROOT

PACKAGE = Path(readingroom.__file__).parent
DETAILED = ("core", "ndl", "literature", "heritage", "cinii", "jstage", "book")
"""Packages whose every module the tree lists line by line."""
_SKIP = {"__init__.py", "__main__.py", "__pycache__", "canned"}


def tree() -> list[str]:
    text = (REPO_ROOT / "docs" / "architecture.md").read_text("utf-8")
    block = text.split("```\napp/readingroom/\n", 1)[1].split("```", 1)[0]
    return block.splitlines()


def entries(package: str) -> set[str]:
    """The names the tree gives one level inside ``package`` (``upstreams/``, ``http.py``)."""
    lines, inside, found = tree(), False, set()
    for line in lines:
        if re.match(r"^  \S", line):
            inside = line.split()[0] == f"{package}/"
        elif inside and re.match(r"^    \S", line):
            found.add(line.split()[0])
    return found


def code(package: str) -> set[str]:
    folder = PACKAGE / package
    return {p.name + ("/" if p.is_dir() else "") for p in folder.iterdir()
            if p.name not in _SKIP and (p.suffix == ".py" or (p.is_dir() and _tracked(p)))}


def _tracked(folder: Path) -> bool:
    """A folder with something in it besides ``__pycache__`` (a moved package leaves only its
    bytecode behind, which git does not track)."""
    return any(child.name != "__pycache__" for child in folder.iterdir())


def test_every_top_level_folder_is_in_the_tree():
    named = {line.split()[0] for line in tree() if re.match(r"^  \S", line)}
    folders = {p.name + "/" for p in PACKAGE.iterdir()
               if p.is_dir() and p.name not in _SKIP and (p / "__init__.py").exists()}
    assert folders <= named, f"not in docs/architecture.md: {sorted(folders - named)}"
    assert {n for n in named if n.endswith("/")} <= folders, "the tree names a missing folder"


def test_the_detailed_packages_match_their_modules():
    for package in DETAILED:
        listed, present = entries(package), code(package)
        assert listed == present, (f"{package}/: missing from the tree "
                                   f"{sorted(present - listed)}, not in the code "
                                   f"{sorted(listed - present)}")


def test_a_renamed_module_would_be_seen():
    """The reader really reads the tree: a server's known modules are found under it."""
    assert {"sources.py", "upstreams/", "fake.py", "selftest.py", "service.py",
            "server.py"} <= entries("ndl")
