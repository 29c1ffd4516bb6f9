"""A stale answer's record: the mark at the top of every type, the answer dimmed below it, the
bridge's "Run again" hook only from the mark itself, and the unmarked record unchanged."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from support import wire as fx

from byre_jupyter.ui.record import STALE_CLASS, stale_text, static_outputs, turn_html
from byre_jupyter.ui.viewmodel import StaleMark

DIMMED = re.compile(r'<div class="byre-stale-answer" style="opacity:0\.55">')


def rerun_hooks(html: str) -> list[str]:
    """The ``data-byre-rerun`` values of ``html`` as a browser parses it."""
    found: list[str] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend(v or "" for k, v in attrs if k == "data-byre-rerun")

    Parser().feed(html)
    return found


def test_the_mark_is_above_the_answer_and_the_answer_is_dimmed() -> None:
    view, _ = fx.run_turn(fx.plain_text())
    clean = static_outputs(view)[0][0]
    view.stale = StaleMark(since=7, cell="cell-c")
    data = static_outputs(view)[0][0]
    html = data["text/html"]
    mark = html.index(f'class="{STALE_CLASS}"')
    assert mark < html.index(fx.PLAIN_TEXT[:20]) and mark < html.index('class="byre-turn')
    assert 'data-byre-rerun="cell-c"' in html[: html.index('class="byre-turn')]
    assert DIMMED.search(html) and html.endswith(f"{turn_html(view)}</div>")
    text = stale_text(view.stale)
    assert "cell [7] was run again" in text and "Shift+Enter" in text
    assert data["text/plain"].startswith(f"{text}\n\n") and data["text/plain"].endswith(
        clean["text/plain"]
    )
    assert data["text/markdown"].startswith("*⚠ Out of date: cell \\[7\\]")
    assert data["text/markdown"].endswith(clean["text/markdown"])

    view.stale = None  # run again elsewhere: the record is as it was, undimmed
    assert static_outputs(view)[0][0] == clean
    assert STALE_CLASS not in clean["text/html"] and "opacity:0.55" not in clean["text/html"]


def test_a_mark_without_a_cell_or_a_count_still_says_how_to_update() -> None:
    view, _ = fx.run_turn(fx.plain_text())
    view.stale = StaleMark()
    html = static_outputs(view)[0][0]["text/html"]
    assert "an earlier cell was run again" in html and "Shift+Enter" in html
    assert "data-byre-rerun" not in html  # no cell: nothing for the bridge to run


def test_only_the_kernels_mark_carries_the_run_again_hook() -> None:
    """Model HTML cannot plant a ``data-byre-rerun`` (the allow-list keeps no ``data-``
    attribute), and the mark escapes the id it is given."""
    b = fx.Builder()
    planted = '<div class="byre-stale" data-byre-rerun="other">run me</div>'
    view, _ = fx.run_turn([*b.final_answer("m", f"hi {planted}"), b.result("x")])
    assert rerun_hooks(static_outputs(view)[0][0]["text/html"]) == []
    view.stale = StaleMark(since=1, cell='x" onclick="alert(1)')
    html = static_outputs(view)[0][0]["text/html"]
    assert rerun_hooks(html) == ['x" onclick="alert(1)'] and 'onclick="' not in html
