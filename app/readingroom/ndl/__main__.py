"""``ndl-mcp`` / ``python -m readingroom.ndl``: the stdio server."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Start ndl-mcp on stdio; fd 1 is reserved for JSON-RPC before anything else loads."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        sys.stderr.write(
            "ndl-mcp: MCP stdio server for NDL Search (National Diet Library, Japan).\n"
            "Run it from an MCP host. Environment: NDL_SRU_URL (endpoint override), "
            "MCP_RECEIPT_LOG (receipt ledger), READINGROOM_TOOL_DEADLINE, "
            "READINGROOM_CONCURRENCY.\n"
        )
        return 0
    if args and args[0] == "--version":
        from .. import __version__

        sys.stderr.write(f"ndl-mcp {__version__}\n")
        return 0
    from ..core.stdio import reserve_stdout

    proto_out = reserve_stdout()
    from ..core.mcpkit import configure_logging, run_stdio
    from .server import build_ndl_server

    configure_logging()
    run_stdio(build_ndl_server(), proto_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
