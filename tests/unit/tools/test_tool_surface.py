"""The MCP surface the CLI sees (tools/list of the ``byre`` server) is pinned byte for byte:
names, order, descriptions, schemas and annotations. A change to it is a change to what the
model reads, so it is made on purpose: regenerate ``data/tools_list.json`` and say why."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell

from byre_jupyter.session.mcp import McpServer
from byre_jupyter.tools import kernel_tools

_PINNED = Path(__file__).parent / "data" / "tools_list.json"


def _tools_list(shell: InteractiveShell) -> str:
    server = McpServer("byre")
    server.add_tools(kernel_tools(shell))
    reply = asyncio.run(server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    return json.dumps(reply["result"], indent=1, ensure_ascii=False) + "\n"


def test_the_tools_the_cli_lists_are_the_pinned_ones(shell: InteractiveShell) -> None:
    assert _tools_list(shell) == _PINNED.read_text(encoding="utf-8")
