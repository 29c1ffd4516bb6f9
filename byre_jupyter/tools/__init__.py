"""Tools that let Claude work in the user's live kernel (``mcp__byre__python`` and friends).

``kernel_tools(shell, ...)`` returns the ``McpTool`` list for the session's ``byre`` MCP server;
``PythonRunner.interrupt()`` stops Claude's running code; ``PythonRun`` records each run for the
notebook's card.
"""

from .bounded import ToolLimits
from .catalog import kernel_tools, run_result
from .policy import (
    ApproveFn,
    EditApproval,
    EditOutcome,
    Policy,
    PythonApproval,
    ReadApproval,
    ToolApproval,
)
from .runner import PythonRun, PythonRunCancelled, PythonRunner, RunStatus

__all__ = [
    "ApproveFn",
    "EditApproval",
    "EditOutcome",
    "Policy",
    "PythonApproval",
    "PythonRun",
    "PythonRunCancelled",
    "PythonRunner",
    "ReadApproval",
    "RunStatus",
    "ToolApproval",
    "ToolLimits",
    "kernel_tools",
    "run_result",
]
