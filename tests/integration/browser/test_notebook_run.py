"""``mcp__byre__run_cells`` and "Ask Claude" in JupyterLab and Notebook 7 (docs/bridge.md): a
cell the user made, run by Claude, shows its print, rich display and error in its own output
area with an execution count, Claude gets them back, and the save holds them; a cell the user
runs into an error offers "Ask Claude", which inserts a prefilled ``%%claude`` cell below that
names the cell, and runs it, and only while byre_jupyter is loaded. One page load per frontend
serves every check."""

from __future__ import annotations

import threading
import time

import ipykernel
import pytest

from byre_jupyter.app.doctor import IPYKERNEL_LIVE_WIDGETS
from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

from .conftest import BOTH_FRONTENDS
from .harness import LabPage, new_notebook, wait_until
from .test_approvals import tool_result_for
from .test_claude_cells import merge_figures
from .test_surface import set_theme

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(
        tuple(int(p) for p in ipykernel.__version__.split(".")[:2]) < IPYKERNEL_LIVE_WIDGETS,
        reason="before ipykernel 7.4 a comm message reaches the kernel only after the cell "
        "ends, so the bridge cannot answer while the %%claude cell awaits (docs/bridge.md)",
    ),
]

MINE = (
    "from IPython.display import Markdown, display\n"
    "print('PRINTED-7031')\n"
    "display(Markdown('**RICH-7032**'))\n"
    "1 / 0"
)
ASK = 'button.byre-ask-claude:has-text("Ask Claude")'
# When cell a0's output first shows the error (the run's last output), in epoch ms.
SHOWN_AT = """
const c = B.cell(path, a0);
window.__byreRunShown = null;
const seen = new MutationObserver(() => {
  if (c.outputArea.node.innerText.includes('ZeroDivisionError')) {
    window.__byreRunShown = Date.now();
    seen.disconnect();
  }
});
seen.observe(c.outputArea.node, { subtree: true, childList: true, characterData: true });
return true;
"""


@BOTH_FRONTENDS
def test_run_cells_shows_outputs_in_the_cell_and_ask_claude_fixes_an_error(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    nb = new_notebook(
        '%load_ext byre_jupyter\n%config Claude.python_tool = "allow"',
        MINE,
        "%%claude\nRUNCELLS: run my cell",
        "undefined_name_7033",
        "%unload_ext byre_jupyter\nundefined_after_unload",
    )
    nb.cells[1].id = "mine"
    nb.cells[3].id = "broken"
    path = lab.open_notebook(nb, path="run-cells/run.ipynb", kernel_env=claude_env)
    lab.run_cell(0, timeout=60)
    assert "Error" not in lab.output_text(0), lab.output_text(0)

    # run_cells on the user's cell: its outputs land in it, with a count, and go back to Claude.
    api.on("RUNCELLS", Reply(ToolUse("mcp__byre__run_cells", {"cells": ["mine"]})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("Ran it: RUNDONE")), times=1)
    arrived: dict[str, float] = {}

    def wait_for(key: str, pred: object) -> None:
        api.wait_for_request(pred, timeout=90)  # type: ignore[arg-type]
        arrived[key] = time.time() * 1000

    waiters = [
        threading.Thread(target=wait_for, args=("call", "RUNCELLS"), daemon=True),
        threading.Thread(
            target=wait_for, args=("back", lambda r: bool(r.last_tool_results)), daemon=True
        ),
    ]
    for waiter in waiters:
        waiter.start()
    lab._js(SHOWN_AT, 1)
    lab.run_cell(2, wait=False)
    assert lab.wait_for_cell(2, timeout=90)
    assert "RUNDONE" in lab.output_text(2)
    shown = lab.output_text(1)
    assert "PRINTED-7031" in shown and "RICH-7032" in shown and "ZeroDivisionError" in shown
    outputs = lab.output_json(1)
    assert [o["output_type"] for o in outputs] == ["stream", "display_data", "error"], outputs
    count = lab._js("return B.cell(path, a0).model.executionCount;", 1)
    assert isinstance(count, int) and count > 1, count
    assert f"[{count}]" in lab.cell_locator(1).locator(".jp-InputPrompt").inner_text()
    # The asking cell keeps the count it started with, the cell it ran has the next one: no
    # gap the user sees (docs/bridge.md, "Execution counts").
    assert lab._js("return B.cell(path, a0).model.executionCount;", 2) == count - 1
    result = tool_result_for(api, "mcp__byre__run_cells")
    assert result["is_error"] and f"--- cell mine · [{count}] · error ---" in result["text"]
    for text in ("PRINTED-7031", "**RICH-7032**", "ZeroDivisionError: division by zero"):
        assert text in result["text"], result
    for waiter in waiters:
        waiter.join(5)
    # The figure (not asserted): epoch ms on one machine, the page's Date.now() and ours.
    on_screen = float(lab.page.evaluate("() => window.__byreRunShown"))
    comms = {m["comm_method"]: m["wall"] for m in lab.iopub_messages() if m["comm_method"]}
    merge_figures(
        **{
            f"run_cells_round_trip_{lab.frontend}": {
                "model_reply_to_read_at_page_ms": round(comms["read"] - arrived["call"], 1),
                "read_to_run_end_at_page_ms": round(comms["run.end"] - comms["read"], 1),
                "read_to_output_on_screen_ms": round(on_screen - comms["read"], 1),
                "model_reply_to_result_back_ms": round(arrived["back"] - arrived["call"], 1),
            }
        }
    )
    saved = lab.save()
    cell = next(c for c in saved.cells if c.id == "mine")
    assert cell.execution_count == count
    assert [o["output_type"] for o in cell.outputs] == ["stream", "display_data", "error"]
    assert "PRINTED-7031" in cell.outputs[0]["text"]
    lab.screenshot(f"run-cells-{lab.frontend}-light.png")

    # Ask Claude: the user's own error offers it; a keyboard press inserts and runs the cell.
    api.on("ended in an error", Reply(Text("Looked at it: ASKDONE")), times=1)
    assert not lab.run_cell(3, timeout=60)
    ask = lab.output_locator(3).locator(ASK)
    ask.wait_for(state="visible", timeout=30_000)
    assert lab.output_locator(1).locator(ASK).count() == 0  # not for Claude's own runs
    assert lab.output_locator(2).locator(ASK).count() == 0  # nor for a %%claude cell
    lab.screenshot(f"ask-claude-{lab.frontend}-light.png")
    set_theme(lab, "JupyterLab Dark")
    lab.screenshot(f"ask-claude-{lab.frontend}-dark.png")
    dark = ask.evaluate("b => getComputedStyle(b).backgroundColor")
    set_theme(lab, "JupyterLab Light")
    assert ask.evaluate("b => getComputedStyle(b).backgroundColor") != dark
    cells_before = lab.cell_count()
    ask.focus()
    lab.page.keyboard.press("Enter")
    wait_until(lambda: lab.cell_count() == cells_before + 1, 30, "the inserted %%claude cell")
    source = lab._js("return B.cell(path, a0).model.sharedModel.getSource();", 4)
    assert source.startswith("%%claude\n") and "`broken`" in source, source
    lab.wait_for_output_text(4, "ASKDONE", timeout=90)
    request = api.wait_for_request("ended in an error", timeout=30)
    assert "`broken`" in request.last_user_text
    assert lab.output_locator(4).locator(ASK).count() == 0

    # Without byre_jupyter in the kernel (the comm closed) an error offers nothing.
    assert not lab.run_cell(5, timeout=60)
    assert "undefined_after_unload" in lab.output_text(5)
    assert lab.output_locator(5).locator(ASK).count() == 0
    assert path
