"""The cell as a chat surface, in a real JupyterLab driven from headless Chromium:
what a user sees of the header, the menus, code blocks and the end of a turn.

The real ``claude`` CLI runs against the scripted Messages API. Browser tests are sync
functions (see conftest.py). Every wait is bounded; no fixed sleeps.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.kernel import LOAD

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, ToolUse
from byre_jupyter.session.accounting import SCRIPTED_COST

from .conftest import BOTH_FRONTENDS
from .harness import ARTIFACTS, HarnessError, LabPage, new_notebook, wait_until

pytestmark = pytest.mark.cli

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
STATUS = ".byre-status"


def open_claude_notebook(lab: LabPage, env: dict[str, str], *cells: str) -> str:
    path = lab.open_notebook(new_notebook(LOAD, *cells), kernel_env=env)
    lab.run_cell(0, timeout=60)
    out = lab.output_text(0)
    assert "Error" not in out and "Traceback" not in out, out
    return path


def bash_call(command: str) -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": "a step"})


def header_renders(lab: LabPage, i: int) -> int:
    """Header pushes seen so far: every status re-render is one comm update."""
    return sum(1 for m in lab.iopub_messages(i) if m["msg_type"] == "comm_msg" and m["comm_method"])


# --------------------------------------------------------------------------------------------
# the model menu keeps the user's choice


@BOTH_FRONTENDS
def test_model_menu_keeps_the_choice_mid_turn(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("KEEPMODEL", Hang(then=Reply(Text("first turn done"))))
    open_claude_notebook(lab, claude_env, "%%claude\nKEEPMODEL one")
    lab.run_cell(1, wait=False)
    api.wait_for_request("KEEPMODEL", timeout=60)  # the turn now waits on the API
    out = lab.output_locator(1)
    menu = out.get_by_label("Model", exact=True)
    menu.wait_for(timeout=30_000)
    before = menu.input_value()
    assert before != "sonnet"

    lab.select_in_output(1, "Model", "sonnet")
    # The menu is the live module's own: the kernel's status line says when it took the change.
    wait_until(
        lambda: "sonnet from the next request" in lab.output_text(1),
        20,
        "the kernel to take the model change",
    )
    # The header re-renders every second (elapsed time): let it do so three times.
    lab.watch_output(1)
    wait_until(lambda: len(lab.output_states(1)) >= 4, 20, "three header re-renders")
    assert [s["text"] for s in lab.output_states(1)]  # recorded while the cell ran
    assert lab.cell_running(1)
    assert menu.input_value() == "sonnet", "the menu jumped back"
    assert "sonnet from the next request" in lab.output_text(1), lab.output_text(1)
    api.release()
    assert lab.wait_for_cell(1, timeout=60)


# --------------------------------------------------------------------------------------------
# code blocks: highlighted in the live view, the saved output and nbconvert HTML

CODE_ANSWER = (
    "Here is the function:\n\n```python\ndef area(r):\n    # the circle's area\n"
    "    return 3.14159 * r ** 2\n```\n\nCall it with a radius."
)
# The keyword colour of the notebook's own code in each theme, from its CSS variables.
KEYWORD_JS = """(root) => {
  const pres = [...root.querySelectorAll('pre')].filter(p => p.textContent.includes('def area'));
  if (!pres.length) return null;
  const pre = pres[pres.length - 1];
  const kw = [...pre.querySelectorAll('span')].find(s => s.textContent === 'def');
  const cs = getComputedStyle(pre);
  const probe = document.createElement('span');
  probe.style.color = 'var(--jp-mirror-editor-keyword-color)';
  pre.appendChild(probe);
  const themed = getComputedStyle(probe).color;
  probe.remove();
  return { keyword: kw ? getComputedStyle(kw).color : null, themed,
           background: cs.backgroundColor, font: cs.fontFamily, border: cs.borderTopStyle };
}"""


def code_look(root: Any) -> dict[str, Any]:
    look = root.evaluate(KEYWORD_JS)
    assert look is not None, "no code block with the answer's code"
    return dict(look)


def assert_highlighted(look: dict[str, Any], where: str) -> None:
    assert look["keyword"] and look["keyword"] == look["themed"], (where, look)
    assert look["keyword"] not in ("rgb(0, 0, 0)", look["background"]), (where, look)
    assert look["background"] not in ("rgba(0, 0, 0, 0)", "transparent"), (where, look)
    assert "mono" in look["font"].lower(), (where, look)
    assert look["border"] == "solid", (where, look)


def set_theme(lab: LabPage, theme: str) -> None:
    lab.page.evaluate(
        "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
    )
    wait_until(
        lambda: lab.page.evaluate("() => document.body.dataset.jpThemeName") == theme,
        30,
        f"the {theme} theme",
    )
    # Changing the theme shows Lab's splash screen for a moment: wait until it is gone.
    wait_until(
        lambda: lab.page.evaluate("() => !document.getElementById('jupyterlab-splash')"),
        30,
        "the splash screen to go",
    )


@BOTH_FRONTENDS
def test_code_blocks_are_highlighted_live_saved_and_in_nbconvert(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], tmp_path: Path
) -> None:
    api.on("CODEBLOCK", Reply(Text(CODE_ANSWER), bash_call("true")), times=1)
    api.on(lambda r: bool(r.last_tool_results), Hang(then=Reply(Text("All done."))))
    path = open_claude_notebook(lab, claude_env, "%%claude\nCODEBLOCK show me")
    lab.run_cell(1, wait=False)
    out = lab.output_locator(1)
    wait_until(lambda: "def area" in lab.output_text(1), 60, "the code block, live")
    api.wait_for_request(lambda r: bool(r.last_tool_results), timeout=60)
    assert lab.cell_running(1) and out.locator(".jupyter-widgets").count() > 0
    live = code_look(out)
    assert_highlighted(live, "live")
    lab.screenshot(f"code-block-live-light-{lab.frontend}.png")
    set_theme(lab, "JupyterLab Dark")
    live_dark = code_look(out)
    assert_highlighted(live_dark, "live, dark")
    assert live_dark["background"] != live["background"], (live, live_dark)
    lab.screenshot(f"code-block-live-dark-{lab.frontend}.png")
    set_theme(lab, "JupyterLab Light")

    api.release()
    assert lab.wait_for_cell(1, timeout=60)
    outputs = lab.output_json(1)
    assert WIDGET_MIME not in json.dumps(outputs)
    final = code_look(out)
    assert_highlighted(final, "saved")
    assert final == live, (live, final)  # the end of the turn changes nothing in the block
    lab.screenshot(f"code-block-final-light-{lab.frontend}.png")
    set_theme(lab, "JupyterLab Dark")
    assert code_look(out) == live_dark
    lab.screenshot(f"code-block-final-dark-{lab.frontend}.png")
    set_theme(lab, "JupyterLab Light")

    lab.save()
    notebook = lab.server.root_dir / path
    html_out = tmp_path / "converted"
    done = lab.server.jupyter(
        "nbconvert", "--to", "html", "--output-dir", str(html_out), str(notebook)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (page_file,) = html_out.glob("*.html")
    page = lab.page.context.new_page()
    try:
        # Offline: nbconvert's page may reference a CDN (MathJax, require.js); refuse it.
        page.route(
            "**/*",
            lambda route: (
                route.abort() if not route.request.url.startswith("file:") else route.continue_()
            ),
        )
        page.goto(page_file.as_uri())
        converted = code_look(page.locator("body"))
        assert_highlighted(converted, "nbconvert")
        page.screenshot(path=str(ARTIFACTS / "code-block-nbconvert.png"), full_page=True)
    finally:
        page.close()


# --------------------------------------------------------------------------------------------
# maths in answers, dollars everywhere else


def test_answer_maths_is_typeset_and_our_dollars_stay_dollars(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    answer = "Euler: $e^{i\\pi} + 1 = 0$, and\n\n$$\\sum_{k=1}^n k$$\n\nIt costs $5 and $6."
    api.on("MATHTURN", Reply(Text(answer)))
    open_claude_notebook(lab, claude_env, "%%claude\nMATHTURN what are $HOME and $PATH?")
    lab.run_cell(1, wait=False)
    assert lab.wait_for_cell(1, timeout=60)
    out = lab.output_locator(1)
    maths = out.locator("mjx-container")
    wait_until(lambda: maths.count() >= 2, 30, "MathJax to typeset the answer")
    assert maths.count() == 2, out.inner_html()[:3000]  # the inline and the display formula
    text = lab.output_text(1)
    assert "what are $HOME and $PATH?" in text, text  # the prompt: plain dollars
    assert "It costs $5 and $6." in text, text
    # The footer's cost stays a dollar amount, marked as the scripted API's (nobody paid it).
    assert re.search(r"\$\d+\.\d{4} " + re.escape(SCRIPTED_COST), text), text
    lab.screenshot("math-final.png")


# --------------------------------------------------------------------------------------------
# no reflow at the end of a turn

REFLOW_ANSWER = (
    "ALPHA " + "a sentence that wraps across the width of the cell " * 6 + "\n\n"
    "- one item of a list\n- another item, **bold**\n\n"
    "```python\nprint('code in between')\n```\n\n"
    "A last paragraph " + "that also wraps " * 12 + "OMEGA"
)
# The vertical extent from the first line of the answer to its last, and where it starts.
EXTENT_JS = """(root) => {
  const all = [...root.querySelectorAll('p')];
  const first = all.find(p => p.textContent.startsWith('ALPHA'));
  const last = all.reverse().find(p => p.textContent.trim().endsWith('OMEGA'));
  if (!first || !last) return null;
  const a = first.getBoundingClientRect(), b = last.getBoundingClientRect();
  return { height: b.bottom - a.top, left: a.left, width: a.width,
           lineHeight: getComputedStyle(first).lineHeight,
           fontSize: getComputedStyle(first).fontSize };
}"""


def test_the_answer_does_not_reflow_when_the_turn_ends(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("REFLOW", Reply(Text(REFLOW_ANSWER), bash_call("true")), times=1)
    api.on(lambda r: bool(r.last_tool_results), Hang(then=Reply(Text("All done."))))
    open_claude_notebook(lab, claude_env, "%%claude\nREFLOW please")
    lab.run_cell(1, wait=False)
    out = lab.output_locator(1)
    api.wait_for_request(lambda r: bool(r.last_tool_results), timeout=60)
    wait_until(lambda: out.evaluate(EXTENT_JS), 30, "the whole answer, live")
    assert lab.cell_running(1) and out.locator(".jupyter-widgets").count() > 0
    live = out.evaluate(EXTENT_JS)
    lab.screenshot("reflow-live.png")
    api.release()
    assert lab.wait_for_cell(1, timeout=60)
    assert out.locator(".jupyter-widgets").count() == 0
    final = out.evaluate(EXTENT_JS)
    lab.screenshot("reflow-final.png")
    print("reflow: live", live, "final", final)
    assert live["lineHeight"] == final["lineHeight"], (live, final)
    assert live["fontSize"] == final["fontSize"], (live, final)
    assert abs(live["left"] - final["left"]) <= 3, (live, final)  # the left bar, margins
    assert abs(live["width"] - final["width"]) <= 3, (live, final)
    assert abs(live["height"] - final["height"]) <= 4, (live, final)


# --------------------------------------------------------------------------------------------
# the header: labelled, in view, saying what happens; nothing clips at 700 px

ASKING = "%load_ext byre_jupyter"  # permission mode "default": Bash asks
CLIPPED_JS = """(root) => {
  // what the user can see of the cell: the cell, within the notebook's scroller
  const cell = root.closest('.jp-Cell').getBoundingClientRect();
  const scroller = root.closest('.jp-WindowedPanel-outer').getBoundingClientRect();
  const area = { right: Math.min(cell.right, scroller.right) };
  const out = [];
  for (const el of root.querySelectorAll('button, select, input, label, .widget-html-content')) {
    const r = el.getBoundingClientRect();
    if (!r.width) continue;
    const cut = el.scrollWidth > el.clientWidth + 1 || r.right > area.right + 1;
    if (cut) out.push({ tag: el.tagName, text: (el.innerText || el.value || '').slice(0, 40),
                        scroll: el.scrollWidth, client: el.clientWidth, right: r.right,
                        areaRight: area.right });
  }
  return out;
}"""
VISIBLE_JS = """(el) => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  // the point may fall between two words of a wrapped line: then it hits el's own box
  return !!hit && (hit === el || el.contains(hit) || hit.contains(el));
}"""


@pytest.mark.parametrize("width", [1280, 700])
@BOTH_FRONTENDS
def test_header_is_labelled_sticky_and_nothing_clips(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], width: int, tmp_path: Path
) -> None:
    long_text = "\n\n".join(f"Paragraph {n}: " + "words that fill a line " * 8 for n in range(30))
    # A command that writes, so the CLI asks (it lets read-only ones like echo through).
    command = f"touch {tmp_path / 'header.txt'}"
    api.on("HEADER", Reply(Text(long_text), bash_call(command)), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("Denied, fine.")))
    lab.page.set_viewport_size({"width": width, "height": 800})
    path = lab.open_notebook(new_notebook(ASKING, "%%claude\nHEADER go"), kernel_env=claude_env)
    assert path
    lab.run_cell(0, timeout=60)
    lab.run_cell(1, wait=False)
    out = lab.output_locator(1)
    card = out.locator(".widget-vbox").filter(has_text="Claude asks:").last
    try:
        wait_until(lambda: "Claude asks:" in lab.output_text(1), 60, "the approval card")
    except HarnessError:
        raise HarnessError(lab.output_text(1)[-1500:] + repr(lab.output_text(0))) from None
    card.wait_for(timeout=10_000)
    card.locator('button:has-text("Deny")').scroll_into_view_if_needed()

    # labelled menus and a status that says what happens, for people and screen readers
    assert out.get_by_label("Model").count() == 1
    assert out.get_by_label("Permissions").count() == 1
    assert "default ▸ HEADER go" in out.inner_text()  # the session, on the record's first line
    status = out.locator('.byre-status[role="status"][aria-live="polite"]')
    wait_until(
        lambda: "waiting for your approval" in status.inner_text(), 10, "the approval status"
    )
    assert out.locator(".byre-spinner").count() == 1  # turns by CSS, not by kernel messages
    spin = out.locator(".byre-spinner").evaluate("e => getComputedStyle(e).animationName")
    assert spin == "byre-spin"

    # the answer is long and the card at its end: Stop and the status are still in view
    stop = out.locator('button.widget-button:has-text("Stop")')
    lab.screenshot(f"header-approval-{width}-light-{lab.frontend}.png")
    assert stop.evaluate(VISIBLE_JS), "Stop scrolled away"
    assert status.evaluate(VISIBLE_JS), "the status scrolled away"

    clipped = out.evaluate(CLIPPED_JS)
    assert clipped == [], clipped
    set_theme(lab, "JupyterLab Dark")
    card.locator('button:has-text("Deny")').scroll_into_view_if_needed()
    lab.screenshot(f"header-approval-{width}-dark-{lab.frontend}.png")
    set_theme(lab, "JupyterLab Light")

    card.locator('button:has-text("Deny")').click()
    assert lab.wait_for_cell(1, timeout=60)
    lab.page.set_viewport_size({"width": 1400, "height": 1000})
