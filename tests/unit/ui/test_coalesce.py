"""Coalescer: ≤ 1 flush per interval, trailing edge, last state always flushed."""

from __future__ import annotations

import asyncio
import itertools

from support.wire import ManualLoop

from byre_jupyter.ui.coalesce import Coalescer


def test_ten_thousand_marks_in_one_second_give_at_most_21_flushes() -> None:
    loop = ManualLoop()
    flushed: list[set[str]] = []
    co = Coalescer(loop, flushed.append, interval=0.05)
    start = loop.time()
    for i in range(10_000):
        co.mark([f"b{i % 3}"])
        loop.advance(0.0001)  # 10,000 marks over 1.0 s of loop time
    assert abs(loop.time() - start - 1.0) < 1e-6
    loop.advance(0.05)  # let the trailing flush run
    assert 15 <= len(flushed) <= 21, len(flushed)
    assert co.flush_count == len(flushed)
    assert not co.pending
    assert flushed[-1]  # the last state was flushed


def test_flushes_are_spaced_by_the_interval() -> None:
    loop = ManualLoop()
    times: list[float] = []
    co = Coalescer(loop, lambda ids: times.append(loop.time()), interval=0.05)
    for _ in range(500):
        co.mark(["x"])
        loop.advance(0.001)
    loop.advance(1.0)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps and min(gaps) >= 0.05 - 1e-9


def test_first_mark_after_quiet_flushes_without_waiting_and_last_is_trailing() -> None:
    loop = ManualLoop()
    flushed: list[set[str]] = []
    co = Coalescer(loop, flushed.append, interval=0.05)
    co.mark(["a"])
    loop.run_ready()
    assert flushed == [{"a"}]
    co.mark(["b"])
    co.mark(["c"])
    loop.advance(0.049)
    assert flushed == [{"a"}]  # not yet: at most one flush per interval
    loop.advance(0.002)
    assert flushed == [{"a"}, {"b", "c"}]


def test_flush_now_and_close() -> None:
    loop = ManualLoop()
    flushed: list[set[str]] = []
    co = Coalescer(loop, flushed.append, interval=0.05)
    co.mark(["a"])
    co.flush_now()
    assert flushed == [{"a"}]
    co.flush_now()  # nothing pending: no empty flush
    assert flushed == [{"a"}]
    co.mark(["b"])
    co.close()
    assert flushed == [{"a"}, {"b"}]
    co.mark(["c"])
    loop.advance(1.0)
    assert flushed == [{"a"}, {"b"}]  # closed: marks are ignored
    assert not [t for t in loop.timers if not t.cancelled]


def test_works_on_a_real_asyncio_loop() -> None:
    async def main() -> list[set[str]]:
        loop = asyncio.get_running_loop()
        flushed: list[set[str]] = []
        done = asyncio.Event()

        def flush(ids: set[str]) -> None:
            flushed.append(ids)
            if "last" in ids:
                done.set()

        co = Coalescer(loop, flush, interval=0.01)
        for i in range(200):
            co.mark([str(i)])
        co.mark(["last"])
        await asyncio.wait_for(done.wait(), timeout=5)
        return flushed

    flushed = asyncio.run(main())
    assert len(flushed) == 1 and len(flushed[0]) == 201
