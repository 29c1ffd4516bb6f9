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

import ipywidgets as W
import pytest

from bench.widget_bytes import turn_bytes


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
