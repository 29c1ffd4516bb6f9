"""The live cell's controls as a user meets them, in JupyterLab and Notebook 7:
a copy button on code blocks, a waiting approval card brought into view during Run All,
focus back in the notebook after Stop, and roles and labels for screen readers.

The real ``claude`` CLI runs against the scripted Messages API. Browser tests are sync
functions (see conftest.py). Every wait is bounded; no fixed sleeps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text

from .conftest import BOTH_FRONTENDS
from .harness import LabPage, new_notebook, wait_until
from .test_approvals import ASKS, DENY, LOAD, STOP, _last_tool, bash, open_notebook, wait_for_card
from .test_surface import CODE_ANSWER, bash_call, open_claude_notebook

pytestmark = pytest.mark.cli

COPY = '.byre-copy[role="button"]'
CODE = "def area(r):\n    # the circle's area\n    return 3.14159 * r ** 2\n"
# Where an element is against the window: what the user sees without scrolling.
IN_VIEW_JS = """(el) => {
  const r = el.getBoundingClientRect();
  return { top: r.top, bottom: r.bottom, height: r.height, inner: window.innerHeight,
           visible: r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight };
}"""


# --------------------------------------------------------------------------------------------
# copy button


@BOTH_FRONTENDS
def test_copy_button_puts_the_code_on_the_clipboard(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    lab.page.context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=lab.server.base_url.rstrip("/")
    )
    api.on("COPYCODE", Reply(Text(CODE_ANSWER), bash_call("true")), times=1)
    api.on(lambda r: bool(r.last_tool_results), Hang(then=Reply(Text("All done."))))
    open_claude_notebook(lab, claude_env, "%%claude\nCOPYCODE show me")
    lab.page.evaluate("() => navigator.clipboard.writeText('nothing copied yet')")
    lab.run_cell(1, wait=False)
    api.wait_for_request(lambda r: bool(r.last_tool_results), timeout=60)
    out = lab.output_locator(1)
    assert lab.cell_running(1) and out.locator(".jupyter-widgets").count() > 0
    button = out.locator(COPY)
    button.wait_for(timeout=30_000)
    assert button.count() == 1, out.inner_html()[:3000]
    assert button.get_attribute("title") == "Copy code"
    button.click()
    wait_until(lambda: "Copied" in button.inner_text(), 10, "the button to say Copied")
    copied = lab.page.evaluate("() => navigator.clipboard.readText()")
    assert copied.rstrip("\n") == CODE.rstrip("\n"), copied
    lab.screenshot(f"copy-button-{lab.frontend}.png")

    api.release()
    assert lab.wait_for_cell(1, timeout=60)
    # The saved record is sanitized (no scripts): a button there could not work, so none.
    assert "byre-copy" not in json.dumps(lab.output_json(1))
    assert out.locator(COPY).count() == 0


# --------------------------------------------------------------------------------------------
# a waiting card during Run All


@BOTH_FRONTENDS
def test_run_all_brings_the_waiting_card_into_view(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], tmp_path: Path
) -> None:
    # Tall cells between the top and the asking cell: it starts far below the window.
    filler = "x = 1\n" + "".join(f"# line {n} of a long cell\n" for n in range(60))
    command = f"touch {tmp_path / 'runall.txt'}"
    api.on("RUNALLASK", Hang(then=Reply(bash(command, "Create a file"))), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("Denied, fine: RUNALLDONE")))
    lab.page.set_viewport_size({"width": 1280, "height": 800})
    lab.open_notebook(
        new_notebook(LOAD, filler, filler, filler, "%%claude\nRUNALLASK go", "print('after')"),
        kernel_env=claude_env,
    )
    lab.run_all(wait=False)
    api.wait_for_request("RUNALLASK", timeout=90)  # the turn waits on the API: no card yet
    # The user reads the top of the notebook while the turn runs.
    lab._js("B.cell(path, 0).node.scrollIntoView({block: 'start'}); return true;")
    cell = lab.cell_locator(4)
    wait_until(lambda: not cell.evaluate(IN_VIEW_JS)["visible"], 10, "the top of the notebook")
    assert not lab.output_locator(4).evaluate(IN_VIEW_JS)["visible"]

    api.release()
    box = wait_for_card(lab, 4)
    try:
        wait_until(lambda: box.evaluate(IN_VIEW_JS)["visible"], 10, "the card in view")
    finally:
        lab.screenshot(f"runall-card-{lab.frontend}.png")
    status = lab.output_locator(4).locator(".byre-status")
    # Prominent, not the dimmed everyday status. (The status re-renders every second: poll.)
    prominent = (
        "e => e.isConnected && e.textContent.includes('waiting for your approval')"
        " && Number(getComputedStyle(e).fontWeight) >= 600"
    )
    wait_until(lambda: status.evaluate(prominent), 10, "a prominent approval status")
    # Once: the user may scroll away again and is not dragged back.
    lab._js("B.cell(path, 0).node.scrollIntoView({block: 'start'}); return true;")
    wait_until(lambda: not box.evaluate(IN_VIEW_JS)["visible"], 10, "scrolling away")

    box.locator(DENY).click()
    lab.wait_for_cell("*", timeout=90)
    assert "RUNALLDONE" in lab.output_text(4)
    assert "after" in lab.output_text(5)


# --------------------------------------------------------------------------------------------
# focus after Stop


@BOTH_FRONTENDS
def test_focus_returns_to_the_notebook_after_stop(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("FOCUSSTOP", Hang(then=Reply(Text("never shown"))), times=1)
    open_claude_notebook(
        lab, claude_env, "%%claude\nFOCUSSTOP go", "print('NEXT' + 'CELL' + 'RAN')"
    )
    lab.run_cell(1, wait=False)
    api.wait_for_request("FOCUSSTOP", timeout=60)
    lab.click_in_output(1, selector=STOP)
    assert lab.wait_for_cell(1, timeout=30)
    where = lab.page.evaluate(
        """() => { const a = document.activeElement;
             return { tag: a ? a.tagName : null,
                      inNotebook: !!(a && a.closest('.jp-Notebook')),
                      command: !!document.querySelector('.jp-Notebook.jp-mod-commandMode') }; }"""
    )
    assert where["inNotebook"] and where["command"], where
    # The keyboard works on: down to the next cell, Shift+Enter runs it.
    lab.page.keyboard.press("ArrowDown")
    lab.page.keyboard.press("Shift+Enter")
    lab.wait_for_output_text(2, "NEXTCELLRAN", timeout=30)


# --------------------------------------------------------------------------------------------
# roles and labels


@BOTH_FRONTENDS
def test_live_regions_cards_and_menus_are_labelled(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], tmp_path: Path
) -> None:
    command = f"touch {tmp_path / 'aria.txt'}"
    api.on("ARIA", Reply(Text("Let me make it."), bash(command, "Create a file")), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("Denied, fine.")))
    open_notebook(lab, claude_env, "%%claude\nARIA go")
    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    out = lab.output_locator(1)

    status = out.locator(".byre-status")
    assert status.get_attribute("role") == "status"
    assert status.get_attribute("aria-live") == "polite"
    body = out.locator(".byre-live-body")
    wait_until(lambda: body.get_attribute("aria-live") == "polite", 10, "the live text region")
    assert body.get_attribute("role") == "log"
    assert "Let me make it." in body.inner_text()
    card = out.get_by_role("alertdialog")
    wait_until(lambda: card.count() == 1, 10, "the card's role")
    label = card.get_attribute("aria-label") or ""
    assert label.startswith(ASKS) and "shell command" in label, label
    assert card.locator(DENY).count() == 1  # the dialog is the card, buttons and all
    assert out.get_by_label("Model", exact=True).count() == 1
    assert out.get_by_label("Permissions", exact=True).count() == 1
    assert box.get_by_role("textbox", name="Reason for denying").count() == 1
    box.locator(DENY).click()
    assert lab.wait_for_cell(1, timeout=60)


# --------------------------------------------------------------------------------------------
# the kernel status while a turn runs


@BOTH_FRONTENDS
def test_the_kernel_status_stays_busy_while_the_turn_runs(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    """The widget manager asks the kernel for a comm subshell when the first widget shows;
    ipykernel answers with busy/idle on the control channel, and the frontends showed the
    kernel "Idle" for the rest of the turn (Lab's status bar, Notebook 7's indicator)."""
    api.on("STATUSBUSY", Hang(then=Reply(Text("done"))), times=1)
    open_claude_notebook(lab, claude_env, "%%claude\nSTATUSBUSY now")
    lab._js(
        "const k = B.kernel(path); window.__byreStatuses = [];"
        "k.statusChanged.connect((_, s) => window.__byreStatuses.push(s)); return true;"
    )
    lab.run_cell(1, wait=False)
    api.wait_for_request("STATUSBUSY", timeout=60)
    lab.output_locator(1).locator(".jupyter-widgets").first.wait_for(timeout=30_000)

    def statuses() -> list[str]:
        return list(lab.page.evaluate("() => window.__byreStatuses"))

    # The frontend's own request was answered (an idle while the cell runs) ...
    wait_until(lambda: "idle" in statuses(), 30, "the subshell request's idle")
    # ... and the status is busy again, for as long as the turn runs.
    wait_until(lambda: lab.kernel_status() == "busy", 10, f"busy again: {statuses()}")
    assert lab.cell_running(1)
    api.release()
    assert lab.wait_for_cell(1, timeout=60)
    wait_until(lambda: lab.kernel_status() == "idle", 30, "idle after the turn")
