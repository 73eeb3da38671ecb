"""readingroom: MCP stdio servers that give an AI assistant a scholar's reading room."""

__all__ = ["__version__"]

__version__ = "0.1.0"
