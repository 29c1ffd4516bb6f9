"""The session layer: conversations, the CLI process behind each, turns, the control channel and
the in-process MCP server."""

from .accounting import ContextFill, ContextGauge, Ledger
from .mcp import McpServer, McpTool, ToolResult
from .options import SessionOptions
from .permissions import Allow, Allowance, Decision, Deny, PermissionCallback, PermissionRequest
from .session import HookCallback, ImageInput, Session
from .turn import Turn, TurnResult

__all__ = [
    "Allow",
    "Allowance",
    "ContextFill",
    "ContextGauge",
    "Decision",
    "Deny",
    "HookCallback",
    "ImageInput",
    "Ledger",
    "McpServer",
    "McpTool",
    "PermissionCallback",
    "PermissionRequest",
    "Session",
    "SessionOptions",
    "ToolResult",
    "Turn",
    "TurnResult",
]
