"""Things that must agree across files: the frozen programs, console scripts, demo documents."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from readingroom.catalog import BUNDLED_PROGRAMS, SERVERS

ROOT = Path(__file__).resolve().parents[2]


def test_spec_freezes_every_bundled_program_with_an_entry_script():
    spec = (ROOT / "build" / "readingroom.spec").read_text(encoding="utf-8")
    rows = re.findall(r'\("([a-z-]+)", ENTRY / "([a-z_]+\.py)"\)', spec)
    assert sorted(name for name, _ in rows) == sorted(BUNDLED_PROGRAMS)
    for _, script in rows:
        assert (ROOT / "build" / "entry" / script).is_file()


def test_every_bundled_program_is_a_console_script_and_every_server_is_bundled():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert set(BUNDLED_PROGRAMS) <= set(scripts)
    assert set(SERVERS) <= set(BUNDLED_PROGRAMS)


def test_demo_documents_are_the_current_docs():
    demo = ROOT / "app" / "readingroom" / "book" / "demo_docs"
    for copy in demo.glob("*.md"):
        original = ROOT / "docs" / copy.name
        assert copy.read_bytes() == original.read_bytes(), (
            f"{copy} differs from {original}: copy docs/{copy.name} into demo_docs/")
