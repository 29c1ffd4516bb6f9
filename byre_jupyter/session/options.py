"""How a conversation is set up: :class:`SessionOptions`, one frozen value.

Modelled on claude-agent-sdk-python's ``ClaudeAgentOptions``: every knob of a
:class:`~byre_jupyter.session.session.Session` in one place, so a fork or a variant is
``dataclasses.replace`` (:meth:`SessionOptions.forked`) instead of code writing another
instance's private fields. How the CLI is launched is the transport's
:class:`~byre_jupyter.transport.launch.LaunchOptions`, which this extends: its fields say
themselves whether a fork inherits them. What changes while the session runs (the model after
``set_model``, the permission mode) is the session's state, not an option.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ProtocolError
from ..transport import TransportFactory, subprocess_transport
from ..transport.launch import LaunchOptions, launch_fields
from .mcp import McpServer
from .permissions import PermissionCallback

if TYPE_CHECKING:
    from .turn import Turn

__all__ = ["FORK_INHERITS", "HookCallback", "SessionOptions"]

#: A hook: gets the hook's input JSON, returns the hook output (``{}`` to carry on).
HookCallback = Callable[[Mapping[str, Any]], Awaitable[Mapping[str, Any]]]


@dataclass(frozen=True)
class SessionOptions(LaunchOptions):
    """Everything a :class:`~byre_jupyter.session.session.Session` is started with: the
    launch options (``model``, ``cli_path``, ``cwd``, ``permission_mode``, ``env``,
    ``env_drop``, ``extra_args``, ``commit_name``, ``commit_email``, ``max_line_bytes``) and
    what the session itself does with the CLI."""

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
    #: Builds what runs the CLI at each (re)start: the real process unless a test says.
    transport_factory: TransportFactory = subprocess_transport

    def __post_init__(self) -> None:
        super().__post_init__()
        normal: dict[str, Any] = {
            "transcript": os.fspath(self.transcript) if self.transcript is not None else None,
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


#: What a fork takes over from its original (the rest starts at the defaults): the launch
#: options their metadata marks for forks, and what runs the CLI.
FORK_INHERITS = (
    *(option.name for option in launch_fields() if option.metadata["launch"].fork),
    "transport_factory",
)
