"""Faults of the Messages API (the scripted server) seen through a real Session and a kernel
cell: retried 500/529, 401, a timeout, a stream cut mid-message, malformed SSE. Each ends in a
clear result (never a hang) and the session stays usable."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.faults import record_figure
from support.kernel import KernelDriver

from byre_jupyter import Session
from byre_jupyter.protocol import ApiRetryMessage, ResultMessage, StreamEvent
from byre_jupyter.scripted import Cut, Error, Malformed, Reply, ScriptedAPI, Slow, Text

pytestmark = pytest.mark.cli

TIMEOUT = 90.0
MakeSession = Callable[..., Session]


def is_text_delta(m: Any) -> bool:
    return (
        isinstance(m, StreamEvent)
        and m.event_type == "content_block_delta"
        and m.delta.get("type") == "text_delta"
    )


async def still_usable(session: Session, api: ScriptedAPI) -> None:
    api.on("ARE_YOU_OK", Reply(Text("still here")))
    after = await asyncio.wait_for(session.query("ARE_YOU_OK?"), TIMEOUT)
    assert not after.is_error and after.text == "still here", after


def hits(api: ScriptedAPI, token: str) -> int:
    return len([r for r in api.requests if r.path == "/v1/messages" and token in r.last_user_text])


@pytest.mark.parametrize("status", [500, 529])
async def test_server_error_is_retried_then_ends_with_a_clear_error(
    api: ScriptedAPI, make_session: MakeSession, status: int
) -> None:
    api.on("FAIL_TOKEN", Error(status, f"scripted {status}"))
    session = make_session(env={"CLAUDE_CODE_MAX_RETRIES": "2"})
    t0 = time.monotonic()
    turn = await session.send("FAIL_TOKEN please")
    result = await asyncio.wait_for(turn.result(), TIMEOUT)
    record_figure(f"api_{status}_two_retries_s", round(time.monotonic() - t0, 2))
    retries = [m for m in turn.messages if isinstance(m, ApiRetryMessage)]
    assert [r.attempt for r in retries] == [1, 2], turn.messages
    assert {r.error_status for r in retries} == {status}
    assert all(r.max_retries == 2 for r in retries)
    assert hits(api, "FAIL_TOKEN") == 3
    assert result.is_error and not result.interrupted
    assert str(status) in result.text and "API Error" in result.text, result.text
    assert result.error_message and str(status) in result.error_message
    assert len([m for m in turn.messages if isinstance(m, ResultMessage)]) == 1
    await still_usable(session, api)


async def test_unauthorized_ends_with_a_clear_error(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    api.on("AUTH_TOKEN", Error(401, "invalid x-api-key"))
    session = make_session(env={"CLAUDE_CODE_MAX_RETRIES": "1"})
    result = await asyncio.wait_for(session.query("AUTH_TOKEN please"), TIMEOUT)
    assert result.is_error and not result.interrupted
    # The CLI words it "Invalid API key · Fix external API key" (no status in the text).
    assert "401" in result.text or "API key" in result.text, result.text
    assert result.raw is not None and result.raw.raw.get("api_error_status") == 401
    await still_usable(session, api)


async def test_slow_response_times_out_clearly(api: ScriptedAPI, make_session: MakeSession) -> None:
    api.on("SLOW_TOKEN", Slow(8, Reply(Text("too late"))))
    session = make_session(env={"API_TIMEOUT_MS": "2000", "CLAUDE_CODE_MAX_RETRIES": "0"})
    t0 = time.monotonic()
    result = await asyncio.wait_for(session.query("SLOW_TOKEN please"), TIMEOUT)
    record_figure("api_timeout_2000ms_result_s", round(time.monotonic() - t0, 2))
    assert result.is_error and "too late" not in result.text
    assert "timed out" in result.text.lower() or "timeout" in result.text.lower(), result.text
    await still_usable(session, api)


async def test_stream_cut_mid_message_ends_the_turn(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    streamed = "abcdefghij" * 5
    api.on(
        "CUT_TOKEN", [Cut(Reply(Text(streamed, chunk=5)), after_deltas=3, hold=True), "fallback ok"]
    )
    session = make_session()
    turn = await session.send("CUT_TOKEN please")

    async def three_deltas() -> None:
        seen = 0
        async for m in turn.events():
            seen += is_text_delta(m)
            if seen == 3:
                return
        raise AssertionError(f"turn ended before 3 deltas: {await turn.result()!r}")

    await asyncio.wait_for(three_deltas(), TIMEOUT)
    api.release()
    result = await asyncio.wait_for(turn.result(), TIMEOUT)
    # Either the CLI's non-streaming fallback answered, or the turn failed clearly.
    assert (not result.is_error and result.text == "fallback ok") or (
        result.is_error and result.error_message
    ), result
    assert len([m for m in turn.messages if isinstance(m, ResultMessage)]) == 1
    await still_usable(session, api)


@pytest.mark.parametrize("fallback", [True, False], ids=["fallback-ok", "always-malformed"])
async def test_malformed_sse_ends_the_turn(
    api: ScriptedAPI, make_session: MakeSession, fallback: bool
) -> None:
    api.on("BAD_SSE", [Malformed(), "fallback ok"] if fallback else Malformed())
    session = make_session()
    result = await asyncio.wait_for(session.query("BAD_SSE please"), TIMEOUT)
    assert (not result.is_error and result.text == "fallback ok") or (
        result.is_error and result.error_message
    ), result
    if not fallback:
        assert result.is_error
    await still_usable(session, api)


@pytest.mark.kernel
def test_overloaded_in_a_kernel_cell_shows_retries_and_the_error(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI
) -> None:
    api.on("OVERLOAD_TOKEN", Error(529, "Overloaded"))
    api.on("RECOVER_TOKEN", Reply(Text("recovered fine")))
    kernel = kernels()
    kernel.run("%config Claude.env = {'CLAUDE_CODE_MAX_RETRIES': '2'}")
    run = kernel.run("%%claude -o r\nOVERLOAD_TOKEN please")
    assert run.reply["status"] == "error", run.texts()  # a failed turn fails its cell
    assert run.reply["ename"] == "TurnFailed"
    final = json.dumps(run.outputs)
    assert "529" in final and ("retr" in final.lower() or "Overloaded" in final), final[:2000]
    check = kernel.run("print(r.is_error, '529' in r.text)")
    assert check.texts().strip() == "True True"
    assert hits(api, "OVERLOAD_TOKEN") == 3
    nxt = kernel.run("%%claude\nRECOVER_TOKEN please")
    assert "recovered fine" in json.dumps(nxt.outputs)
