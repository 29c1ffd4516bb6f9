"""Re-running an edited %%claude cell in JupyterLab branches the conversation, and the cell
below, answered on the old branch, gets a visible mark; running it again clears the mark; the
saved file keeps it. Real Lab, real CLI, scripted API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.kernel import LOAD
from support.rig import cli_env_for

from byre_jupyter.scripted import Reply, ScriptedAPI, Text

from .harness import LabPage, new_notebook

pytestmark = pytest.mark.cli

MARK = "answered on an earlier version of cell"


def test_edit_and_rerun_marks_the_cell_below(
    lab: LabPage, api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> None:
    env = cli_env_for(api.url, tmp_path / "home")
    env["BYRE_CLAUDE_PATH"] = cli_path
    env["BYRE_STATE_DIR"] = str(tmp_path / "state")
    for prompt in ("PROMPT_A", "PROMPT_B_OLD", "PROMPT_C", "PROMPT_B_NEW"):
        api.on(prompt, Reply(Text(f"answer to {prompt}")))
    lab.open_notebook(
        new_notebook(LOAD, "%%claude\nPROMPT_A", "%%claude\nPROMPT_B_OLD", "%%claude\nPROMPT_C"),
        kernel_env=env,
    )
    lab.run_cell(0, timeout=60)
    for i in (1, 2, 3):
        lab.run_cell(i, timeout=120)
        assert MARK not in lab.output_text(i)
    lab.wait_for_output_text(3, "answer to PROMPT_C", timeout=60)

    lab.set_source(2, "%%claude\nPROMPT_B_NEW")
    n = len(api.requests)
    lab.run_cell(2, timeout=120)
    seen = json.dumps(api.wait_for_request("PROMPT_B_NEW", timeout=60, after=n).body["messages"])
    assert "PROMPT_A" in seen and "PROMPT_B_OLD" not in seen and "PROMPT_C" not in seen

    count = lab.output_json(2) and lab._js("return B.cell(path, a0).model.executionCount;", 2)
    text = lab.wait_for_output_text(3, MARK, timeout=30)
    assert f"cell [{count}]" in text
    assert "answer to PROMPT_C" in text  # the answer itself is still there
    assert MARK not in lab.output_text(1) and MARK not in lab.output_text(2)
    lab.cell_locator(3).scroll_into_view_if_needed()
    lab.screenshot("rerun_marks_cell_below.png")

    saved = lab.save()
    assert MARK in json.dumps(saved.cells[3].outputs)

    lab.run_cell(3, timeout=120)
    lab.wait_for_output_text(3, "answer to PROMPT_C", timeout=60)
    assert MARK not in lab.output_text(3)
