"""Issue 17 §6: history that survives.

Before: a ``history.jsonl`` whose last line was corrupt and lacked its newline swallowed the
next entry (appended onto the torn line, so neither parsed); ``clear-history`` with
``history.jsonl`` a directory printed a traceback; a history that could not be written was
reported on stderr only. Now the torn line is ended first (as the ledger does),
``clear-history`` answers one line and exit 1, and the search envelope says when its history
line was not written.
"""

from __future__ import annotations

import json

import pytest
from tests.literature import conftest as literature_fixtures

from readingroom.core.errors import Code
from readingroom.literature import ENV_STATE_DIR
from readingroom.literature.__main__ import main
from readingroom.literature.history import History
from readingroom.literature.models import SearchRequest

fake = literature_fixtures.fake
make_service = literature_fixtures.make_service

pytestmark = pytest.mark.anyio


def test_a_torn_last_line_does_not_swallow_the_next_entry(tmp_path):
    history = History(tmp_path)
    history.append({"a": 1})
    with history.path.open("ab") as f:
        f.write(b'{"torn": tr')  # a crash mid-write: no newline
    history.append({"b": 2})
    assert history.entries() == [{"a": 1}, {"b": 2}]
    lines = history.path.read_bytes().split(b"\n")
    assert lines[1] == b'{"torn": tr' and json.loads(lines[2]) == {"b": 2}


def test_clear_history_on_a_directory_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys):
    (tmp_path / "history.jsonl").mkdir()
    monkeypatch.setenv(ENV_STATE_DIR, str(tmp_path))
    assert main(["clear-history"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "history.jsonl" in err and "directory" in err


async def test_a_search_whose_history_cannot_be_written_says_so(make_service, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the state folder should be")
    service = make_service(history=History(blocked))
    env = await service.search(SearchRequest(query="readingroom"))
    assert env.error is None and env.items
    (note,) = [d for d in env.diagnostics if "history" in d.message.lower()]
    assert note.code == Code.PATH_UNUSABLE and str(blocked) in note.message
