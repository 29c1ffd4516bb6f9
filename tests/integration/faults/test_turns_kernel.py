"""Every turn owns its cell, in a real kernel: notices land in the cell whose turn
caused them, ■ on a queued cell withdraws only that cell's prompt, and ■ always leaves a session
the next cell can use, with the default ``interrupt_grace``, even when the CLI stalls or never
answers ``initialize``. Real CLI + scripted API, or the stand-in CLI for the stall."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.kernel import CellRun, KernelDriver
from support.processes import alive
from support.waiting import poll

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, ToolUse

pytestmark = pytest.mark.kernel

TIMEOUT = 90.0
HEADLESS_NOTICE = "nobody can approve here"


def markdown(run: CellRun) -> str:
    return "\n".join(
        o["data"]["text/markdown"] for o in run.outputs if "text/markdown" in o.get("data", {})
    )


def plain(run: CellRun) -> str:
    """The cell's text as it streams (the draft's parts) and at the end (the record)."""
    return "\n".join(
        o["data"]["text/plain"] for o in run.outputs if "text/plain" in o.get("data", {})
    )


def shown(run: CellRun) -> bool:
    """The cell's display slot exists (its turn has been handed to the session): the draft's
    first part (sanitized HTML and plain text; the record adds text/markdown at the end)."""
    return any("text/plain" in o.get("data", {}) for o in run.outputs)


def bash(command: str) -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": "Make a file"})


def prompts_sent(api: ScriptedAPI) -> str:
    return "\n".join(json.dumps(r.body.get("messages", [])) for r in api.requests)


@pytest.mark.cli
def test_headless_denials_are_noted_in_their_own_cells(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI, workdir: Path
) -> None:
    """Cell 1 (--bg) is asked for its tool while cell 2 waits behind it: cell 1's denial notice
    belongs in cell 1, not in the newest cell of the session (0.1 put both in cell 2)."""
    api.on("CELL_ONE", Hang(then=Reply(bash(f"touch {workdir}/one"))), times=1)
    api.on("CELL_TWO", Reply(bash(f"touch {workdir}/two")), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("after the tool")))
    kernel = kernels(load=False)
    assert "Error" not in kernel.run("%load_ext byre_jupyter").texts()  # mode "default": asks

    first = kernel.run("%%claude --bg\nCELL_ONE: make a file")
    api.wait_for_request("CELL_ONE", timeout=TIMEOUT)
    second = kernel.submit("%%claude\nCELL_TWO: make another")
    kernel.wait(lambda: shown(second), timeout=TIMEOUT)
    api.release()
    kernel.wait(lambda: second.idle and second.reply is not None, timeout=TIMEOUT)
    kernel.wait(lambda: "after the tool" in markdown(first), timeout=TIMEOUT)

    assert markdown(first).count(HEADLESS_NOTICE) == 1, markdown(first)
    assert markdown(second).count(HEADLESS_NOTICE) == 1, markdown(second)
    assert not (workdir / "one").exists() and not (workdir / "two").exists()


@pytest.mark.cli
def test_interrupt_on_a_queued_cell_withdraws_it_and_spares_the_running_turn(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI, workdir: Path
) -> None:
    api.on("BG_TURN", Hang(then=Reply(Text("background answer BG_DONE"))), times=1)
    api.on("QUEUED_CELL", Reply(bash(f"touch {workdir}/queued_ran")), times=1)
    api.default = Reply(Text("third answer THIRD_DONE"))
    kernel = kernels()

    background = kernel.run("%%claude --bg -o bg\nBG_TURN: take your time")
    api.wait_for_request("BG_TURN", timeout=TIMEOUT)
    queued = kernel.submit("%%claude\nQUEUED_CELL: run a command")
    kernel.wait(lambda: shown(queued), timeout=TIMEOUT)
    kernel.interrupt()
    kernel.wait(lambda: queued.idle and queued.reply is not None, timeout=30)
    # ■ ends the turn, then the cell as an interrupted cell (queued cells are aborted).
    assert queued.reply["status"] == "error", queued.texts()
    assert queued.reply["ename"] == "CellInterrupted"
    assert "nterrupted" in markdown(queued), markdown(queued)

    api.release()  # the background turn was not touched: it answers in full
    probe = "b = globals().get('bg'); print(None if b is None else (b.interrupted, b.is_error))"
    # -o is set when the background turn has ended (its text shows a little earlier).
    outcome = poll(lambda: (t := kernel.run(probe).texts().strip()) != "None" and t, TIMEOUT, "bg")
    assert outcome == "(False, False)", outcome
    assert "BG_DONE" in markdown(background) and "nterrupted" not in markdown(background)

    third = kernel.run("%%claude\nTHIRD_CELL", timeout=TIMEOUT)
    assert "THIRD_DONE" in markdown(third)
    sent = prompts_sent(api)
    assert "THIRD_CELL" in sent and "QUEUED_CELL" not in sent
    assert not (workdir / "queued_ran").exists()


def test_interrupt_on_a_stalled_cli_with_default_grace_then_next_cell_answers(
    kernels: Callable[..., KernelDriver],
    kernel_env: dict[str, str],
    standin_cli: str,
    standin_script: Callable[..., Any],
) -> None:
    script = standin_script(
        [
            [{"__deltas__": 1, "text": "BEFORE_STALL "}, {"__stall__": True}],
            [{"__deltas__": 1, "text": "BACK_AGAIN"}],
        ]
    )
    kernel = kernels(env={**kernel_env, "STANDIN_SCRIPT": script})
    kernel.run(f"%config Claude.cli_path = {standin_cli!r}")  # interrupt_grace stays 3 s

    stalled = kernel.submit("%%claude\nstall now")
    kernel.wait(lambda: "BEFORE_STALL" in plain(stalled), timeout=TIMEOUT)
    kernel.interrupt()
    kernel.wait(lambda: stalled.idle and stalled.reply is not None, timeout=30)
    # ■ ends the turn, then the cell as an interrupted cell (queued cells are aborted).
    assert stalled.reply["status"] == "error", stalled.texts()
    assert stalled.reply["ename"] == "CellInterrupted"

    nxt = kernel.run("%%claude\nand now?", timeout=60)
    assert "BACK_AGAIN" in markdown(nxt), nxt.texts()


@pytest.mark.cli
def test_interrupt_while_the_cli_never_initializes_kills_it_then_next_cell_answers(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> None:
    pid_file = tmp_path / "mute.pid"
    mute = tmp_path / "mute.py"
    mute.write_text("import sys, time\nfor _ in sys.stdin.buffer:\n    pass\ntime.sleep(3600)\n")
    wrapper = tmp_path / "claude-mute-first"
    wrapper.write_text(
        "#!/bin/sh\n"  # the first CLI reads but never answers; later ones are the real CLI
        f'if [ ! -e "{pid_file}" ]; then echo $$ > "{pid_file}.tmp" && '
        f'mv "{pid_file}.tmp" "{pid_file}"; exec {sys.executable} {mute}; fi\n'
        f'exec {cli_path} "$@"\n'
    )
    wrapper.chmod(0o755)
    api.default = Reply(Text("fresh start FRESH_DONE"))
    kernel = kernels()
    kernel.run(f"%config Claude.cli_path = {str(wrapper)!r}")

    starting = kernel.submit("%%claude\nhello?")
    pid = int(poll(lambda: pid_file.exists() and pid_file.read_text(), 30, "the first CLI"))
    assert alive(pid)
    kernel.interrupt()
    kernel.wait(lambda: starting.idle and starting.reply is not None, timeout=30)
    # ■ ends the turn, then the cell as an interrupted cell (queued cells are aborted).
    assert starting.reply["status"] == "error", starting.texts()
    assert starting.reply["ename"] == "CellInterrupted"
    poll(lambda: not alive(pid), 10, "the half-started CLI to be killed")

    nxt = kernel.run("%%claude\nNEXT_CELL", timeout=TIMEOUT)
    assert "FRESH_DONE" in markdown(nxt), nxt.texts()


def test_run_cell_magic_with_bad_options_is_a_usage_error(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI
) -> None:
    """The %%claude fallback (run_cell_magic) parses before it schedules anything."""
    kernel = kernels()
    run = kernel.run("get_ipython().run_cell_magic('claude', '--bogus', 'hello')")
    assert "UsageError" in run.texts(), run.texts()
    run = kernel.run("get_ipython().run_cell_magic('claude', '', '   ')")
    assert "UsageError" in run.texts() and "empty" in run.texts(), run.texts()
    assert api.requests == []
