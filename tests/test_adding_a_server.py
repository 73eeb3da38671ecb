"""Adding a server touches only the places docs/adding-a-server.md lists (issue 19 §1).

In a scratch copy of the project, a toy server (``scratch-mcp``: the contract's toy tools in a
real server folder) joins the real catalogue by exactly the edits the guide's section 3 names;
the checks that keep those places honest (console scripts, import-linter contracts, generated
README tables, the docs tree, the contract and real-host cases) then pass on the copy, and
every file the copy changed is one the guide lists.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

pytestmark = pytest.mark.slow

NAME = "scratch-mcp"
PACKAGE = "scratch"

COPIED = ("app/readingroom", "build", "docs", "pyproject.toml", "README.md",
          "tests/__init__.py", "tests/conftest.py", "tests/admin/__init__.py",
          "tests/admin/test_docs.py", "tests/test_catalog.py", "tests/test_layers.py",
          "tests/test_docs_tree.py", "tests/contract", "tests/hosts_real/__init__.py",
          "tests/hosts_real/servers.py")
"""What the scratch copy holds: the package, and the files the honesty checks read."""

CHECKS = ("tests/test_catalog.py", "tests/test_layers.py", "tests/admin/test_docs.py",
          "tests/test_docs_tree.py", "tests/test_scratch_cases.py")

CASES_CHECK = f'''
from pathlib import Path

import readingroom
from readingroom.catalog import SERVERS

from .conftest import REPO_ROOT
from .contract.catalog import case_for
from .hosts_real.servers import host_case


def test_the_copy_is_what_runs_and_the_toy_is_in_its_catalogue():
    assert Path(readingroom.__file__).resolve().is_relative_to(REPO_ROOT.resolve())
    assert "{NAME}" in SERVERS


def test_every_catalogue_server_has_its_contract_and_real_host_cases():
    for info in SERVERS.values():
        assert case_for(info).server is info
        assert host_case(info).name == info.name
'''


def _ignore(_folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}


def _copy(scratch: Path) -> None:
    for relative in COPIED:
        source, target = REPO_ROOT / relative, scratch / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=_ignore)
        else:
            shutil.copyfile(source, target)


def _edit(path: Path, pattern: str, replacement: str) -> None:
    """Replace the one match of ``pattern`` in ``path`` (the anchor must be there)."""
    text = path.read_text(encoding="utf-8")
    new, count = re.subn(pattern, replacement, text, count=1, flags=re.MULTILINE)
    assert count == 1, f"{path}: no {pattern!r} to edit"
    path.write_text(new, encoding="utf-8")


def _the_folder(scratch: Path) -> None:
    """The server's own folder: the contract toy's tools, declared as a real server."""
    folder = scratch / "app" / "readingroom" / PACKAGE
    folder.mkdir()
    toy = REPO_ROOT / "tests" / "contract" / "toy_server"
    (folder / "__init__.py").write_text(
        '"""scratch-mcp: a server that joins the catalogue in a scratch copy only."""\n\n'
        "from __future__ import annotations\n\n"
        "from ..core.declaration import ServerInfo, Setting\n\n"
        '__all__ = ["SERVER"]\n\n'
        f'SERVER = ServerInfo(name="{NAME}", entry_point="readingroom.{PACKAGE}.__main__:main",\n'
        '                    title="Scratch server", description="Echoes text.",\n'
        '                    settings=(Setting("SCRATCH_URL", "scratch endpoint", '
        '"https://scratch.invalid"),),\n'
        '                    credit=("Scratch data (CC0).",), tool_prefix="toy_")\n',
        encoding="utf-8")
    main = (toy / "__main__.py").read_text(encoding="utf-8")
    (folder / "__main__.py").write_text(
        main.replace("from readingroom.core.entry", "from ..core.entry"), encoding="utf-8")
    server = (toy / "server.py").read_text(encoding="utf-8")
    (folder / "server.py").write_text(server.replace("from readingroom.core", "from ..core"),
                                      encoding="utf-8")


def _the_places(scratch: Path) -> None:
    """The edits section 3 of the guide lists, each at its anchor."""
    _edit(scratch / "app/readingroom/catalog.py", r"^(from \. import .*)$", rf"\1, {PACKAGE}")
    _edit(scratch / "app/readingroom/catalog.py", r"^(SERVERS: dict.*\n(?:    .*\n)*)",
          rf"\1    {PACKAGE}.SERVER,\n")
    pyproject = scratch / "pyproject.toml"
    _edit(pyproject, r"^(\[project\.scripts\]\n)",
          rf'\1{NAME} = "readingroom.{PACKAGE}.__main__:main"\n')
    _edit(pyproject, r'(id = "core-below-everything"\n(?:.*\n)*?forbidden_modules = \[\n)',
          rf'\1  "readingroom.{PACKAGE}",\n')
    _edit(pyproject, r'(id = "servers-independent"\n(?:.*\n)*?modules = \[)',
          rf'\1"readingroom.{PACKAGE}", ')
    contract = scratch / "tests/contract/catalog.py"
    _edit(contract, r"^(from \.toy_server import SERVER as TOY\n)",
          rf"\1from readingroom.{PACKAGE} import SERVER as SCRATCH\n")
    _edit(contract, r"^(CASES: dict\[str, ContractCase\] = .*\n)",
          r'\1    ContractCase(SCRATCH, ("toy_echo", {"text": "hello"})),\n')
    _edit(scratch / "tests/hosts_real/servers.py", r"^(HOST_CASES: dict\[str, HostCase\] = .*\n)",
          rf'\1    _line("{NAME}", tool_calls={{"toy_echo": {{"text": "hi"}}}},\n'
          r'          invalid_call=("toy_echo", {"text": 5})),' "\n")
    (scratch / "docs" / f"{NAME}.md").write_text(f"# {NAME}\n\nEchoes text.\n", encoding="utf-8")
    for tree in ("docs/architecture.md", "app/readingroom/book/demo_docs/architecture.md"):
        _edit(scratch / tree, r"^(```\napp/readingroom/\n)",
              rf"\1  {PACKAGE}/          the scratch server (a test's copy only)\n")


def _run(scratch: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(scratch / "app")
    return subprocess.run([sys.executable, *argv], cwd=scratch, env=env, text=True,
                          capture_output=True, timeout=600, check=False)


def guide_places() -> list[str]:
    """The paths in the first column of the guide's table of places outside the folder
    (``<server>`` as the toy's name; a trailing ``/`` is a folder and all below it)."""
    text = (REPO_ROOT / "docs" / "adding-a-server.md").read_text(encoding="utf-8")
    section = text.split("## 3. ", 1)[1].split("\n## ", 1)[0]
    places = []
    for row in re.findall(r"^\| (.*?) \|", section, re.MULTILINE):
        for token in re.findall(r"`([^`]+)`", row):
            if "/" in token or re.search(r"\.(py|toml|md)$", token):
                places.append(token.replace("<server>", NAME))
    return places


def _changed(scratch: Path) -> set[str]:
    """Files of the copy that differ from the project or are new, outside the server folder."""
    found = set()
    for path in scratch.rglob("*"):
        relative = path.relative_to(scratch).as_posix()
        if (not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc"
                or relative.startswith(f"app/readingroom/{PACKAGE}/")
                or relative == "tests/test_scratch_cases.py"):
            continue
        original = REPO_ROOT / relative
        if not original.is_file() or not filecmp.cmp(path, original, shallow=False):
            found.add(relative)
    return found


def test_the_guide_lists_the_places_and_the_checks_that_keep_them():
    places = guide_places()
    for needed in ("app/readingroom/catalog.py", "pyproject.toml", "tests/contract/catalog.py",
                   "tests/hosts_real/servers.py", "README.md", f"docs/{NAME}.md",
                   "docs/architecture.md"):
        assert needed in places, needed


def test_a_toy_server_joins_by_the_guides_places_alone(tmp_path: Path):
    scratch = tmp_path / "project"
    _copy(scratch)
    _the_folder(scratch)
    _the_places(scratch)
    (scratch / "tests" / "test_scratch_cases.py").write_text(CASES_CHECK, encoding="utf-8")
    config = tomllib.loads((scratch / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["scripts"][NAME].startswith(f"readingroom.{PACKAGE}.")

    regenerated = _run(scratch, "-m", "readingroom.admin.docs", "--write", "--root", ".")
    assert regenerated.returncode == 0, regenerated.stderr
    assert f"| `{NAME}` |" in (scratch / "README.md").read_text(encoding="utf-8")

    checked = _run(scratch, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                   "-o", "addopts=", *CHECKS)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    assert " passed" in checked.stdout and "skipped" not in checked.stdout

    places = guide_places()
    outside = sorted(p for p in _changed(scratch)
                     if not any(p == place or (place.endswith("/") and p.startswith(place))
                                for place in places))
    assert not outside, f"the toy server touched places docs/adding-a-server.md omits: {outside}"
