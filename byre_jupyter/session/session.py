"""A conversation with Claude Code: one CLI process, kept warm across turns.

The process starts lazily at the first :meth:`Session.send`, with ``--session-id`` so the
conversation id is known before the CLI says it. Turns run one at a time from a host-side queue
(so a queued turn always survives an interrupt of the running one, and :meth:`Session.cancel`
can withdraw one before it is sent). If the CLI dies, the running
turn ends with a :class:`~byre_jupyter.errors.CLIProcessError` (exit code and stderr tail) and the
next turn restarts it with ``--resume`` so the conversation goes on.

Results the CLI starts on its own (a background task finished: ``origin.kind ==
"task-notification"``) become *background turns*, handed to ``on_background_turn``.

This module is the conversation; the process that serves it (its launch, control channel, EOF,
the interrupt's kill) is a :class:`~byre_jupyter.session.process.CLIProcess`, which the session
tells what to launch and which tells the session what the CLI said.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import uuid as uuidlib
from collections import deque
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import (
    ByreError,
    CLIProcessError,
    ControlError,
    ProtocolError,
    SessionClosedError,
)
from ..protocol import (
    AssistantMessage,
    ControlRequest,
    Image,
    InitMessage,
    Message,
    PermissionMode,
    ResultMessage,
    SlashCommand,
    StreamEvent,
    SystemMessage,
    effort_option,
    effort_set_by,
    model_option,
    parse_commands,
    user_message,
)
from ..protocol.cli_errors import CliErrorKind, classify
from ..transport import LaunchSpec
from ..transport.launch import asks_over_stdio, bypass_allowed, bypass_refusal
from .accounting import ContextGauge, CostMeter, Ledger
from .mcp import McpServer
from .options import HookCallback, SessionOptions
from .permissions import PermissionCallback, PermissionRequest, default_policy
from .process import CLIProcess, ExitHandler
from .turn import Turn, TurnResult

__all__ = ["HookCallback", "ImageInput", "Session", "SessionOptions"]

log = logging.getLogger(__name__)


#: What the running CLI's mode is after a switch it refused or did not answer: no mode.
_MODE_UNKNOWN = "?"

#: How much each mode lets run without asking, where it matters for a lagging CLI: a tool
#: call the CLI would let through in a looser mode than the one in force is asked instead.
_LOOSENESS = {PermissionMode.BYPASS: 2, PermissionMode.ACCEPT_EDITS: 1}
#: The modes a policy can turn off (managed settings): a refused switch to one is undone.
_POLICY_MODES = (PermissionMode.BYPASS, PermissionMode.AUTO)

MODE_LAG_REASON = (
    "byre_jupyter: the permission mode was just switched to {mode} and the CLI has not taken "
    "it yet, so this call is asked rather than let through."
)

#: An image for :meth:`Session.send`: an Image (sniffed already), raw bytes, a path, or an
#: Anthropic image block.
ImageInput = Image | bytes | str | os.PathLike[str] | Mapping[str, Any]


class Session:
    """One conversation. See the module docstring; the README has a tour."""

    def __init__(
        self, name: str = "default", options: SessionOptions | None = None, **overrides: Any
    ) -> None:
        """``Session(name, options)``, or ``Session(name, model=..., cwd=...)``: keywords are
        :class:`SessionOptions` fields, applied over ``options`` (a TypeError names a wrong one)."""
        if options is not None and not isinstance(options, SessionOptions):
            raise TypeError(f"options must be SessionOptions, not {type(options).__name__}")
        options = options or SessionOptions()
        self.name = name
        self.options = dataclasses.replace(options, **overrides) if overrides else options
        options = self.options
        # What may change while the session runs: set_model, set_permission_mode, set_effort
        # (and a `/effort` the user sends as a prompt).
        self.model = options.model
        #: The permission mode in force: every decision reads it, and a launch uses it. The
        #: running CLI follows it before the next turn is sent (:meth:`sync_permission_mode`).
        self.permission_mode = options.permission_mode
        self.effort = options.effort
        #: The running CLI's own mode, and whether it was launched to send permission prompts
        #: to us (not in bypassPermissions: ``asks_over_stdio``).
        self._cli_mode: str | None = None
        self._cli_asks = True
        #: How the running CLI was launched, to launch it again in another mode while it has
        #: been sent no turn (a fork it has not written yet: :meth:`_relaunch`).
        self._launched: tuple[str | None, str | None, bool, str | None] | None = None
        self._sent_to_cli = False
        self._mode_lock: asyncio.Lock | None = None
        self.can_use_tool = options.can_use_tool or default_policy(options.permission_mode)
        self._default_policy = options.can_use_tool is None
        self.mcp_server = options.mcp_server or McpServer("byre")
        resume, fork_at = options.resume, options.fork_at

        # Conversation identity: a fresh id, or resume / fork an existing one.
        self._resume = resume
        self._fork_at = fork_at
        self.session_id: str | None = resume if resume and fork_at is None else None
        if self.session_id is None:
            self.session_id = str(uuidlib.uuid4())
        self._has_history = resume is not None

        self.server_info: Mapping[str, Any] = {}  # the initialize response
        self.last_init: InitMessage | None = None
        self.bad_lines: deque[tuple[bytes, ProtocolError]] = deque(maxlen=50)
        self.idle_messages: deque[Message] = deque(maxlen=100)
        self.unknown_messages = 0
        #: The turns this session paid for; a host may give several sessions one ledger (the
        #: notebook does, for the sessions one name goes through).
        self.ledger = Ledger()
        self._meter = CostMeter()
        #: The CLI talks to byre's scripted API, not a model (an answer's message id says so:
        #: ``AssistantMessage.scripted``); its costs are marked, never shown as dollars paid.
        self.scripted = False
        #: How full the context window is, read from the turns' messages (``.accounting``).
        self.context = ContextGauge()
        self.restarts = 0
        #: Things the user should know that are not errors of a turn (e.g. lost history).
        self.notices: list[str] = []

        self._process = CLIProcess(
            options,
            on_message=self._on_message,
            on_bad_line=self._on_bad_line,
            on_eof=self._on_eof,
            handlers={
                "mcp_message": self._handle_mcp,
                "hook_callback": self._handle_hook,
                "can_use_tool": self._handle_can_use_tool,
            },
        )
        self._queue: deque[Turn] = deque()
        self._queue_event: asyncio.Event | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self._active: Turn | None = None
        self._background: Turn | None = None
        self._stopping: asyncio.Task[list[str]] | None = None
        self._closed = False
        self._hook_ids: dict[str, HookCallback] = {}

    # -- public properties ----------------------------------------------------------------

    @property
    def turns_completed(self) -> int:
        return self.ledger.turns

    @property
    def total_cost_usd(self) -> float:
        """The sum of the turns' own costs (:mod:`.accounting`)."""
        return self.ledger.cost_usd

    @property
    def interrupt_grace(self) -> float:
        return self.options.interrupt_grace

    @property
    def running(self) -> bool:
        return self._process.running

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def busy(self) -> bool:
        return self._active is not None or bool(self._queue)

    @property
    def active_turn(self) -> Turn | None:
        return self._active

    @property
    def models(self) -> tuple[Mapping[str, Any], ...]:
        """The models the CLI offers (``initialize`` response ``models[]``), after start."""
        models = self.server_info.get("models")
        return (
            tuple(m for m in models if isinstance(m, Mapping)) if isinstance(models, list) else ()
        )

    @property
    def commands(self) -> tuple[SlashCommand, ...]:
        """The slash commands the CLI offers, with descriptions (its ``initialize`` answer);
        empty until it has started."""
        return parse_commands(self.server_info)

    @property
    def capabilities(self) -> frozenset[str]:
        """From the newest ``system/init`` line; a missing array means none."""
        return self.last_init.capabilities if self.last_init else frozenset()

    # -- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the CLI now (``send`` does it lazily). Idempotent."""
        if self._closed:
            raise SessionClosedError(f"session {self.name!r} is closed")
        async with self._process.start_lock:
            if self.running:
                return
            try:
                await self._spawn()
            except CLIProcessError as e:
                if not self._unrecorded(e):
                    raise
                # Our own conversation, never written by the CLI (it can emit a first answer
                # before saving it; killed right then, nothing is left to resume): go on in a
                # new conversation rather than fail every later turn (docs/processes.md).
                lost, self.session_id = self.session_id, str(uuidlib.uuid4())
                self._has_history = False
                self.notices.append(
                    f"conversation {lost} could not be resumed: the CLI had not recorded it "
                    f"before it died; continuing in a new conversation {self.session_id} "
                    "without the earlier turns"
                )
                log.warning("byre: %s", self.notices[-1])
                await self._spawn()
            self._meter.new_process()

    def _unrecorded(self, error: CLIProcessError) -> bool:
        """Did a restart fail because the CLI never recorded *our own* conversation? Never
        true for a conversation the user asked to resume (that error is theirs to see)."""
        return (
            self._fork_at is None
            and self._has_history
            and self.session_id != self.options.resume
            and classify(error.stderr_tail) is CliErrorKind.NO_CONVERSATION
        )

    def _launch_spec(self) -> LaunchSpec:
        resume = fork_at = None
        fork = False
        session_id: str | None = self.session_id
        if self._fork_at is not None and self._resume is not None:
            # --resume=OLD [--resume-session-at=UUID] --fork-session --session-id=NEW
            resume, fork_at, fork = self._resume, self._fork_at or None, True
            session_id = self.session_id
        elif self._has_history:
            resume = self.session_id
        env = {**os.environ, **self.options.env}
        if self.permission_mode == PermissionMode.BYPASS and (refusal := bypass_refusal(env)):
            raise ByreError(refusal)
        # The model and permission mode now: set_model and set_permission_mode change them.
        now = {"model": self.model, "permission_mode": self.permission_mode, **self._now()}
        return LaunchSpec(
            **{**self.options.launch_options(), **now},
            session_id=session_id,
            resume=resume,
            resume_session_at=fork_at,
            fork_session=fork,
            mcp_servers=(self.mcp_server.name,),
            allow_bypass=bypass_allowed(env),
        )

    async def _spawn(self) -> None:
        launched = (self._resume, self._fork_at, self._has_history, self.session_id)
        spec = self._launch_spec()
        self.server_info = await self._process.spawn(spec, self._hooks())
        self._cli_mode, self._cli_asks = spec.permission_mode, asks_over_stdio(spec)
        self._launched, self._sent_to_cli = launched, False
        # After a fork the new conversation continues as a plain session.
        if self._fork_at is not None:
            self._fork_at = self._resume = None
            self._has_history = True

    def _hooks(self) -> dict[str, list[dict[str, Any]]]:
        """The ``hooks`` of an ``initialize`` request: each callback under an id of its own,
        by which the CLI calls it back (:meth:`_handle_hook`)."""
        hooks: dict[str, list[dict[str, Any]]] = {}
        for event, callbacks in self.options.hooks.items():
            ids = []
            for callback in callbacks:
                hook_id = f"hook_{len(self._hook_ids)}"
                self._hook_ids[hook_id] = callback
                ids.append(hook_id)
            hooks[event] = [{"matcher": None, "hookCallbackIds": ids}]
        return hooks

    async def close(self) -> None:
        """End the conversation's process: queued turns fail, the running one is interrupted."""
        if self._closed:
            return
        self._closed = True
        error = SessionClosedError(f"session {self.name!r} was closed")
        while self._queue:
            self._queue.popleft().finish(None, error)
        if self._active is not None and self.running:
            with contextlib.suppress(ByreError, asyncio.TimeoutError):
                await self._interrupt_active(grace=1.0)
        if self._pump_task is not None:
            self._pump_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump_task
        await self._process.close()
        for turn in (self._active, self._background):
            if turn is not None:
                turn.finish(None, error)

    # -- turns ----------------------------------------------------------------------------

    async def send(
        self,
        prompt: str | Sequence[Mapping[str, Any]],
        images: Sequence[ImageInput] = (),
        *,
        can_use_tool: PermissionCallback | None = None,
        owner: object = None,
    ) -> Turn:
        """Queue a turn; returns its handle at once. The CLI starts if it is not running.

        ``can_use_tool`` answers the permission prompts of this turn only (the CLI runs one
        turn at a time, so a prompt belongs to the running turn); without it, and for turns
        the CLI starts by itself, the session's ``can_use_tool`` answers. ``owner`` is kept on
        the turn for the host (e.g. the notebook cell that sent it); the session ignores it."""
        if self._closed:
            raise SessionClosedError(f"session {self.name!r} is closed")
        content = self._content(prompt, images)
        turn = Turn(self, content, can_use_tool=can_use_tool, owner=owner)
        self._queue.append(turn)
        if self._queue_event is None:
            self._queue_event = asyncio.Event()
        self._queue_event.set()
        if self._pump_task is None or self._pump_task.done():
            self._pump_task = asyncio.get_running_loop().create_task(self._pump())
        return turn

    async def query(self, prompt: str, images: Sequence[ImageInput] = ()) -> TurnResult:
        """Send and wait: the result of one turn."""
        return await (await self.send(prompt, images)).result()

    @staticmethod
    def _content(
        prompt: str | Sequence[Mapping[str, Any]], images: Sequence[ImageInput]
    ) -> str | list[Mapping[str, Any]]:
        if not images:
            return prompt if isinstance(prompt, str) else list(prompt)
        blocks: list[Mapping[str, Any]] = []
        for image in images:
            if isinstance(image, Mapping):
                blocks.append(image)
                continue
            if not isinstance(image, Image):
                data = image if isinstance(image, bytes) else Path(image).read_bytes()
                sniffed = Image.sniffed(data)
                if sniffed is None:
                    raise ValueError(f"not a PNG, JPEG, GIF or WebP image: {image!r:.80}")
                image = sniffed
            blocks.append(image.content_block())
        if isinstance(prompt, str):
            if prompt:
                blocks.append({"type": "text", "text": prompt})
        else:
            blocks.extend(prompt)
        return blocks

    async def _pump(self) -> None:
        assert self._queue_event is not None
        while not self._closed:
            if not self._queue:
                self._queue_event.clear()
                await self._queue_event.wait()
                continue
            # A turn the CLI started on its own must end before ours is written.
            if self._background is not None:
                await asyncio.wait([asyncio.ensure_future(self._background.result())])
            # The turn stays in the queue until it is written, so cancel() can withdraw it
            # while the CLI starts; after the start, only a turn still at the head is sent.
            turn = self._queue[0]
            try:
                await self.start()
                # A mode switch is in force before the turn is sent (docs/security.md).
                await self.sync_permission_mode()
            except ByreError as e:
                if self._queue and self._queue[0] is turn:
                    self._queue.popleft()
                turn.finish(None, e)
                continue
            if not self._queue or self._queue[0] is not turn:
                continue  # withdrawn meanwhile: never sent
            self._queue.popleft()
            try:
                self._active = turn
                turn.begin(self.model)
                self._sent_to_cli = True
                await self._process.send(
                    user_message(turn.prompt, session_id=self.session_id or "")
                )
            except ByreError as e:
                turn.finish(None, e)
                self._active = None
                continue
            try:
                await turn.result()
            finally:
                self._active = None

    # -- interrupt / model / other control -------------------------------------------------

    async def interrupt(self) -> list[str]:
        """End the running turn gracefully (within a second, normally); the session stays
        usable. Returns the ids of turns still queued, which will run next. If the CLI does not
        end the turn within ``interrupt_grace`` seconds (the interrupt request included), its
        process group is killed and the next turn resumes the conversation. The escalation
        runs to the end even if the caller stops waiting."""
        queued = [t.id for t in self._queue]
        if self._active is None:
            return queued
        # The escalation runs as its own task: a caller that gives up (a cancelled cell, a
        # wait_for shorter than the grace) must not leave a stalled CLI alive with the turn
        # still active, or every later turn would queue behind it forever.
        if self._stopping is None or self._stopping.done():
            self._stopping = asyncio.get_running_loop().create_task(
                self._interrupt_active(grace=self.interrupt_grace)
            )
        still = await asyncio.shield(self._stopping)
        return queued + still

    async def cancel(self, turn: Turn) -> None:
        """Withdraw ``turn``: a queued turn is removed and never sent (it ends interrupted);
        the running turn is interrupted as by :meth:`interrupt`; other turns are untouched."""
        if turn.done() or turn.session is not self:
            return
        if turn in self._queue:
            self._queue.remove(turn)
            turn.interrupt_requested = True
            turn.finish(None)
        elif turn is self._active:
            await self.interrupt()

    async def _interrupt_active(self, grace: float) -> list[str]:
        """Interrupt request, then the turn gets ``grace`` seconds in all to end, then the
        process group is killed; the next turn starts a fresh CLI with ``--resume``."""
        turn = self._active
        if turn is None:
            return []
        turn.interrupt_requested = True
        still, killed = await self._process.interrupt(turn, grace)
        if killed:
            # The EOF handler ends the turn; make sure, in case it already ran.
            turn.finish(
                None, CLIProcessError("stopped: the CLI did not answer the interrupt", None, "")
            )
        return still

    async def set_model(self, model: str | None) -> str | None:
        """Switch model for later turns (the running process too). Returns the resolved name.
        ``"default"`` (or None) is the CLI's default model (:func:`~byre_jupyter.protocol.
        model_option`)."""
        model = self.model = model_option(model)
        if not self.running:
            return model
        named: dict[str, Any] = {"model": model} if model else {}  # none: the CLI's default
        response = await self._process.request("set_model", **named)
        resolved = response.get("model")
        return resolved if isinstance(resolved, str) else model

    def set_permission_mode(self, mode: str) -> Coroutine[Any, Any, None]:
        """Switch the permission mode at once (:meth:`switch_permission_mode`: when this is
        called, not when it is awaited or scheduled) and return what waits until the CLI is
        in it (:meth:`sync_permission_mode`): ``await session.set_permission_mode(mode)``."""
        self.switch_permission_mode(mode)
        return self.sync_permission_mode()

    def switch_permission_mode(self, mode: str) -> None:
        """Make ``mode`` the session's permission mode now: from here on every decision reads
        it, a launch uses it, and no turn is sent to the CLI before the CLI is in it too
        (docs/security.md, "How modes switch"). Raises ByreError for a word that is no mode and
        for bypassPermissions where the CLI refuses it (as root without IS_SANDBOX=1)."""
        wanted = PermissionMode.of(mode)
        if wanted is None:
            words = ", ".join(m.value for m in PermissionMode)
            raise ByreError(f"no permission mode {mode!r}: one of {words}")
        env = {**os.environ, **self.options.env}
        if wanted is PermissionMode.BYPASS and (refusal := bypass_refusal(env)):
            raise ByreError(refusal)
        self.permission_mode = wanted
        if self._default_policy:  # the default policy follows the mode
            self.can_use_tool = default_policy(wanted)

    async def sync_permission_mode(self) -> None:
        """Bring the running CLI to the mode in force: a ``set_permission_mode`` request,
        awaited. A CLI that refuses it or does not answer, or that was launched in
        bypassPermissions (it sends no permission prompt in any mode: ``asks_over_stdio``), is
        launched again in the mode in force, continuing the conversation where it is; while a
        turn runs, that waits until the turn has ended (:meth:`_pump` syncs before it sends
        the next). Nothing when no CLI runs: the next start launches in the mode in force."""
        if self._mode_lock is None:
            self._mode_lock = asyncio.Lock()
        async with self._mode_lock:
            mode = self.permission_mode
            if not self.running or self._cli_mode == mode:
                pass
            else:
                try:
                    await self._process.request(
                        "set_permission_mode", mode=str(mode or PermissionMode.DEFAULT)
                    )
                    self._cli_mode = mode
                except ControlError as e:
                    before = self._cli_mode
                    if mode in _POLICY_MODES and before not in (None, _MODE_UNKNOWN):
                        # A looser mode the CLI refuses (a policy turns it off: bypass_disabled)
                        # is not forced by launching it again: the CLI would start in its own
                        # mode without a word while byre answered by the looser one. The session
                        # goes back to the CLI's mode, and the caller hears why.
                        self.switch_permission_mode(str(before))
                        raise
                    log.warning(
                        "byre: the CLI did not switch to %s (%s): launching it again", mode, e
                    )
                    self._cli_mode = _MODE_UNKNOWN
            if self._cli_in_force() or self._active is not None or self._background is not None:
                return
            await self._relaunch()

    def _follow_cli_mode(self, word: object) -> None:
        """The CLI changed its mode by itself (``system/status``: EnterPlanMode enters plan
        mode without asking the host, CLI 2.1.328): the session follows, so the header, later
        launches and every decision agree with it, unless that mode is looser than the one in
        force (byre never loosens on the CLI's word)."""
        mode = PermissionMode.of(word) if isinstance(word, str) else None
        if mode is None or mode == self.permission_mode:
            return
        in_force = PermissionMode.of(self.permission_mode) or PermissionMode.DEFAULT
        if _LOOSENESS.get(mode, 0) > _LOOSENESS.get(in_force, 0):
            return
        self._cli_mode = mode
        self.switch_permission_mode(mode)

    def _cli_in_force(self) -> bool:
        """The running CLI (if any) is in the mode in force and asks us where it should."""
        if not self.running:
            return True
        return self._cli_mode == self.permission_mode and (
            self._cli_asks or self.permission_mode == PermissionMode.BYPASS
        )

    async def _relaunch(self) -> None:
        """End the idle CLI and start it again in the mode in force. One that was sent no turn
        is launched as it was (a fork it has not written cannot be resumed); else it resumes
        the conversation, or (nothing recorded yet) a new one starts, as after a crash."""
        if self._launched is not None and not self._sent_to_cli:
            self._resume, self._fork_at, self._has_history, self.session_id = self._launched
        elif not self._has_history:
            self.session_id = str(uuidlib.uuid4())
        log.info(
            "byre: launching the CLI of %r again in permission mode %s",
            self.name,
            self.permission_mode,
        )
        await self._process.stop()
        await self.start()

    async def set_effort(self, effort: str | None) -> str | None:
        """Switch the effort level for later requests (the running process too, with the
        CLI's ``apply_flag_settings``: measured with 2.1.328, the next request carries it as
        ``output_config.effort``). ``"default"`` (or None) is the model's own; another word
        than :data:`~byre_jupyter.protocol.EFFORT_LEVELS` raises ``ValueError``."""
        effort = effort_option(effort)
        if self.running:
            # null clears the level (--effort's too): the model's default. 2.1.328 ignores
            # "auto" here, though `/effort auto` takes it.
            await self._process.request("apply_flag_settings", settings={"effortLevel": effort})
        self.effort = effort
        return effort

    def _now(self) -> dict[str, Any]:
        """The launch settings that change while the session runs, beyond model and mode."""
        return {"effort": self.effort}

    async def get_context_usage(self) -> Mapping[str, Any]:
        return await self._request_started("get_context_usage")

    async def stop_task(self, task_id: str) -> None:
        """Stop one running task (a long Bash call, a subagent); the turn goes on."""
        if not self.running:
            raise ByreError("the session's CLI is not running: no task to stop")
        await self._process.request("stop_task", task_id=task_id)

    async def mcp_status(self) -> Mapping[str, Any]:
        return await self._request_started("mcp_status")

    async def _request_started(self, subtype: str, **fields: Any) -> Mapping[str, Any]:
        await self.start()
        return await self._process.request(subtype, **fields)

    def rebind(
        self,
        name: str,
        *,
        can_use_tool: PermissionCallback | None = None,
        mcp_server: McpServer | None = None,
    ) -> None:
        """Give a session no turn has used yet another name, ``can_use_tool`` and MCP server:
        a host may start a spare CLI before it knows which name will use it. The server's
        tools must be the ones the CLI was started with (it may have listed them already)."""
        if self._closed or self._pump_task is not None:  # closed, or sent a turn
            raise ByreError(f"session {self.name!r} has been used: it cannot be renamed")
        self.name = name
        self.options = dataclasses.replace(
            self.options, can_use_tool=can_use_tool, mcp_server=mcp_server
        )
        self.can_use_tool = can_use_tool or default_policy(self.permission_mode)
        self._default_policy = can_use_tool is None
        self.mcp_server = mcp_server or McpServer("byre")

    def fork(self, at: str | None = None, *, name: str | None = None, **options: Any) -> Session:
        """A new session that starts from this conversation's history, up to message ``at``
        (an assistant message uuid, e.g. from ``TurnResult.message_uuids``); the original is
        untouched."""
        if self.session_id is None:
            raise ByreError("nothing to fork: the session has no conversation yet")
        # A fresh session (new id) told to resume ours with --fork-session; "" = whole history.
        current = {"model": self.model, "permission_mode": self.permission_mode, **self._now()}
        return Session(
            name or f"{self.name}-fork",
            self.options.forked(self.session_id, at, **{**current, **options}),
        )

    # -- inbound messages -----------------------------------------------------------------

    def _on_message(self, message: Message) -> None:
        if type(message) is StreamEvent and self._active is not None:
            self._active.add(message)  # most lines of a turn: none of the checks below apply
            return
        if not message.known:
            self.unknown_messages += 1
            log.info("byre: unknown message type %r passed through", message.type)
        if isinstance(message, InitMessage):
            self.last_init = message
            if message.session_id:
                self.session_id = message.session_id
        if isinstance(message, AssistantMessage) and message.uuid:
            self._has_history = True  # the CLI has recorded the conversation: a restart resumes
        if isinstance(message, AssistantMessage) and message.scripted:
            self.scripted = True
        self.context.feed(message)
        if isinstance(message, SystemMessage) and message.subtype == "status":
            self._follow_cli_mode(message.raw.get("permissionMode"))
        turn = self._active
        if turn is None and self._background is None and not isinstance(message, InitMessage):
            # Between turns, only a system/init opens a turn the CLI starts by itself (a
            # background task finished). Anything else is an idle message, e.g. set_model's
            # replayed "Set model to ..." user line: kept for inspection, never a turn the
            # queue would wait on forever.
            self.idle_messages.append(message)
            log.debug("byre: %s message between turns kept as idle", message.type)
            return
        if turn is None or (
            isinstance(message, ResultMessage)
            and message.origin_kind == "task-notification"
            and turn is not self._background
        ):
            turn = self._background_turn()
        turn.add(message)
        if isinstance(message, ResultMessage):
            if isinstance(turn.prompt, str):
                # The user typed `/effort LEVEL` as a prompt: the CLI switched, so do we (the
                # header, `%claude sessions` and the next launch or fork agree with it).
                changed, level = effort_set_by(turn.prompt, message.result)
                if changed:
                    self.effort = level
            turn.cost_usd = self._account(message)
            turn.scripted = self.scripted
            turn.finish(message)
            if turn is self._background:
                self._background = None

    def _background_turn(self) -> Turn:
        if self._background is None or self._background.done():
            self._background = Turn(self, "", origin="task-notification")
            self._background.begin()
            if self.options.on_background_turn is not None:
                self.options.on_background_turn(self._background)
        return self._background

    def _account(self, result: ResultMessage) -> float | None:
        """Count a result in; returns the turn's own cost (None if the CLI gave none)."""
        self._has_history = True
        if result.session_id:
            self.session_id = result.session_id
        cost = self._meter.cost(result)
        self.ledger.add(cost, result.tokens, scripted=self.scripted)
        return cost

    def _on_bad_line(self, line: bytes, error: ProtocolError) -> None:
        self.bad_lines.append((line[:200], error))
        log.warning("byre: %s", error)
        if self.options.on_bad_line is not None:
            self.options.on_bad_line(line, error)

    def _on_eof(self) -> ExitHandler:
        """The CLI's stdout ended: returns what ends its turns once the process is gone."""
        # The turns this process was running, taken now: by the time the exit is handled a
        # new process may run the next turn, which this death must not end.
        turns = (self._active, self._background)
        return lambda error: self._after_exit(error, turns)

    def _after_exit(self, error: CLIProcessError, turns: tuple[Turn | None, Turn | None]) -> None:
        for turn in turns:
            if turn is not None and not turn.done():
                turn.finish(None, error)
        if not self._closed and turns[0] is not None:
            self.restarts += 1
            if not self._has_history:
                # Died before the CLI recorded anything: --resume finds no conversation, and
                # the same --session-id is refused as "already in use" (measured with 2.1.328,
                # tests/integration/cli/test_session_restart_cli.py). The next turn starts a new
                # conversation.
                self.session_id = str(uuidlib.uuid4())

    # -- CLI → host requests --------------------------------------------------------------

    async def _handle_mcp(self, request: ControlRequest) -> Mapping[str, Any]:
        server = request.request.get("server_name")
        message = request.request.get("message")
        if server != self.mcp_server.name or not isinstance(message, Mapping):
            raise ControlError("mcp_message", f"unknown MCP server {server!r}")
        return {"mcp_response": await self.mcp_server.handle(message)}

    async def _handle_hook(self, request: ControlRequest) -> Mapping[str, Any]:
        callback = self._hook_ids.get(str(request.request.get("callback_id")))
        if callback is None:
            raise ControlError("hook_callback", "unknown hook callback id")
        hook_input = request.request.get("input")
        hook_input = dict(hook_input) if isinstance(hook_input, Mapping) else {}
        in_force = PermissionMode.of(self.permission_mode) or PermissionMode.DEFAULT
        cli_mode = PermissionMode.of(hook_input.get("permission_mode"))
        if (
            hook_input.get("hook_event_name") == "PreToolUse"
            and cli_mode is not None
            and _LOOSENESS.get(cli_mode, 0) > _LOOSENESS.get(in_force, 0)
        ):
            # The CLI still runs in a looser mode than the user switched to (a turn that was
            # running at the switch): it would let this call through, so it asks instead, and
            # the permission prompt is answered by the mode in force (docs/security.md).
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "ask",
                    "permissionDecisionReason": MODE_LAG_REASON.format(mode=in_force),
                }
            }
        if "permission_mode" in hook_input:
            # The hooks decide by the mode in force, which the CLI's may lag for a moment.
            hook_input["permission_mode"] = str(self.permission_mode or PermissionMode.DEFAULT)
        return await callback(hook_input)

    async def _handle_can_use_tool(self, request: ControlRequest) -> Mapping[str, Any]:
        permission = PermissionRequest.from_request(request.request)
        # The CLI asks within the turn it runs: that turn's own callback answers, if it has one.
        turn = self._active
        decide = turn.can_use_tool if turn is not None and turn.can_use_tool else None
        decision = await (decide or self.can_use_tool)(permission)
        return decision.to_wire(permission)

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self.running else "idle")
        return f"<Session {self.name!r} {state} id={self.session_id}>"
