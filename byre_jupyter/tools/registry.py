"""The kernel tools, one list: every place that names them reads it.

:data:`KERNEL_TOOLS` holds one record per tool (``tools/spec.py``, one module each under
``tools/specs/``). From it come the ``byre`` MCP server's tools (:func:`bind_tools`), their
cards (``ui/toolinfo.py``), the system prompt's lines (``app/context.py``), the read gate's
words (``tools/policy.py``, ``Claude.read_tools``'s help) and the README's list
(:func:`tools_markdown`). A new tool is a module under ``tools/specs/`` and a line here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..session.mcp import McpTool
from .bounded import DEFAULT_LIMITS, ToolLimits
from .card import ToolInfo
from .runner import PythonRunner
from .spec import KernelTool, ToolContext
from .specs import edit_notebook, history, inspect, notebook, python, run_cells, variables

__all__ = [
    "KERNEL_TOOLS",
    "bind_tools",
    "cards",
    "kernel_tools",
    "prompt_lines",
    "read_tool_names",
    "tools_markdown",
]

#: Every kernel tool, in the order the model lists them.
KERNEL_TOOLS: tuple[KernelTool, ...] = (
    python.TOOL,
    variables.TOOL,
    inspect.TOOL,
    history.TOOL,
    notebook.TOOL,
    edit_notebook.TOOL,
    run_cells.TOOL,
)


def read_tool_names(tools: Sequence[KernelTool] = KERNEL_TOOLS) -> tuple[str, ...]:
    """The tools ``Claude.read_tools`` gates."""
    return tuple(tool.name for tool in tools if tool.gate == "read")


def bind_tools(context: ToolContext, tools: Sequence[KernelTool] = KERNEL_TOOLS) -> list[McpTool]:
    """``tools`` for ``context``'s kernel, ready for ``McpServer``; the read gate's words name
    the read tools among them."""
    context = replace(context, read_tools=read_tool_names(tools))
    return [tool.bind(context) for tool in tools]


def kernel_tools(
    shell: Any,
    *,
    runner: PythonRunner | None = None,
    limits: ToolLimits = DEFAULT_LIMITS,
    policy: Callable[[], str] | None = None,
    tools: Sequence[KernelTool] = KERNEL_TOOLS,
    **context: Any,
) -> list[McpTool]:
    """The kernel tools for ``shell`` (an ``InteractiveShell``): :func:`bind_tools` with a
    :class:`ToolContext` of ``context``'s fields (``policy`` is ``python_policy``). By default
    a :class:`PythonRunner` is made here with ``limits``; pass ``runner`` to keep it (to call
    ``interrupt()`` from a Stop button or the kernel's interrupt)."""
    if policy is not None:
        context["python_policy"] = policy
    made = runner if runner is not None else PythonRunner(shell, limits=limits)
    return bind_tools(ToolContext(shell, made, limits, **context), tools)


def cards(tools: Sequence[KernelTool] = KERNEL_TOOLS) -> Mapping[str, ToolInfo]:
    """Each tool's card, by the name the CLI's events carry (``mcp__byre__python``)."""
    return {tool.full_name: tool.card for tool in tools}


def prompt_lines(tools: Sequence[KernelTool] = KERNEL_TOOLS) -> list[str]:
    """The system prompt's line for each tool, in order."""
    return [tool.prompt for tool in tools]


def tools_markdown(tools: Sequence[KernelTool] = KERNEL_TOOLS) -> str:
    """The README's list of tools: ``- `name`: summary``, one line each."""
    return "".join(f"- `{tool.name}`: {tool.summary}\n" for tool in tools)
