"""The live view's comm bytes for a short answer: at most 4x the record that replaces it.

A 1,500-character answer used to cost 4.09x its final bundle, most of it what every turn
opens before any text (the module's code and stylesheet, and each widget model's whole state):
a second ``Layout`` model with the same margins, a class added after the open (a message of
its own), and the bar and menus sent in two messages right after the open. The bench's own
measurement (``bench/widget_bytes.py``: every comm opened, with what it carries) on the hand-
stepped loop, so the figure is the bench's and no clock is read."""

from __future__ import annotations

from bench.widget_bytes import turn_bytes


def test_a_short_answer_costs_at_most_4x_its_record_on_the_comm() -> None:
    fast = turn_bytes(1_500, 0.002)
    assert fast["ratio"] <= 4.0, fast
    # One model for the view, one for the box that holds approval cards, one layout for both.
    assert fast["opens"] == 3, fast
