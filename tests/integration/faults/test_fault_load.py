"""Load: 200 turns in one Session, 5 Sessions at once, 30 %%claude cells in a row. Nothing is
lost (every turn's streamed deltas add up to its result text, one result per turn) and file
descriptors and memory come back near where they started. Figures go to
tests/artifacts/fault_figures.json; only generous bounds are asserted."""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import AsyncIterator, Callable

import psutil
import pytest
from support.faults import record_figure
from support.kernel import KernelDriver

from byre_jupyter import Session
from byre_jupyter.protocol import Message, ResultMessage, StreamEvent
from byre_jupyter.scripted import Reply, ScriptedAPI, ScriptedRequest, Text
from byre_jupyter.session import Turn

pytestmark = pytest.mark.cli

TIMEOUT = 120.0
FD_SLACK = 24  # descriptors
RSS_SLACK = 200 * 1024 * 1024  # bytes


def reply_for(req: ScriptedRequest) -> Reply:
    """Echo the prompt's tag, so a turn given another turn's answer is caught."""
    tag = req.last_user_text.strip().split()[-1]
    return Reply(Text(f"ack {tag} with a few words", chunk=4))


async def streamed_text(events: AsyncIterator[Message]) -> str:
    return "".join(
        [
            m.delta.get("text", "")
            async for m in events
            if isinstance(m, StreamEvent)
            and m.parent_tool_use_id is None
            and m.event_type == "content_block_delta"
            and m.delta.get("type") == "text_delta"
        ]
    )


async def check_turn(turn: Turn, tag: str, events: AsyncIterator[Message] | None = None) -> None:
    """``events``: the turn's iterator, opened when it was sent (a turn keeps its stream events
    only for the iterators open while they arrive); by default one opened now."""
    events = turn.events() if events is None else events
    result = await asyncio.wait_for(turn.result(), TIMEOUT)
    expected = f"ack {tag} with a few words"
    assert not result.is_error, (tag, result)
    assert result.text == expected, (tag, result.text)
    streamed = await streamed_text(events)
    assert streamed == result.text, (tag, streamed)
    assert len([m for m in turn.messages if isinstance(m, ResultMessage)]) == 1, tag


def mib(n: int) -> float:
    return round(n / (1024 * 1024), 1)


async def test_200_turns_in_one_session(
    api: ScriptedAPI, make_session: Callable[..., Session]
) -> None:
    api.default = reply_for
    me = psutil.Process()
    gc.collect()
    fds0, rss0 = me.num_fds(), me.memory_info().rss
    session = make_session()
    t0 = time.monotonic()
    # 100 turns one after the other, then 100 queued at once behind each other.
    for i in range(100):
        await check_turn(await session.send(f"load turn T{i:03d}"), f"T{i:03d}")
    t_seq = time.monotonic() - t0
    turns = [await session.send(f"load turn T{i:03d}") for i in range(100, 200)]
    followed = [(turn, turn.events()) for turn in turns]
    for i, (turn, events) in zip(range(100, 200), followed, strict=True):
        await check_turn(turn, f"T{i:03d}", events)
    elapsed = time.monotonic() - t0
    assert session.turns_completed == 200 and session.restarts == 0
    assert len([r for r in api.requests if r.path == "/v1/messages" and r.stream]) == 200
    await session.close()
    del turns
    gc.collect()
    fds1, rss1 = me.num_fds(), me.memory_info().rss
    record_figure(
        "load_200_turns_one_session",
        {"total_s": round(elapsed, 2), "first_100_sequential_s": round(t_seq, 2),
         "per_turn_s": round(elapsed / 200, 3), "fds_before": fds0, "fds_after": fds1,
         "rss_mib_before": mib(rss0), "rss_mib_after": mib(rss1)},
    )  # fmt: skip
    assert fds1 <= fds0 + FD_SLACK
    assert rss1 <= rss0 + RSS_SLACK


async def test_5_sessions_at_once(api: ScriptedAPI, make_session: Callable[..., Session]) -> None:
    api.default = reply_for
    me = psutil.Process()
    gc.collect()
    fds0, rss0 = me.num_fds(), me.memory_info().rss
    sessions = [make_session(name=f"s{k}") for k in range(5)]

    async def drive(k: int, session: Session) -> None:
        for i in range(20):
            await check_turn(await session.send(f"load turn S{k}-{i:02d}"), f"S{k}-{i:02d}")

    t0 = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(drive(k, s) for k, s in enumerate(sessions))), 600)
    elapsed = time.monotonic() - t0
    assert [s.turns_completed for s in sessions] == [20] * 5
    assert len({s.session_id for s in sessions}) == 5
    for s in sessions:
        await s.close()
    gc.collect()
    fds1, rss1 = me.num_fds(), me.memory_info().rss
    record_figure(
        "load_5_sessions_x_20_turns",
        {"total_s": round(elapsed, 2), "fds_before": fds0, "fds_after": fds1,
         "rss_mib_before": mib(rss0), "rss_mib_after": mib(rss1)},
    )  # fmt: skip
    assert fds1 <= fds0 + FD_SLACK
    assert rss1 <= rss0 + RSS_SLACK


@pytest.mark.kernel
def test_30_cells_in_a_row(kernels: Callable[..., KernelDriver], api: ScriptedAPI) -> None:
    api.default = reply_for
    kernel = kernels()
    warm = kernel.run("%%claude -o warm\nwarm up W000")
    assert "ack W000" in json.dumps(warm.outputs)
    kproc = psutil.Process(kernel.kernel_pid())
    fds0, rss0 = kproc.num_fds(), kproc.memory_info().rss
    t0 = time.monotonic()
    for i in range(30):
        tag = f"C{i:03d}"
        run = kernel.run(f"%%claude -o r_{i}\ncell {tag}")
        assert run.reply["status"] == "ok", run.texts()
        (bundle,) = [o for o in run.outputs if "text/markdown" in o.get("data", {})]
        expected = f"ack {tag} with a few words"
        assert f"\n\n{expected}\n\n" in bundle["data"]["text/markdown"], bundle["data"]
        assert f"<p>{expected}</p>" in bundle["data"]["text/html"]
        assert bundle["metadata"]["byre"]["is_error"] is False
    elapsed = time.monotonic() - t0
    check = kernel.run(
        "print(all(globals()[f'r_{i}'].text == f'ack C{i:03d} with a few words'"
        " for i in range(30)))"
    )
    assert check.texts().strip() == "True"
    fds1, rss1 = kproc.num_fds(), kproc.memory_info().rss
    record_figure(
        "load_30_kernel_cells",
        {"total_s": round(elapsed, 2), "per_cell_s": round(elapsed / 30, 3),
         "kernel_fds_before": fds0, "kernel_fds_after": fds1,
         "kernel_rss_mib_before": mib(rss0), "kernel_rss_mib_after": mib(rss1)},
    )  # fmt: skip
    assert fds1 <= fds0 + FD_SLACK
    assert rss1 <= rss0 + RSS_SLACK
