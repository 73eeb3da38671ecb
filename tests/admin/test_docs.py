"""The docs tables are generated from the declarations; the committed docs must be current."""

from __future__ import annotations

from pathlib import Path

from readingroom.admin import docs
from readingroom.catalog import SERVERS
from readingroom.core.declaration import COMMON_SETTINGS, ServerInfo, Setting

ROOT = Path(__file__).resolve().parents[2]


def test_committed_documents_hold_the_current_generated_blocks():
    for name in docs.DOCUMENTS:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "<!-- generated:" in text, name
        assert docs.update_document(text) == text, (
            f"{name} is stale: run python -m readingroom.admin.docs --write")


def test_the_settings_table_lists_every_declared_variable_once():
    table = docs.settings_table()
    names = [s.name for s in COMMON_SETTINGS] + [
        s.name for info in SERVERS.values() for s in info.settings]
    for name in names:
        assert table.count(f"| `{name}` |") == 1, name


def test_a_new_servers_setting_reaches_the_table_and_a_stale_block_is_rewritten():
    toy = ServerInfo("toy-mcp", "toy.__main__:main", deadline_s=45,
                     settings=(Setting("TOY_URL", "toy endpoint", "http://toy.invalid/"),))
    table = docs.settings_table([toy])
    assert "| `TOY_URL` | `toy-mcp` | toy endpoint | `http://toy.invalid/` |" in table
    assert "| 45 |" in table
    stale = "intro\n<!-- generated:settings -->\nSTALE-ROW\n<!-- /generated:settings -->\nend\n"
    fresh = docs.update_document(stale)
    assert "STALE-ROW" not in fresh and docs.settings_table() in fresh and fresh.endswith("end\n")


def test_the_server_table_lists_every_catalogue_server_once_with_an_existing_page():
    table = docs.servers_table()
    for info in SERVERS.values():
        assert table.count(f"| `{info.name}` |") == 1, info.name
        assert f"**{info.title}.** {info.description}" in table
        assert (ROOT / docs.server_page(info)).is_file(), docs.server_page(info)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- generated:servers -->\n" + table + "\n<!-- /generated:servers -->" in readme


def test_a_new_server_reaches_the_server_table_in_catalogue_order():
    toy = ServerInfo("toy-mcp", "toy.__main__:main", title="Toy", description="Plays.")
    rows = docs.servers_table([*SERVERS.values(), toy]).splitlines()
    assert rows[-1] == "| `toy-mcp` | **Toy.** Plays. | [docs/toy-mcp.md](docs/toy-mcp.md) |"
    assert [r.split("`")[1] for r in rows[2:]] == [*SERVERS, "toy-mcp"]
