"""A turn: one prompt, the messages it produced, and its result.

Any number of consumers can iterate a turn (from the start) while it runs or after it ended. The
turn keeps its messages for replay (:attr:`Turn.messages`), but not its stream events: a
``stream_event`` line (tens of thousands in a long answer, each a small dict) is kept only until
every iterator open at the time has passed it, and dropped at once if none is open. So a consumer
that wants the deltas opens ``turn.events()`` before it awaits anything (``send`` returns the
turn before the CLI can answer); one opened later replays the messages and the deltas still
held. Keeping every delta cost ~2 KB of RSS per line and a third of the turn's time in the
cyclic garbage collector (bench/RESULTS.md, benchmark 1).

A turn ends exactly once, with a :class:`TurnResult`; failures (the CLI died, the session
closed) end it too, with ``is_error`` set and the exception in ``error``.

A turn knows its session only as a :class:`TurnHost` (what a turn asks of it: the conversation id,
interrupt, cancel), so this module does not import the session's; the session feeds the turn
through the producer methods :meth:`Turn.begin`, :meth:`Turn.add` and :meth:`Turn.finish`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import weakref
from bisect import bisect_left
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ByreError
from ..protocol import (
    AssistantMessage,
    CompactBoundary,
    Image,
    ImageBlock,
    Message,
    ResultMessage,
    StreamEvent,
    TextBlock,
    TokenUsage,
    UserMessage,
)
from .permissions import PermissionCallback

__all__ = ["Turn", "TurnHost", "TurnResult"]

_turn_ids = itertools.count(1)


@dataclass(frozen=True)
class TurnResult:
    """What a turn produced. ``text`` is the final answer (partial text if interrupted).

    ``cost_usd`` is this turn's own cost and ``tokens`` its own tokens (``.accounting``),
    computed once by the session; everything above shows these and derives nothing."""

    text: str
    session_id: str | None
    is_error: bool
    interrupted: bool = False
    cost_usd: float | None = None
    #: The turn was answered by byre's scripted API (the offline demo): ``cost_usd`` is the
    #: CLI's price for tokens nobody paid for, and every view says "scripted" instead.
    scripted: bool = False
    tokens: TokenUsage = field(default_factory=TokenUsage)
    usage: Mapping[str, Any] = field(default_factory=dict)
    duration_ms: float | None = None
    num_turns: int | None = None
    model: str | None = None
    #: The turn's images (Claude's and its tools'), each with the type its bytes bear out;
    #: an image block holding no PNG, JPEG, GIF or WebP is left out.
    images: tuple[Image, ...] = ()
    message_uuids: tuple[str, ...] = ()
    error: ByreError | None = None
    origin: str | None = None
    raw: ResultMessage | None = None
    #: The CLI compacted the conversation during this turn: from then on it keeps only the
    #: summary of what came before, and cannot resume at an earlier message.
    compacted: bool = False

    @property
    def error_message(self) -> str | None:
        if self.error is not None:
            return str(self.error)
        if self.is_error and not self.interrupted:
            if self.raw is not None:
                return self.raw.failure_text
            return self.text or "error"
        return None


class _Cursor:
    """Where one open iterator of a turn is: the absolute index of its next message."""

    __slots__ = ("__weakref__", "pos", "ref")

    def __init__(self) -> None:
        self.pos = 0
        self.ref: weakref.ref[_Cursor] | None = None


class TurnHost(Protocol):
    """What a turn needs from the session that runs it."""

    @property
    def session_id(self) -> str | None: ...

    async def interrupt(self) -> list[str]: ...

    async def cancel(self, turn: Turn) -> None: ...


class Turn:
    """Handle of one turn. ``async for m in turn.events()`` and ``await turn.result()``."""

    def __init__(
        self,
        session: TurnHost,
        prompt: str | Sequence[Mapping[str, Any]],
        *,
        origin: str | None = None,
        can_use_tool: PermissionCallback | None = None,
        owner: object = None,
    ) -> None:
        self.id = f"turn-{next(_turn_ids)}"
        self.session = session
        self.prompt = prompt
        self.origin = origin  # None for ours; "task-notification" for CLI-started turns
        #: Answers this turn's permission prompts (None: the session's callback does).
        self.can_use_tool = can_use_tool
        #: Who sent the turn, for the host (a notebook cell's controller); None if the CLI did.
        self.owner = owner
        #: Every message of the turn except its stream events, in order (kept for replay).
        self.messages: list[Message] = []
        # Every message from absolute index ``_base`` on, stream events included, for the open
        # iterators (``_cursors``); ``_seq`` holds the absolute index of each of ``messages``.
        self._log: list[Message] = []
        self._base = 0
        self._seq: list[int] = []
        # Weak, so an iterator dropped unstarted (its ``finally`` never runs) holds nothing.
        self._cursors: set[weakref.ref[_Cursor]] = set()
        self.created = time.monotonic()
        self.started: float | None = None
        self.model: str | None = None
        self.interrupt_requested = False
        #: This turn's own cost, set by the session from the CLI's running total
        #: (``.accounting``).
        self.cost_usd: float | None = None
        #: Answered by byre's scripted API: ``cost_usd`` is no money paid (set by the session).
        self.scripted = False
        # One future per iterator waiting for more (see _follow), woken by add and finish.
        self._waiters: list[asyncio.Future[None]] = []
        self._result: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()

    # -- consumer side --------------------------------------------------------------------

    def done(self) -> bool:
        return self._result.done()

    async def result(self) -> TurnResult:
        return await asyncio.shield(self._result)

    def events(self) -> AsyncIterator[Message]:
        """Every message of this turn, from the first, until the turn ends; stream events from
        the moment of this call on (and those still held for other iterators)."""
        cursor = _Cursor()
        cursor.ref = weakref.ref(cursor, self._cursors.discard)
        self._cursors.add(cursor.ref)  # now, not at the first step: nothing may pass unseen
        return self._follow(cursor)

    async def _follow(self, cursor: _Cursor) -> AsyncIterator[Message]:
        try:
            while True:
                base = self._base
                if cursor.pos < base:
                    # Opened late: replay the kept messages the log no longer holds. The log
                    # cannot move on meanwhile, as this cursor is the slowest.
                    seq = self._seq
                    i = bisect_left(seq, cursor.pos)
                    while i < len(seq) and seq[i] < base:
                        cursor.pos = seq[i] + 1
                        yield self.messages[i]
                        i += 1
                    cursor.pos = base
                log = self._log
                i = cursor.pos - base
                while i < len(log):
                    message = log[i]
                    i += 1
                    cursor.pos = base + i
                    yield message
                if log is not self._log:
                    continue  # trimmed by another iterator while this one read: look again
                if self._result.done():
                    return
                self._trim()
                # Its own future, awaited directly: cancelling this iterator cancels only it.
                # (One future shared by every iterator had to be awaited through
                # asyncio.shield, whose relay took a second pass of the event loop to wake the
                # reader: the session read the next chunk first and held twice the stream
                # events, which then outlived the GC's young generation, bench/RESULTS.md 1.)
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.append(waiter)
                await waiter
        finally:
            self._cursors.discard(cursor.ref)
            self._trim()

    def _trim(self) -> None:
        """Drop what every open iterator has passed (into a new list: readers keep theirs)."""
        cursors = [c for c in (ref() for ref in self._cursors) if c is not None]
        low = min((c.pos for c in cursors), default=self._base + len(self._log))
        if low > self._base:
            self._log = self._log[low - self._base :]
            self._base = low

    async def interrupt(self) -> list[str]:
        return await self.session.interrupt()

    async def cancel(self) -> None:
        """Withdraw this turn: never sent if still queued, interrupted if running."""
        await self.session.cancel(self)

    # -- producer side: called by the session only -----------------------------------------

    def begin(self, model: str | None = None) -> None:
        """The turn is being sent to the CLI (or the CLI started it), with this model."""
        self.started = asyncio.get_running_loop().time()
        self.model = model

    def add(self, message: Message) -> None:
        """A message of this turn arrived."""
        if not isinstance(message, StreamEvent):
            self._seq.append(self._base + len(self._log))
            self.messages.append(message)
        if self._cursors:
            self._log.append(message)
        else:  # nobody reads along: no log needed (``messages`` replays for a later reader)
            self._base += len(self._log) + 1
            if self._log:
                self._log = []
        if self._waiters:  # checked here, not in _wake: this runs for every line of the stream
            self._wake()

    def finish(self, result: ResultMessage | None, error: ByreError | None = None) -> None:
        """End the turn with the CLI's result, or without one (never sent, failed); once."""
        if self._result.done():
            return
        self._result.set_result(self._summarise(result, error))
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():  # a cancelled iterator's
                waiter.set_result(None)

    def _summarise(self, result: ResultMessage | None, error: ByreError | None) -> TurnResult:
        texts: list[str] = []
        blocks: list[ImageBlock] = []
        uuids: list[str] = []
        aborted = compacted = False
        for m in self.messages:
            if isinstance(m, CompactBoundary):
                compacted = True
            elif isinstance(m, AssistantMessage):
                if m.uuid:
                    uuids.append(m.uuid)
                aborted = aborted or m.aborted
                if m.parent_tool_use_id is None and not m.is_api_error:
                    texts.extend(b.text for b in m.content if isinstance(b, TextBlock))
                blocks.extend(b for b in m.content if isinstance(b, ImageBlock))
            elif isinstance(m, UserMessage):
                for block in m.tool_results:
                    blocks.extend(block.images)
        interrupted = (result.interrupted if result else False) or (
            self.interrupt_requested and (result is None or result.is_error)
        )
        if result is not None and result.result is not None:
            text = result.result
        else:
            text = "\n\n".join(t for t in texts if t)
        return TurnResult(
            text=text,
            session_id=(result.session_id if result else None) or self.session.session_id,
            is_error=error is not None or (result.is_error if result else True),
            interrupted=interrupted or (aborted and result is None),
            cost_usd=self.cost_usd,
            scripted=self.scripted,
            tokens=result.tokens if result else TokenUsage(),
            usage=result.usage if result else {},
            duration_ms=result.duration_ms if result else None,
            num_turns=result.num_turns if result else None,
            model=self.model,
            images=tuple(b.image for b in blocks if b.image is not None),
            message_uuids=tuple(uuids),
            error=error,
            origin=(result.origin_kind if result else None) or self.origin,
            raw=result,
            compacted=compacted,
        )

    def __repr__(self) -> str:
        state = "done" if self.done() else ("running" if self.started else "queued")
        return f"<Turn {self.id} {state} messages={len(self.messages)}>"
