"""issue 11 §6, the smaller defects: read-entry budgets, --json anywhere, readable init/locate
text, one reused demo folder.

Over the Core and the real command line (a process of its own: see :mod:`tests.forked`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from readingroom.book.demo import DEMO_MARKER, run_demo
from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError
from tests.forked import book_agent

from .make_books import make_epub, make_pdf

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

def run(data: Path, *args: str, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess:
    return book_agent(["--data-dir", str(data), *args], text=True, encoding="utf-8",
                      timeout=timeout, env={**os.environ, **(env or {})})


def sentences(word: str, n: int) -> str:
    return " ".join(f"The {word} sentence number {i} goes on a little." for i in range(n))


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """A Markdown book: a long record between two neighbours, a long one before a short one."""
    root = tmp_path_factory.mktemp("entries")
    src = root / "long.md"
    src.write_text(
        "# Short before\n\n" + sentences("opening", 4) + "\n\n"
        "# Long middle\n\n" + sentences("middle", 60) + "\n\n"
        "# After\n\n" + sentences("closing", 45) + "\n\n"
        "# Tiny\n\nA tiny last record.\n", encoding="utf-8")
    service = BookService(root / "data")
    service.init(src, book_id="long")
    return service


def record(service: BookService, heading: str):
    return next(r for r in service._load("long").records if r.heading_path[-1] == heading)


def read_all(service: BookService, record_id: str, *, neighbors: int,
             max_chars: int) -> tuple[dict[str, str], int]:
    """Follow data.next, then data.unread, until nothing is left; the text read per record."""
    got: dict[str, str] = {}
    pending: dict[str, dict] = {}
    ask: dict | None = {"record_id": record_id, "offset": 0, "neighbors": neighbors}
    calls = 0
    while ask is not None:
        env = service.read_entry("long", ask["record_id"], neighbors=ask["neighbors"],
                                 max_chars=max_chars, offset=ask["offset"])
        calls += 1
        assert env.items[0]["record_id"] == ask["record_id"] and env.items[0]["is_target"]
        for item in env.items:
            so_far = got.get(item["record_id"], "")
            assert item["offset"] == len(so_far), "each piece starts where the last one ended"
            got[item["record_id"]] = so_far + item["text"]
        for left in env.data["unread"]:
            assert left["offset"] == len(got.get(left["record_id"], ""))
            pending[left["record_id"]] = left
        pending = {k: v for k, v in pending.items() if len(got.get(k, "")) < v["total_chars"]}
        nxt = env.data["next"] or (next(iter(pending.values()), None))
        ask = None if nxt is None else {"record_id": nxt["record_id"],
                                        "offset": len(got.get(nxt["record_id"], "")),
                                        "neighbors": nxt.get("neighbors", 0)}
        assert calls < 50
    return got, calls


def test_the_requested_record_comes_first_even_after_a_long_neighbour(book):
    # The regression: the long previous record used the whole budget; the target never came.
    target = record(book, "After")
    env = book.read_entry("long", target.record_id, neighbors=1, max_chars=300)
    first = env.items[0]
    assert first["record_id"] == target.record_id and first["is_target"]
    assert first["text"] == target.text[:300] and first["relation"] == "target"
    assert env.data["next"] == {"record_id": target.record_id, "offset": 300, "neighbors": 1}
    assert {u["record_id"] for u in env.data["unread"]} >= {target.record_id}


def test_neighbours_follow_in_book_order_with_what_is_left(book):
    target = record(book, "Short before")
    assert len(target.text) < 400
    env = book.read_entry("long", target.record_id, neighbors=1, max_chars=400)
    assert [i["relation"] for i in env.items] == ["target", "next"]
    assert env.items[0]["text"] == target.text and not env.items[0]["truncated"]
    neighbour = env.items[1]
    assert len(target.text) + len(neighbour["text"]) == 400 and neighbour["truncated"]
    assert env.data["next"] == {"record_id": neighbour["record_id"],
                                "offset": neighbour["next_offset"], "neighbors": 0}


def test_every_cut_read_can_be_continued_to_the_end(book):
    target = record(book, "Long middle")
    assert len(target.text) > 2000
    got, calls = read_all(book, target.record_id, neighbors=1, max_chars=700)
    loaded = book._load("long")
    window = loaded.records[target.order - 1: target.order + 2]
    assert got == {r.record_id: r.text for r in window}
    assert calls >= len(target.text) // 700


def test_an_offset_outside_the_record_is_refused(book):
    target = record(book, "Tiny")
    with pytest.raises(CoreError) as caught:
        book.read_entry("long", target.record_id, offset=len(target.text) + 1)
    assert caught.value.code is Code.INVALID_ARGUMENT


def test_cli_read_entry_prints_the_command_that_continues(book):
    target = record(book, "Long middle")
    data = book.registry.data_dir
    shown = run(data, "read-entry", "long", target.record_id, "--neighbors", "1",
                "--max-chars", "500")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f">> {target.record_id}")
    hint = next(line for line in lines if line.startswith("[truncated: continue with "))
    command = hint.removeprefix("[truncated: continue with book-agent ").rstrip("]").split()
    assert command == ["read-entry", "long", target.record_id, "--offset", "500",
                       "--neighbors", "1"]
    more = run(data, *command, "--max-chars", "500", "--json")
    item = json.loads(more.stdout)["items"][0]
    assert item["offset"] == 500 and item["text"] == target.text[500:1000]


def test_json_works_before_and_after_the_command(book):
    data = book.registry.data_dir
    before = run(data, "--json", "status", "long")
    after = run(data, "status", "long", "--json")
    assert before.returncode == after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["data"]["book_id"] == "long"
    assert json.loads(before.stdout)["data"] == json.loads(after.stdout)["data"]
    listed = run(data, "list", "--json")
    assert json.loads(listed.stdout)["items"][0]["book_id"] == "long"
    # --data-dir after the command too; a failure under a late --json is still an envelope.
    late = book_agent(["status", "nothing", "--data-dir", str(data), "--json"], text=True,
                      encoding="utf-8", timeout=120)
    assert late.returncode == 1 and json.loads(late.stdout)["error"]["code"] == "BOOK_NOT_FOUND"
    assert len(late.stderr.strip().splitlines()) == 1


def test_init_prints_readable_text_with_its_warnings_in_a_section(tmp_path):
    src = make_epub(tmp_path / "notes.epub", [
        ("One", "<h1>One</h1><p>The first chapter.</p>"),
        ("Notes", "<h1>Notes</h1><p>Answers at the back.</p>"),
    ], linear=[True, False])
    done = run(tmp_path / "data", "init", str(src), "--id", "notes")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert not out.lstrip().startswith("{") and '"capabilities"' not in out
    assert out.splitlines()[0].startswith("registered notes, version 1: Test Book")
    assert "2 chapters" in out and "package: " in out
    assert "[warning]" not in out
    section = out[out.index("warnings (1):"):].splitlines()
    assert section[1].startswith("  - ") and "non-linear" in section[1]
    status = run(tmp_path / "data", "status", "notes")
    assert status.stdout.startswith("book notes, version 1") and "non-linear" in status.stdout


def test_locate_text_marks_a_cut_quote_and_prints_no_missing_label(tmp_path):
    long_sentence = ("Whales and dolphins swim together through the wide cold waters of the "
                     "northern sea while the ships pass slowly by the harbour light at dusk.")
    src = make_pdf(tmp_path / "sea.pdf", [long_sentence, "A second page."])
    data = tmp_path / "data"
    assert run(data, "init", str(src), "--id", "sea").returncode == 0
    done = run(data, "locate", "sea", "--text", long_sentence)
    assert done.returncode == 0, done.stderr
    where = done.stdout.splitlines()[1]
    assert "None" not in done.stdout and "label" not in where
    assert where.startswith("  page index 0: ")
    quote = where[where.index("«") + 1: where.index("»")]
    assert quote.endswith("…") and long_sentence.startswith(quote[:-1])
    short = run(data, "locate", "sea", "--text", "second page")
    line = short.stdout.splitlines()[1]
    assert "«second page»" in line and "None" not in short.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="the Windows cache folder comes from the "
                    "shell API, not the environment: the test would use the real one")
def test_demo_reuses_one_folder_and_leaves_no_temporary_files(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path / "home"),
           "LOCALAPPDATA": str(tmp_path / "local"), "TMPDIR": str(scratch),
           "TEMP": str(scratch), "TMP": str(scratch)}
    env_run = {**os.environ, **env}
    folders = []
    for attempt in range(2):
        done = book_agent(["demo"], text=True, encoding="utf-8", timeout=300, env=env_run)
        assert done.returncode == 0, done.stderr[-2000:]
        lines = done.stdout.splitlines()
        assert lines[0].startswith("demo passed: ")
        folder = Path(lines[1].split(" are in ", 1)[1].rstrip(":"))
        named = [Path(line.split(": ", 1)[1]) for line in lines[2:]]
        assert named and all(p.exists() and p.is_relative_to(folder) for p in named)
        folders.append(folder)
        if attempt == 0:
            (folder / "left-from-last-run.txt").write_text("x", encoding="utf-8")
    assert folders[0] == folders[1] and folders[0].is_relative_to(tmp_path)
    assert not (folders[0] / "left-from-last-run.txt").exists(), "the folder is replaced"
    assert list(scratch.iterdir()) == [], "no temporary file or folder is left behind"


def test_demo_refuses_a_folder_it_did_not_make(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious", encoding="utf-8")
    with pytest.raises(CoreError) as caught:
        run_demo(keep=mine, say=lambda _m: None)
    assert caught.value.code is Code.PATH_UNUSABLE
    assert (mine / "thesis.tex").read_text(encoding="utf-8") == "precious"
    assert not (mine / DEMO_MARKER).exists()


def test_locate_says_which_folds_the_quote_needed(tmp_path):
    src = tmp_path / "folds.md"
    src.write_text("# Letters\n\nIt’s a long way — said she — to the “old” harbour.\n",
                   encoding="utf-8")
    service = BookService(tmp_path / "data")
    service.init(src, book_id="folds")
    typed = service.locate("folds", text="It's a long way -- said she -- to the \"old\"")
    assert typed.data["status"] == "verified" and typed.data["folds"] == ["punctuation"]
    exact = service.locate("folds", text="It’s a long way — said she")
    assert exact.data["status"] == "verified" and exact.data["folds"] == []
    record = service.locate("folds", record_id=service._load("folds").records[0].record_id)
    assert record.data["folds"] == []
    shown = run(tmp_path / "data", "locate", "folds", "--text", "It's a long way")
    assert "matched after folding: punctuation" in shown.stdout
    found = run(tmp_path / "data", "search", "folds", "it's harbour")
    assert found.stdout.splitlines()[3] == "      matched after folding: punctuation"


def test_locate_text_names_printed_pages_and_what_it_stepped_over(tmp_path):
    from .make_pdf_furniture import make_furniture_pdf

    pages = [[f"Line {p}.{i} of the body text on this page." for i in range(20)]
             for p in range(6)]
    pages[2][-1] = "The sentence that runs from the foot"
    pages[3][0] = "of one page onto the next is whole."
    src = make_furniture_pdf(tmp_path / "folios.pdf", pages, first_folio=41)
    data = tmp_path / "data"
    assert run(data, "init", str(src), "--id", "folios").returncode == 0
    done = run(data, "locate", "folios", "--text", "runs from the foot of one page onto the next")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "verified: 1 match(es)"
    assert lines[1].startswith("  page indexes 2–3 (pp. 43–44, inferred from the printed folios)")
    assert lines[2].startswith("  stepped over: ") and "folio «43»" in lines[2]


def test_read_markdown_continues_a_line_longer_than_max_chars(tmp_path):
    # Japanese is never soft-wrapped in book.md: a long paragraph is one long line.
    src = tmp_path / "jp.md"
    src.write_text("# 長い段落\n\n" + "".join(f"これは{i}番目の文です。" for i in range(300))
                   + "\n\n# 次\n\n短い段落。\n", encoding="utf-8")
    service = BookService(tmp_path / "data")
    service.init(src, book_id="jp")
    lines = service._load("jp").pkg.file("book.md").read_text(encoding="utf-8").splitlines()
    long_line = max(range(len(lines)), key=lambda i: len(lines[i])) + 1
    assert len(lines[long_line - 1]) > 2000
    args = {"start_line": long_line - 1, "end_line": long_line + 1, "max_chars": 700}
    pieces, cut_before = [], False
    while True:
        data = service.read_markdown("jp", **args).data
        pieces.append(("" if not pieces or cut_before else "\n") + data["text"])
        cut_before = data["line_cut"]
        if not data["truncated"]:
            break
        args = {**args, "start_line": data["next_line"], "offset": data["next_offset"] or 0}
        assert len(pieces) < 20
    assert "".join(pieces) == "\n".join(lines[long_line - 2: long_line + 1])


def test_a_heading_read_continues_within_its_section(book):
    from readingroom.book.server import ReadMarkdownInput

    first = book.read_markdown("long", heading="Long middle", max_chars=500).data
    assert first["truncated"] and first["section_end_line"] is not None
    assert ReadMarkdownInput(book_id="long", start_line=first["next_line"],
                             offset=first["next_offset"] or 0)  # the tool accepts the offset
    shown = run(book.registry.data_dir, "read-markdown", "long", "--heading", "Long middle",
                "--max-chars", "500")
    hint = shown.stdout.splitlines()[-1]
    assert hint == (f"[truncated: continue with --start-line {first['next_line']}"
                    + (f" --offset {first['next_offset']}]" if first["next_offset"] else "]"))


def test_demo_out_folder_is_replaced_on_every_run(tmp_path):
    folder = tmp_path / "demo-output"
    first = run_demo(keep=folder, say=lambda _m: None)
    (folder / "stale.txt").write_text("from the last run", encoding="utf-8")
    second = run_demo(keep=folder, say=lambda _m: None)
    assert first.data["folder"] == second.data["folder"] == str(folder)
    assert not (folder / "stale.txt").exists() and (folder / DEMO_MARKER).is_file()
    assert all(Path(p).exists() for p in second.data["files"].values())
    assert sorted(p.name for p in folder.glob("page-*.png")) == [Path(second.data["png"]).name]
