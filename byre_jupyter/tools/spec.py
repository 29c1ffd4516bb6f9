"""One record per kernel tool, and the value its handler works with.

A :class:`KernelTool` is everything byre knows about one tool: its name, the description and
input schema the model reads (the MCP surface, pinned by ``tests/unit/tools/test_tool_surface.py``),
which policy gates it, its handler, its card (``tools/card.py``), its line in the system prompt
(``app/context.py``) and its line in the README's list. Each tool is one module under
``tools/specs/``; ``tools/registry.py`` lists them, and everything that names the tools reads the
records there (docs: "where a change goes" in the README).

A handler gets a :class:`ToolContext`: what the session gives the tools (the shell, the runner,
the limits, the policies and the approver, the notebook's path, the asking cell, the edit
provenance, the CLI's environment), one frozen value instead of a closure over ten keywords.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..bridge import Bridge, bridge_of
from ..redact import Secrets
from ..session.mcp import McpTool, ToolResult
from ..session.permissions import Decision, Deny
from .bounded import DEFAULT_LIMITS, ToolLimits
from .card import ToolInfo
from .catalog import known_secrets_of, redact_result
from .notebook_edit import CellChange
from .policy import ApproveFn, EditOutcome, ReadApproval, ToolApproval, decide
from .runner import PythonRun, PythonRunner

__all__ = [
    "GateKind",
    "Handler",
    "KernelTool",
    "ToolContext",
]

log = logging.getLogger(__name__)

#: Which policy gates a tool: ``python`` (``Claude.python_tool``; ``run_cells`` asks per cell),
#: ``read`` (``Claude.read_tools``: the call is decided and its result redacted around the
#: handler), ``edit`` (the session's permission mode, ``edit_notebook``).
GateKind = Literal["python", "read", "edit"]
#: Told of each approved ``edit_notebook`` batch that landed: its provenance, its changes and
#: the notebook's cell ids before it (tools/edit_log.py, ``EditLog.record``).
EditedFn = Callable[[Mapping[str, Any], tuple[CellChange, ...], tuple[str, ...]], None]

#: A tool's work: its context and the call's arguments (untrusted: the model wrote them).
Handler = Callable[["ToolContext", Mapping[str, Any]], "ToolResult | Awaitable[ToolResult]"]

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}


def _ask() -> str:
    return "ask"


def _allow() -> str:
    return "allow"


def _nothing() -> None:
    return None


def _no_env() -> Mapping[str, str]:
    return {}


@dataclass(frozen=True)
class ToolContext:
    """What a handler may use; every callable is read at call time (``%config`` applies to
    the next call)."""

    shell: Any
    runner: PythonRunner
    limits: ToolLimits = DEFAULT_LIMITS
    #: The one approver for every gate under "ask" (the notebook's cards); None denies.
    approve: ApproveFn | None = None
    python_policy: Callable[[], str] = _ask
    read_policy: Callable[[], str] = _allow
    #: From the session's permission mode (docs/bridge.md).
    edit_policy: Callable[[], str] = _ask
    on_python_run: Callable[[PythonRun], None] | None = None
    #: The saved notebook, read when no frontend bridge serves.
    notebook_path: Callable[[], str | None] = _nothing
    #: The running ``%%claude`` cell's id.
    asking_cell: Callable[[], str | None] = _nothing
    #: ``{"conversation", "turn"}`` an edit marks its cells with.
    provenance: Callable[[], Mapping[str, Any]] = dict
    #: What the CLI is given over this process's environment (``Claude.env``).
    environment: Callable[[], Mapping[str, str]] = _no_env
    #: The names of the read-gated tools, for the gate's words (the registry's).
    read_tools: tuple[str, ...] = ()
    #: Hears what became of an edit batch the user was asked about (the line in the cell
    #: says "Applied" or "Not applied" and why, never "Approved": app/approvals.py).
    edit_outcome: EditOutcome | None = None
    #: Told of each batch that landed (the kernel's edit log, for undo: tools/edit_log.py).
    on_edited: EditedFn | None = None

    def secrets(self) -> Secrets:
        """The exact secret values to redact now (a run may have made new ones)."""
        return known_secrets_of(self.shell, self.environment())

    def bridge(self) -> Bridge | None:
        """The frontend bridge of this kernel, or None (docs/bridge.md)."""
        return bridge_of(self.shell)

    def policy(self, gate: GateKind) -> Callable[[], str]:
        return {"python": self.python_policy, "read": self.read_policy, "edit": self.edit_policy}[
            gate
        ]

    async def decide(
        self, request: ToolApproval, gate: GateKind, policy: Callable[[], str] | None = None
    ) -> Decision:
        """The gate's decision on ``request``: ``policy`` or the gate's own, one approver."""
        chosen = policy if policy is not None else self.policy(gate)
        return await decide(request, chosen, self.approve, self.read_tools)

    def report(self, run: PythonRun) -> None:
        """Hand ``run`` to the notebook's card (``on_python_run``), never failing the call."""
        if self.on_python_run is None:
            return
        try:
            self.on_python_run(run)
        except Exception:  # the notebook's card failing must not fail Claude's tool call
            log.exception("byre: on_python_run failed")


@dataclass(frozen=True)
class KernelTool:
    """One kernel tool: ``mcp__byre__<name>`` to the model."""

    name: str
    #: What the model reads (tools/list): change it on purpose only.
    description: str
    #: The input schema, or a function of the limits when a bound is one of them.
    schema: Mapping[str, Any] | Callable[[ToolLimits], Mapping[str, Any]]
    gate: GateKind
    handler: Handler
    #: The MCP annotations (``readOnlyHint`` and friends).
    annotations: Mapping[str, Any]
    #: Its card in the notebook (``ui/toolinfo.py`` reads it).
    card: ToolInfo
    #: Its line in the system prompt (``app/context.py``): when to use it.
    prompt: str
    #: One line for the README's list of tools.
    summary: str

    @property
    def full_name(self) -> str:
        """The name the model and the CLI's events use."""
        return f"mcp__byre__{self.name}"

    def input_schema(self, limits: ToolLimits) -> Mapping[str, Any]:
        return self.schema(limits) if callable(self.schema) else self.schema

    def bind(self, context: ToolContext) -> McpTool:
        """This tool for ``context``'s kernel, ready for ``McpServer``: a read tool decided
        under ``Claude.read_tools`` and its result redacted; the others gate themselves (a
        cell at a time, a batch under the session's mode)."""
        handler = self.handler

        async def call(args: Mapping[str, Any]) -> ToolResult:
            if self.gate == "read":
                decision = await context.decide(ReadApproval(self.name, dict(args)), "read")
                if isinstance(decision, Deny):
                    reason = decision.message or f"The {self.name} call was not approved."
                    return ToolResult.text(reason, is_error=True)
            result = handler(context, args)
            if not isinstance(result, ToolResult):
                result = await result
            if self.gate == "read":
                result = redact_result(result, context.secrets())
            return result

        schema = self.input_schema(context.limits)
        return McpTool(self.name, self.description, schema, call, self.annotations)
