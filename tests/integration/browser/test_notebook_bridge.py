"""The frontend bridge in JupyterLab and Notebook 7, installed as ``pip install`` installs it
(the wheel's shared-data in this environment's share/jupyter; docs/bridge.md): ``%claude
doctor`` says connected (again after a kernel restart), ``mcp__byre__notebook`` hands the
scripted API a change typed into a cell and not saved, with the asking cell marked, and
hostile cells are data in its result that load nothing."""

from __future__ import annotations

import pytest

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

from .conftest import BOTH_FRONTENDS
from .harness import LabPage
from .test_approvals import open_notebook, tool_result_for
from .test_no_remote_loads import Counter, Requests, bad_requests, counter, fence, lab_prefixes

pytestmark = pytest.mark.cli
__all__ = ["counter"]  # the fixture, shared with the no-remote-loads test

UNSAVED = "edited = 'typed on screen, not saved: BRIDGE-4242'"


@BOTH_FRONTENDS
def test_the_notebook_tool_reads_unsaved_edits_through_the_bridge(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    assert lab.has_plugin("byre-jupyter-bridge:plugin")
    folder = open_notebook(
        lab,
        claude_env,
        "edited = 'as saved'",
        "%claude doctor",
        "%%claude\nNBREAD: what is in my notebook?",
    )
    lab.set_source(1, UNSAVED)  # typed, neither saved nor run
    lab.run_cell(2, timeout=60)
    doctor = lab.wait_for_output_text(2, "Frontend bridge", timeout=30)
    assert "Frontend bridge" in doctor and "connected:" in doctor, doctor
    assert "not connected" not in doctor
    assert "BRIDGE-4242" not in (folder / "approvals.ipynb").read_text()

    api.on("NBREAD", Reply(ToolUse("mcp__byre__notebook", {})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("Read the notebook: NBDONE")))
    lab.run_cell(3, wait=False)
    assert lab.wait_for_cell(3, timeout=90)
    assert "NBDONE" in lab.output_text(3)
    result = tool_result_for(api, "mcp__byre__notebook")
    text = result["text"]
    assert not result["is_error"], result
    assert UNSAVED in text and "live from the notebook on screen" in text, text
    assert "may lag" not in text
    asking = next(block for block in text.split("--- ")[1:] if block.startswith("cell 4 "))
    assert "the %%claude cell asking you" in asking, text
    lab.screenshot(f"bridge-{lab.frontend}-read.png")

    lab.restart_kernel()  # the page keeps its bridge; the new kernel's %load_ext reconnects
    lab.run_cell(0, timeout=60)
    lab.run_cell(2, timeout=60)
    doctor = lab.wait_for_output_text(2, "Frontend bridge", timeout=30)
    assert "connected:" in doctor and "not connected" not in doctor, doctor


def test_hostile_cells_are_data_in_the_tool_result_and_load_nothing(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], counter: Counter
) -> None:
    """Cell sources and outputs holding HTML, Markdown and remote images reach the model as
    text, and showing the notebook tool's call in the cell loads nothing."""
    hostile = (
        f"# <img src='{counter.base}/leak-src'> ![md]({counter.base}/leak-md)\n"
        f"print(\"<img src='{counter.base}/leak-out'> ![o]({counter.base}/leak-out-md)\")"
    )
    open_notebook(lab, claude_env, hostile, "%%claude\nNBHOSTILE: read it")
    lab.run_cell(1, timeout=60)
    requests = Requests(lab.page)
    mark = requests.mark()
    api.on("NBHOSTILE", Reply(ToolUse("mcp__byre__notebook", {})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("Read: NBHOSTILEDONE")))
    lab.run_cell(2, wait=False)
    assert lab.wait_for_cell(2, timeout=90)
    assert "NBHOSTILEDONE" in lab.output_text(2)
    result = tool_result_for(api, "mcp__byre__notebook")
    assert f"<img src='{counter.base}/leak-src'>" in result["text"]  # data, verbatim
    assert f"{counter.base}/leak-out" in result["text"]
    lab.output_locator(2).get_by_text("byre.notebook").first.click()  # open the tool's block
    lab.screenshot("bridge-hostile-cells.png")
    fence(lab.page, counter, "notebook tool block")
    assert counter.leaks() == [], counter.leaks()
    assert bad_requests(requests.since(mark), lab_prefixes(lab)) == []
    requests.stop()
