"""byre_jupyter: Claude Code inside Jupyter.

``%load_ext byre_jupyter`` registers the ``%%claude`` cell magic and the ``%claude`` line magic.
In code, :class:`Session` drives one conversation with the ``claude`` CLI.
"""

from .errors import (
    ByreError,
    CLIConnectionError,
    CLINotFoundError,
    CLIProcessError,
    ControlError,
    ControlTimeout,
    LineTooLongError,
    ProtocolError,
    SessionClosedError,
)
from .session import (
    Allow,
    Deny,
    McpServer,
    PermissionRequest,
    Session,
    SessionManager,
    ToolResult,
    Turn,
    TurnResult,
)

__version__ = "0.1.0"

__all__ = [
    "Allow",
    "ByreError",
    "CLIConnectionError",
    "CLINotFoundError",
    "CLIProcessError",
    "ControlError",
    "ControlTimeout",
    "Deny",
    "LineTooLongError",
    "McpServer",
    "PermissionRequest",
    "ProtocolError",
    "Session",
    "SessionClosedError",
    "SessionManager",
    "ToolResult",
    "Turn",
    "TurnResult",
    "__version__",
]
