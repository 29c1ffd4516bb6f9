"""What the live view opens for a short answer, before any text.

A 1,500-character answer used to cost 4.09x its final bundle, most of it what every turn
opens before any text (the module's code and stylesheet, and each widget model's whole state):
a second ``Layout`` model with the same margins, a class added after the open (a message of
its own), and the bar and menus sent in two messages right after the open. The bench's own
measurement (``bench/widget_bytes.py``: every comm opened, with what it carries) on the hand-
stepped loop, so the figure is the bench's and no clock is read. The ratio itself (goal: at most
4x) is a figure in bench/RESULTS.md: most of it is the module's own code, whose size is not a
test's business."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import ipywidgets as W
import pytest

from bench.widget_bytes import turn_bytes
from byre_jupyter.ui import live


@pytest.mark.skipif(
    tuple(int(p) for p in W.__version__.split(".")[:2]) < (8, 1),
    reason="ipywidgets 8.0 sends no message without a kernel's comm, so there is nothing to count",
)
def test_a_short_answer_opens_three_models_and_sends_its_first_state_with_them() -> None:
    fast = turn_bytes(1_500, 0.002)
    # One model for the view, one for the box that holds approval cards, one layout for both.
    assert fast["opens"] == 3, fast
    # The class, the first status bar and the menus travel in the opening (13 messages before).
    assert fast["messages"] <= 11, fast


def test_the_module_travels_without_comments_and_still_parses() -> None:
    """Every turn's ``comm_open`` carries the module and its stylesheet: compacted, both lose
    their comments and indentation (the code itself is unchanged), and the JavaScript still
    parses as a module."""
    here = Path(live.__file__).parent
    js = (here / "live.js").read_text(encoding="utf-8")
    sent = live.LiveWidget._esm
    assert isinstance(sent, str) and len(sent) < 0.8 * len(js)
    assert "//" not in "".join(line[:2] for line in sent.splitlines())  # no comment lines
    code = [line.strip() for line in js.splitlines() if line.strip()]
    assert sent.splitlines() == [line for line in code if not line.startswith("//")]
    css = live.LiveWidget._css
    assert isinstance(css, str) and "/*" not in css and ".byre-live" in css
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to parse the module with")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "live.mjs").write_text(sent, encoding="utf-8")
        done = subprocess.run(
            [node, "--check", str(Path(tmp) / "live.mjs")], capture_output=True, text=True
        )
    assert done.returncode == 0, done.stderr


def test_compact_keeps_a_template_literal_that_spans_lines() -> None:
    source = "// a comment\nconst a = `one\n   // not a comment\n  two`;\n\n    // gone\n  b();\n"
    assert live.compact(source) == "const a = `one\n   // not a comment\n  two`;\nb();\n"
    assert live.compact("/* a\n b */\n  .x { color: red; }\n", "/*") == ".x { color: red; }\n"
