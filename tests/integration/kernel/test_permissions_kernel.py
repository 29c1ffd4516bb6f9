"""Permission prompts without a frontend: the headless policy answers, nothing hangs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from support.asking import QUESTION
from support.kernel import KernelDriver

from byre_jupyter.scripted import Reply, ScriptedAPI, ScriptedRequest, Text, ToolUse

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


def test_headless_questions_and_plans_follow_their_traits_and_are_recorded(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    """Claude asks a question, then plans: headless, the question is answered
    "proceed on your best judgement" and the plan is not approved; the saved output keeps both."""

    def plan_file(req: ScriptedRequest) -> Reply:
        assert req.plan_file, "the plan-mode reminder names no plan file"
        return Reply(ToolUse("Write", {"file_path": req.plan_file, "content": "# My plan\n1. x"}))

    def results(name: str) -> Callable[[ScriptedRequest], bool]:
        return lambda r: any(t["tool_name"] == name for t in r.last_tool_results)

    api.on("plan it", Reply(ToolUse("AskUserQuestion", QUESTION)), times=1)
    api.on(results("ExitPlanMode"), Reply(Text("Stopped planning.")))
    api.on(results("Write"), Reply(ToolUse("ExitPlanMode", {})))
    api.on(results("AskUserQuestion"), plan_file)
    kernel.run("%config Claude.permission_mode = 'plan'")
    run = kernel.run("%%claude\nplan it")
    asked = next(r for r in api.requests if results("AskUserQuestion")(r)).last_tool_results[0]
    assert not asked["is_error"] and "best judgement" in asked["text"], asked
    exited = api.requests[-1].last_tool_results[0]
    assert exited["is_error"] and "headless_plans" in exited["text"]
    static = run.texts()
    assert "Which colour?" in static and "nobody can answer here (headless)" in static
    assert "My plan" in static and "nobody can approve it here (headless)" in static
    assert "Stopped planning." in static
