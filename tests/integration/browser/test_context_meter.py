"""The context meter and a task's Stop in a turn's live view in JupyterLab at 700 px beside the
file browser: the second cell's header shows, from its start, how full the window is after the
first cell (``used / window``), whole and not cut, beside the menus; its Bash
call, counting slowly, becomes a task (after ~3 s) listed above the bar with a Stop, and the
Stop ends that task (its card ends in error: killed, exit code 137) while the turn goes on.
The real ``claude`` CLI runs against the scripted Messages API, which reports a prompt of
13,400 tokens."""

from __future__ import annotations

from typing import Any

import pytest
from support.kernel import LOAD

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

from .harness import LabPage, new_notebook, wait_until
from .test_live_widget import HEADER_JS

pytestmark = pytest.mark.cli

METER_JS = """(out) => {
  const meter = out.querySelector('.byre-live .byre-head .byre-context');
  if (!meter || meter.hidden || !meter.textContent) return null;
  const head = meter.closest('.byre-head').getBoundingClientRect();
  const r = meter.getBoundingClientRect();
  const model = out.querySelector('.byre-live .byre-head .byre-model').getBoundingClientRect();
  return { text: meter.textContent, title: meter.title, cut: meter.scrollWidth > meter.clientWidth,
           inside: r.left >= head.left && r.right <= head.right, modelWidth: model.width,
           height: r.height, lineHeight: model.height };
}"""


SLOW = (
    "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do echo line $i; "
    "python3 -c 'import time; time.sleep(1)'; done"
)
TASKS_JS = """(out) => [...out.querySelectorAll('.byre-live .byre-tasks:not([hidden]) .byre-task')]
  .map(t => t.textContent)"""


def tasks(lab: LabPage, i: int) -> list[str]:
    return list(lab.output_locator(i).evaluate(TASKS_JS))


def meter(lab: LabPage, i: int) -> dict[str, Any] | None:
    found = lab.output_locator(i).evaluate(METER_JS)
    return dict(found) if found else None


def test_the_meter_is_in_the_header_at_700_px(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    usage = {"input_tokens": 13_400, "output_tokens": 0}  # the same size each request
    api.default = Reply(Text("Read."), usage=usage)
    bash = ToolUse("Bash", {"command": SLOW, "description": "Count slowly"})
    api.on("HOLD", [Reply(bash, usage=usage), "Done."])
    lab.page.set_viewport_size({"width": 700, "height": 900})
    lab.open_notebook(
        new_notebook(LOAD, "%%claude\nRead the data", "%%claude\nHOLD on"),
        kernel_env=claude_env,
    )
    lab.run_cell(0, timeout=60)
    lab.run_cell(1, timeout=90)
    assert "context 13.4k / " in lab.output_text(1)  # the record's footer keeps it
    lab.run_cell(2, wait=False)
    api.wait_for_request("HOLD", timeout=60)
    wait_until(lambda: meter(lab, 2), 30, "the meter in the second cell's header")
    shown = meter(lab, 2)
    lab.screenshot("context-meter-700-light-lab.png")
    print("meter at 700 px:", shown)
    assert shown is not None and shown["text"].startswith("13.4k / ")
    assert shown["title"].startswith("Context window: 13,40")  # + the output the line carried
    assert not shown["cut"] and shown["inside"] and shown["modelWidth"] > 0
    assert shown["height"] < 1.5 * shown["lineHeight"]  # one line: the figure does not wrap
    fields = lab.output_locator(2).evaluate(HEADER_JS)["fields"]
    assert all(f["need"] <= f["room"] + 1 for f in fields), fields  # it cuts no menu's value
    wait_until(lambda: tasks(lab, 2), 60, "the task line with its Stop")
    assert tasks(lab, 2) == ["Count slowlyStop"]
    lab.screenshot("task-stop-700-light-lab.png")
    lab.output_locator(2).locator(".byre-task-stop").click()
    lab.wait_for_cell(2, 60)
    # The task's card ends in error (killed: exit code 137), and the turn went on to answer.
    card, answer = lab.output_text(2).split("\n", 2)[1:]
    assert card.startswith("Bash · ") and card.endswith(" · error"), card
    assert "Read." in answer
