"""Every turn owns its cell, in a real JupyterLab.

Two ``--bg`` cells of one session exist at once: the first runs, the second waits in the
session's queue. Each approval card must appear in the cell whose turn asked, and Stop in a cell
must stop that cell's turn only (a queued one is withdrawn and never sent). "Always allow" lasts
for one conversation: ``%claude new`` ends it, and ``%claude permissions`` lists and clears it.
The real CLI runs in permission mode "default", so every Bash call asks.

Browser tests are sync functions (see conftest.py). Every wait is bounded; no fixed sleeps.
"""

from __future__ import annotations

import functools
import json

import pytest

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text

from .harness import LabPage, wait_until
from .test_approvals import bash, wait_for_card
from .test_approvals import open_notebook as open_in

# The approvals tests' notebook opener (cell 0 loads byre_jupyter), in a folder of this file's.
open_notebook = functools.partial(open_in, name="turns")

pytestmark = pytest.mark.cli

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
ASKS = "Claude asks:"
ALLOW = 'button.widget-button:has-text("Allow once")'
ALWAYS = 'button.widget-button:has-text("Always allow (session)")'
STOP = 'button.widget-button:has-text("Stop")'


def card_count(lab: LabPage, i: int) -> int:
    return int(lab.output_locator(i).get_by_text(ASKS).count())


def wait_for_live(lab: LabPage, i: int, timeout: float = 60.0) -> None:
    """Cell ``i``'s live view (with its Stop button) is on the page: its turn was sent."""
    lab.output_locator(i).locator(STOP).first.wait_for(state="visible", timeout=timeout * 1000)


def static_markdown(lab: LabPage, i: int) -> str | None:
    """The saved markdown of cell ``i`` once its turn ended (the widget replaced), else None."""
    outputs = lab.output_json(i)
    if not outputs or WIDGET_MIME in json.dumps(outputs):
        return None
    md = outputs[0].get("data", {}).get("text/markdown")
    return ("".join(md) if isinstance(md, list) else md) if md else None


def wait_static(lab: LabPage, i: int, timeout: float = 60.0) -> str:
    wait_until(lambda: static_markdown(lab, i) is not None, timeout, f"cell {i} to end")
    md = static_markdown(lab, i)
    assert md is not None
    return md


def test_two_bg_cells_each_get_their_own_approval_card(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = open_notebook(
        lab,
        claude_env,
        "%%claude --bg\nCARD_ONE: make the first file",
        "%%claude --bg\nCARD_TWO: make the second file",
    )
    files = [folder / "one.txt", folder / "two.txt"]
    cmds = [f"touch {files[0]} && echo made1", f"touch {files[1]} && echo made2"]
    api.on("CARD_ONE", Hang(then=Reply(bash(cmds[0], "First file"))), times=1)
    api.on("CARD_TWO", Reply(bash(cmds[1], "Second file")), times=1)
    api.on(lambda r: "made1" in r.last_user_text, Reply(Text("first made: ONE_DONE")))
    api.on(lambda r: "made2" in r.last_user_text, Reply(Text("second made: TWO_DONE")))

    lab.run_cell(1)  # --bg: the cell returns at once, the turn goes on
    api.wait_for_request("CARD_ONE", timeout=60)
    lab.run_cell(2)
    wait_for_live(lab, 2)  # cell 2's turn waits in the queue behind cell 1's
    api.release()  # cell 1's turn now asks for its Bash call

    box = wait_for_card(lab, 1)
    assert box.locator("pre").inner_text().strip() == cmds[0]
    assert card_count(lab, 2) == 0, lab.output_text(2)
    lab.screenshot("turn-cells-card-in-own-cell.png")
    box.locator(ALLOW).click()
    assert "ONE_DONE" in wait_static(lab, 1)

    box = wait_for_card(lab, 2)  # cell 2's turn runs now; its card is in cell 2
    assert box.locator("pre").inner_text().strip() == cmds[1]
    box.locator(ALLOW).click()
    md2 = wait_static(lab, 2)
    assert "TWO_DONE" in md2 and "echo made2 (allowed once)" in md2, md2
    md1 = static_markdown(lab, 1) or ""
    assert "echo made1 (allowed once)" in md1 and "made2" not in md1, md1
    assert files[0].exists() and files[1].exists()


def test_stop_in_each_bg_cell_stops_its_own_turn(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = open_notebook(
        lab,
        claude_env,
        "%%claude --bg\nSTOP_RUNNING: make a file",
        "%%claude --bg\nSTOP_QUEUED: make another",
        "%%claude\nAFTER_STOPS: still there?",
    )
    files = [folder / "running.txt", folder / "queued.txt"]
    api.on("STOP_RUNNING", Reply(bash(f"touch {files[0]}", "Running file")), times=1)
    api.on("STOP_QUEUED", Reply(bash(f"touch {files[1]}", "Queued file")), times=1)
    api.on("AFTER_STOPS", Reply(Text("yes: AFTER_DONE")), times=1)
    api.default = Reply(Text("should not be needed"))

    lab.run_cell(1)
    wait_for_card(lab, 1)  # cell 1's turn is running and waits for a click
    lab.run_cell(2)
    wait_for_live(lab, 2)  # cell 2's turn is queued behind it

    lab.click_in_output(2, selector=STOP)  # Stop the queued cell: only cell 2 ends
    md2 = wait_static(lab, 2, timeout=30)
    assert "Interrupted" in md2, md2
    assert card_count(lab, 1) == 1, lab.output_text(1)  # cell 1 still waits for its answer
    assert static_markdown(lab, 1) is None  # and is still live

    lab.click_in_output(1, selector=STOP)  # Stop the running cell
    md1 = wait_static(lab, 1, timeout=30)
    assert "Interrupted" in md1 and "Stopped by the user" in md1, md1

    lab.run_cell(3, wait=False)
    assert lab.wait_for_cell(3, timeout=60)
    assert "AFTER_DONE" in lab.output_text(3)
    sent = "\n".join(json.dumps(r.body.get("messages", [])) for r in api.requests)
    assert "AFTER_STOPS" in sent and "STOP_QUEUED" not in sent
    assert not files[0].exists() and not files[1].exists()


def test_always_allow_ends_with_the_conversation_and_can_be_cleared(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = open_notebook(
        lab,
        claude_env,
        "%%claude -o first\nALWAYS_ONE: make a file",
        "%claude new",
        "%%claude\nALWAYS_TWO: make another",
        "%claude permissions",
        "%claude permissions --clear",
        "%claude resume default {first.session_id}",
    )
    files = [folder / "always1.txt", folder / "always2.txt"]
    api.on("ALWAYS_ONE", Reply(bash(f"touch {files[0]} && echo made1", "One")), times=1)
    api.on("ALWAYS_TWO", Reply(bash(f"touch {files[1]} && echo made2", "Two")))
    api.on(lambda r: "made1" in r.last_user_text, Reply(Text("ONE_DONE")))
    api.on(lambda r: "made2" in r.last_user_text, Reply(Text("TWO_DONE")))

    def always_allow(i: int) -> None:
        lab.run_cell(i, wait=False)
        wait_for_card(lab, i).locator(ALWAYS).click()
        assert lab.wait_for_cell(i, timeout=60)

    always_allow(1)
    assert files[0].exists()
    lab.run_cell(2, timeout=30)  # %claude new: a fresh conversation
    always_allow(3)  # the same tool asks again (0.1 let it run without a card)
    assert files[1].exists()
    lab.run_cell(4, timeout=30)
    listed = lab.output_text(4)
    assert "always allowed in this conversation (1 rule):" in listed, listed
    assert f"Bash(touch {files[1]} && echo made2)" in listed, listed  # the rule, whole

    lab.run_cell(5, timeout=30)  # --clear
    assert "cleared 1 rule" in lab.output_text(5), lab.output_text(5)
    lab.run_cell(4, timeout=30)
    assert "nothing is always allowed" in lab.output_text(4), lab.output_text(4)
    always_allow(3)  # cleared: it asks again

    lab.run_cell(6, timeout=30)  # resume the first conversation: this one's allowance ends
    assert "resumes conversation" in lab.output_text(6), lab.output_text(6)
    lab.run_cell(4, timeout=30)
    assert "nothing is always allowed" in lab.output_text(4), lab.output_text(4)
