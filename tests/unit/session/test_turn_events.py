"""A turn keeps its messages for replay, but its stream events only for the iterators open while
they arrive (byre_jupyter/session/turn.py): what every reader sees, and what the turn holds."""

from __future__ import annotations

import asyncio
import gc
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.memory_cli import FakeCLI, assistant, text_delta
from support.wire import IdleHost as Host

from byre_jupyter import Session
from byre_jupyter.protocol import Message, ResultMessage, StreamEvent, parse_message
from byre_jupyter.session import Turn


def delta(i: int) -> Message:
    return parse_message(text_delta(f"d{i} "))


def final(text: str) -> Message:
    return parse_message(assistant(text))


def result() -> ResultMessage:
    message = parse_message(
        {"type": "result", "subtype": "success", "is_error": False, "result": "done"}
    )
    assert isinstance(message, ResultMessage)
    return message


def names(messages: list[Message]) -> list[str]:
    """``d3`` for a delta, the text for an assistant line, ``result``."""
    out = []
    for m in messages:
        if isinstance(m, StreamEvent):
            out.append(str(m.delta.get("text", "")).strip())
        elif isinstance(m, ResultMessage):
            out.append("result")
        else:
            out.append(str(m.raw["message"]["content"][0]["text"]))
    return out


async def collect(events: AsyncIterator[Message]) -> list[Message]:
    return [m async for m in events]


def stream_events_held(turn: Turn) -> int:
    """Stream events reachable from the turn through its own containers (not a reader's)."""
    seen: set[int] = set()
    stack: list[Any] = [turn]
    held = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, StreamEvent):
            held += 1
        elif obj is turn or type(obj) in (list, dict, tuple, set, deque):
            stack.extend(gc.get_referents(obj))
    return held


async def test_an_iterator_opened_before_the_turn_sees_everything_in_order() -> None:
    turn = Turn(Host(), "hi")
    events = turn.events()  # opened, not yet stepped: nothing may pass it by
    turn.add(delta(0))
    turn.add(final("a"))
    turn.add(delta(1))
    turn.add(delta(2))
    turn.finish(result())
    turn.add(result())  # (the session adds before it finishes; order does not matter here)
    assert names(await collect(events)) == ["d0", "a", "d1", "d2", "result"]


async def test_stream_events_are_not_kept_once_every_open_iterator_passed_them() -> None:
    turn = Turn(Host(), "hi")
    events = turn.events()
    seen: list[Message] = []

    async def read() -> None:
        async for m in events:
            seen.append(m)

    reader = asyncio.ensure_future(read())
    for i in range(50):
        turn.add(delta(i))
        if i % 10 == 9:
            await asyncio.sleep(0)  # let the reader catch up, as the stream's reads do
    turn.add(final("answer"))
    turn.add(res := result())
    turn.finish(res)
    await asyncio.wait_for(reader, 5)
    assert names(seen) == [f"d{i}" for i in range(50)] + ["answer", "result"]
    # The turn keeps its messages for replay, and no delta: a new reader gets the messages.
    assert not any(isinstance(m, StreamEvent) for m in turn.messages)
    assert stream_events_held(turn) == 0
    assert names(await collect(turn.events())) == ["answer", "result"]
    assert (await turn.result()).text == "done"


async def test_with_no_iterator_open_stream_events_are_dropped_at_once() -> None:
    turn = Turn(Host(), "hi")
    unstarted = turn.events()
    del unstarted  # dropped without a step: its finally never runs, yet it holds nothing
    turn.add(final("a"))
    for i in range(20):
        turn.add(delta(i))
    assert stream_events_held(turn) == 0
    late = turn.events()
    turn.add(delta(20))
    turn.add(res := result())
    turn.finish(res)
    assert names(await collect(late)) == ["a", "d20", "result"]


async def test_a_slow_iterator_keeps_what_it_has_not_read_and_a_fast_one_does_not_lose_it() -> None:
    turn = Turn(Host(), "hi")
    fast, slow = turn.events(), turn.events()
    fast_seen: list[Message] = []
    for i in range(30):
        turn.add(delta(i))
        fast_seen.append(await fast.__anext__())  # the fast reader is always caught up
    slow_first = [await slow.__anext__() for _ in range(5)]
    turn.add(final("x"))
    late = turn.events()  # opened mid-turn: the kept messages, then whatever is still held
    turn.add(delta(30))
    turn.add(res := result())
    turn.finish(res)
    fast_seen += await collect(fast)
    everything = [f"d{i}" for i in range(31)]
    everything.insert(30, "x")
    assert names(fast_seen) == [*everything, "result"]
    assert names(slow_first + await collect(slow)) == [*everything, "result"]
    # The slow reader held d5.. for everyone (maybe a little more): the late one sees from there
    # on, in order, with "x" replayed in its place.
    late_seen = names(await collect(late))
    start = len(everything) + 1 - len(late_seen)
    assert 0 <= start <= 5 and late_seen == [*everything[start:], "result"]
    assert stream_events_held(turn) == 0


async def test_breaking_out_of_an_iterator_releases_what_it_held() -> None:
    turn = Turn(Host(), "hi")
    events = turn.events()
    for i in range(10):
        turn.add(delta(i))
    async for _ in events:
        break
    await events.aclose()  # type: ignore[attr-defined]
    assert stream_events_held(turn) == 0


async def test_a_waiting_iterator_takes_a_new_message_in_one_pass_of_the_event_loop() -> None:
    # The session reads its next chunk one pass of the loop after a batch: a reader woken any
    # later lets the stream events of two chunks pile up (bench/RESULTS.md 1: they then outlive
    # the GC's young generation). One sleep(0) is the pass itself here, not a wait for timing.
    turn = Turn(Host(), "hi")
    seen: list[Message] = []

    async def read() -> None:
        async for m in turn.events():
            seen.append(m)

    reader = asyncio.ensure_future(read())
    await asyncio.sleep(0)  # the reader starts and waits
    for i in range(3):
        turn.add(delta(i))
        await asyncio.sleep(0)
        assert names(seen) == [f"d{j}" for j in range(i + 1)]
    turn.add(res := result())
    turn.finish(res)
    await asyncio.wait_for(reader, 5)


async def test_cancelling_one_waiting_iterator_leaves_the_others_reading() -> None:
    turn = Turn(Host(), "hi")
    seen: list[Message] = []

    async def read() -> None:
        async for m in turn.events():
            seen.append(m)

    cancelled, reader = asyncio.ensure_future(read()), asyncio.ensure_future(read())
    await asyncio.sleep(0)  # both wait
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    turn.add(delta(0))
    turn.add(res := result())
    turn.finish(res)
    await asyncio.wait_for(reader, 5)
    assert names(seen) == ["d0", "result"]


@pytest.fixture
async def session() -> AsyncIterator[tuple[Session, FakeCLI]]:
    fake = FakeCLI([[*(text_delta(f"w{i} ") for i in range(200)), assistant("whole")]] * 2)
    s = Session("mem", transport_factory=fake.factory)
    yield s, fake
    await asyncio.wait_for(s.close(), 5)


async def test_a_session_turn_read_along_keeps_no_stream_event(
    session: tuple[Session, FakeCLI],
) -> None:
    s, _ = session
    turn = await s.send("hi")
    deltas = [m async for m in turn.events() if isinstance(m, StreamEvent)]
    assert len(deltas) == 200
    assert "".join(str(m.delta["text"]) for m in deltas) == "".join(f"w{i} " for i in range(200))
    assert not any(isinstance(m, StreamEvent) for m in turn.messages)
    assert stream_events_held(turn) == 0
    # Without a reader (query), nothing is held either, and the result is the same.
    result = await asyncio.wait_for(s.query("again"), 5)
    assert result.text == "whole"
