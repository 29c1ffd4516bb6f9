"""``%claude history`` as a tree: a straight run is a list at one depth, a re-run cell makes
branches, the HTML nests (so it wraps inside its branch at 700 px) and escapes cell text."""

from __future__ import annotations

import re

from byre_jupyter.ui.history import HistoryEntry, history_bundle


def entry(number: int, parent: int | None, prompt: str, *, current: bool = True) -> HistoryEntry:
    return HistoryEntry(
        number=number,
        parent=parent,
        label=f"[{number + 1}]",
        cell=f"cell{number:04d}",
        cost_usd=0.0012,
        prompt=prompt,
        current_branch=current,
        flags=("current",) if number == 5 else (),
    )


def test_a_linear_conversation_is_a_list_not_a_staircase() -> None:
    bundle = history_bundle(
        "default", "(start)", [entry(n, n - 1 or None, f"q{n}") for n in range(1, 6)]
    )
    turns = [line for line in bundle["text/plain"].splitlines() if "#" in line]
    assert len(turns) == 5 and all(line.startswith("● #") for line in turns), turns
    assert "<ul" in bundle["text/html"] and bundle["text/html"].count("<ul") == 1  # one list


def test_a_rerun_draws_two_branches_each_a_straight_run() -> None:
    # #1, then #2 -> #3 (left behind), and #4 -> #5 (a re-run of #2's cell, now current).
    entries = [
        entry(1, None, "Load sales.csv and describe it"),
        entry(2, 1, "Plot revenue by month", current=False),
        entry(3, 2, "Why the dip in March?", current=False),
        entry(4, 1, "Plot revenue by week"),
        entry(5, 4, "Why the dip in March?"),
    ]
    plain = history_bundle("default", "(start)", entries)["text/plain"].splitlines()
    assert plain[2:] == [
        "● #1 [2] cell cell0001  $0.0012  Load sales.csv and describe it",
        "├─ ○ #2 [3] cell cell0002  $0.0012  Plot revenue by month",
        "│  ○ #3 [4] cell cell0003  $0.0012  Why the dip in March?",
        "└─ ● #4 [5] cell cell0004  $0.0012  Plot revenue by week",
        "   ● #5 [6] cell cell0005  $0.0012  Why the dip in March?  (current)",
    ]
    html = history_bundle("default", "(start)", entries)["text/html"]
    # Two branches: two nested lists inside the trunk's; #2 and #3 share one of them.
    assert html.count("<ul") == 3
    branch = re.search(r"<ul[^>]*border-left[^>]*dashed[^>]*>(.*?)</ul>", html)
    assert branch is not None and "#2 " in branch.group(1) and "#3 " in branch.group(1)
    assert "#4 " not in branch.group(1)
    assert "overflow-wrap:anywhere" in html  # long prompts wrap inside their branch


def test_cell_text_is_escaped_in_the_html() -> None:
    html = history_bundle("x", "(start)", [entry(1, None, "<img src=x onerror=alert(1)>")])[
        "text/html"
    ]
    assert "<img" not in html and "&lt;img" in html
