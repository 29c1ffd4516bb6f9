"""Re-running an edited %%claude cell branches the conversation, and the cell below, answered
on the old branch, is marked stale: the mark at the top of its answer, above the answer's first
line, the answer dimmed, and (the frontend bridge) a "Run again" button that runs that cell, after
which its answer is current again. The saved file keeps the mark while it holds, and no cell
keeps an empty output. JupyterLab and Notebook 7, one page load each; real CLI, scripted API;
screenshots light and dark."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support.kernel import LOAD
from support.rig import cli_env_for

from byre_jupyter.scripted import Reply, ScriptedAPI, Text

from .conftest import BOTH_FRONTENDS
from .harness import LabPage, new_notebook, wait_until
from .test_surface import set_theme

pytestmark = pytest.mark.cli

#: How a stale answer's record begins (ui/record.py, ``stale_text``).
MARK = "Out of date:"
RERUN = ".byre-rerun"


def three_turns(
    lab: LabPage,
    api: ScriptedAPI,
    cli_path: str,
    tmp_path: Path,
    after_each: Callable[[int], None] = lambda _i: None,
) -> None:
    """A notebook of ``%load_ext`` and three ``%%claude`` cells (PROMPT_A, PROMPT_B_OLD,
    PROMPT_C) with the real CLI, all run; the scripted API also answers PROMPT_B_NEW, the
    second cell's edit. ``after_each(i)`` runs after cell ``i`` has run."""
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
        after_each(i)
    lab.wait_for_output_text(3, "answer to PROMPT_C", timeout=60)


def empty_outputs(cells: list[object]) -> list[object]:
    """The outputs with nothing to show (an empty display_data slot) of the saved cells."""
    return [
        o
        for c in cells
        for o in getattr(c, "outputs", [])
        if "data" in o and not any(o["data"].values())
    ]


@BOTH_FRONTENDS
def test_a_stale_answer_is_marked_at_its_top_dimmed_and_runs_again_in_one_click(
    lab: LabPage, api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> None:
    def unmarked(i: int) -> None:
        assert MARK not in lab.output_text(i)

    three_turns(lab, api, cli_path, tmp_path, after_each=unmarked)
    assert empty_outputs(lab.save().cells) == []  # nothing reserved for a mark

    lab.set_source(2, "%%claude\nPROMPT_B_NEW")
    n = len(api.requests)
    lab.run_cell(2, timeout=120)
    seen = json.dumps(api.wait_for_request("PROMPT_B_NEW", timeout=60, after=n).body["messages"])
    assert "PROMPT_A" in seen and "PROMPT_B_OLD" not in seen and "PROMPT_C" not in seen

    count = lab._js("return B.cell(path, a0).model.executionCount;", 2)
    text = lab.wait_for_output_text(3, MARK, timeout=30)
    assert f"cell [{count}] was run again" in text and "answer to PROMPT_C" in text
    assert MARK not in lab.output_text(1) and MARK not in lab.output_text(2)
    out = lab.output_locator(3)
    button = out.locator(RERUN)
    button.wait_for(state="visible", timeout=30_000)  # the bridge's, while its comm is open
    mark = out.locator(".byre-stale").bounding_box()
    first_line = out.get_by_text("answer to PROMPT_C").bounding_box()
    assert mark is not None and first_line is not None
    assert mark["y"] + mark["height"] <= first_line["y"], (mark, first_line)
    dim = out.locator(".byre-stale-answer").evaluate("e => getComputedStyle(e).opacity")
    assert float(dim) < 0.7, dim
    lab.cell_locator(3).scroll_into_view_if_needed()
    lab.screenshot(f"rerun-mark-{lab.frontend}-light.png")
    set_theme(lab, "JupyterLab Dark")
    lab.screenshot(f"rerun-mark-{lab.frontend}-dark.png")
    set_theme(lab, "JupyterLab Light")

    saved = lab.save()
    assert MARK in json.dumps(saved.cells[3].outputs) and empty_outputs(saved.cells) == []

    n = len(api.requests)
    button.click()
    seen = json.dumps(api.wait_for_request("PROMPT_C", timeout=60, after=n).body["messages"])
    assert "PROMPT_B_NEW" in seen and "PROMPT_B_OLD" not in seen  # on the new branch
    lab.wait_for_cell(3, timeout=120)
    wait_until(
        lambda: "answer to PROMPT_C" in lab.output_text(3) and MARK not in lab.output_text(3),
        60,
        "cell 3's answer, current again",
    )
    assert out.locator(".byre-stale-answer").count() == 0  # undimmed
    saved = lab.save()
    assert MARK not in json.dumps([c.outputs for c in saved.cells if "outputs" in c])
    assert empty_outputs(saved.cells) == []
