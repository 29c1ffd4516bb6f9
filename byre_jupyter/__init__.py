"""byre_jupyter: Claude Code inside Jupyter.

``%load_ext byre_jupyter`` registers the ``%%claude`` cell magic and the ``%claude`` line magic.
In code, :class:`Session` drives one conversation with the ``claude`` CLI.
"""

from typing import TYPE_CHECKING, Any

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
from .version import __version__

if TYPE_CHECKING:
    from .session import (
        Allow,
        Deny,
        McpServer,
        PermissionRequest,
        Session,
        SessionOptions,
        ToolResult,
        Turn,
        TurnResult,
    )

_LAZY = {
    "Allow", "Deny", "McpServer", "PermissionRequest", "Session", "SessionOptions",
    "ToolResult", "Turn", "TurnResult",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    # Lazy, so that importing the pure protocol layer does not pull in asyncio.
    if name in _LAZY:
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module 'byre_jupyter' has no attribute {name!r}")


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
    "SessionOptions",
    "ToolResult",
    "Turn",
    "TurnResult",
    "__version__",
]


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext byre_jupyter``."""
    from .magics import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    from .magics import unload_ipython_extension as unload

    unload(shell)
