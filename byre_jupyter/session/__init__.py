"""The session layer: conversations, turns, the control channel and the in-process MCP server."""

from .manager import SessionManager
from .mcp import McpServer, McpTool, ToolResult
from .options import SessionOptions
from .permissions import Allow, Allowance, Decision, Deny, PermissionCallback, PermissionRequest
from .session import HookCallback, ImageInput, Session
from .turn import Turn, TurnResult

__all__ = [
    "Allow",
    "Allowance",
    "Decision",
    "Deny",
    "HookCallback",
    "ImageInput",
    "McpServer",
    "McpTool",
    "PermissionCallback",
    "PermissionRequest",
    "Session",
    "SessionManager",
    "SessionOptions",
    "ToolResult",
    "Turn",
    "TurnResult",
]
