"""The live view (the anywidget module ui/live.js) in JupyterLab and Notebook 7: calm on screen.

One page load per frontend serves every check: the status bar is one line at 1280 and 700 px
(the status cut short, its whole text on hover), and the swap to the saved record changes no
height but the header's: the controls' header above the prompt goes (the record has none, so
the answer moves up by exactly its height), the record's prompt line and the answer keep their
heights, and the bar has the height of the record's footer line. Screenshots, light and dark,
live and final, are in the artifacts. The header itself at 700 px: test_header_at_700_px. The
real ``claude`` CLI runs against the scripted Messages API.
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
  const foot = turn.lastElementChild;
  const first = turn.querySelector('.byre-prompt') || turn.firstElementChild;
  const head = turn.querySelector('.byre-head');
  const headSpace = head ? head.getBoundingClientRect().height
    + parseFloat(getComputedStyle(head).marginBottom) : 0;
  const text = foot.querySelector('.byre-status') || foot;
  const lh = parseFloat(getComputedStyle(text).lineHeight);
  const r = foot.getBoundingClientRect();
  return { answer: last.getBoundingClientRect().bottom - top,
           prompt: first.getBoundingClientRect().height, head: headSpace,
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
    assert final["head"] == 0 and live["head"] > 0, (live, final)
    assert abs(final["answer"] - (live["answer"] - live["head"])) <= 2, (live, final)
    assert abs(final["prompt"] - live["prompt"]) <= 2, (live, final)
    assert abs(final["foot"] - live["foot"]) <= 2, (live, final)


# What the header shows: each menu's caption and whether its value fits its box whole (the
# width the selected option's text needs in the menu's font against the room inside it), and
# where Stop is against the output's top.
HEADER_JS = """(out) => {
  const stopButton = out.querySelector('.byre-stop');
  if (!stopButton) return null;
  const head = out.querySelector('.byre-head') || stopButton.parentNode;
  const top = out.getBoundingClientRect().top;
  const fields = [...head.querySelectorAll('.byre-field')].filter(f => !f.hidden).map(f => {
    const cap = f.querySelector('.byre-caption'), sel = f.querySelector('select');
    const cs = getComputedStyle(sel);
    const probe = document.createElement('span');
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
    probe.style.font = cs.font;
    probe.textContent = sel.selectedOptions.length ? sel.selectedOptions[0].textContent : '';
    document.body.append(probe);
    const need = probe.getBoundingClientRect().width;
    probe.remove();
    const c = cap.getBoundingClientRect(), s = sel.getBoundingClientRect();
    return { caption: cap.textContent, value: sel.value, need,
             room: sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight),
             shown: c.width > 0 && c.height > 0 && getComputedStyle(cap).visibility === 'visible'
                    && Number(getComputedStyle(cap).opacity) > 0.5,
             colors: [getComputedStyle(cap).color, cs.color, cs.backgroundColor],
             inside: s.left >= 0 && s.right <= window.innerWidth && c.left >= 0 };
  });
  const stop = stopButton.getBoundingClientRect();
  return { fields, stop: [stop.left, stop.top - top, stop.width, stop.height],
           stopInside: stop.right <= window.innerWidth,
           lines: Math.round(head.getBoundingClientRect().height / stop.height),
           text: out.querySelector('.byre-live-body').textContent };
}"""
STREAM = "\n\n".join(f"LINE{n:02d} " + "a few words on a line " * 3 for n in range(40))


def test_header_at_700_px(lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]) -> None:
    """JupyterLab at 700 px, light and dark: the model, mode and effort menus have visible
    captions and their values whole (the header wraps rather than cut "claude-op…"), Stop
    stays where it is while the answer grows below it, and an effort chosen in the header and
    one given with -e reach the API requests that follow, as does a `/effort` typed as a prompt,
    which the next cell's header shows."""
    streamed = Reply(Text(STREAM, chunk=24, delay=0.06), ToolUse("Bash", {"command": "true"}))
    api.on("HEADER", streamed, times=1)
    api.on(lambda r: bool(r.last_tool_results), Hang(then=Reply(Text("All done."))), times=1)
    api.default = Reply(Text("ok"))
    lab.page.set_viewport_size({"width": 700, "height": 900})
    lab.open_notebook(
        new_notebook(
            LOAD,
            "%%claude\nHEADER go",
            "%%claude\nSECOND",
            "%%claude -e low\nTHIRD",
            "%%claude\n/effort xhigh",
            "%%claude\nFIFTH",
        ),
        kernel_env=claude_env,
    )
    lab.run_cell(0, timeout=60)
    lab.run_cell(1, wait=False)
    out = lab.output_locator(1)

    def header() -> dict[str, Any]:
        found = out.evaluate(HEADER_JS)
        assert found, lab.output_text(1)[-1000:]
        return dict(found)

    wait_until(lambda: "LINE03" in (out.evaluate(HEADER_JS) or {}).get("text", ""), 60, "text")
    early = header()
    assert "LINE30" not in early["text"], "the answer came whole: nothing streamed to watch"
    wait_until(lambda: "LINE30" in header()["text"], 60, "thirty more lines")
    later = header()
    print("stop early", early["stop"], "later", later["stop"])
    assert later["stop"] == early["stop"], (early["stop"], later["stop"])

    api.wait_for_request(lambda r: bool(r.last_tool_results), timeout=60)
    shots = {}
    for theme, name in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
        set_theme(lab, theme)
        found = header()
        print(name, found["fields"], "lines", found["lines"])
        assert [f["caption"] for f in found["fields"]] == ["model", "mode", "effort"], found
        for f in found["fields"]:
            assert f["shown"] and f["inside"], f
            assert f["need"] <= f["room"] + 1, f  # the value whole, not "claude-op…"
        assert found["stopInside"], found
        lab.cell_locator(1).scroll_into_view_if_needed()
        shots[name] = lab.screenshot(f"header-700-{name}-lab.png")
    set_theme(lab, "JupyterLab Light")

    lab.select_in_output(1, "Effort", "max")  # mid-turn: from the next request on
    wait_until(lambda: "Effort: max" in lab.output_text(1), 30, "the switch noted")
    api.release()
    assert lab.wait_for_cell(1, timeout=60)
    lab.run_cell(2, timeout=60)
    lab.run_cell(3, timeout=60)
    efforts = {
        word: (r.body.get("output_config") or {}).get("effort")
        for r in api.requests
        for word in ("SECOND", "THIRD")
        if r.stream and word in r.last_user_text
    }
    assert efforts == {"SECOND": "max", "THIRD": "low"}, efforts

    # `/effort xhigh` typed as a prompt: the next cell's header shows it, and its request has it.
    api.on("FIFTH", Hang(then=Reply(Text("ok"))), times=1)
    lab.run_cell(4, timeout=60)
    lab.run_cell(5, wait=False)
    api.wait_for_request("FIFTH", timeout=60)
    menu = lab.output_locator(5).get_by_label("Effort", exact=True)
    menu.wait_for(timeout=30_000)
    assert menu.input_value() == "xhigh"
    api.release()
    assert lab.wait_for_cell(5, timeout=60)
    fifth = [r for r in api.requests if r.stream and "FIFTH" in r.last_user_text]
    assert [(r.body.get("output_config") or {}).get("effort") for r in fifth] == ["xhigh"]
