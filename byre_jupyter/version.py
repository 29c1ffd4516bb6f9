"""The package version, in one place: pyproject.toml reads it, the MCP server reports it.

Also the Claude Code CLI version the project is tested with (docs/protocol.md), and the install
command every message that sends a user to npm prints; scripts/install-cli.sh pins the same
version (a unit test keeps the two equal)."""

__version__ = "0.1.0"

#: The CLI version the tests run against (docs/protocol.md).
TESTED_CLI = (2, 1, 328)
#: How to install exactly that CLI; a bare ``@anthropic-ai/claude-code`` on Node 20 installs
#: an older release (README, "Install").
CLI_INSTALL = "npm install -g @anthropic-ai/claude-code@" + ".".join(map(str, TESTED_CLI))
