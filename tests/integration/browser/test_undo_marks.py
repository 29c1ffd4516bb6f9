"""Who changed what, and taking a turn back (docs/bridge.md, "Provenance marks", "Undo"), in
JupyterLab and Notebook 7: a turn inserts a cell and changes another; after a save and a page
reload both carry a mark naming the turn (the prompt on hover); ``%claude undo`` shows the
batch in the review card and, after *Allow once*, both cells are as before the turn and the
marks are gone. A second turn does the same, the user types into the changed cell (its mark
goes at once): the undo refuses that cell, names it, keeps the typed text, and removes the new
cell. Screenshots of the marks, light and dark.

Figures (printed and written to tests/artifacts/, never asserted): the time from the undo's
*Allow once* to both cells restored, and the bytes the provenance adds to the saved notebook."""

from __future__ import annotations

import json

from byre_jupyter.scripted import ScriptedAPI

from .conftest import BOTH_FRONTENDS
from .harness import ARTIFACTS, LabPage
from .test_approvals import ALLOW, open_notebook, wait_for_card
from .test_notebook_edit import cell_ids, edit_turn, source
from .test_surface import set_theme

MARK = ".byre-provenance-mark"
NEW_1, NEW_2 = "undo-new-1", "undo-new-2"

# Times the click on Allow once and the moment both cells are restored, in the page's clock.
CLOCK = """([path, first, made, text]) => {
  const t = window.__byreUndoClock = { clicked: null, restored: null };
  const model = window.__byre.panel(path).content.model;
  const check = () => {
    const cells = model.sharedModel.cells;
    const cell = cells.find(c => c.id === first);
    if (t.clicked !== null && t.restored === null && cell && cell.getSource() === text
        && !cells.some(c => c.id === made)) {
      t.restored = performance.now();
    }
  };
  document.addEventListener('click', e => {
    const b = e.target && e.target.closest && e.target.closest('button');
    if (b && b.textContent.includes('Allow once') && t.clicked === null) {
      t.clicked = performance.now();
    }
  }, true);
  model.cells.changed.connect(check);
  model.sharedModel.cells.find(c => c.id === first).changed.connect(check);
  return true;
}"""


def marks(lab: LabPage) -> dict[str, str]:
    """Each marked cell's id and its mark's text."""
    found = lab._js(
        "const out = {}; for (const w of B.panel(path).content.widgets) {"
        f"  const m = w.node.querySelector('{MARK}'); if (m) out[w.model.id] = m.textContent; }}"
        "return out;"
    )
    return dict(found)


def mark_title(lab: LabPage, cell_id: str) -> str:
    return str(
        lab._js(
            "const w = B.panel(path).content.widgets.find(w => w.model.id === a0);"
            f"return w.node.querySelector('{MARK}').title;",
            cell_id,
        )
    )


def wait_for_marks(lab: LabPage, expected: set[str]) -> None:
    lab._wait_js(
        "([path, ids]) => { const out = []; for (const w of window.__byre.panel(path)"
        f".content.widgets) {{ if (w.node.querySelector('{MARK}')) out.push(w.model.id); }}"
        "return JSON.stringify(out.sort()) === JSON.stringify(ids); }",
        [lab._need_path(), sorted(expected)],
        30,
        f"marks on exactly {sorted(expected)}",
    )


@BOTH_FRONTENDS
def test_marks_follow_a_reload_and_undo_takes_the_turn_back(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    open_notebook(
        lab,
        claude_env,
        "x = 1\nprint(x)",
        "%%claude\nUNDOONE: add a cell and change x",
        "%claude undo",
        "%%claude\nUNDOTWO: again",
        "%claude history",
    )
    first = cell_ids(lab)[1]

    # 1. A turn inserts a cell below itself and changes cell 1.
    edit_turn(
        api,
        "UNDOONE",
        {"insert": {"after": None, "cell_type": "code", "source": "made = 1", "id": NEW_1}},
        {"replace": {"cell": first, "old": "x = 1", "new": "x = 2"}},
    )
    lab.run_cell(2, wait=False)
    wait_for_card(lab, 2).locator(ALLOW).click()
    assert lab.wait_for_cell(2, timeout=90)
    assert cell_ids(lab)[3] == NEW_1 and source(lab, 1) == "x = 2\nprint(x)"

    # 2. Saved and reloaded: the marks come back from metadata.byre, the prompt on hover.
    saved = lab.save()
    added = sum(
        len(json.dumps({"byre": c.metadata["byre"]})) for c in saved.cells if "byre" in c.metadata
    )
    lab.reopen_notebook()
    wait_for_marks(lab, {first, NEW_1})
    shown = marks(lab)
    assert shown[first].startswith("Claude #1 · ") and shown[NEW_1] == shown[first], shown
    assert "prompt: UNDOONE: add a cell and change x" in mark_title(lab, first)
    lab.screenshot(f"undo-marks-{lab.frontend}-light.png")
    set_theme(lab, "JupyterLab Dark")
    lab.screenshot(f"undo-marks-{lab.frontend}-dark.png")
    lab.page.set_viewport_size({"width": 700, "height": 1000})  # a narrow notebook
    lab.screenshot(f"undo-marks-{lab.frontend}-dark-700.png")
    lab.page.set_viewport_size({"width": 1400, "height": 1000})
    set_theme(lab, "JupyterLab Light")

    # 3. %claude undo in the reloaded page: one review card, both cells restored, marks gone.
    lab.page.evaluate(CLOCK, [lab._need_path(), first, NEW_1, "x = 1\nprint(x)"])
    lab.run_cell(4, wait=False)
    box = wait_for_card(lab, 4)
    card = box.inner_text()
    assert "-x = 2" in card and "+x = 1" in card and "-made = 1" in card, card
    lab.screenshot(f"undo-{lab.frontend}-review.png")
    box.locator(ALLOW).click()
    assert lab.wait_for_cell(4, timeout=60)
    clock = lab.page.evaluate("() => window.__byreUndoClock")
    assert NEW_1 not in cell_ids(lab) and source(lab, 1) == "x = 1\nprint(x)"
    assert "Undone turn #1" in lab.output_text(3), lab.output_text(3)
    wait_for_marks(lab, set())
    figure = clock["restored"] - clock["clicked"]
    print(
        f"\n%claude undo, Allow once to both cells restored ({lab.frontend}): {figure:.0f} ms; "
        f"provenance in the saved notebook: {added} bytes for 2 cells"
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"undo-{lab.frontend}-allow-to-restored-ms.txt").write_text(f"{figure:.1f}\n")
    (ARTIFACTS / f"undo-{lab.frontend}-provenance-bytes.txt").write_text(f"{added}\n")

    # 4. A second turn; the user types into the changed cell: its mark goes at once. The turn's
    # "Undo this turn's edits" runs %claude undo #2 in a cell below it, which refuses that cell,
    # names it, keeps the typed text, and removes the new cell.
    edit_turn(
        api,
        "UNDOTWO",
        {"insert": {"after": None, "cell_type": "code", "source": "made = 2", "id": NEW_2}},
        {"replace": {"cell": first, "old": "x = 1", "new": "x = 3"}},
    )
    lab.run_cell(4, wait=False)
    wait_for_card(lab, 4).locator(ALLOW).click()
    assert lab.wait_for_cell(4, timeout=90)
    wait_for_marks(lab, {first, NEW_2})
    lab.run_cell(6, timeout=60)  # %claude history: the tree, then each turn's cells
    history = lab.output_text(6)
    assert "turn #2 'UNDOTWO: again':" in history, history
    assert f"inserted code cell {NEW_2}: 'made = 2'" in history, history
    assert f"changed code cell {first}: 'x = 3'" in history, history
    assert "turn #1 'UNDOONE" not in history  # undone: nothing of it is left to take back
    typed = "x = 3  # mine now\nprint(x)"
    lab.set_source(1, typed)
    wait_for_marks(lab, {NEW_2})
    button = lab.output_locator(4).get_by_role("button", name="Undo this turn's edits")
    lab.screenshot(f"undo-{lab.frontend}-button.png")
    button.click()
    box = wait_for_card(lab, 5)
    assert source(lab, 5) == "%claude undo #2"
    assert "-made = 2" in box.inner_text() and "x = 3" not in box.inner_text()
    box.locator(ALLOW).click()
    out = lab.wait_for_output_text(5, "not restored", timeout=60)
    assert f"not restored: cell {first} ('x = 3  # mine now'): changed since turn #2" in out, out
    lab._wait_js(
        "([path, made]) => !window.__byre.panel(path).content.model.sharedModel.cells"
        ".some(c => c.id === made)",
        [lab._need_path(), NEW_2],
        30,
        "the new cell to go",
    )
    assert source(lab, 1) == typed
