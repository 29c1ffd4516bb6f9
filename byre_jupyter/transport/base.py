"""What the session needs from whatever runs the CLI: the :class:`Transport` protocol.

Modelled on claude-agent-sdk-python's ``_internal/transport`` (an abstract ``Transport`` with a
subprocess implementation), but a structural :class:`~typing.Protocol`: the real
:class:`~byre_jupyter.transport.process.SubprocessTransport` and the in-process
:class:`~byre_jupyter.transport.memory.MemoryTransport` (fast tests) both satisfy it without
inheriting anything. Lines are bytes, split by the transport; parsing is the channel's job.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from ..errors import LineTooLongError
from ..protocol.framing import LineSplitter
from .launch import LaunchSpec

__all__ = ["Transport", "TransportFactory", "line_batches"]


class Transport(Protocol):
    """One CLI speaking NDJSON: write lines to it, read its lines, stop it without orphans."""

    @property
    def pid(self) -> int | None: ...

    @property
    def returncode(self) -> int | None:
        """The exit status once it ended (negative: killed by that signal), else None."""
        ...

    @property
    def running(self) -> bool: ...

    @property
    def stderr_tail(self) -> str:
        """The last lines the CLI wrote to stderr, for error messages."""
        ...

    async def start(self) -> None: ...

    async def write(self, data: bytes) -> None:
        """Write one or more complete lines; raises CLIProcessError if the CLI is gone."""
        ...

    def batches(self) -> AsyncIterator[list[bytes | LineTooLongError]]:
        """The complete stdout lines, a list per read, until EOF; over-long lines as errors."""
        ...

    async def wait(self) -> int: ...

    async def close(self, grace: float = 2.0) -> int | None:
        """stdin EOF, a bounded wait, then force: never leaves the CLI (or its children)."""
        ...

    async def kill(self) -> None:
        """Stop it now; returns once it is gone."""
        ...


#: Builds the transport for one launch of the CLI (the session calls it at every (re)start).
TransportFactory = Callable[[LaunchSpec], Transport]


#: A chunk smaller than this: the writer is slow (a few lines since the last read), so wait
#: before the next read. A bigger one: it writes fast, so read again at once; settling then let
#: it fill the 64 KiB pipe and wait (at 64 KiB here, a full-speed turn took 20% longer in wall
#: time than in CPU time, bench/RESULTS.md 1).
SMALL_CHUNK = 1 << 14

#: At most this many lines are handed over at once, each batch followed by a pass of the event
#: loop (see line_batches). The cyclic GC collects its young generation every 700 net
#: allocations; a stream event line makes about four while it is dispatched (three dicts and its
#: message), and its readers more before they drop it. A whole 64 KiB read (~200 lines) went over
#: that before the readers could drop its lines, so nearly every read started a collection that
#: moved its lines to an older generation, and every hundredth a full collection of everything
#: the turn keeps (bench/RESULTS.md 1: at 200 lines a batch 720 young and 6 full collections in
#: a 200,000-line turn, at 75 lines 170 and 1, at 50 lines 165 and 1). Lines, not bytes: a big
#: line is a single line, and its reads stay as large as the pipe gives.
MAX_BATCH_LINES = 50


async def line_batches(
    read: Callable[[], Awaitable[bytes | None]],
    max_line_bytes: int,
    settle: float = 0.0,
    waited: Callable[[], bool] | None = None,
) -> AsyncIterator[list[bytes | LineTooLongError]]:
    """The complete lines of each chunk ``read`` returns, as lists of at most
    :data:`MAX_BATCH_LINES`, until it returns an empty chunk or None (EOF): one await per batch,
    not per line. Every transport's ``batches``.

    ``settle`` > 0: after a small chunk (the pipe was drained), wait that long before the next
    read, so it gathers what arrives meanwhile. A CLI streaming a delta every half millisecond
    otherwise costs a read, a dispatch and a consumer wake-up per line, which made the event
    loop's own overhead most of the kernel's CPU while streaming (bench/RESULTS.md, benchmark
    3). At full speed chunks are large and reads go back to back, with a pass of the event
    loop between them.

    ``waited()`` (the reader's own word: its last read found the pipe empty and waited for
    it) makes that pause a quarter of ``settle``: the CLI had been quiet, so this may be the
    first line of an answer, and the next ones should not wait the whole settle to be shown.
    So does a small chunk straight after a big one: a fast writer that wrote less for a
    moment fills the pipe in a millisecond and then waits for us, so the whole settle cost a
    200,000-line turn twice 40 ms of wall time (bench/RESULTS.md 1). In a steady stream
    every read finds what the pause gathered, and the whole settle applies."""
    splitter = LineSplitter(max_line_bytes)
    pause: float | None = None  # before the next read
    fast = False  # the last chunk was big
    while True:
        if pause is not None:
            await asyncio.sleep(pause)
        chunk = await read()
        if not chunk:
            tail = list(splitter.finish())
            if tail:
                yield tail
            return
        # After a big chunk, one pass of the event loop, for the consumers to take this batch
        # before the next read: from a fast CLI the session would otherwise parse thousands of
        # lines ahead of them, which then outlive the cyclic GC's young generation and make
        # its collections slow (bench/RESULTS.md 1: GC 0.59 s -> 0.28 s of a 200,000-line turn).
        small = len(chunk) < SMALL_CHUNK
        pause = settle if settle > 0 and small else 0
        if pause and (fast or (waited is not None and waited())):
            pause = settle / 4
        fast = not small
        lines = splitter.split(chunk)
        for start in range(0, len(lines), MAX_BATCH_LINES):
            if start:
                await asyncio.sleep(0)  # the same pass, within a chunk of many lines
            yield lines[start : start + MAX_BATCH_LINES]
