"""The cell as a chat surface (issue 9), in a real JupyterLab driven from headless Chromium:
what a user sees of the header, the menus, code blocks and the end of a turn.

The real ``claude`` CLI runs against the scripted Messages API. Browser tests are sync
functions (see conftest.py). Every wait is bounded; no fixed sleeps.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from support.rig import cli_env_for

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text

from .harness import HarnessError, LabPage, new_notebook

pytestmark = pytest.mark.cli

LOAD = '%load_ext byre_jupyter\n%config Claude.permission_mode = "bypassPermissions"'
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
MODEL_MENU = 'select[title="Model"]'
STATUS = ".byre-status"


@pytest.fixture
def claude_env(api: ScriptedAPI, cli_path: str, tmp_path: Path) -> dict[str, str]:
    env = cli_env_for(api.url, tmp_path / "home")
    env["BYRE_CLAUDE_PATH"] = cli_path
    env["BYRE_STATE_DIR"] = str(tmp_path / "state")
    return env


def open_claude_notebook(lab: LabPage, env: dict[str, str], *cells: str) -> str:
    path = lab.open_notebook(new_notebook(LOAD, *cells), kernel_env=env)
    lab.run_cell(0, timeout=60)
    out = lab.output_text(0)
    assert "Error" not in out and "Traceback" not in out, out
    return path


def wait_until(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise HarnessError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.05)  # poll interval; the loop re-checks real state


def echo_updates(lab: LabPage) -> int:
    return sum(1 for m in lab.iopub_messages() if m["comm_method"] == "echo_update")


def header_renders(lab: LabPage, i: int) -> int:
    """Header pushes seen so far: every status re-render is one comm update."""
    return sum(1 for m in lab.iopub_messages(i) if m["msg_type"] == "comm_msg" and m["comm_method"])


# --------------------------------------------------------------------------------------------
# the model menu keeps the user's choice


def test_model_menu_keeps_the_choice_mid_turn(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("KEEPMODEL", Hang(then=Reply(Text("first turn done"))))
    open_claude_notebook(lab, claude_env, "%%claude\nKEEPMODEL one")
    lab.run_cell(1, wait=False)
    api.wait_for_request("KEEPMODEL", timeout=60)  # the turn now waits on the API
    out = lab.output_locator(1)
    menu = out.locator(MODEL_MENU)
    menu.wait_for(timeout=30_000)
    before = menu.input_value()
    assert before != "sonnet"

    echoes = echo_updates(lab)
    lab.select_in_output(1, "Model", "sonnet")
    wait_until(lambda: echo_updates(lab) > echoes, 20, "the kernel to echo the model change")
    # The header re-renders every second (elapsed time): let it do so three times.
    lab.watch_output(1)
    wait_until(lambda: len(lab.output_states(1)) >= 4, 20, "three header re-renders")
    assert [s["text"] for s in lab.output_states(1)]  # recorded while the cell ran
    assert lab.cell_running(1)
    assert menu.input_value() == "sonnet", "the menu jumped back"
    assert "sonnet from the next request" in lab.output_text(1), lab.output_text(1)
    api.release()
    assert lab.wait_for_cell(1, timeout=60)
