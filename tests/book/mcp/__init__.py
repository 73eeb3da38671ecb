"""book-agent's MCP server: shared library builder and stdio helpers of its tests."""
