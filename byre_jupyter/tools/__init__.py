"""Tools that let Claude work in the user's live kernel (``mcp__byre__python`` and friends).

Each tool is one record (``spec.KernelTool``) in its own module under ``specs/``, listed in
``registry.KERNEL_TOOLS``; ``bind_tools(ToolContext(...))`` (or ``kernel_tools(shell, ...)``)
returns the ``McpTool`` list for the session's ``byre`` MCP server;
``PythonRunner.interrupt()`` stops Claude's running code; ``PythonRun`` records each run for the
notebook's card.
"""

from .bounded import ToolLimits
from .catalog import run_result
from .policy import (
    ApproveFn,
    EditApproval,
    EditOutcome,
    Policy,
    PythonApproval,
    ReadApproval,
    ToolApproval,
)
from .registry import KERNEL_TOOLS, bind_tools, kernel_tools
from .runner import PythonRun, PythonRunCancelled, PythonRunner, RunStatus
from .spec import KernelTool, ToolContext

__all__ = [
    "KERNEL_TOOLS",
    "ApproveFn",
    "EditApproval",
    "EditOutcome",
    "KernelTool",
    "Policy",
    "PythonApproval",
    "PythonRun",
    "PythonRunCancelled",
    "PythonRunner",
    "ReadApproval",
    "RunStatus",
    "ToolApproval",
    "ToolContext",
    "ToolLimits",
    "bind_tools",
    "kernel_tools",
    "run_result",
]
