"""Things that must agree across files: the catalogue, console scripts, frozen entry scripts."""

from __future__ import annotations

import ast
import importlib
import sys
import tomllib
from pathlib import Path

import pytest

from readingroom.catalog import BUNDLED_PROGRAMS, ENTRIES, PROGRAMS, SERVERS
from readingroom.core.declaration import Program

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
import entry_scripts  # noqa: E402


def test_console_scripts_are_exactly_the_catalogue():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert scripts == {p.name: p.entry_point for p in ENTRIES.values()}
    assert list(ENTRIES) == list(PROGRAMS)
    assert set(SERVERS) <= set(BUNDLED_PROGRAMS) == set(scripts)


def test_every_entry_point_resolves_to_a_callable():
    for program in [*PROGRAMS.values(), *ENTRIES.values()]:
        module, _, function = program.entry_point.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), program.name


def test_entry_scripts_call_freeze_support_first(tmp_path: Path):
    written = entry_scripts.write_entry_scripts(ENTRIES.values(), tmp_path)
    assert [name for name, _ in written] == list(BUNDLED_PROGRAMS)
    # A script named like a package (readingroom.py) would shadow it in the frozen program.
    assert not {path.stem for _, path in written} & {"readingroom", "mcp", "httpx"}
    for (name, path), program in zip(written, ENTRIES.values(), strict=True):
        tree = ast.parse(path.read_text("utf-8"))
        main_block = next(n for n in tree.body if isinstance(n, ast.If))
        first = main_block.body[0]
        assert ast.unparse(first) == "multiprocessing.freeze_support()", name
        module, _, function = program.entry_point.partition(":")
        assert f"from {module} import {function}" in ast.unparse(main_block), name


def test_a_new_catalogue_program_needs_no_spec_edit(tmp_path: Path):
    toy = Program("toy-mcp", "toy_server.__main__:main")
    (_, path), = entry_scripts.write_entry_scripts([toy], tmp_path)
    assert path.name == "entry_toy_mcp.py"
    assert "from toy_server.__main__ import main" in path.read_text("utf-8")
    spec = (ROOT / "build" / "readingroom.spec").read_text("utf-8")
    # The spec names no program (it reads the catalogue); "readingroom" is also the package.
    for name in set(BUNDLED_PROGRAMS) - {"readingroom"}:
        assert name not in spec


def test_demo_documents_are_the_current_docs():
    demo = ROOT / "app" / "readingroom" / "book" / "demo_docs"
    for copy in demo.glob("*.md"):
        original = ROOT / "docs" / copy.name
        assert copy.read_bytes() == original.read_bytes(), (
            f"{copy} differs from {original}: copy docs/{copy.name} into demo_docs/")


def test_the_spec_excludes_no_runtime_dependency():
    import importlib.metadata as md
    import re

    spec = (ROOT / "build" / "readingroom.spec").read_text("utf-8")
    block = re.search(r"^excludes = \[(.*?)^\]", spec, re.MULTILINE | re.DOTALL)
    assert block, "the spec has an excludes list"
    excluded = set(re.findall(r'"([\w.]+)"', block.group(1)))
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    wanted = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in deps}
    modules = {m for m, dists in md.packages_distributions().items()
               if {d.lower() for d in dists} & wanted}
    assert "yaml" in modules and "fitz" in modules | {"pymupdf"}  # the map itself works
    assert not excluded & modules, f"runtime modules excluded from the bundle: {excluded & modules}"


def test_each_executable_gets_the_run_time_hooks_and_only_its_own_entry_script(tmp_path: Path):
    written = entry_scripts.write_entry_scripts(ENTRIES.values(), tmp_path)
    paths = [path for _, path in written]
    hooks = [("pyi_rth_inspect", "/pyi/rth/inspect.py", "PYSOURCE"),
             ("pyi_rth_multiprocessing", "/pyi/rth/mp.py", "PYSOURCE")]
    # An Analysis of every script lists the run-time hooks first, then the scripts.
    toc = hooks + [(path.stem, str(path), "PYSOURCE") for path in paths]
    for path in paths:
        kept = entry_scripts.program_scripts(toc, path, paths)
        assert kept == [*hooks, (path.stem, str(path), "PYSOURCE")]
    with pytest.raises(ValueError, match=r"elsewhere\.py"):
        entry_scripts.program_scripts(toc, tmp_path / "elsewhere.py", paths)
