"""The CLI dies or stalls under a running turn: clear errors, bounded stops, the conversation
goes on (a kernel cell and the Session API)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable
from typing import Any

import psutil
import pytest
from support.faults import talking_cli
from support.kernel import KernelDriver
from support.processes import alive, cli_children
from support.waiting import poll

from byre_jupyter import ControlTimeout, Session
from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text

TIMEOUT = 90.0


def final_markdown(run: Any) -> str:
    return "\n".join(
        o["data"].get("text/markdown", "")
        for o in run.outputs
        if "text/markdown" in o.get("data", {})
    )


@pytest.mark.kernel
@pytest.mark.cli
def test_cli_sigkilled_mid_turn_cell_shows_exit_code_and_next_turn_resumes(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI
) -> None:
    api.on("FIRST_PROMPT", Reply(Text("first answer")), times=1)
    api.on("KILL_DURING_THIS", Hang(), times=1)
    api.default = Reply(Text("answer after the restart"))
    kernel = kernels()
    assert "first answer" in final_markdown(kernel.run("%%claude\nFIRST_PROMPT: remember me"))
    # The turn's end starts a spare CLI beside it (app/spare.py: re-running a first cell starts
    # afresh, so the fresh spare serves both): the kill below must find the one serving the turn.
    poll(lambda: len(cli_children(kernel.kernel_pid())) == 2, 60, "a spare beside the CLI")

    run = kernel.submit("%%claude -o dead\nKILL_DURING_THIS please")
    api.wait_for_request("KILL_DURING_THIS", timeout=TIMEOUT)
    (cli,) = poll(
        lambda: talking_cli(kernel.kernel_pid(), api.port), 30, "the CLI serving the turn"
    )
    os.killpg(os.getpgid(cli.pid), signal.SIGKILL)  # the whole group: supervisor, CLI, tools
    kernel.wait(lambda: run.idle and run.reply is not None, timeout=TIMEOUT)

    # A clear error in the output, then the cell fails with one short line (no traceback).
    assert run.reply["status"] == "error", run.texts()
    assert run.reply["ename"] == "TurnFailed" and len(run.reply["traceback"]) == 1
    text = run.texts()
    assert "exited" in text and "exit code -9" in text, text
    tail = kernel.run("print(repr(dead.error.stderr_tail), dead.is_error, dead.error.exit_code)")
    tail_repr, is_error, code = tail.texts().strip().rsplit(" ", 2)
    assert is_error == "True" and code == "-9"
    if tail_repr not in ("''", '""'):
        assert "stderr" in text, text  # a tail, when there is one, is shown

    nxt = kernel.run("%%claude\nSECOND_PROMPT after the crash")
    assert "answer after the restart" in final_markdown(nxt)
    history = json.dumps(api.requests[-1].body["messages"])
    assert "FIRST_PROMPT" in history and "SECOND_PROMPT" in history
    assert not alive(cli.pid)


@pytest.mark.slow  # a stand-in CLI process stalls until the control timeout
async def test_stalled_cli_control_times_out_interrupt_kills_group_and_session_restarts(
    standin_cli: str, standin_script: Callable[..., str]
) -> None:
    script = standin_script(
        [
            [{"__deltas__": 1, "text": "before "}, {"__stall__": True}],
            [{"__deltas__": 1, "text": "back"}],
        ]
    )
    session = Session(
        cli_path=standin_cli,
        env={"STANDIN_SCRIPT": script},
        control_timeout=0.5,
        interrupt_grace=0.5,
    )
    try:
        turn = await session.send("stall now")

        async def reach_stall() -> None:
            async for m in turn.events():
                if m.raw.get("status") == "stalled":
                    return
            raise AssertionError("turn ended before the stall")

        await asyncio.wait_for(reach_stall(), TIMEOUT)
        pid = session.pid
        assert pid is not None
        group = [pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))]
        with pytest.raises(ControlTimeout):
            await asyncio.wait_for(session.get_context_usage(), TIMEOUT)
        await asyncio.wait_for(session.interrupt(), TIMEOUT)
        result = await asyncio.wait_for(turn.result(), TIMEOUT)
        assert result.interrupted and result.is_error
        assert not any(alive(p) for p in group), "the stalled CLI's process group survived"
        after = await asyncio.wait_for(session.query("after"), TIMEOUT)
        assert after.text == "back" and not after.is_error
        assert session.pid != pid
    finally:
        await session.close()


@pytest.mark.kernel
def test_percent_claude_stop_on_a_stalled_background_turn_kills_and_restarts(
    kernels: Callable[..., KernelDriver],
    kernel_env: dict[str, str],
    standin_cli: str,
    standin_script: Callable[..., str],
) -> None:
    script = standin_script(
        [
            [{"__deltas__": 2, "text": "STALL_MARK "}, {"__stall__": True}],
            [{"__deltas__": 1, "text": "RESTARTED_OK"}],
        ]
    )
    kernel = kernels(env={**kernel_env, "STANDIN_SCRIPT": script})
    kernel.run(f"%config Claude.cli_path = {standin_cli!r}\n%config Claude.interrupt_grace = 0.5")
    run = kernel.run("%%claude --bg -o bg\nstall please")
    assert run.reply["status"] == "ok"
    kernel.wait(lambda: "STALL_MARK" in json.dumps(run.outputs), timeout=TIMEOUT)
    # The stand-in, not the real CLI Claude.prewarm started at load (closed when cli_path
    # changed, but perhaps still exiting).
    (cli,) = poll(
        lambda: [p for p in cli_children(kernel.kernel_pid()) if "standin" in str(p.cmdline())],
        30,
        "the stand-in below the kernel",
    )
    assert "busy" in kernel.run("%claude sessions").texts()

    stop = kernel.run("%claude stop")
    assert stop.reply["status"] == "ok" and "Error" not in stop.texts()
    # The background cell's output is finished by the stop: interrupted or an error, not stuck.
    kernel.wait(
        lambda: "nterrupt" in final_markdown(run) or "stopped" in final_markdown(run),
        timeout=TIMEOUT,
    )
    poll(lambda: not alive(cli.pid), 30, "the stalled stand-in to be killed")
    probe = "print(getattr(globals().get('bg'), 'is_error', None))"
    kernel.wait(lambda: "True" in kernel.run(probe).texts(), timeout=30)

    nxt = kernel.run("%%claude\nare you back?")
    assert "RESTARTED_OK" in final_markdown(nxt)
