"""Every kernel tool is one record, and everything that names the tools reads the records: its
card, its gate's words, its line in the system prompt, the trait's help, the README's list. A
new tool is one module and one registry line: the throwaway ``echo`` below shows it."""

from __future__ import annotations

import asyncio
import typing
from collections.abc import Mapping
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from byre_jupyter.app.config import Claude
from byre_jupyter.app.context import system_prompt
from byre_jupyter.session.mcp import ToolResult
from byre_jupyter.tools import KERNEL_TOOLS, KernelTool, PythonRunner, ToolContext, bind_tools
from byre_jupyter.tools.bounded import DEFAULT_LIMITS
from byre_jupyter.tools.card import read_only_card
from byre_jupyter.tools.registry import cards, read_tool_names, tools_markdown
from byre_jupyter.tools.spec import READ_ONLY, GateKind
from byre_jupyter.ui.toolinfo import TOOLS, tool_info


@pytest.mark.parametrize("tool", KERNEL_TOOLS, ids=lambda tool: tool.name)
def test_every_registered_tool_has_its_card_gate_and_prompt_line(tool: KernelTool) -> None:
    assert tool_info(tool.full_name) is tool.card  # the UI's table holds the record's card
    assert TOOLS[tool.full_name] is tool.card
    assert tool.gate in typing.get_args(GateKind)
    assert tool.full_name in tool.prompt and f"- {tool.prompt}" in system_prompt(None)
    assert tool.summary.strip() and "\n" not in tool.summary
    # A card names only inputs the tool takes (inspect's once named python's ``code``).
    properties = tool.input_schema(DEFAULT_LIMITS)["properties"]
    for key in (*tool.card.summary_keys, tool.card.allow_key, tool.card.summary_list):
        assert not key or key in properties, (tool.name, key)


def test_the_read_gate_and_the_traits_help_name_every_read_tool() -> None:
    names = read_tool_names()
    assert set(names) == {"variables", "inspect", "history", "notebook"}
    help_text = Claude.class_traits()["read_tools"].help
    for name in names:
        assert f"`{name}`" in help_text


def test_a_denied_read_names_every_read_tool(shell: InteractiveShell) -> None:
    context = ToolContext(shell, PythonRunner(shell), read_policy=lambda: "deny")
    tools = {tool.name: tool for tool in bind_tools(context)}
    result = asyncio.run(tools["notebook"].function({}))
    text = result.content[0]["text"]
    assert result.is_error
    assert "The read tools (variables, inspect, history and notebook) is disabled" in text


async def _echo(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    return ToolResult.text(f"echo {args.get('text')} token=sk-ant-api03-{'x' * 40}")


#: A new tool: one record (in its own module in the package) ...
ECHO = KernelTool(
    name="echo",
    description="Say the text back.",
    schema={"type": "object", "properties": {"text": {"type": "string"}}},
    gate="read",
    handler=_echo,
    annotations=READ_ONLY,
    card=read_only_card("Echo", "text", summary_keys=("text",)),
    prompt="To hear yourself use mcp__byre__echo.",
    summary="says the text back.",
)
#: ... and one line in the registry.
REGISTRY = (*KERNEL_TOOLS, ECHO)


def test_a_new_tool_is_one_record_and_one_registry_line(shell: InteractiveShell) -> None:
    allowed = ToolContext(shell, PythonRunner(shell))
    echo = {tool.name: tool for tool in bind_tools(allowed, REGISTRY)}["echo"]
    assert echo.describe()["inputSchema"] == ECHO.schema
    result = asyncio.run(echo.function({"text": "hi"}))
    assert result.content[0]["text"].startswith("echo hi token=")
    assert "x" * 40 not in result.content[0]["text"]  # read-gated: redacted around the handler

    denied = ToolContext(shell, PythonRunner(shell), read_policy=lambda: "deny")
    echo = {tool.name: tool for tool in bind_tools(denied, REGISTRY)}["echo"]
    refusal = asyncio.run(echo.function({"text": "hi"})).content[0]["text"]
    assert "notebook and echo) is disabled" in refusal  # the gate's words name it

    assert cards(REGISTRY)["mcp__byre__echo"] is ECHO.card
    assert "- To hear yourself use mcp__byre__echo." in system_prompt(None, REGISTRY)
    assert tools_markdown(REGISTRY).endswith("- `echo`: says the text back.\n")
    assert "echo" not in system_prompt(None)  # the package's own list is untouched


def test_the_readme_list_has_one_line_per_tool() -> None:
    lines = tools_markdown().splitlines()
    assert [line.split("`")[1] for line in lines] == [tool.name for tool in KERNEL_TOOLS]
