"""Coalesce widget pushes to at most one flush per ``interval`` (≈20 Hz by default).

Unthrottled pushes above jupyter_server's IOPub limit (1000 msgs/s over 3 s) get dropped,
*including the last one*, and whole-text resends grow O(n²) (docs/kernel.md, section 5). So
callers mark block ids dirty as often as they like; the coalescer calls ``flush(ids)`` on the
event loop with ``loop.call_later``: right away after a quiet spell, otherwise on the trailing
edge ``interval`` after the previous flush. The last state is always flushed.

Works with any asyncio loop, or anything with ``time()`` and ``call_later()`` (tests step a
manual loop with a fake clock). Not thread-safe: call it from the loop's thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

__all__ = ["Coalescer", "LoopLike", "TimerLike"]


class TimerLike(Protocol):
    def cancel(self) -> None: ...


class LoopLike(Protocol):
    """The part of :class:`asyncio.AbstractEventLoop` the UI layer uses."""

    def time(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerLike: ...

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any) -> Any: ...


class Coalescer:
    """Collect dirty ids; flush them at most once per ``interval`` seconds."""

    def __init__(
        self,
        loop: LoopLike,
        flush: Callable[[set[str]], None],
        interval: float = 0.05,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._loop = loop
        self._flush = flush
        self.interval = interval
        self._clock = clock or loop.time
        self._dirty: set[str] = set()
        self._timer: TimerLike | None = None
        self._last_flush: float | None = None
        self._closed = False
        #: Number of flushes done (for tests and benchmarks).
        self.flush_count = 0

    @property
    def pending(self) -> bool:
        """True while some marked id has not been flushed yet."""
        return bool(self._dirty)

    def mark(self, ids: Iterable[str]) -> None:
        """Mark ids dirty and make sure a flush is scheduled."""
        if self._closed:
            return
        self._dirty.update(ids)
        if self._dirty and self._timer is None:
            delay = 0.0
            if self._last_flush is not None:
                delay = max(0.0, self._last_flush + self.interval - self._clock())
            self._timer = self._loop.call_later(delay, self._on_timer)

    def flush_now(self) -> None:
        """Flush pending ids immediately (e.g. when the turn ends)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._dirty:
            self._do_flush()

    def close(self) -> None:
        """Flush what is pending, then ignore further marks."""
        self.flush_now()
        self._closed = True

    def _on_timer(self) -> None:
        self._timer = None
        if self._dirty and not self._closed:
            self._do_flush()

    def _do_flush(self) -> None:
        ids, self._dirty = self._dirty, set()
        self._last_flush = self._clock()
        self.flush_count += 1
        self._flush(ids)
