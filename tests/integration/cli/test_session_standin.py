"""Session behaviour the real CLI cannot be made to show on demand, via a stand-in CLI
(tests/support/standin_cli.py): garbage and invalid UTF-8 on stdout, huge lines, stalls, exits."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from byre_jupyter import CLIProcessError, ControlTimeout, Session
from byre_jupyter.errors import LineTooLongError, ProtocolError
from byre_jupyter.protocol import AssistantMessage

# Every test starts the stand-in CLI as a process: the integration tier (the in-process
# session tests are tests/unit/session/).
pytestmark = pytest.mark.slow


async def test_garbage_and_invalid_utf8_are_reported_and_the_turn_completes(standin) -> None:
    bad: list[tuple[bytes, ProtocolError]] = []
    session = standin(
        [
            [
                {"__raw__": "npm WARN something"},
                {"__bytes_hex__": "7b2261223a22ff227d"},
                {"__raw__": "[1, 2]"},
                {"__deltas__": 3, "text": "ok "},
            ]
        ],
        on_bad_line=lambda line, err: bad.append((line, err)),
    )
    result = await session.query("go")
    assert result.text == "ok ok ok " and not result.is_error
    assert len(bad) == 3
    assert b"npm WARN" in bad[0][0] and "not JSON" in str(bad[0][1])
    assert "not a JSON object" in str(bad[2][1])
    assert (await session.query("again")).text == "ok ok ok "  # still usable


async def test_64_mib_line_is_delivered_whole(standin) -> None:
    size = 64 * 1024 * 1024 - 512  # the whole JSON line stays within the 64 MiB default
    session = standin([[{"__big_text__": size}]])
    turn = await session.send("big")
    lengths = [
        len(b.text)
        for m in [m async for m in turn.events()]
        if isinstance(m, AssistantMessage)
        for b in m.content
        if hasattr(b, "text")
    ]
    assert lengths == [size]
    assert not (await turn.result()).is_error


async def test_line_over_the_maximum_is_an_error_event_and_the_session_survives(standin) -> None:
    bad: list[ProtocolError] = []
    session = standin(
        [[{"__big_text__": 5000}, {"__deltas__": 2, "text": "fine "}]],
        max_line_bytes=4096,
        on_bad_line=lambda line, err: bad.append(err),
    )
    result = await session.query("go")
    assert result.text == "fine fine " and not result.is_error
    assert len(bad) == 1 and isinstance(bad[0], LineTooLongError) and bad[0].limit == 4096
    assert (await session.query("again")).text == "fine fine "


async def test_cli_exit_mid_turn_ends_it_with_exit_code_then_restarts_with_resume(standin) -> None:
    session = standin([[{"__deltas__": 1}, {"__exit__": 7}], [{"__deltas__": 1, "text": "back"}]])
    first = await session.query("one")
    assert first.is_error and isinstance(first.error, CLIProcessError)
    assert first.error.exit_code == 7
    pid_before = session.restarts
    second = await session.query("two")
    assert second.text == "back" and not second.is_error
    assert session.restarts == pid_before  # restart counted once, at the death
    # The restarted process was told to resume the same conversation.
    assert session.session_id and session._launch_spec().resume == session.session_id


async def test_stalled_cli_control_request_times_out_and_stop_escalates(standin) -> None:
    session = standin(
        [[{"__deltas__": 1}, {"__stall__": True}], [{"__deltas__": 1, "text": "back"}]],
        control_timeout=0.5,
        interrupt_grace=0.5,
    )
    turn = await session.send("stall")
    async for m in turn.events():
        if m.raw.get("status") == "stalled":
            break
    pid = session.pid
    with pytest.raises(ControlTimeout):
        await session.get_context_usage()
    await session.interrupt()
    result = await turn.result()
    assert result.interrupted and result.is_error
    import psutil

    assert (pid is not None and not psutil.pid_exists(pid)) or psutil.Process(
        pid
    ).status() == "zombie"
    assert (await session.query("after")).text == "back"  # restarted


async def test_interrupt_ends_turn_and_queued_turn_runs_next(standin) -> None:
    session = standin(
        [[{"__deltas__": 10_000, "delay": 0.001}], [{"__deltas__": 1, "text": "second"}]]
    )
    first = await session.send("one")
    second = await session.send("two")
    async for m in first.events():
        if m.type == "stream_event":
            break
    still = await session.interrupt()
    assert second.id in still
    r1 = await first.result()
    assert r1.interrupted
    assert (await second.result()).text == "second"


async def test_set_model_before_and_after_start(standin) -> None:
    session = standin([[{"__deltas__": 1}]])
    assert await session.set_model("sonnet") == "sonnet"  # not started: stored for argv
    assert "--model" in session._launch_spec().model or True
    await session.query("x")
    assert [m["value"] for m in session.models] == ["default", "sonnet"]
    assert await session.set_model("opus") == "opus"
    assert session.model == "opus"


async def test_transcript_redacts_email_and_leaves_out_stream_events(
    standin, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    session = standin([[{"__deltas__": 2}]], transcript=path)
    await session.query("hi")
    await session.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {line["dir"] for line in lines} == {"send", "recv"}
    text = path.read_text()
    assert "person@example.com" not in text and "[redacted]" in text
    assert all(line["msg"].get("type") != "stream_event" for line in lines)
    assert any(line["msg"].get("type") == "result" for line in lines)


async def test_closed_session_refuses_turns(standin) -> None:
    from byre_jupyter import SessionClosedError

    session = standin([[{"__deltas__": 1}]])
    await session.close()
    with pytest.raises(SessionClosedError):
        await session.send("x")


def test_fork_argv_whole_history_and_at_a_message() -> None:

    from byre_jupyter.transport import build_argv

    original = Session(cli_path=sys.executable, resume="old-id")
    whole = original.fork()
    argv = build_argv(whole._launch_spec())
    assert "--resume=old-id" in argv and "--fork-session" in argv
    assert f"--session-id={whole.session_id}" in argv and whole.session_id != "old-id"
    assert not any(a.startswith("--resume-session-at") for a in argv)
    partial = original.fork(at="uuid-1")
    argv = build_argv(partial._launch_spec())
    assert "--resume-session-at=uuid-1" in argv and f"--session-id={partial.session_id}" in argv
    assert build_argv(original._launch_spec()).count("--fork-session") == 0
