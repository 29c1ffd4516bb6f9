"""Running one ``%%claude`` turn on the kernel's loop, owned by the cell that started it.

The cell is rewritten into ``await byre_jupyter.magics.cell(...)`` (see ``transform``), so
ipykernel runs it as an async cell: the cell blocks until the turn ends (Run All, nbclient and
papermill capture the whole answer) while widget messages are still dispatched (ipykernel 7.4),
so Stop and the model menu work mid-turn.

A :class:`TurnController` is created per cell and bound to that cell's display slot: it owns the
turn's view, its approval cards, its notices and its Stop. The session hands the CLI's permission
prompts (and the in-kernel python tool's approvals) to the controller of the turn it is running,
never to "the newest cell of the session": with ``--bg`` cells, several cells of one session
exist at once. Stop and Jupyter's ■ act on this cell's turn only: a queued turn is withdrawn
unsent, a running one is interrupted (the session escalates to a kill after
``interrupt_grace``), a start-up is abandoned (the half-started CLI is killed). Once the
kernel's turns have cost ``Claude.kernel_budget_usd``, a turn is refused before its CLI starts
(nothing is sent) and its cell fails, whatever ``on_error`` says (app/policy.py). A pending
approval card is answered "deny and interrupt" in the same control response, so the CLI cannot
call the model again before the interrupt request lands. ■ arrives here as ``CancelledError``;
the turn ends gracefully with the session usable, and the cell then ends as an interrupted
cell (``failure``): queued cells are aborted. The Stop button ends only the turn; a failed turn
ends its cell with an error unless ``Claude.on_error = "show"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ByreError
from ..protocol import (
    Image,
    InitMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    model_label,
    model_option,
)
from ..redact import Secrets
from ..session import Allow, Decision, Deny, PermissionRequest, Session, Turn, TurnResult
from ..tools.edit_log import EditLog
from ..ui import TurnView
from ..ui.cards import Card
from ..ui.viewmodel import UndoMark
from .approvals import TurnOwner
from .conversation import Conversations, TurnNode
from .failure import BudgetExceeded, CellInterrupted, TurnFailed, notebook_error_text
from .policy import (
    POLICY_MODES,
    budget_refusal,
    managed_folder,
    mode_refusal,
    offered_modes,
    read_policy,
)
from .portable import PortableError
from .surfaces import Surface, SurfaceControls

__all__ = ["TurnController", "TurnHost", "TurnRequest", "run_turn"]

log = logging.getLogger(__name__)

#: Beyond ``interrupt_grace``: the kill of the process group and its reaping (the transport
#: waits up to 5 s for the exit). Past this the cell ends anyway; the session's own stop task
#: still finishes the kill.
KILL_SLACK_S = 7.0


@dataclass
class TurnRequest:
    session: Session
    prompt: str
    images: Sequence[Image] = ()
    out: str | None = None
    background: bool = False
    extra_blocks: Sequence[dict[str, Any]] = field(default_factory=list)
    context_names: Sequence[str] = ()
    #: The turn's place in its session's tree (``conversation``), if it has one.
    node: TurnNode | None = None


def _model_values(session: Session) -> list[str]:
    values = [str(m.get("value")) for m in session.models if m.get("value")]
    return values or ["default"]


class TurnSettings(Protocol):
    """The ``Claude`` traits a turn reads."""

    @property
    def max_saved_images_mb(self) -> float: ...
    @property
    def interrupt_grace(self) -> float: ...
    @property
    def portable(self) -> bool: ...
    @property
    def on_error(self) -> str: ...
    @property
    def kernel_budget_usd(self) -> float | None: ...


class Approver(Protocol):
    async def decide(
        self, session: Session, owner: TurnOwner | None, request: PermissionRequest
    ) -> Allow | Deny: ...


class Interruptible(Protocol):
    def interrupt(self) -> object: ...


class TurnHost(Protocol):
    """What a turn needs of the application (``extension.ClaudeExtension``), and no more: a
    test runs a turn over ``MemoryTransport`` with a host of its own."""

    @property
    def config(self) -> TurnSettings: ...
    @property
    def approvals(self) -> Approver: ...
    @property
    def python_runner(self) -> Interruptible: ...
    @property
    def conversations(self) -> Conversations: ...

    def schedule(self, coro: Coroutine[Any, Any, Any]) -> None: ...
    def remember(self, session: Session, result: TurnResult) -> None: ...
    def speculate(self, name: str) -> None:
        """A turn of ``name`` ended: start what its next launch may want (app/spare.py)."""
        ...

    def namespace(self) -> MutableMapping[str, Any]: ...
    def surface(self, view: TurnView, controls: SurfaceControls) -> Surface: ...
    def portable_record(self, session_id: str) -> dict[str, Any]: ...
    def cell_id(self) -> str | None:
        """The id of the cell running now (None: the frontend sends none)."""
        ...

    def secrets(self) -> Secrets:
        """The exact values to redact from the turn's tool data."""
        ...


def _edit_log(host: TurnHost) -> EditLog | None:
    """The extension's edit log (app/approvals.py); a test's host may have none."""
    log = getattr(host.approvals, "edit_log", None)
    return log if isinstance(log, EditLog) else None


class TurnController:
    """One cell's turn: its view and display slot, its approval cards, notices and Stop."""

    def __init__(self, ext: TurnHost, request: TurnRequest) -> None:
        self.ext = ext
        self.request = request
        self.session = session = request.session
        shown = request.prompt
        if request.context_names:
            shown += f"\n(with {', '.join(request.context_names)})"
        self.view = TurnView(
            session.name,
            shown,
            attached_images=request.images,
            image_budget=int(ext.config.max_saved_images_mb * 2**20),
            # What the kernel knows to be secret, and what the CLI was given (Claude.env).
            secrets=ext.secrets,
        )
        self.view.model = model_label(session.model)
        self.view.set_context(session.context.fill)  # the meter as the last turn left it
        #: A --bg cell's placeholder: a notebook saved (or a headless run, nbclient or
        #: papermill, that ended) before the answer came keeps it, so the card says why it
        #: is empty; the answer replaces it. One line in the live view of a cell beside
        #: Lab's file browser at 1280 px (tests/integration/browser/test_bg_line.py).
        self.placeholder = (
            self.view.add_notice(
                "info",
                "Running in the background (--bg): the answer appears here when it is ready; "
                "saved before then, only this line.",
            )
            if request.background
            else None
        )
        #: The session's handle of this cell's turn, once sent (queued or running).
        self.turn: Turn | None = None
        #: This cell's id, read here in the cell's own context: the kernel's shell parent is a
        #: context variable, and Claude's tools run in the CLI reader's context, not the cell's.
        self.cell_id = ext.cell_id()
        #: This turn's number in its session (edit_notebook's provenance), when it has one.
        self.turn_number: int | None = request.node.number if request.node is not None else None
        self.stopped = False
        #: ■ (the kernel interrupted the cell), as opposed to the Stop button.
        self.kernel_interrupted = False
        #: Why the turn failed, in notebook terms (None: it did not).
        self.failure: str | None = None
        #: The kernel's spending cap refused the turn: nothing was sent.
        self.over_budget = False
        self._starting: asyncio.Future[None] | None = None
        #: Stop or ■ was asked: a card answered from now on also interrupts the turn.
        self.stopping = False
        self.surface: Surface = ext.surface(
            self.view,
            SurfaceControls(
                models=_model_values(session) if session.models else [self.view.model],
                on_stop=self.stop,
                on_model=self._on_model,
                loop=asyncio.get_running_loop(),
                permission_mode=session.permission_mode or "default",
                modes=offered_modes(read_policy()),
                on_permission_mode=self._on_permission_mode,
                effort=session.effort,
                on_effort=self._on_effort,
                background=request.background,
                on_stop_task=self._on_stop_task,
            ),
        )
        if request.node is not None:
            # A branch that leaves this answer behind marks it in the view's record.
            request.node.view = self.view

    # -- the turn -------------------------------------------------------------------------

    async def run(self) -> TurnResult | None:
        """Show and run the turn; returns its result (None if it never started)."""
        session, view = self.session, self.view
        result: TurnResult | None = None
        extra: dict[str, Any] | None = None
        try:
            try:
                # Before the CLI is even started: a refused turn sends nothing.
                refusal = budget_refusal(
                    self.ext.conversations.spent.cost_usd, self.ext.config.kernel_budget_usd
                )
                if refusal is not None:
                    raise BudgetExceeded(refusal)
                # Its own task, so Stop can abandon the start without cancelling the cell.
                told = len(session.notices)
                self._starting = asyncio.ensure_future(session.start())
                await self._starting
                for text in session.notices[told:]:  # e.g. a conversation that was lost
                    view.add_notice("warning", text)
                if self.stopped:
                    raise asyncio.CancelledError  # Stop while the CLI started: send nothing
                self.surface.set_models(_model_values(session), model_label(session.model))
                request = self.request
                self.turn = await session.send(
                    [*request.extra_blocks, {"type": "text", "text": request.prompt}]
                    if request.extra_blocks
                    else request.prompt,
                    images=list(request.images),
                    can_use_tool=self.decide,
                    owner=self,
                )
                async for message in self.turn.events():
                    if isinstance(message, ResultMessage):
                        break  # the end, shown below with what the session made of it
                    if isinstance(message, InitMessage):
                        self._check_mode(message.permission_mode)
                    elif isinstance(message, SystemMessage) and message.subtype == "status":
                        # The session follows a mode the CLI entered by itself (plan mode).
                        self.surface.show_permission_mode(session.permission_mode or "default")
                    if type(message) is not StreamEvent:  # the gauge skips those
                        view.set_context(session.context.fill)
                    self.surface.update(view.apply(message))
                result = await self.turn.result()
                # The turn's own cost and tokens first, so that the footer printed as the
                # view finishes shows them (not the CLI's running total).
                view.settle(result)
                view.set_context(session.context.fill)  # the result names the window
                if result.raw is not None:
                    self.surface.update(view.apply(result.raw))
            except asyncio.CancelledError:
                # ■ (the cell's task cancelled), or Stop during start-up.
                self.kernel_interrupted = not self.stopped
                result = await self._withdraw("Interrupted by the user.")
                view.finish(interrupted=True)
            except BudgetExceeded as e:
                self.failure, self.over_budget = e.message, True
                view.finish(error=self.failure)
            except ByreError as e:
                self.failure = notebook_error_text(str(e))
                view.finish(error=self.failure)
            else:
                if result.error is not None:
                    self.failure = notebook_error_text(str(result.error))
                    view.finish(error=self.failure, interrupted=result.interrupted)
                else:
                    if result.error_message is not None and not self.stopped:
                        self.failure = notebook_error_text(result.error_message)
                    view.finish(interrupted=result.interrupted)
            if self.request.node is not None:
                self.request.node.finish(result)
            if result is not None:
                self.ext.remember(session, result)
                self.ext.speculate(session.name)
                if self.request.out:
                    self.ext.namespace()[self.request.out] = result
                extra = self._portable(result)
        finally:
            if self.placeholder is not None:
                view.withdraw(self.placeholder)
            entry = self.ext.conversations.entry(session.name)
            if entry is not None:
                entry.last_view = view
            view.undo = self._undo_mark()
            self.surface.finish(extra)
        node = self.request.node
        if node is not None:
            # The record again, stale mark on or off; the portable record stays while it holds it.
            node.restate, node.portable = self.surface.record(), extra
        self._save_headless_records(extra)
        if extra is not None:
            self._newest_record_only()
        return result

    def _save_headless_records(self, extra: Mapping[str, Any] | None) -> None:
        """A headless client (no cell id) saves a --bg answer only when a later cell shows it
        again (``Conversations.unsaved_records``): a --bg turn leaves its record there, and a
        foreground turn, in its own cell's context, shows every one that ended."""
        if self.ext.cell_id() is not None:
            return
        pending = self.ext.conversations.unsaved_records
        if self.request.background:
            record = self.surface.record()
            pending.append(lambda: record(extra))
            return
        while pending:
            pending.pop(0)()

    def _check_mode(self, running: str | None) -> None:
        """The CLI says which mode the turn runs in. A mode a policy can take away that the
        CLI does not run in was taken away: CLI 2.1.328 started in "default" without a word
        when launched in bypassPermissions under a policy turning it off (docs/hub.md). The
        cell says so, as for a policy byre cannot read (server-managed settings, MDM); the
        menu shows the mode in force."""
        asked = self.session.permission_mode or "default"
        # Plan mode is entered and left by the CLI itself (EnterPlanMode, ExitPlanMode).
        if asked not in POLICY_MODES or running in (None, asked, "plan"):
            return
        self.notice(
            "warning",
            f"The CLI runs this turn in {running!r}, not {asked!r}: a policy it enforces turns "
            f"{asked} off (this machine's managed settings in {managed_folder()}, or your "
            "organisation's). `%claude doctor` shows the managed settings byre can read.",
        )
        self.surface.show_permission_mode(running)
        # byre answers the CLI's permission prompts by the session's mode: it must not be the
        # looser one the CLI was refused, or byre would allow what the policy forbids.
        try:
            self.session.switch_permission_mode(str(running))
        except ByreError as e:
            log.warning("byre: the session keeps %s: %s", asked, e)

    def _portable(self, result: TurnResult) -> dict[str, Any] | None:
        """The portable record for the final output (``Claude.portable``), or None; a record
        that cannot be saved leaves a notice in the turn instead."""
        if not self.ext.config.portable or not result.session_id:
            return None
        try:
            return {"portable": self.ext.portable_record(result.session_id)}
        except PortableError as e:
            self.view.add_notice("info", f"Not saved for another machine (Claude.portable): {e}")
            return None

    def _undo_mark(self) -> UndoMark | None:
        """The record's undo line, when this turn changed cells (tools/edit_log.py)."""
        log = _edit_log(self.ext)
        number = self.turn_number
        if log is None or number is None or log.find(self.session.name, number) is None:
            return None
        return UndoMark(self.session.name, number)

    def _newest_record_only(self) -> None:
        """Only the newest turn of a session name keeps its portable record: each one holds
        the whole conversation, so the earlier turns' copies are taken out of their outputs."""
        node = self.request.node
        if node is None:
            return
        tree = self.ext.conversations.tree(self.session.name)
        for other in tree.turns if tree is not None else ():
            if other is not node:
                other.drop_portable()

    async def _withdraw(self, why: str) -> TurnResult | None:
        """Take this cell's turn back: unsent if queued, interrupted if running. Waits, bounded,
        until it has ended; the session's own stop task finishes the escalation regardless."""
        self.stopping = True
        self.surface.reject_pending(why)
        turn = self.turn
        if turn is None:
            return None  # never sent; a cancelled start has killed its half-started CLI
        if self.session.active_turn is turn:
            self.ext.python_runner.interrupt()
        self.ext.schedule(_quiet(self.session.cancel(turn)))
        try:
            return await asyncio.wait_for(
                turn.result(), self.ext.config.interrupt_grace + KILL_SLACK_S
            )
        except asyncio.TimeoutError:
            log.warning("byre: the turn had not ended %.0f s after ■", KILL_SLACK_S)
            return None

    # -- the cell's controls ----------------------------------------------------------------

    def stop(self) -> None:
        """The Stop button of this cell: only this cell's turn, wherever it is."""
        self.stopped = self.stopping = True
        self.surface.reject_pending("Stopped by the user.")
        turn = self.turn
        if turn is None:
            if self._starting is not None and not self._starting.done():
                self._starting.cancel()
            return
        if turn.done():
            return
        if self.session.active_turn is turn:
            self.ext.python_runner.interrupt()
        self.ext.schedule(_quiet(self.session.cancel(turn)))

    def _on_permission_mode(self, mode: str) -> None:
        session, view = self.session, self.view
        before = session.permission_mode or "default"
        try:
            # The menu does not offer a forbidden mode; a policy installed since then still
            # holds (the CLI would ignore the switch without a word).
            if refusal := mode_refusal(read_policy(), mode, before):
                raise ByreError(refusal)
            # In force now (docs/security.md, "How modes switch"); the CLI follows at once if
            # it can, and before the session's next turn is sent in any case.
            syncing = session.set_permission_mode(mode)
        except ByreError as e:
            view.add_notice("error", f"permission mode change to {mode} refused: {e}")
            self.surface.show_permission_mode(before)  # the menu shows what is in force
            self.surface.update(list(view.walk()))
            return

        async def told() -> None:
            # The cell says so once the CLI was told too (or will be launched in the mode).
            try:
                await syncing
                view.add_notice("info", f"Permission mode: {mode}")
            except ByreError as e:
                # Refused (a policy the CLI enforces), or the CLI did not start again: the
                # menu shows the mode the session is in now.
                view.add_notice("error", f"permission mode {mode}: {e}")
                self.surface.show_permission_mode(session.permission_mode or "default")
            self.surface.update(list(view.walk()))

        self.ext.schedule(told())

    def _on_effort(self, effort: str) -> None:
        """The header's effort menu: the running CLI switches from its next request
        (``apply_flag_settings``), and later launches of the session use it."""
        session, view = self.session, self.view

        async def switch() -> None:
            before = session.effort
            try:
                await session.set_effort(effort)
                view.add_notice("info", f"Effort: {effort} (from the next request)")
            except (ByreError, ValueError) as e:
                view.add_notice("error", f"effort change to {effort} refused: {e}")
                self.surface.show_effort(before)  # the menu shows what is in force
            self.surface.update(list(view.walk()))

        self.ext.schedule(switch())

    def _on_stop_task(self, task_id: str) -> None:
        async def stop() -> None:
            try:
                await self.session.stop_task(task_id)
            except ByreError as e:
                self.notice("error", f"the task could not be stopped: {e}")

        self.ext.schedule(stop())

    def _on_model(self, name: str) -> None:
        async def switch() -> None:
            try:
                await self.session.set_model(model_option(name))
            except ByreError as e:
                self.notice("error", f"model change failed: {e}")

        self.ext.schedule(switch())

    # -- approvals: the extension asks through the turn's controller ------------------------

    async def decide(self, request: PermissionRequest) -> Allow | Deny:
        """This turn's ``can_use_tool``: the CLI asks while this turn runs.

        A denial caused by Stop or ■ carries ``interrupt``: the CLI ends the turn on that very
        answer. A plain denial would let it call the model again before our interrupt request
        (sent right after, as its own task) is read: under load the turn then ran on and ended
        normally."""
        decision = await self.ext.approvals.decide(self.session, self, request)
        if self.stopping and isinstance(decision, Deny):
            return Deny(decision.message, interrupt=True)
        return decision

    def card(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str | None = None
    ) -> Card | None:
        """An approval card in this cell, or None when nobody can click (no widgets). The
        tool card of ``tool_use_id`` says "waiting for approval" until it is answered."""
        if self.turn is None or self.turn.done():
            return None
        card = self.surface.ask(tool_name, tool_input)
        if card is not None and tool_use_id is not None:
            self.surface.update(self.view.awaiting_approval(tool_use_id, True))

            def answered(decision: asyncio.Future[Decision]) -> None:
                denied = not decision.cancelled() and isinstance(decision.result(), Deny)
                self.surface.update(self.view.awaiting_approval(tool_use_id, False, denied=denied))

            card.decision.add_done_callback(answered)
        return card

    def show_permission_mode(self, mode: str) -> None:
        """The header's menu shows the mode the session switched to by itself (an approved
        plan: app/asking.py)."""
        self.surface.show_permission_mode(mode)

    def notice(self, kind: str, text: str) -> None:
        """A notice in this cell's view (kept in its static output)."""
        self.view.add_notice(kind, text)
        self.surface.update(list(self.view.walk()))

    def end_cell(self) -> None:
        """How the cell ends, once the turn's output is recorded: as an interrupted cell after
        ■, with a short error after a failure (unless ``Claude.on_error == "show"``), else ok."""
        if self.kernel_interrupted:
            raise CellInterrupted(
                "the turn was stopped; the conversation goes on in the next %%claude cell"
            )
        if self.over_budget:
            # Whatever on_error says: a batch (papermill) must stop spending here.
            raise BudgetExceeded(self.failure or "")
        if self.failure is not None and self.ext.config.on_error == "raise":
            raise TurnFailed(self.failure)


async def run_turn(ext: TurnHost, request: TurnRequest) -> TurnResult | None:
    """Show and run one turn in the current cell; returns its result. A foreground turn then
    ends its cell as a notebook cell would (``TurnController.end_cell``)."""
    controller = TurnController(ext, request)
    result = await controller.run()
    if not request.background:
        controller.end_cell()
    return result


async def _quiet(awaitable: Any) -> None:
    with contextlib.suppress(ByreError, asyncio.TimeoutError):
        await awaitable
