"""How a conversation is set up: :class:`SessionOptions`, one frozen value.

Modelled on claude-agent-sdk-python's ``ClaudeAgentOptions``: every knob of a
:class:`~byre_jupyter.session.session.Session` in one place, so a fork or a variant is
``dataclasses.replace`` (:meth:`SessionOptions.forked`) instead of code writing another
instance's private fields. What changes while the session runs (the model after ``set_model``,
the permission mode) is the session's state, not an option.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ProtocolError
from ..protocol import DEFAULT_MAX_LINE_BYTES, model_option
from ..transport import TransportFactory, subprocess_transport
from .mcp import McpServer
from .permissions import PermissionCallback

if TYPE_CHECKING:
    from .turn import Turn

__all__ = ["FORK_INHERITS", "HookCallback", "SessionOptions"]

#: A hook: gets the hook's input JSON, returns the hook output (``{}`` to carry on).
HookCallback = Callable[[Mapping[str, Any]], Awaitable[Mapping[str, Any]]]


@dataclass(frozen=True)
class SessionOptions:
    """Everything a :class:`~byre_jupyter.session.session.Session` is started with."""

    model: str | None = None  # what the user typed: "default" and "" mean the CLI's default
    cli_path: str | None = None  # None: $BYRE_CLAUDE_PATH, else ``claude`` on PATH
    cwd: str | None = None
    permission_mode: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # added to the kernel's environment
    env_drop: Sequence[str] = ()  # withheld from the CLI, beyond DEFAULT_ENV_DROP
    extra_args: Sequence[str] = ()
    resume: str | None = None  # continue this conversation
    fork_at: str | None = None  # with resume: a new conversation from it ("" = all of it)
    hooks: Mapping[str, Sequence[HookCallback]] = field(default_factory=dict)
    can_use_tool: PermissionCallback | None = None  # None: follow the permission mode
    mcp_server: McpServer | None = None  # None: an empty server named "byre"
    transcript: str | None = None  # a JSONL file of every line both ways
    on_background_turn: Callable[[Turn], None] | None = None
    on_bad_line: Callable[[bytes, ProtocolError], None] | None = None
    control_timeout: float = 30.0
    start_timeout: float = 90.0
    interrupt_grace: float = 3.0
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    commit_name: str | None = None
    commit_email: str | None = None
    #: Builds what runs the CLI at each (re)start: the real process unless a test says.
    transport_factory: TransportFactory = subprocess_transport

    def __post_init__(self) -> None:
        # Normalised once, so equal settings compare equal and nothing shares a caller's list.
        normal: dict[str, Any] = {
            "model": model_option(self.model),
            "cwd": os.fspath(self.cwd) if self.cwd is not None else None,
            "transcript": os.fspath(self.transcript) if self.transcript is not None else None,
            "env": dict(self.env or {}),
            "env_drop": tuple(self.env_drop),
            "extra_args": tuple(self.extra_args),
            "hooks": {event: tuple(fns) for event, fns in (self.hooks or {}).items()},
        }
        for name, value in normal.items():
            object.__setattr__(self, name, value)

    def forked(self, session_id: str, at: str | None, **overrides: Any) -> SessionOptions:
        """The options of a fork of conversation ``session_id`` up to message ``at``: where
        and how the CLI runs is inherited (:data:`FORK_INHERITS`); callbacks, the MCP server and
        the transcript belong to the original and are not."""
        inherited = {name: getattr(self, name) for name in FORK_INHERITS}
        fork = {"resume": session_id, "fork_at": at or ""}
        return dataclasses.replace(SessionOptions(), **{**inherited, **overrides, **fork})


#: What a fork takes over from its original (the rest starts at the defaults).
FORK_INHERITS = (
    "model", "cli_path", "cwd", "permission_mode", "env", "env_drop", "extra_args",
    "transport_factory",
)  # fmt: skip
