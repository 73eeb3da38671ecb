"""The README's two set-up commands are the ones run.py implements, and the first one works."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block, "the set-up section has a code block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_has_exactly_the_two_commands():
    assert readme_setup_commands() == ["python run.py demo", "python run.py test"]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "run.py test" in ci and "READINGROOM_REQUIRE_SAMPLES=1" in ci


def test_demo_command_runs_the_book_demo(tmp_path):
    done = subprocess.run([sys.executable, "run.py", "demo", "--keep", str(tmp_path / "d")],
                          cwd=ROOT, capture_output=True, text=True, encoding="utf-8",
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  locate --text" in done.stderr and "FAIL" not in done.stderr
    report = json.loads(done.stdout) if done.stdout.lstrip().startswith("{") else None
    assert report is None or report.get("ok") is True


def test_unknown_command_prints_usage():
    done = subprocess.run([sys.executable, "run.py", "frobnicate"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "run.py demo" in done.stderr
