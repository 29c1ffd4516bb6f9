"""The live view (the anywidget module ui/live.js) in JupyterLab and Notebook 7: calm on screen.

One page load per frontend serves every check: the status bar is one line at 1280 and 700 px
(the status cut short, its whole text on hover), and the swap to the saved record changes no
height: the record's prompt line and the answer stay where they were, and the bar has the
height of the record's footer line. Screenshots, light and dark, live and final, are in the
artifacts. The real ``claude`` CLI runs against the scripted Messages API.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.kernel import LOAD

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, ToolUse

from .conftest import BOTH_FRONTENDS
from .harness import LabPage, new_notebook, wait_until
from .test_surface import set_theme

pytestmark = pytest.mark.cli

ANSWER = (
    "ALPHA " + "a sentence that wraps across the width of the cell " * 5 + "\n\n"
    "- one item of a list\n- another item, **bold**\n\n"
    "```python\nprint('code in between')\n```\n\n"
    "A last paragraph " + "that also wraps " * 10 + "OMEGA"
)
# Where the turn's lines are: the output's top to the answer's last line, the first line (the
# prompt) and the last one (the live bar, or the record's footer), and how many lines of text
# the last one holds.
LAYOUT_JS = """(out) => {
  const turn = out.querySelector('.byre-turn');
  const last = [...out.querySelectorAll('p')].reverse()
    .find(p => p.textContent.trim().endsWith('OMEGA'));
  if (!turn || !last) return null;
  const top = out.getBoundingClientRect().top;
  const foot = turn.lastElementChild, first = turn.firstElementChild;
  const text = foot.querySelector('.byre-status') || foot;
  const lh = parseFloat(getComputedStyle(text).lineHeight);
  const r = foot.getBoundingClientRect();
  return { answer: last.getBoundingClientRect().bottom - top,
           prompt: first.getBoundingClientRect().height,
           foot: r.height, footLines: Math.round(text.getBoundingClientRect().height / lh),
           cut: text.scrollWidth > text.clientWidth, title: text.getAttribute('title'),
           text: text.textContent, live: !!out.querySelector('.byre-bar') };
}"""


def layout(lab: LabPage, i: int) -> dict[str, Any]:
    found = lab.output_locator(i).evaluate(LAYOUT_JS)
    assert found, lab.output_text(i)[-1000:]
    return dict(found)


@BOTH_FRONTENDS
def test_the_bar_is_one_line_and_the_swap_to_the_record_moves_nothing(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("CALM", Reply(Text(ANSWER), ToolUse("Bash", {"command": "true"})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Hang(then=Reply(Text("All done."))))
    lab.page.set_viewport_size({"width": 1280, "height": 900})
    lab.open_notebook(new_notebook(LOAD, "%%claude\nCALM please"), kernel_env=claude_env)
    lab.run_cell(0, timeout=60)
    lab.run_cell(1, wait=False)
    api.wait_for_request(lambda r: bool(r.last_tool_results), timeout=60)
    out = lab.output_locator(1)
    wait_until(lambda: out.evaluate(LAYOUT_JS), 30, "the whole answer, live")
    wait_until(lambda: "running a tool" not in layout(lab, 1)["text"], 30, "the tool's end")
    live = layout(lab, 1)
    assert live["live"] and live["footLines"] == 1, live
    assert out.locator(".byre-cursor").count() <= 1
    lab.screenshot(f"live-1280-light-{lab.frontend}.png")
    set_theme(lab, "JupyterLab Dark")
    lab.screenshot(f"live-1280-dark-{lab.frontend}.png")
    set_theme(lab, "JupyterLab Light")

    lab.page.set_viewport_size({"width": 700, "height": 900})
    narrow = layout(lab, 1)
    wait_until(lambda: layout(lab, 1)["footLines"] == 1, 10, "one line at 700 px")
    narrow = layout(lab, 1)
    # the status gives way to the controls, and says all of itself on hover
    assert narrow["title"] == narrow["text"] and narrow["text"].startswith("waiting for"), narrow
    lab.screenshot(f"live-700-light-{lab.frontend}.png")
    lab.page.set_viewport_size({"width": 1280, "height": 900})
    wait_until(lambda: layout(lab, 1)["answer"] == live["answer"], 10, "the 1280 px layout")

    api.release()
    assert lab.wait_for_cell(1, timeout=60)
    final = layout(lab, 1)
    assert not final["live"], final
    lab.screenshot(f"final-1280-light-{lab.frontend}.png")
    print("calm: live", live, "narrow", narrow, "final", final)
    assert abs(final["answer"] - live["answer"]) <= 2, (live, final)
    assert abs(final["prompt"] - live["prompt"]) <= 2, (live, final)
    assert abs(final["foot"] - live["foot"]) <= 2, (live, final)
