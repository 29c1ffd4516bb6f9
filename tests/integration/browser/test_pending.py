"""Nothing waits in vain, answers wait for you (docs/bridge.md, "Pending answers").

A page that reloads while a turn's review card waits gets the turn's live view again in that
cell (``cell.restore``): the card is there to click (the click adopts the turn on the new page,
so the approved edit lands), the turn goes on and its record lands in the cell. A turn whose
page is closed at its start and that ends with no page open lands in its cell when the
notebook is opened again, once, and saving keeps it; saved before that, the notebook says the
answer was still coming."""

from __future__ import annotations

import html

import pytest

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, ToolUse
from byre_jupyter.ui.record import waiting_text

from .conftest import BOTH_FRONTENDS
from .harness import LabPage, wait_until
from .test_approvals import ALLOW, open_notebook, tool_result_for, wait_for_card
from .test_notebook_edit import cell_ids

pytestmark = pytest.mark.cli

TOOL = "mcp__byre__edit_notebook"
WIDGET = "application/vnd.jupyter.widget-view+json"
#: The line of a live view saved mid-turn, in a kernel that keeps the cell for a later page.
WAITING = waiting_text(kept=True)


def kernel_state(lab: LabPage) -> str | None:
    """The notebook's kernel's execution state as the server knows it (no page needed)."""
    for session in lab.server.api("GET", "api/sessions"):
        if session.get("path") == lab.path:
            return str(session["kernel"]["execution_state"])
    return None


@BOTH_FRONTENDS
def test_a_review_card_waiting_when_the_page_reloads_shows_again_and_the_turn_ends(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    open_notebook(lab, claude_env, "x = 1", "%%claude\nPENDEDIT: change x")
    first = cell_ids(lab)[1]
    edit = {"replace": {"cell": first, "old": "x = 1", "new": "x = 2"}}
    api.on("PENDEDIT", Reply(ToolUse(TOOL, {"edits": [edit]})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("PENDEDIT-DONE")), times=1)
    lab.run_cell(2, wait=False)
    wait_for_card(lab, 2)
    # The finding: the reloaded page showed the cell empty, and the kernel waited for a click
    # nobody could give until ■.
    lab.reopen_notebook(idle=False)
    box = wait_for_card(lab, 2, timeout=90)
    lab.screenshot(f"pending-{lab.frontend}-card-after-reload.png")
    box.locator(ALLOW).click()
    result = tool_result_for(api, TOOL, timeout=60)
    shown = wait_until(
        lambda: next((t for t in [lab.output_text(2)] if "PENDEDIT-DONE" in t), None),
        90,
        "the turn's record in its cell after the reload",
        detail=lambda: lab.output_text(2),
    )
    # The reloaded page did not see the user run the cell, but the click on Allow in it was
    # the user's: it adopted the turn there (gate.ts, docs/security.md), so the edit landed.
    # Before, it was refused ("Not applied"): no turn the user started on that page.
    assert not result["is_error"] and "Not applied" not in shown, (result, shown)
    assert lab._js("return B.cell(path, 1).model.sharedModel.getSource();") == "x = 2"
    lab.screenshot(f"pending-{lab.frontend}-record-after-reload.png")


@BOTH_FRONTENDS
def test_an_answer_that_ends_while_no_page_is_open_lands_in_its_cell_once(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    open_notebook(lab, claude_env, "%%claude\nPENDLATE: answer when I am gone")
    lab.save()
    api.on("PENDLATE", Hang(then=Reply(Text("PENDLATE-ANSWER"))), times=1)
    lab.run_cell(1, wait=False)
    api.wait_for_request(lambda r: "PENDLATE" in r.last_user_text, timeout=60)
    wait_until(lambda: WIDGET in str(lab.output_json(1)), 60, "the live view")
    # Saved mid-turn (autosave too): what a reader without the kernel shows of the live view
    # says the answer was still coming; it was the widget box's Python repr.
    (live,) = lab.save().cells[1].outputs
    for mime in ("text/plain", "text/html", "text/markdown"):
        assert WAITING in html.unescape(live["data"][mime]), live["data"]
    lab.page.goto("about:blank")  # the tab closes at the turn's start
    api.release()
    wait_until(lambda: kernel_state(lab) == "idle", 90, "the kernel to end the turn", interval=0.2)
    # The finding: the reopened notebook showed the cell as saved, without the answer.
    lab.reopen_notebook()
    wait_until(
        lambda: "PENDLATE-ANSWER" in lab.output_text(1),
        60,
        "the answer in its cell",
        detail=lambda: lab.output_text(1),
    )
    assert lab._js("return B.panel(path).context.model.dirty;") is True  # the user saves it
    lab.screenshot(f"pending-{lab.frontend}-answer-after-reopen.png")
    saved = lab.save()
    outputs = saved.cells[1].outputs
    assert any("PENDLATE-ANSWER" in str(o.get("data", {})) for o in outputs), outputs
    # The record replaced the live view and its line, and reads as one whose page stayed: its
    # metadata says the session and the answer's text (the read tool, resume --from).
    assert WAITING not in html.unescape(str(outputs)) and WIDGET not in str(outputs)
    byre = outputs[0]["metadata"]["byre"]
    assert byre["session_name"] == "default" and "PENDLATE-ANSWER" in byre["answer"], byre
    # Once: another page that opens gets nothing more.
    lab.reopen_notebook()
    assert lab._js("return B.panel(path).context.model.dirty;") is False
