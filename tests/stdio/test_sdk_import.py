"""Every server process imports the server half of the MCP SDK only (core/sdkimport.py).

Each server of the catalogue is started as a host starts it, with ``-X importtime``, through a
whole session (initialize, tools/list, the contract's sample call, stdin closed): it answers,
exits 0, and no module of the SDK's client or of FastMCP (with Starlette and uvicorn) was
imported — the two package ``__init__`` files that pull them in were skipped — and neither was
httpx's command-line client (with click, rich and pygments, which this test venv has).
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import ExitStack

import pytest
from tests.contract.catalog import case_for

from readingroom.catalog import SERVERS
from readingroom.core import sdkimport
from readingroom.core.declaration import ServerInfo
from readingroom.core.rawstdio import RawStdioClient

CLIENT_SIDE = ("mcp.client", "mcp.server.fastmcp", "mcp.server.sse", "starlette", "uvicorn",
               "sse_starlette")
COMMAND_LINE_CLIENTS = ("rich", "click", "pygments")
"""What httpx's command-line client (``httpx._main``) brings where installed (this venv has it);
``-X importtime`` prints a line for ``httpx._main`` itself even when the import is refused."""


def _imported(stderr: str) -> set[str]:
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize("info", list(SERVERS.values()), ids=lambda s: s.name)
def test_a_server_answers_without_importing_the_sdks_client_side(info: ServerInfo, tmp_path):
    case = case_for(info)
    command = case.command()
    assert command[0] == sys.executable, command
    errlog = tmp_path / "stderr.log"
    with ExitStack() as stack:
        env = case.environment(stack)
        with errlog.open("wb") as err, RawStdioClient(
                [command[0], "-X", "importtime", *command[1:]], env=env, stderr=err) as client:
            init = client.initialize(timeout=60)
            assert init["result"]["serverInfo"]["name"] == info.name
            name, arguments = case.sample_call
            result = client.call_tool(name, arguments)
            assert result["isError"] is False, result
            assert client.close() == 0
    imported = _imported(errlog.read_text("utf-8", "replace"))
    assert "mcp.types" in imported and "mcp.server.lowlevel.server" in imported
    assert not {n for n in imported if n.startswith(CLIENT_SIDE)}, sorted(
        n for n in imported if n.startswith(CLIENT_SIDE))
    assert "httpx" in imported
    assert not {n for n in imported if n.split(".")[0] in COMMAND_LINE_CLIENTS}, sorted(imported)


def test_it_does_nothing_where_the_sdk_is_already_imported():
    import mcp  # noqa: F401 - the whole SDK, as a test process or an embedding host has it

    assert sdkimport.import_server_half() is False
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from readingroom.core.sdkimport import "
         "import_server_half as f; print(f(), f(), 'mcp.client' in sys.modules)"],
        capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "False", "False"], done.stderr


def test_httpx_still_works_without_its_command_line_client():
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from readingroom.core.sdkimport import "
         "import_server_half as f; f(); import httpx; "
         "print(callable(httpx.main), httpx.URL('https://example.org/a').path, "
         "'rich' in sys.modules, 'click' in sys.modules)"],
        capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "/a", "False", "False"], done.stderr
