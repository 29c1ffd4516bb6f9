"""``mcp__byre__edit_notebook`` in JupyterLab and Notebook 7 through the frontend bridge, one
page load for every check (docs/bridge.md): after *Allow once* on the review card an insert
appears below the asking cell with the given source and id; a replace whose ``old`` the user
has since typed over is refused and the user's text stays; a replace and a delete apply; Lab's
undo restores the changed cell; the saved notebook holds the edits and their provenance;
``mcp__byre__run_cells`` on the cell Claude inserted shows its output in that cell and returns it.
The review card shows every line that *Allow once* inserts, code between two comments that look
like a PEM block included, and nothing runs before the click.

The time from the *Allow once* click to the new cell in the model is printed and written to
tests/artifacts/ as a figure (never asserted)."""

from __future__ import annotations

import pytest

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

from .conftest import BOTH_FRONTENDS
from .harness import ARTIFACTS, LabPage
from .test_approvals import ALLOW, open_notebook, tool_result_for, wait_for_card
from .test_no_remote_loads import Counter, counter

__all__ = ["counter"]  # the counting server's fixture, used here

pytestmark = pytest.mark.cli

TOOL = "mcp__byre__edit_notebook"
NEW_ID = "claude-new-1"
INSERTED = "inserted = 42\nprint('RAN-INSERTED', inserted * 2)"
TYPED = "x = 5  # typed by the user after Claude read it\nprint(x)"

# Times the click on Allow once and the moment the model gains a cell, in the page's clock.
CLOCK = """([path]) => {
  const t = window.__byreEditClock = { clicked: null, shown: null };
  document.addEventListener('click', e => {
    const b = e.target && e.target.closest && e.target.closest('button');
    if (b && b.textContent.includes('Allow once') && t.clicked === null) {
      t.clicked = performance.now();
    }
  }, true);
  const cells = window.__byre.panel(path).content.model.cells;
  const n = cells.length;
  cells.changed.connect(() => {
    if (t.shown === null && cells.length > n) { t.shown = performance.now(); }
  });
  return true;
}"""


def cell_ids(lab: LabPage) -> list[str]:
    return list(lab._js("return B.panel(path).content.model.sharedModel.cells.map(c => c.id);"))


def source(lab: LabPage, i: int) -> str:
    return str(lab._js("return B.cell(path, a0).model.sharedModel.getSource();", i))


def edit_turn(api: ScriptedAPI, word: str, *edits: dict[str, object]) -> None:
    api.on(word, Reply(ToolUse(TOOL, {"edits": list(edits)})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text(f"{word}-DONE")), times=1)


@BOTH_FRONTENDS
def test_edits_are_reviewed_applied_refused_undone_and_saved(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    open_notebook(
        lab,
        claude_env,
        "x = 1\nprint(x)",
        "victim = 'delete me'",
        "%%claude\nEDITINS: add a cell",
        "%%claude\nEDITCONFLICT: change x",
        "%%claude\nEDITMORE: change x and drop the victim",
        "%%claude\nEDITRUN: run the cell you made",
    )
    first, victim = cell_ids(lab)[1:3]

    # 1. An insert below the asking cell, with the id Claude gave, after Allow once.
    edit_turn(
        api,
        "EDITINS",
        {"insert": {"after": None, "cell_type": "code", "source": INSERTED, "id": NEW_ID}},
        {"replace": {"cell": first, "old": "print(x)", "new": "print(x)  # <b>shown</b>"}},
    )
    lab.run_cell(3, wait=False)
    box = wait_for_card(lab, 3)
    card = box.inner_text()
    assert "Edit the notebook: 2 cells (1 new, 1 changed)" in card, card
    assert "+inserted = 42" in card and "+print(x)  # <b>shown</b>" in card, card
    assert box.locator("b", has_text="shown").count() == 0  # the cell text is text
    assert lab.cell_count() == 7  # nothing applied before the click
    lab.screenshot(f"edit-{lab.frontend}-diff-card.png")
    lab.page.evaluate(CLOCK, [lab._need_path()])
    box.locator(ALLOW).click()
    assert lab.wait_for_cell(3, timeout=90)
    clock = lab.page.evaluate("() => window.__byreEditClock")
    ids = cell_ids(lab)
    assert ids[4] == NEW_ID and source(lab, 4) == INSERTED, ids
    assert source(lab, 1) == "x = 1\nprint(x)  # <b>shown</b>"
    result = tool_result_for(api, TOOL)
    assert not result["is_error"] and f"New cell ids: {NEW_ID}" in result["text"], result
    figure = clock["shown"] - clock["clicked"]
    print(f"\nedit_notebook, Allow once to the cell in the model ({lab.frontend}): {figure:.0f} ms")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"edit-{lab.frontend}-allow-to-cell-ms.txt").write_text(f"{figure:.1f}\n")

    # 2. The user types over what Claude read while the card waits: refused, the text kept.
    edit_turn(api, "EDITCONFLICT", {"replace": {"cell": first, "old": "x = 1", "new": "x = 100"}})
    lab.run_cell(5, wait=False)
    box = wait_for_card(lab, 5)
    lab.set_source(1, TYPED)
    box.locator(ALLOW).click()
    assert lab.wait_for_cell(5, timeout=90)
    assert source(lab, 1) == TYPED
    refused = api.wait_for_request(
        lambda r: any("changed since you read it" in t["text"] for t in r.last_tool_results)
    ).last_tool_results[-1]
    assert refused["is_error"] and f"cell {first} changed since you read it" in refused["text"]
    # The visible line says it did not land, and why; it once read "Approved: ...".
    shown = lab.output_text(5)
    assert "Not applied: Edit the notebook: 1 cell (1 changed)" in shown, shown
    assert f"cell {first} changed since you read it" in shown and "Approved: Edit" not in shown
    lab.output_locator(5).get_by_text("byre.edit_notebook").first.click()  # open the tool card
    lab.screenshot(f"edit-{lab.frontend}-refused-conflict.png")

    # 3. A replace and a delete in one batch; the saved file holds them and their provenance.
    edit_turn(
        api,
        "EDITMORE",
        {"replace": {"cell": first, "old": "x = 5", "new": "x = 7"}},
        {"delete": {"cell": victim}},
    )
    lab.run_cell(6, wait=False)
    wait_for_card(lab, 6).locator(ALLOW).click()
    assert lab.wait_for_cell(6, timeout=90)
    ids = cell_ids(lab)
    assert victim not in ids and source(lab, 1).startswith("x = 7  # typed by the user"), ids
    saved = lab.save()
    by_id = {cell.id: cell for cell in saved.cells}
    assert victim not in by_id and by_id[NEW_ID].source == INSERTED
    assert by_id[first].source.startswith("x = 7")
    for cell in (by_id[NEW_ID], by_id[first]):
        provenance = cell.metadata["byre"]
        assert provenance["conversation"] and isinstance(provenance["turn"], int), provenance

    # 4. Lab's undo in the changed cell restores what the user had typed.
    editor = lab.cell_locator(1).locator(".cm-content")
    editor.click()
    lab.page.keyboard.press("Control+z")
    lab._wait_js(
        "([path, text]) => window.__byre.cell(path, 1).model.sharedModel.getSource() === text",
        [lab._need_path(), TYPED],
        30,
        "the undo to restore the cell",
    )

    # 5. Claude runs the cell it inserted: the output lands in that cell, and goes back to it.
    api.on("EDITRUN", Reply(ToolUse("mcp__byre__run_cells", {"cells": [NEW_ID]})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("EDITRUN-DONE")), times=1)
    new_at = cell_ids(lab).index(NEW_ID)
    last = lab.cell_count() - 1
    lab.run_cell(last, wait=False)
    wait_for_card(lab, last).locator(ALLOW).click()  # as for the python tool (python_tool: ask)
    assert lab.wait_for_cell(last, timeout=90)
    assert "RAN-INSERTED 84" in lab.output_text(new_at), lab.output_text(new_at)
    ran = tool_result_for(api, "mcp__byre__run_cells")
    assert not ran["is_error"] and "RAN-INSERTED 84" in ran["text"], ran
    lab.screenshot(f"edit-{lab.frontend}-inserted-and-run.png")
    saved = lab.save()
    outputs = next(cell for cell in saved.cells if cell.id == NEW_ID).outputs
    assert any("RAN-INSERTED 84" in o.get("text", "") for o in outputs), outputs


def hidden_call(base: str) -> str:
    """Five lines: a network call between two comments that look like a PEM block, which the
    redacted review once cut to three."""
    return (
        "# -----BEGIN PRIVATE KEY-----\n"
        "import urllib.request\n"
        f"urllib.request.urlopen('{base}/hidden-call').read()\n"
        "# -----END PRIVATE KEY-----\n"
        "print('RAN-HIDDEN')"
    )


def test_the_review_shows_every_line_it_inserts_and_nothing_runs_before_it(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], counter: Counter
) -> None:
    open_notebook(lab, claude_env, "%%claude\nEDITHIDE: add a cell")
    code = hidden_call(counter.base)
    edit_turn(
        api,
        "EDITHIDE",
        {"insert": {"after": None, "cell_type": "code", "source": code, "id": "hidden-1"}},
    )
    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    card = box.inner_text()
    for line in code.split("\n"):
        assert f"+{line}" in card, (line, card)
    assert "+1,5" in card and "[redacted]" not in card, card
    assert counter.paths == [] and lab.cell_count() == 2  # nothing ran, nothing inserted
    box.locator(ALLOW).click()
    assert lab.wait_for_cell(1, timeout=90)
    assert source(lab, 2) == code  # what the card showed is what was inserted
    assert counter.paths == []  # inserting runs nothing
    # The user runs it: the call the card showed is the one that reaches the counter.
    lab.run_cell(2, timeout=60)
    counter.wait_for("/hidden-call", 20, "the inserted cell's request")
    assert "RAN-HIDDEN" in lab.output_text(2)
