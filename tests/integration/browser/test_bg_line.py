"""A ``--bg`` cell's live view in JupyterLab: its note is one line high.

While a ``--bg`` turn waits for its answer, the live view shows only the prompt line and the
note that says the cell ran in the background. That note was two lines high: measured against
one line of its own text, beside Lab's file browser at 1280 px, it must be one. The real
``claude`` CLI runs against the scripted Messages API.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.kernel import LOAD

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text

from .harness import LabPage, new_notebook, wait_until

pytestmark = pytest.mark.cli

# The note's box and its text's line height (the note is the live view's one notice).
NOTE_JS = """(out) => {
  const note = [...out.querySelectorAll('.byre-live div')]
    .find(d => d.children.length === 0 && d.textContent.includes('(--bg)'));
  if (!note) return null;
  const lh = parseFloat(getComputedStyle(note).lineHeight);
  const r = note.getBoundingClientRect();
  return { height: r.height, lineHeight: lh, width: r.width, text: note.textContent,
           lines: Math.round(r.height / lh) };
}"""


def note(lab: LabPage, i: int) -> dict[str, Any] | None:
    found = lab.output_locator(i).evaluate(NOTE_JS)
    return dict(found) if found else None


def test_a_bg_cells_note_is_one_line_high(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("BGLINE", Hang(then=Reply(Text("The background answer."))))
    lab.page.set_viewport_size({"width": 1280, "height": 900})
    lab.open_notebook(new_notebook(LOAD, "%%claude --bg\nBGLINE please"), kernel_env=claude_env)
    lab.run_cell(0, timeout=60)
    lab.run_cell(1, timeout=60)  # --bg: the cell returns at once
    api.wait_for_request("BGLINE", timeout=60)
    wait_until(lambda: note(lab, 1), 30, "the --bg note, live")
    live = note(lab, 1)
    assert live is not None
    lab.screenshot("bg-line-1280-light-lab.png")
    # At 700 px beside the file browser no sentence fits one line: a figure, not a check.
    lab.page.set_viewport_size({"width": 700, "height": 900})
    wait_until(lambda: (note(lab, 1) or {}).get("width", 0) < live["width"], 10, "700 px")
    narrow = note(lab, 1)
    lab.screenshot("bg-line-700-light-lab.png")
    print("bg note: 1280 px", live, "700 px", narrow)
    assert live["lines"] == 1, live
    api.release()
    wait_until(lambda: "The background answer." in lab.output_text(1), 60, "the answer")
