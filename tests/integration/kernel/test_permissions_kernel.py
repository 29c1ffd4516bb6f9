"""Permission prompts without a frontend: the headless policy answers, nothing hangs."""

from __future__ import annotations

from pathlib import Path

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


def test_bypass_permissions_never_asks(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    script_touch(api, workdir)
    kernel.run("%config Claude.permission_mode = 'bypassPermissions'")
    run = kernel.run("%%claude\nmake a file")
    assert (workdir / "made_by_bash.txt").exists()
    assert "Approved" not in run.texts() and "Permission denied" not in run.texts()
