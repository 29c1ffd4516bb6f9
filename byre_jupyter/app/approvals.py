"""Who answers Claude's permission requests: the running cell's approval card, the standing
"always allow" answers of a conversation, or the headless policy.

Two kinds of request arrive here. The CLI's ``can_use_tool`` (Bash, Write, ...) comes through
the turn's controller (``turns.TurnController.decide``) or, for a turn no cell owns (the CLI
started it by itself), through :meth:`Approvals.unowned`. Claude's tools in this kernel
(``python`` under ``Claude.python_tool = "ask"``, the read tools under ``read_tools = "ask"``)
ask through the session's ``byre`` MCP server (:meth:`Approvals.kernel_server`). Both end in
:meth:`Approvals.ask`, so every approval shows the same card, in the cell of the turn that
asked, and every decision is written into that cell's record.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from IPython.core.interactiveshell import InteractiveShell

from ..session import Deny, McpServer, PermissionRequest, Session
from ..session.permissions import Allow
from ..tools import ApprovalDecision as PythonDecision
from ..tools import PythonApproval, PythonRunner, ToolApproval, kernel_tools
from ..ui.approval_card import ApprovalCard, ApprovalDecision, describe_request
from .config import Claude

__all__ = ["Approvals", "TurnOwner"]

TOOL_HEADLESS = (
    "byre_jupyter: {tool} needs approval, and nobody can click in this run (headless). The "
    "user can allow such tools with `%config Claude.headless_permission = 'allow'`, or choose "
    "a permission mode such as `%config Claude.permission_mode = 'acceptEdits'`."
)
PYTHON_HEADLESS = (
    "byre_jupyter: running Python in the user's kernel needs approval, and nobody can click "
    "here (a headless run). The user can allow it with `%config Claude.python_tool = 'allow'`."
)
READ_HEADLESS = (
    "byre_jupyter: the {tool} tool needs approval (Claude.read_tools = 'ask'), and nobody can "
    "click here (a headless run). The user can allow it with "
    "`%config Claude.read_tools = 'allow'`."
)


@runtime_checkable
class TurnOwner(Protocol):
    """The cell a turn belongs to, as approvals see it (``turns.TurnController``)."""

    def card(self, tool_name: str, tool_input: Mapping[str, Any]) -> ApprovalCard | None: ...
    def notice(self, kind: str, text: str) -> None: ...


class Sessions(Protocol):
    """Where the approvals find a name's session (``conversation.Conversations``)."""

    def peek(self, name: str) -> Session | None: ...


class Approvals:
    """The approval routing of one extension, and its standing "always allow" answers."""

    def __init__(
        self,
        config: Claude,
        sessions: Sessions,
        shell: InteractiveShell,
        runner: PythonRunner,
    ) -> None:
        self.config = config
        self.sessions = sessions
        self.shell = shell
        self.runner = runner
        #: "Always allow" answers: tool names, per conversation id. They end with the
        #: conversation (``--new``, ``%claude new``, a resume of another conversation).
        self._always: dict[str, set[str]] = {}

    # -- standing answers ----------------------------------------------------------------

    def allowed(self, session: Session) -> set[str]:
        """The tools "always allowed" in the session's current conversation."""
        return set(self._always.get(session.session_id or "", set()))

    def clear(self, conversation: str | None) -> set[str]:
        """End the standing allowances of a conversation (by id); returns what they were."""
        return self._always.pop(conversation or "", set())

    def carry_over(self, sources: Iterable[str | None], target: str | None) -> None:
        """A branch continues what the user sees as one session: the standing answers of the
        conversations it came from hold in the new one."""
        allowed: set[str] = set()
        for source in sources:
            allowed |= self._always.get(source or "", set())
        if allowed and target:
            self._always[target] = allowed

    # -- the CLI's can_use_tool ----------------------------------------------------------

    async def decide(
        self, session: Session, owner: TurnOwner | None, request: PermissionRequest
    ) -> Allow | Deny:
        """Answer the CLI's can_use_tool: byre's own tools decide for themselves (the python
        tool has its own policy); otherwise ask in the owner's cell, or follow the headless
        policy."""
        if request.tool_name.startswith("mcp__byre__"):
            return Allow()
        decision = await self.ask(session, owner, request.tool_name, request.input)
        if decision is None:
            return Deny(TOOL_HEADLESS.format(tool=request.tool_name))
        if decision.allowed:
            return Allow()
        return Deny(decision.reason or "The user denied this tool call.")

    async def unowned(self, name: str, request: PermissionRequest) -> Allow | Deny:
        """Session ``name``'s own ``can_use_tool``: prompts of turns no cell owns (the CLI
        started them by itself) get the headless policy and standing allowances, never a
        card."""
        session = self.sessions.peek(name)
        if session is None:
            return Deny(TOOL_HEADLESS.format(tool=request.tool_name))
        return await self.decide(session, None, request)

    # -- Claude's tools in this kernel ---------------------------------------------------

    def kernel_server(self, name: str) -> McpServer:
        """Session ``name``'s ``byre`` MCP server with Claude's tools on this kernel.

        ``python`` follows ``Claude.python_tool`` and the read tools (variables, inspect,
        history) follow ``Claude.read_tools``; under "ask" both go through :meth:`ask`, which
        shows the same approval card as every other tool.
        """
        server = McpServer("byre")
        server.add_tools(
            kernel_tools(
                self.shell,
                approve=functools.partial(self._in_kernel, name),
                policy=lambda: str(self.config.python_tool),
                read_policy=lambda: str(self.config.read_tools),
                runner=self.runner,
            )
        )
        return server

    async def _in_kernel(self, name: str, request: ToolApproval) -> PythonDecision:
        """An in-kernel tool asks: in the cell of the turn the session is running, like every
        other tool, or the headless answer when no cell owns that turn."""
        tool_input: Mapping[str, Any]
        if type(request) is PythonApproval:
            tool, tool_input = "python", {"code": request.code}
            headless, denied = PYTHON_HEADLESS, "The user denied running this code."
        else:
            tool, tool_input = request.tool, request.input
            headless = READ_HEADLESS.format(tool=tool)
            denied = f"The user denied this {tool} call."
        session = self.sessions.peek(name)
        turn = session.active_turn if session is not None else None
        owner = turn.owner if turn is not None else None
        decision = None
        if session is not None:
            decision = await self.ask(session, _as_owner(owner), f"mcp__byre__{tool}", tool_input)
        if decision is None:
            return PythonDecision.deny(headless)
        if decision.allowed:
            return PythonDecision.allow()
        return PythonDecision.deny(decision.reason or denied)

    # -- the one place a decision is made ------------------------------------------------

    async def ask(
        self,
        session: Session,
        owner: TurnOwner | None,
        tool_name: str,
        tool_input: Mapping[str, Any],
    ) -> ApprovalDecision | None:
        """Show an approval card in the owner's cell and wait for the click.

        Returns None when nobody can answer (a headless run, or a turn no cell owns): the
        caller applies its policy. "Always allow" is remembered per conversation and tool.
        Every decision is also written into the owner's view, so it stays in the static output.
        """
        title = describe_request(tool_name, tool_input).summary

        def note(kind: str, text: str) -> None:
            if owner is not None:
                owner.notice(kind, text)

        conversation = session.session_id or ""
        if tool_name in self._always.get(conversation, set()):
            note("approved", f"{title} (always allowed in this session)")
            return ApprovalDecision("allow")
        card = owner.card(tool_name, tool_input) if owner is not None else None
        if card is None:
            if self.config.headless_permission == "allow":
                note("approved", f"{title} (headless policy: allow)")
                return ApprovalDecision("allow")
            note("permission", f"{title}: nobody can approve here (headless)")
            return None
        decision = await card.decision
        if decision.choice == "always":
            self._always.setdefault(conversation, set()).add(tool_name)
        if decision.allowed:
            how = "always, in this session" if decision.choice == "always" else "once"
            note("approved", f"{title} (allowed {how})")
        else:
            why = f": {decision.reason}" if decision.reason else ""
            note("permission", f"{title}{why}")
        return decision


def _as_owner(owner: object) -> TurnOwner | None:
    """A turn's owner, if it is a cell that takes approvals (else: the headless policy)."""
    return owner if isinstance(owner, TurnOwner) else None
