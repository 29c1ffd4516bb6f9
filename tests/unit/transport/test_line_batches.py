"""transport.base.line_batches: lines per chunk, and a short settle after a drained pipe so a
slow writer's lines are read a few at a time, not one wake-up each (kernel CPU)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from byre_jupyter.transport import base
from byre_jupyter.transport.base import SMALL_CHUNK, line_batches


def reader(chunks: list[bytes], log: list[str]) -> Callable[[], Awaitable[bytes]]:
    async def read() -> bytes:
        log.append("read")
        return chunks.pop(0) if chunks else b""

    return read


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    events: list[str] = []

    async def sleep(delay: float) -> None:
        events.append(f"sleep {delay}")

    monkeypatch.setattr(base.asyncio, "sleep", sleep)
    return events


async def collect(read: Callable[[], Awaitable[bytes]], settle: float) -> list[list[object]]:
    return [batch async for batch in line_batches(read, 1 << 20, settle)]


async def test_after_a_small_chunk_the_next_read_waits_to_gather_more(log: list[str]) -> None:
    big = b"x" * SMALL_CHUNK + b"\n"
    chunks = [b'{"a":1}\n{"b"', b":2}\n", big, big, b""]
    batches = await collect(reader(chunks, log), 0.005)
    assert batches == [[b'{"a":1}'], [b'{"b":2}'], [big[:-1]], [big[:-1]]]
    # A small chunk (the pipe was drained) is followed by a settle; a full one by a pass of
    # the event loop, for the consumers to take its lines.
    assert log == [
        "read", "sleep 0.005", "read", "sleep 0.005", "read", "sleep 0", "read", "sleep 0", "read"
    ]  # fmt: skip


async def test_without_settle_reads_follow_one_pass_of_the_event_loop(log: list[str]) -> None:
    batches = await collect(reader([b"1\n", b"2\n", b""], log), 0.0)
    assert batches == [[b"1"], [b"2"]]
    assert log == ["read", "sleep 0", "read", "sleep 0", "read"]


async def test_a_chunk_of_many_lines_is_handed_over_a_few_dozen_at_a_time(log: list[str]) -> None:
    # So the consumers drop each batch's lines before the GC's young generation fills (see
    # MAX_BATCH_LINES): a pass of the event loop between batches, as between reads.
    lines = [b"%d" % i for i in range(120)]
    batches = await collect(reader([b"\n".join(lines) + b"\n", b""], log), 0.0)
    assert [line for batch in batches for line in batch] == lines
    assert [len(batch) for batch in batches] == [50, 50, 20]
    assert log == ["read", "sleep 0", "sleep 0", "sleep 0", "read"]


async def test_after_a_read_that_waited_for_a_quiet_pipe_the_pause_is_shorter(
    log: list[str],
) -> None:
    # The first lines after a quiet spell (an answer starting) are read again soon; once reads
    # find what the pause gathered (a steady stream), the whole settle applies.
    chunks = [b"1\n", b"2\n", b"3\n", b""]
    waits = [True, False, True, False]
    read = reader(chunks, log)
    said: list[bool] = []

    def waited() -> bool:
        said.append(waits[len(said)])
        return said[-1]

    batches = [batch async for batch in line_batches(read, 1 << 20, 0.04, waited)]
    assert batches == [[b"1"], [b"2"], [b"3"]]
    assert log == ["read", "sleep 0.01", "read", "sleep 0.04", "read", "sleep 0.01", "read"]


async def test_a_small_chunk_after_a_big_one_pauses_a_quarter_of_the_settle(
    log: list[str],
) -> None:
    # A fast writer that wrote less for a moment fills the pipe in a millisecond and then
    # waits: the whole settle stalled it. Two small chunks in a row are a slow writer.
    big = b"x" * SMALL_CHUNK + b"\n"
    batches = await collect(reader([big, b"1\n", b"2\n", b"3\n", b""], log), 0.04)
    assert batches == [[big[:-1]], [b"1"], [b"2"], [b"3"]]
    assert log == ["read", "sleep 0", "read", "sleep 0.01", "read", "sleep 0.04", "read",
                   "sleep 0.04", "read"]  # fmt: skip
