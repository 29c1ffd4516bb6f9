"""Session-level guarantees behind "every turn owns its cell": a queued turn can be withdrawn
without being sent, and every stop ends in a usable session within a deadline, even when the
caller gives up early or the CLI never answers ``initialize``. Via the stand-in CLI
(tests/support/standin_cli.py), which can stall on demand."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from support.processes import alive
from support.rig import STANDIN
from support.waiting import apoll

# Every test starts the stand-in CLI as a process: the integration tier (the in-process
# session tests are tests/unit/session/).
pytestmark = pytest.mark.slow


def first_start_differs(tmp_path: Path, first: str, then: str) -> tuple[str, Path]:
    """A CLI whose first process writes its pid to a file and runs the shell command ``first``;
    later processes are ``then``. Returns the executable and the pid file."""
    pid_file = tmp_path / "first.pid"
    wrapper = tmp_path / "claude-first-differs"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ ! -e "{pid_file}" ]; then echo $$ > "{pid_file}.tmp" && '
        f'mv "{pid_file}.tmp" "{pid_file}"; {first}; fi\n'
        f'exec {then} "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper), pid_file


def mute_first_start(tmp_path: Path, then: str) -> tuple[str, Path]:
    """A CLI whose first process reads stdin but never answers (``initialize`` included)."""
    mute = tmp_path / "mute.py"
    mute.write_text("import sys, time\nfor _ in sys.stdin.buffer:\n    pass\ntime.sleep(3600)\n")
    return first_start_differs(tmp_path, f"exec {sys.executable} {mute}", then)


def held_first_start(tmp_path: Path, then: str) -> tuple[str, Path, Path]:
    """A CLI whose first process waits, before it becomes ``then``, until the test writes a
    line to the returned FIFO: until then the session's start is under way, ``initialize``
    unanswered. Returns the executable, the pid file and the FIFO."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    wrapper, pid_file = first_start_differs(tmp_path, f'read _ < "{gate}"', then)
    return wrapper, pid_file, gate


def sent_prompts(transcript: Path) -> list[str]:
    """Every user message the session wrote to the CLI, from its transcript."""
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    return [
        json.dumps(line["msg"])
        for line in lines
        if line["dir"] == "send" and line["msg"].get("type") == "user"
    ]


async def first_event(turn: Any) -> None:
    async for m in turn.events():
        if m.type == "stream_event":
            return


async def test_cancel_a_queued_turn_never_sends_it_and_leaves_the_running_one_alone(
    standin, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    session = standin(
        [
            [{"__deltas__": 300, "delay": 0.005, "text": "one "}],
            [{"__deltas__": 1, "text": "third"}],
        ],
        transcript=transcript,
    )
    first = await session.send("FIRST_PROMPT")
    second = await session.send("QUEUED_PROMPT")
    await first_event(first)
    await second.cancel()
    cancelled = await asyncio.wait_for(second.result(), 5)
    assert cancelled.interrupted and cancelled.error is None
    r1 = await asyncio.wait_for(first.result(), 30)
    assert not r1.interrupted and not r1.is_error and r1.text == "one " * 300
    assert (await session.query("THIRD_PROMPT")).text == "third"
    await session.close()
    sent = sent_prompts(transcript)
    assert len(sent) == 2 and "FIRST_PROMPT" in sent[0] and "THIRD_PROMPT" in sent[1], sent


async def test_cancel_while_the_cli_starts_never_sends_the_turn(
    standin, standin_cli: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    wrapper, pid_file, gate = held_first_start(tmp_path, standin_cli)
    session = standin([[{"__deltas__": 1, "text": "ok"}]], transcript=transcript, cli_path=wrapper)
    turn = await session.send("NEVER_SENT")  # the pump now starts the CLI
    await apoll(pid_file.exists, 30, "the CLI process to start")
    await session.cancel(turn)  # its start is under way: initialize is not answered yet
    assert (await asyncio.wait_for(turn.result(), 30)).interrupted
    await asyncio.to_thread(gate.write_text, "go\n")  # the CLI may answer now
    assert (await session.query("SENT")).text == "ok"
    await session.close()
    sent = sent_prompts(transcript)
    assert len(sent) == 1 and "SENT" in sent[0] and "NEVER_SENT" not in sent[0], sent


async def test_stop_of_a_stalled_cli_kills_it_even_when_the_caller_gives_up(standin) -> None:
    # Default interrupt_grace (3 s) and control_timeout (30 s): the interrupt is never answered.
    session = standin(
        [[{"__deltas__": 1}, {"__stall__": True}], [{"__deltas__": 1, "text": "back"}]]
    )
    turn = await session.send("stall")
    async for m in turn.events():
        if m.raw.get("status") == "stalled":
            break
    pid = session.pid
    assert pid is not None and alive(pid)
    # The caller (a cell's ■ handler) gives up long before the grace is over.
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(session.interrupt(), 0.2)
    result = await asyncio.wait_for(turn.result(), session.interrupt_grace + 10)
    assert result.interrupted
    assert not alive(pid)
    assert not session.busy
    assert (await asyncio.wait_for(session.query("after"), 30)).text == "back"


async def test_cancelled_start_kills_the_half_started_cli(standin, tmp_path: Path) -> None:
    wrapper, pid_file = mute_first_start(tmp_path, f"{sys.executable} {STANDIN}")
    session = standin([[{"__deltas__": 1, "text": "fresh"}]], cli_path=wrapper)
    start = asyncio.ensure_future(session.start())
    await apoll(pid_file.exists, 10, "the mute CLI to start")
    pid = int(pid_file.read_text())
    assert alive(pid) and not start.done()
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start
    # The kill is SIGKILL to the group; reaping takes a moment.
    await apoll(lambda: not alive(pid), 5, "the half-started CLI to die")
    assert (await asyncio.wait_for(session.query("hello"), 30)).text == "fresh"
    assert session.pid != pid
