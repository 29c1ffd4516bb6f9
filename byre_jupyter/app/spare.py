"""Spare CLI processes, so that a re-run and a new conversation start as fast as a warm cell.

The CLI takes the point a conversation continues from at launch (``--resume-session-at``,
``--fork-session``) and has no request that moves a running process elsewhere, and a process
takes about a second to start on a 2-core machine (bench/spare.py). So when a turn ends the
extension keeps (``Claude.speculate``) at most two processes started and idle:

* one forked where re-running the newest ``%%claude`` cell would branch (the state before that
  cell's turn: :meth:`~.conversation.ConversationTree.place`), which the re-run adopts; while
  the user edits an earlier cell (the frontend bridge's ``editing`` event, docs/bridge.md),
  the fork where that cell's re-run branches takes its place, until the next turn's end;
* one fresh, which the next new conversation adopts (``--new``, ``-s NEW``, ``%claude new``;
  re-running a conversation's first cell starts afresh too).

A spare is adopted only by a launch that would start the same process (:class:`Want`: the same
point, the same launch settings, frozen when the spare is offered, and the same environment the
CLI gets, by a digest: a key set or a secret deleted in ``os.environ`` after the spare started
must not be billed or kept by the next conversation); a launch that wants anything else closes
it, and so does a change of the settings or the next turn's end, which keeps the spares that
turn wants instead. A started
CLI sends nothing to the API and writes no session file until it is sent a user message
(measured with CLI 2.1.328; tests/integration/kernel/test_spare_kernel.py checks both), so an
unused spare costs its memory and nothing else, and it is in no list of conversations: the
registry (:class:`~.conversation.Conversations`) sees it only once adopted.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from ..errors import ByreError
from ..session import Session
from ..transport.launch import LaunchSpec, build_env, launch_fields
from .hostspares import Slot

__all__ = ["Spares", "Want", "launch_key"]

log = logging.getLogger(__name__)

#: What a session's settings hold that belongs to its name, not to its CLI: a spare takes the
#: adopting name's own (``Session.rebind``). Hooks are compared by how many each event has.
_PER_NAME = ("can_use_tool", "mcp_server", "transcript", "hooks")


def launch_key(settings: Mapping[str, Any]) -> dict[str, Any]:
    """What of a session's settings (``Session(name, **settings)``) its CLI is launched with,
    and a digest of the environment it would get now: two launches with equal keys start the
    same CLI. Every setting is frozen (a dict or list the user mutates later is not the one
    in the key), whatever settings there are."""
    key = {name: _frozen(value) for name, value in settings.items() if name not in _PER_NAME}
    key["hooks"] = {event: len(fns) for event, fns in settings.get("hooks", {}).items()}
    key["environment"] = environment_digest(settings)
    return key


def environment_digest(settings: Mapping[str, Any]) -> str:
    """A sha256 over the environment a CLI launched with ``settings`` gets now (os.environ
    with the launch options' drops and additions: ``build_env``): which keys and secrets it
    holds, without keeping their values."""
    names = {field.name for field in launch_fields()}
    spec = LaunchSpec(**{name: value for name, value in settings.items() if name in names})
    items = sorted(build_env(spec).items())
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()


def _frozen(value: Any) -> Any:
    """``value`` with its dicts, lists and sets made immutable copies, recursively."""
    if isinstance(value, Mapping):
        return tuple(sorted(((str(k), _frozen(v)) for k, v in value.items()), key=repr))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, Set):
        return frozenset(_frozen(item) for item in value)
    return value


@dataclass(frozen=True, eq=True)
class Want:
    """What a launch needs: the conversation and assistant message it continues from
    (``(None, None)``: a fresh conversation) and its :func:`launch_key`."""

    conversation: str | None
    at: str | None
    key: Mapping[str, Any]

    __hash__ = None  # type: ignore[assignment]  # compared, never hashed


@dataclass(eq=False)
class _Spare:
    want: Want
    session: Session
    starting: asyncio.Task[None]

    def usable(self) -> bool:
        """Not closed, and its CLI starting or running (a killed or exited one is not)."""
        if self.session.closed:
            return False
        if not self.starting.done():
            return True
        return (
            not self.starting.cancelled()
            and self.starting.exception() is None
            and self.session.running
        )


class Spares:
    """The spare sessions of one extension, at most ``limit``, each started on the loop
    ``delay`` seconds after it is offered if ``idle()`` says no turn runs then: Run All ends a
    turn and begins the next at once, and a spare started between them would only be closed
    at the next turn's end, its start-up taking CPU from that turn."""

    def __init__(
        self,
        limit: int = 2,
        *,
        idle: Callable[[], bool] = lambda: True,
        delay: float = 0.5,
        gate: Callable[[], Slot | None] = Slot,
    ) -> None:
        self.limit = limit
        self.idle = idle
        self.delay = delay
        #: A place among the host's idle spares, or None: then no spare starts (.hostspares).
        self.gate = gate
        self._slots: dict[int, Slot] = {}  # id(session) -> the slot its idle spare holds
        self._spares: list[_Spare] = []
        self._closing: set[asyncio.Task[None]] = set()
        #: How many spares were started and adopted (bench/spare.py and the tests read them).
        self.started = 0
        self.adopted = 0

    def kept(self) -> list[tuple[Want, Session]]:
        return [(spare.want, spare.session) for spare in self._spares]

    def sessions(self) -> list[Session]:
        return [spare.session for spare in self._spares]

    async def settled(self) -> None:
        """Wait until each kept spare's start has run (or was skipped)."""
        starting = [spare.starting for spare in self._spares]
        if starting:
            await asyncio.wait(starting)

    def offer(self, wants: Sequence[tuple[Want, Callable[[], Session]]]) -> None:
        """Keep a spare for each of ``wants`` (the first ``limit``) and no other: one already
        kept stays, the others are closed, and each missing one is made (``make()``) and
        started in the background. Needs the running loop."""
        wanted: list[tuple[Want, Callable[[], Session]]] = []
        for want, make in wants:
            if want not in (w for w, _ in wanted):
                wanted.append((want, make))
        wanted = wanted[: self.limit]
        kept = []
        for spare in self._spares:
            if spare.usable() and any(spare.want == want for want, _ in wanted):
                kept.append(spare)
            else:
                self._close(spare)
        self._spares = kept
        for want, make in wanted:
            if not any(spare.want == want for spare in kept):
                session = make()
                starting = asyncio.get_running_loop().create_task(self._start(session, want))
                self._spares.append(_Spare(want, session, starting))

    def take(self, want: Want) -> Session | None:
        """The spare made for ``want``, no longer a spare; None if there is none (or it died:
        the caller starts one as without spares). Spares for other wants stay."""
        for spare in self._spares:
            if spare.want == want:
                self._spares.remove(spare)
                if not spare.usable():
                    self._close(spare)
                    return None
                self._release(spare.session)  # a working session now, not an idle spare
                self.adopted += 1
                return spare.session
        return None

    def clear(self) -> None:
        """Close every spare (settings changed, or speculation turned off)."""
        spares, self._spares = self._spares, []
        for spare in spares:
            self._close(spare)

    async def close(self) -> None:
        self.clear()
        if self._closing:
            await asyncio.wait(list(self._closing))

    async def _start(self, session: Session, want: Want) -> None:
        await asyncio.sleep(self.delay)
        if not self.idle():
            return  # never started: not usable, and the next turn's end offers again
        if environment_digest(session.options.launch_options()) != want.key.get("environment"):
            # os.environ changed since the offer: this CLI would get another environment than
            # its key says. Checked in the same step as the start reads it (no await between).
            return
        slot = self.gate()
        if slot is None:
            return  # the host has its spares already, or too little memory: likewise
        self._slots[id(session)] = slot
        try:
            await session.start()
        except ByreError as e:
            # Unused, so nobody is told: the launch that wanted it starts its own CLI and
            # shows that one's error.
            log.debug("byre: a spare CLI did not start: %s", e)
        self.started += 1

    def _released(self, session: Session, _task: asyncio.Task[None]) -> None:
        self._release(session)

    def _release(self, session: Session) -> None:
        slot = self._slots.pop(id(session), None)
        if slot is not None:
            slot.release()

    def _close(self, spare: _Spare) -> None:
        if spare.session.closed:
            self._release(spare.session)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._release(spare.session)
            return  # no loop: nothing was started either
        task = loop.create_task(self._end(spare))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        # Its slot is free once its process has gone, not before: the host's bound counts
        # every spare CLI alive.
        task.add_done_callback(functools.partial(self._released, spare.session))

    @staticmethod
    async def _end(spare: _Spare) -> None:
        # A start still under way is cancelled first (the session kills a process it was
        # creating): closed meanwhile, the process it was starting would outlive it.
        if not spare.starting.done():
            spare.starting.cancel()
            await asyncio.wait([spare.starting])
        await spare.session.close()
