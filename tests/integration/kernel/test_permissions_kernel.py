"""Permission prompts without a frontend: the headless policy answers, nothing hangs."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from support.kernel import KernelDriver

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

# The permission mode stays "default": these tests are about what the CLI asks.
pytestmark = [
    pytest.mark.kernel,
    pytest.mark.cli,
    pytest.mark.kernel_setup("%load_ext byre_jupyter"),
]


def script_touch(api: ScriptedAPI, workdir: Path) -> None:
    target = workdir / "made_by_bash.txt"
    api.on("make", Reply(ToolUse("Bash", {"command": f"touch {target} && echo made"})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("after the tool")))


def test_headless_default_policy_denies_and_says_how_to_allow(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    script_touch(api, workdir)
    run = kernel.run("%%claude\nmake a file")  # returns: the prompt never waits for a click
    assert not (workdir / "made_by_bash.txt").exists()
    results = api.requests[-1].last_tool_results
    assert results and results[0]["is_error"]
    assert "permission_mode" in results[0]["text"]  # the denial says how to allow
    static = run.texts()
    assert "nobody can approve here" in static and "after the tool" in static


def test_headless_policy_allow_runs_the_tool(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    script_touch(api, workdir)
    kernel.run("%config Claude.headless_permission = 'allow'")
    run = kernel.run("%%claude\nmake a file")
    assert (workdir / "made_by_bash.txt").exists()
    assert "headless policy: allow" in run.texts()


def test_bypass_permissions_never_asks_and_leaving_it_is_in_force_at_once(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    made = workdir / "made_by_bash.txt"
    script_touch(api, workdir)
    kernel.run("%config Claude.permission_mode = 'bypassPermissions'")
    run = kernel.run("%%claude\nmake a file", cell_id="cell-a")
    assert made.exists()
    assert "Approved" not in run.texts() and "Permission denied" not in run.texts()

    # Back to default, with the re-run of the cell queued right behind the %config (Run All,
    # two quick Shift+Enters): its CLI is launched in default and the Bash call waits on an
    # approval card instead of running (docs/security.md, "How modes switch").
    made.unlink()
    script_touch(api, workdir)
    switch = kernel.submit("%config Claude.permission_mode = 'default'")
    rerun = kernel.submit("%%claude --bg\nmake a file", cell_id="cell-a")
    kernel.wait(lambda: all(r.idle and r.reply is not None for r in (switch, rerun)), 60)
    session = (
        "from byre_jupyter.magics import extension as _e\n_s = _e().conversations.peek('default')\n"
    )
    pending = session + "_t = _s.active_turn\nprint(len(_t.owner.surface.pending) if _t else 0)"
    kernel.wait(lambda: kernel.run(pending).texts().strip() == "1", timeout=60)
    assert not made.exists()
    argv = psutil.Process(int(kernel.run(session + "print(_s.pid)").texts())).cmdline()
    assert "--permission-mode=default" in argv and "--permission-prompt-tool" in argv
    listed = kernel.run("%claude sessions").texts().splitlines()
    assert "| mode |" in listed[0] and "| default | busy | default | default |" in listed[-1]
    kernel.run(session + "_s.active_turn.owner.stop()")
    kernel.wait(lambda: kernel.run(session + "print(_s.busy)").texts().strip() == "False", 60)
    assert not made.exists()
