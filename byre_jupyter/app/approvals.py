"""Who answers Claude's permission requests: the running cell's approval card, the standing
"always allow" answers of a conversation, or the headless policy.

Two kinds of request arrive here. The CLI's ``can_use_tool`` (Bash, Write, ...) comes through
the turn's controller (``turns.TurnController.decide``) or, for a turn no cell owns (the CLI
started it by itself), through :meth:`Approvals.unowned`. Claude's tools in this kernel
(``python`` under ``Claude.python_tool = "ask"``, the read tools under ``read_tools = "ask"``)
ask through the session's ``byre`` MCP server (:meth:`Approvals.kernel_server`). Both end in
:meth:`Approvals.ask`, so every approval shows the same card, in the cell of the turn that
asked, and every decision is written into that cell's record. The decision is the session's
one type (``Allow`` or ``Deny``) from the click to the CLI or the kernel tool.

"Always allow" keeps an :class:`~byre_jupyter.session.Allowance` per conversation: exactly what
the card said it covers (docs/security.md, "What the allowances cover"), never the whole tool.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from IPython.core.interactiveshell import InteractiveShell

from ..protocol import PermissionMode
from ..session import (
    Allow,
    Allowance,
    Decision,
    Deny,
    McpServer,
    PermissionRequest,
    Session,
)
from ..tools import (
    EditApproval,
    PythonApproval,
    PythonRunner,
    ToolApproval,
    ToolContext,
    bind_tools,
)
from ..tools.claude_cells import EDIT_TOOL, asks_always
from ..tools.edit_log import EditLog
from ..tools.kinds import shorten
from ..ui.cards import Card
from ..ui.describe_call import describe_request
from ..ui.toolinfo import allowance_text
from .asking import ASKING, follow_mode
from .config import Claude
from .context import notebook_path
from .credentials import credential_paths

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

EDIT_HEADLESS = (
    "byre_jupyter: editing the notebook's cells needs the user's review, and nobody can click "
    "here (a turn no cell owns). Nothing was changed. The user can let edits apply without "
    "asking with `%config Claude.permission_mode = 'acceptEdits'`."
)
CLAUDE_CELL_HEADLESS = (
    "byre_jupyter: this batch edits a cell that runs Claude (its prompt, and the {fields} that "
    "read the user's variables into it), which the user reviews in every permission mode, and "
    "nobody can click here. Nothing was changed."
)
#: The permission modes under which an edit_notebook batch applies without a review card.
EDITS_WITHOUT_ASKING = (PermissionMode.ACCEPT_EDITS, PermissionMode.BYPASS)


@runtime_checkable
class TurnOwner(Protocol):
    """The cell a turn belongs to, as approvals see it (``turns.TurnController``)."""

    def card(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str | None = None
    ) -> Card | None: ...
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
        edit_log: EditLog | None = None,
    ) -> None:
        self.config = config
        self.sessions = sessions
        self.shell = shell
        self.runner = runner
        #: Each turn's applied cell edits (``%claude history``, ``%claude undo``).
        self.edit_log = edit_log if edit_log is not None else EditLog()
        #: "Always allow" answers, per conversation id, in the order given. They end with
        #: the conversation (``--new``, ``%claude new``, a resume of another conversation).
        self._always: dict[str, list[Allowance]] = {}

    # -- standing answers ----------------------------------------------------------------

    def allowed(self, session: Session) -> list[Allowance]:
        """The allowances of the session's current conversation."""
        return list(self._always.get(session.session_id or "", []))

    def clear(self, conversation: str | None) -> list[Allowance]:
        """End the standing allowances of a conversation (by id); returns what they were."""
        return self._always.pop(conversation or "", [])

    def carry_over(self, sources: Iterable[str | None], target: str | None) -> None:
        """A branch continues what the user sees as one session: the standing answers of the
        conversations it came from hold in the new one."""
        allowed: list[Allowance] = []
        for source in sources:
            for allowance in self._always.get(source or "", []):
                if allowance not in allowed:
                    allowed.append(allowance)
        if allowed and target:
            self._always[target] = allowed

    def _keep(self, conversation: str, allowance: Allowance) -> None:
        kept = self._always.setdefault(conversation, [])
        if allowance not in kept:
            kept.append(allowance)

    # -- the CLI's can_use_tool ----------------------------------------------------------

    async def decide(
        self, session: Session, owner: TurnOwner | None, request: PermissionRequest
    ) -> Decision:
        """Answer the CLI's can_use_tool: byre's own tools decide for themselves (the python
        tool has its own policy); otherwise ask in the owner's cell, or follow the headless
        policy."""
        if request.tool_name.startswith("mcp__byre__"):
            return Allow(approved_by="policy")
        asking = ASKING.get(request.tool_name)
        if asking is not None:  # Claude asks the user a question, or to approve its plan
            return await asking(self.config, session, owner, request)
        decision = await self.ask(
            session, owner, request.tool_name, request.input, request.tool_use_id
        )
        if decision is None:
            return Deny(TOOL_HEADLESS.format(tool=request.tool_name))
        if isinstance(decision, Allow):
            await follow_mode(session, owner, request.tool_name)
            # The allowance stays here: the CLI is told only about this call.
            return dataclasses.replace(decision, remember=None)
        return decision

    async def unowned(self, name: str, request: PermissionRequest) -> Decision:
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
        history, notebook) follow ``Claude.read_tools``; under "ask" both go through
        :meth:`ask`, which shows the same approval card as every other tool.
        """

        def notebook() -> str | None:  # the saved file, read when no frontend bridge serves
            cwd = os.path.abspath(self.config.cwd or os.getcwd())
            return notebook_path(self.shell.user_ns, cwd)

        context = ToolContext(
            self.shell,
            self.runner,
            approve=functools.partial(self._in_kernel, name),
            python_policy=lambda: str(self.config.python_tool),
            read_policy=lambda: str(self.config.read_tools),
            edit_policy=lambda: self._edit_policy(name),
            notebook_path=notebook,
            asking_cell=lambda: self._turn_cell(name),
            provenance=lambda: self._provenance(name),
            environment=lambda: self.config.env,
            edit_outcome=functools.partial(self._edit_outcome, name),
            on_edited=functools.partial(self.edit_log.record, name),
        )
        server = McpServer("byre")
        server.add_tools(bind_tools(context))
        return server

    def _edit_policy(self, name: str) -> str:
        """edit_notebook follows the session's permission mode, as the CLI's Edit does."""
        session = self.sessions.peek(name)
        mode = session.permission_mode if session is not None else None
        return "allow" if mode in EDITS_WITHOUT_ASKING else "ask"

    def _provenance(self, name: str) -> dict[str, Any]:
        """Which turn of which conversation makes an edit (docs/bridge.md, "Provenance")."""
        session = self.sessions.peek(name)
        turn = session.active_turn if session is not None else None
        owner = turn.owner if turn is not None else None
        number = getattr(owner, "turn_number", None)
        found: dict[str, Any] = {
            "conversation": (session.session_id if session is not None else None) or "",
            "turn": number if type(number) is int else None,
        }
        # The prompt, for the mark's hover (labextension/src/marks.ts): the edit tool redacts
        # it, then clips it (tools/catalog.py), since it is saved into the notebook.
        prompt = getattr(getattr(owner, "request", None), "prompt", None)
        if isinstance(prompt, str) and prompt.strip():
            found["prompt"] = prompt
        return found

    def _turn_owner(self, name: str) -> object:
        """The owner of the turn session ``name`` runs (a cell's controller, or None)."""
        session = self.sessions.peek(name)
        turn = session.active_turn if session is not None else None
        return turn.owner if turn is not None else None

    def _turn_cell(self, name: str) -> str | None:
        """The cell of the turn session ``name`` runs (the notebook tool marks it)."""
        owner = self._turn_owner(name)
        return owner.cell_id if isinstance(owner, InCell) else None

    async def _in_kernel(self, name: str, request: ToolApproval) -> Decision:
        """An in-kernel tool asks: in the cell of the turn the session is running, like every
        other tool, or the headless answer when no cell owns that turn. The policy
        (``tools/policy.py``) words a denial for Claude."""
        headless = (
            PYTHON_HEADLESS
            if type(request) is PythonApproval
            else (CLAUDE_CELL_HEADLESS if asks_always(EDIT_TOOL, request.input) else EDIT_HEADLESS)
            if type(request) is EditApproval
            else READ_HEADLESS.format(tool=request.tool)
        )
        session = self.sessions.peek(name)
        turn = session.active_turn if session is not None else None
        owner = turn.owner if turn is not None else None
        decision = None
        if session is not None:
            tool = f"mcp__byre__{request.tool}"
            decision = await self.ask(session, _as_owner(owner), tool, request.input)
        return Deny(headless) if decision is None else decision

    # -- the one place a decision is made ------------------------------------------------

    async def ask(
        self,
        session: Session,
        owner: TurnOwner | None,
        tool_name: str,
        tool_input: Mapping[str, Any],
        tool_use_id: str | None = None,
    ) -> Decision | None:
        """Show an approval card in the owner's cell and wait for the click (the tool card of
        ``tool_use_id``, when known, says meanwhile that it waits for approval).

        Returns None when nobody can answer (a headless run, or a turn no cell owns): the
        caller applies its policy. A standing allowance that covers the call answers it without
        a card; "Always allow" keeps the allowance the card showed, per conversation. Every
        decision is also written into the owner's view, so it stays in the static output.
        """
        title = describe_request(tool_name, tool_input).summary

        def note(kind: str, text: str) -> None:
            if owner is not None:
                owner.notice(kind, text)

        conversation = session.session_id or ""
        cwd = _cwd(session)
        # A credential file is asked for at every call (docs/security.md): the hook's "ask"
        # would mean nothing if an allowance given for another file of the tool answered it.
        # Paths resolve in the CLI's folder, as the hook resolves them (a link to .env is one).
        # So is an edit of a cell that runs Claude: its prompt and {fields} run next time.
        every_time = bool(credential_paths(tool_name, tool_input, cwd)) or asks_always(
            tool_name, tool_input
        )
        standing = [] if every_time else self._always.get(conversation, [])
        # An edit of the notebook can still be refused after the click (the user typed in the
        # cell meanwhile): its line waits for the outcome (:meth:`_edit_outcome`).
        later = tool_name == EDIT_TOOL

        def allowed(decision: Allow, standing: str = "") -> Allow:
            if not later:
                note("approved", f"{title} ({_how(decision, standing)})")
            return decision

        for allowance in standing:
            if allowance.covers(tool_name, tool_input, cwd):
                return allowed(Allow(approved_by="always"), allowance_text(allowance, _RULE_CHARS))
        card = owner.card(tool_name, tool_input, tool_use_id) if owner is not None else None
        if card is None:
            if self.config.headless_permission == "allow":
                return allowed(Allow(approved_by="headless"))
            note("permission", f"{title}: nobody can approve here (headless)")
            return None
        decision = await card.decision
        if isinstance(decision, Deny):
            why = f": {decision.message}" if decision.message else ""
            note("permission", f"{title}{why}")
            return decision
        if decision.remember is None:
            return allowed(decision)
        kept = _bound(decision.remember, tool_input, cwd)
        self._keep(conversation, kept)
        return allowed(dataclasses.replace(decision, remember=kept))

    def _edit_outcome(
        self, name: str, review: Mapping[str, Any], decision: Decision, problem: str | None
    ) -> None:
        """The line an allowed ``edit_notebook`` batch leaves in its turn's cell: applied, or
        not and why (the frontend's words are untrusted: one line, clipped; the view escapes
        it). A denial already has its line."""
        owner = _as_owner(self._turn_owner(name))
        if owner is None or not isinstance(decision, Allow):
            return
        title = describe_request(EDIT_TOOL, review).summary
        how = _how(decision)
        if problem is None:
            owner.notice("applied", f"{title} ({how})")
            return
        why = shorten(" ".join(problem.split()), _PROBLEM_CHARS)
        owner.notice("refused", f"{title} ({how}; {why})")


def _how(decision: Allow, standing: str = "") -> str:
    """How an allowed call was allowed, as its line says it (``standing``: the rule that
    answered it)."""
    if decision.approved_by == "always":
        return (
            f"always allowed in this session: {standing}"
            if standing
            else ("always allowed in this session")
        )
    if decision.approved_by == "headless":
        return "headless policy: allow"
    if decision.remember is None:
        return "allowed once"
    return f"allowed always, in this session: {allowance_text(decision.remember, _RULE_CHARS)}"


#: A rule in a notice is clipped here (``%claude permissions`` lists it whole).
_RULE_CHARS = 160
#: Why an edit did not apply, in its line (the tool's result gives Claude more).
_PROBLEM_CHARS = 300


def _cwd(session: Session) -> str:
    """The folder the session's CLI runs in: relative paths in its tool calls start there."""
    options = getattr(session, "options", None)
    cwd = getattr(options, "cwd", None)
    return os.fspath(cwd) if cwd else os.getcwd()


def _bound(allowance: Allowance, tool_input: Mapping[str, Any], cwd: str) -> Allowance:
    """A file allowance names the file the CLI will write: the card resolved the path in this
    kernel's folder, the CLI resolves it in its own."""
    path = tool_input.get(allowance.key)
    if allowance.scope != "file" or not isinstance(path, str):
        return allowance
    return Allowance.for_file(allowance.tool, allowance.key, path, cwd)


@runtime_checkable
class InCell(Protocol):
    """A turn that knows its cell's id (``turns.TurnController``)."""

    cell_id: str | None


def _as_owner(owner: object) -> TurnOwner | None:
    """A turn's owner, if it is a cell that takes approvals (else: the headless policy)."""
    return owner if isinstance(owner, TurnOwner) else None
