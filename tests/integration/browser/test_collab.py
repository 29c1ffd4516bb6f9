"""Two people on one notebook and one kernel: two pages, each in a browser context of
its own, on one Lab server. Page ``lab`` (A) runs the ``%%claude`` cell and holds the bridge
(it opened the notebook last, and a newer bridge comm replaces the older one: docs/bridge.md);
page ``other_lab`` (B) is the other person.

The tests marked ``collab`` run in the collaboration tier (``./dev test-collab``: Lab from
.venv-collab, with jupyter-collaboration, requirements/collab.txt), where both pages edit one
shared document; the fixture checks that collaboration is really on, so the tier never passes
without it. Elsewhere they are deselected (conftest.py). The one test without the mark runs in
the main browser tier, without collaboration: each page has a model of its own.

The time from *Allow once* in page A to the new cell in page B's model is printed and written to
tests/artifacts/ as a figure (never asserted)."""

from __future__ import annotations

import urllib.parse
from typing import Any

import pytest

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, ScriptedRequest, Text, ToolUse

from .harness import ARTIFACTS, HarnessError, LabPage, new_notebook, wait_until
from .test_approvals import ALLOW, ASKS, LOAD, tool_result_for, wait_for_card

pytestmark = pytest.mark.cli
COLLAB = pytest.mark.collab

READ = "mcp__byre__notebook"
EDIT = "mcp__byre__edit_notebook"
NEW_ID = "claude-collab-1"
INSERTED = "inserted = 42\nprint('RAN-INSERTED', inserted * 2)"
TYPED = "  # typed in the other page"
#: The mark of a cell whose card waits in another page (labextension/src/waiting.ts).
WAITING = ".byre-waiting-mark"

# Page A: the moment of the click on Allow once (epoch ms: both pages share the machine's clock).
CLICK_CLOCK = """() => {
  window.__byreClicked = null;
  document.addEventListener('click', e => {
    const b = e.target && e.target.closest && e.target.closest('button');
    if (b && b.textContent.includes('Allow once') && window.__byreClicked === null) {
      window.__byreClicked = Date.now();
    }
  }, true);
  return true;
}"""
# Page B: the moment its model gains a cell (epoch ms).
ARRIVAL_CLOCK = """([path]) => {
  window.__byreArrived = null;
  const cells = window.__byre.panel(path).content.model.cells;
  const n = cells.length;
  cells.changed.connect(() => {
    if (window.__byreArrived === null && cells.length > n) { window.__byreArrived = Date.now(); }
  });
  return true;
}"""


def cell_ids(lab: LabPage) -> list[str]:
    return list(lab._js("return B.panel(path).content.model.sharedModel.cells.map(c => c.id);"))


def source(lab: LabPage, i: int | str) -> str:
    """Cell ``i``'s source: by index, or by id."""
    if isinstance(i, str):
        return str(
            lab._js(
                "return B.panel(path).content.model.sharedModel.cells"
                ".find(c => c.id === a0).getSource();",
                i,
            )
        )
    return str(lab._js("return B.cell(path, a0).model.sharedModel.getSource();", i))


def collaborative(lab: LabPage) -> dict[str, Any]:
    """What says whether the page's notebook is a shared document: the docprovider's plugin,
    the model's own flag, and the server's collaboration session for the file."""
    page = lab._js(
        "return { plugin: window.jupyterapp.hasPlugin("
        "'@jupyter/docprovider-extension:ynotebook'),"
        " model: B.panel(path).context.model.collaborative === true };"
    )
    try:
        session = lab.server.api(
            "PUT",
            "api/collaboration/session/" + urllib.parse.quote(lab._need_path()),
            {"format": "json", "type": "notebook"},
        )
    except HarnessError:
        session = None
    return {**page, "session": session}


def open_both(lab: LabPage, other: LabPage, env: dict[str, str], *cells: str) -> str:
    """The notebook (cell 0 loads byre_jupyter, then ``cells``) opened in page B, cell 0 run
    there, then opened in page A, which then holds the bridge; returns its path."""
    path = other.open_notebook(new_notebook(LOAD, *cells), kernel_env=env)
    other.run_cell(0, timeout=60)
    out = other.output_text(0)
    assert "Error" not in out and "Traceback" not in out, out
    lab.join_notebook(path)
    # Both pages are on one kernel (one session for the path).
    sessions = lab.server.api("GET", "api/sessions")
    kernels = {s["kernel"]["id"] for s in sessions if s["path"] == path}
    assert len(kernels) == 1, kernels
    return path


def assert_rtc(lab: LabPage, other: LabPage) -> None:
    """The collaboration tier must test with collaboration on, in both pages."""
    for page in (lab, other):
        state = collaborative(page)
        assert state["plugin"] and state["model"] and state["session"], state


def _last_tool(req: ScriptedRequest) -> str | None:
    results = req.last_tool_results
    return results[-1]["tool_name"] if results else None


def read_then_edit(api: ScriptedAPI, word: str, *edits: dict[str, object]) -> None:
    """A turn where Claude reads the notebook, then sends ``edits``, then ends."""
    api.on(word, Reply(ToolUse(READ, {})), times=1)
    api.on(lambda r: _last_tool(r) == READ, Reply(ToolUse(EDIT, {"edits": list(edits)})), times=1)
    api.on(lambda r: _last_tool(r) == EDIT, Reply(Text(f"{word}-DONE")), times=1)


def shows_card(lab: LabPage, i: int) -> bool:
    return bool(lab.output_locator(i).get_by_text(ASKS).count())


def screenshots(lab: LabPage, other: LabPage, name: str) -> None:
    lab.screenshot(f"collab-{name}-A.png")
    other.screenshot(f"collab-{name}-B.png")


@COLLAB
def test_an_approved_insert_lands_once_and_shows_in_both_pages(
    lab: LabPage, other_lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    path = open_both(lab, other_lab, claude_env, "x = 1", "%%claude\nCOLLABINS: add a cell")
    assert_rtc(lab, other_lab)
    read_then_edit(
        api,
        "COLLABINS",
        {"insert": {"after": None, "cell_type": "code", "source": INSERTED, "id": NEW_ID}},
    )
    other_lab.page.evaluate(ARRIVAL_CLOCK, [path])
    lab.page.evaluate(CLICK_CLOCK)
    lab.run_cell(2, wait=False)
    box = wait_for_card(lab, 2)
    assert lab.cell_count() == other_lab.cell_count() == 3  # nothing applied before the click
    # The card is a widget of the shared kernel: page B renders it too (and could answer it).
    assert shows_card(other_lab, 2), other_lab.output_text(2)
    screenshots(lab, other_lab, "insert-pending")
    box.locator(ALLOW).click()
    assert lab.wait_for_cell(2, timeout=90)
    result = tool_result_for(api, EDIT)
    assert not result["is_error"] and f"New cell ids: {NEW_ID}" in result["text"], result

    for page in (lab, other_lab):
        wait_until(lambda p=page: NEW_ID in cell_ids(p), 30, "the new cell in both pages")
        ids = cell_ids(page)
        assert ids.count(NEW_ID) == 1 and len(ids) == 4 and ids[3] == NEW_ID, ids
        assert source(page, 3) == INSERTED
    clicked = lab.page.evaluate("() => window.__byreClicked")
    arrived = other_lab.page.evaluate("() => window.__byreArrived")
    figure = arrived - clicked
    print(f"\ncollab: Allow once in page A to the cell in page B's model: {figure:.0f} ms")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "collab-allow-to-other-page-ms.txt").write_text(f"{figure:.1f}\n")
    screenshots(lab, other_lab, "insert-applied")

    saved = lab.save()
    assert [c.id for c in saved.cells].count(NEW_ID) == 1
    assert next(c for c in saved.cells if c.id == NEW_ID).source == INSERTED
    assert cell_ids(other_lab).count(NEW_ID) == 1  # the save duplicated nothing


@COLLAB
def test_an_edit_of_a_cell_the_other_page_typed_into_is_refused_and_the_text_kept(
    lab: LabPage, other_lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    open_both(lab, other_lab, claude_env, "x = 1\nprint(x)", "%%claude\nCOLLABTYPE: change x")
    assert_rtc(lab, other_lab)
    first = cell_ids(lab)[1]
    read_then_edit(api, "COLLABTYPE", {"replace": {"cell": first, "old": "x = 1", "new": "x = 9"}})
    lab.run_cell(2, wait=False)
    box = wait_for_card(lab, 2)
    # Page B types at the end of the cell Claude is about to change: real keystrokes, which
    # leave Claude's `old` text whole, so only the cell as a whole tells that it changed.
    other_lab.cell_locator(1).locator(".cm-content").click()
    other_lab.page.keyboard.press("Control+End")
    other_lab.page.keyboard.type(TYPED)
    typed = "x = 1\nprint(x)" + TYPED
    wait_until(lambda: source(lab, 1) == typed, 30, "page B's typing to reach page A")
    box.locator(ALLOW).click()
    assert lab.wait_for_cell(2, timeout=90)
    result = tool_result_for(api, EDIT)
    assert result["is_error"] and f"cell {first} changed since you read it" in result["text"], (
        result
    )
    assert source(lab, 1) == typed and source(other_lab, 1) == typed
    lab.output_locator(2).get_by_text("byre.edit_notebook").first.click()  # open the tool card
    assert "changed since you read it" in lab.output_text(2), lab.output_text(2)
    screenshots(lab, other_lab, "typed-refused")


@COLLAB
def test_an_edit_of_a_cell_the_other_page_deleted_is_refused_and_named(
    lab: LabPage, other_lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    open_both(lab, other_lab, claude_env, "x = 1", "keep = 2", "%%claude\nCOLLABDEL: change x")
    assert_rtc(lab, other_lab)
    target = cell_ids(lab)[1]
    read_then_edit(
        api,
        "COLLABDEL",
        {"replace": {"cell": target, "old": "x = 1", "new": "x = 9"}},
        {"insert": {"after": None, "cell_type": "code", "source": INSERTED, "id": NEW_ID}},
    )
    lab.run_cell(3, wait=False)
    box = wait_for_card(lab, 3)
    # Page B deletes the cell as a user does: select it, command mode, D D.
    other_lab.cell_locator(1).locator(".jp-InputPrompt").click()
    other_lab.page.keyboard.press("Escape")
    other_lab.page.keyboard.press("d")
    other_lab.page.keyboard.press("d")
    wait_until(lambda: target not in cell_ids(lab), 30, "page B's delete to reach page A")
    box.locator(ALLOW).click()
    assert lab.wait_for_cell(3, timeout=90)
    result = tool_result_for(api, EDIT)
    assert result["is_error"] and f"cell {target} is no longer in the notebook" in result["text"]
    for page in (lab, other_lab):  # nothing of the batch applied, nothing brought back
        ids = cell_ids(page)
        assert target not in ids and NEW_ID not in ids and len(ids) == 3, ids
    screenshots(lab, other_lab, "deleted-refused")


@COLLAB
def test_closing_the_page_that_holds_the_bridge_mid_turn_loses_and_repeats_nothing(
    lab: LabPage, other_lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    path = open_both(
        lab, other_lab, claude_env, "runs = []", "%%claude\nCOLLABCLOSE: add a cell and run it"
    )
    assert_rtc(lab, other_lab)
    lab.run_cell(1, timeout=60)  # runs = []
    # The turn's first answer waits until page A is gone; then Claude reads, inserts a cell
    # (reviewed in page B, where the turn's card now is) and runs it once.
    api.on("COLLABCLOSE", Hang(then=Reply(ToolUse(READ, {}))), times=1)
    code = "runs.append(1)\nprint('RUNS', len(runs))"
    api.on(
        lambda r: _last_tool(r) == READ,
        Reply(ToolUse(EDIT, {"edits": [{"insert": {"after": None, "cell_type": "code",
                                                   "source": code, "id": NEW_ID}}]})),
        times=1,
    )  # fmt: skip
    api.on(
        lambda r: _last_tool(r) == EDIT,
        Reply(ToolUse("mcp__byre__run_cells", {"cells": [NEW_ID]})),
        times=1,
    )
    api.on(lambda r: _last_tool(r) == "mcp__byre__run_cells", Reply(Text("CLOSE-DONE")), times=1)
    lab.run_cell(2, wait=False)
    api.wait_for_request(lambda r: "COLLABCLOSE" in r.last_user_text, timeout=60)
    lab.page.close()
    api.release()
    wait_for_card(other_lab, 2, timeout=30).locator(ALLOW).click()  # the edit, adopting the turn
    edited = tool_result_for(api, EDIT, timeout=60)
    assert not edited["is_error"] and f"New cell ids: {NEW_ID}" in edited["text"], edited
    wait_for_card(other_lab, 2, timeout=60).locator(ALLOW).click()  # the run
    wait_until(lambda: "CLOSE-DONE" in other_lab.output_text(2), 90, "the turn to end in page B")
    ids = cell_ids(other_lab)
    assert ids.count(NEW_ID) == 1, ids
    assert "RUNS 1" in other_lab.output_text(ids.index(NEW_ID))
    ran = tool_result_for(api, "mcp__byre__run_cells")
    assert not ran["is_error"] and "RUNS 1" in ran["text"] and "RUNS 2" not in ran["text"], ran
    other_lab.screenshot("collab-closed-B.png")
    assert path


def test_without_collaboration_each_page_has_its_own_model(
    lab: LabPage, other_lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    """Lab without RTC: the edit lands in page A's model only; page B's typing stays in B's.
    While A's card waits, B (which shows no card: the outputs go to A) marks the cell "Claude
    waits for an answer in another tab" (``review.pending``), until A's *Allow once*."""
    open_both(lab, other_lab, claude_env, "x = 1\nprint(x)", "%%claude\nSOLOINS: add a cell")
    state = collaborative(lab)
    assert not state["plugin"] and not state["model"] and state["session"] is None, state
    read_then_edit(
        api,
        "SOLOINS",
        {"insert": {"after": None, "cell_type": "code", "source": INSERTED, "id": NEW_ID}},
    )
    lab.run_cell(2, wait=False)
    box = wait_for_card(lab, 2)
    waits = other_lab.cell_locator(2).locator(WAITING)
    wait_until(lambda: waits.count() == 1, 30, "page B's mark on the waiting cell")
    assert waits.text_content() == "Claude waits for an answer in another tab"
    assert not shows_card(other_lab, 2)
    assert lab.cell_locator(2).locator(WAITING).count() == 0  # A shows the card itself
    other_lab.screenshot("no-rtc-waiting-B.png")
    other_lab.cell_locator(1).locator(".cm-content").click()
    other_lab.page.keyboard.press("Control+End")
    other_lab.page.keyboard.type(TYPED)
    box.locator(ALLOW).click()
    assert lab.wait_for_cell(2, timeout=90)
    wait_until(lambda: waits.count() == 0, 30, "page B's mark gone once the card was answered")
    assert NEW_ID in cell_ids(lab) and NEW_ID not in cell_ids(other_lab)
    assert source(lab, 1) == "x = 1\nprint(x)"  # page B's typing never reached page A
    assert source(other_lab, 1) == "x = 1\nprint(x)" + TYPED
    screenshots(lab, other_lab, "no-rtc")


@COLLAB
def test_an_edit_asked_for_in_the_page_that_does_not_hold_the_bridge_lands(
    lab: LabPage, other_lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    """Page B opened the notebook first, so page A's comm holds the bridge; the person in page
    B runs the ``%%claude`` cell, approves in page B, and the insert lands in both pages."""
    open_both(lab, other_lab, claude_env, "x = 1", "%%claude\nCOLLABB: add a cell")
    assert_rtc(lab, other_lab)
    read_then_edit(
        api,
        "COLLABB",
        {"insert": {"after": None, "cell_type": "code", "source": INSERTED, "id": NEW_ID}},
    )
    other_lab.run_cell(2, wait=False)
    wait_for_card(other_lab, 2).locator(ALLOW).click()
    assert other_lab.wait_for_cell(2, timeout=90)
    result = tool_result_for(api, EDIT)
    screenshots(lab, other_lab, "run-in-B")
    assert not result["is_error"] and f"New cell ids: {NEW_ID}" in result["text"], result
    for page in (lab, other_lab):
        wait_until(lambda p=page: NEW_ID in cell_ids(p), 30, "the new cell in both pages")
        assert cell_ids(page).count(NEW_ID) == 1


@COLLAB
def test_an_undo_asked_for_in_the_other_page_restores_the_cells_in_both(
    lab: LabPage, other_lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    """Page A's turn changes a cell and inserts one; the person in page B (which does not hold
    the bridge) runs ``%claude undo`` and allows it there: the undo's edit goes to page B, the
    page that opened its turn, and both pages show the cells restored."""
    open_both(
        lab, other_lab, claude_env, "x = 1", "%%claude\nCOLLABUNDO: change x, add", "%claude undo"
    )
    assert_rtc(lab, other_lab)
    first = cell_ids(lab)[1]
    read_then_edit(
        api,
        "COLLABUNDO",
        {"replace": {"cell": first, "old": "x = 1", "new": "x = 2"}},
        {"insert": {"after": None, "cell_type": "code", "source": INSERTED, "id": NEW_ID}},
    )
    lab.run_cell(2, wait=False)
    wait_for_card(lab, 2).locator(ALLOW).click()
    assert lab.wait_for_cell(2, timeout=90)
    wait_until(lambda: NEW_ID in cell_ids(other_lab), 30, "the turn's cell in page B")
    assert source(other_lab, first) == "x = 2"
    other_lab.run_cell(4, wait=False)  # the %claude undo cell, below the inserted one
    wait_for_card(other_lab, 4).locator(ALLOW).click()
    assert other_lab.wait_for_cell(4, timeout=60)
    # The inserted cell is gone: the undo cell is the fourth again.
    assert "Undone turn #1" in other_lab.output_text(3), other_lab.output_text(3)
    for page in (lab, other_lab):
        wait_until(lambda p=page: NEW_ID not in cell_ids(p), 30, "the inserted cell gone")
        assert source(page, first) == "x = 1"
    screenshots(lab, other_lab, "undo-in-B")
