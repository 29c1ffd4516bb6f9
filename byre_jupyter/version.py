"""The package version, in one place: pyproject.toml reads it, the MCP server reports it."""

__version__ = "0.1.0"
