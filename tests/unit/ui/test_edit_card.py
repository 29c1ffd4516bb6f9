"""The review card of an edit_notebook batch (ui/edit_card.py): one card, a diff of every cell
with both versions whole, the usual three answers; cell sources that hold Markdown, HTML or a
remote image are text in it, and in the tool card the saved record keeps, never rendered."""

from __future__ import annotations

import asyncio

import mistune
from support import wire as fx
from support.hostile_markdown import corpus_text, loaders

from byre_jupyter.tools.claude_cells import mark_claude_cells
from byre_jupyter.tools.notebook import Cell
from byre_jupyter.tools.notebook_edit import parse_edits, plan_edits, review_input
from byre_jupyter.ui.approval_card import ALWAYS_LABEL
from byre_jupyter.ui.record import static_outputs, turn_html, turn_markdown

from .test_approval import card_for, loop, raw_values

__all__ = ["loop"]  # the fixture

BASE = "http://attacker.invalid:8765"
HOSTILE_SOURCE = (
    f"<img src='{BASE}/src.png'> ![md]({BASE}/md.png) <b>bold</b>\n"
    f'print("<iframe src=\\"{BASE}/frame\\"></iframe>")\n'
)
TOOL = "mcp__byre__edit_notebook"


def review(edits: list[dict[str, object]], cells: list[Cell]) -> dict[str, object]:
    parsed = parse_edits({"edits": edits})
    assert not isinstance(parsed, str), parsed
    planned = plan_edits(parsed, cells, "ask", new_id=lambda taken: "gen")
    assert not isinstance(planned, str), planned
    return review_input(planned[1])


CELLS = [
    Cell("a", "code", "x = 1\n" + "".join(f"row_{n} = {n}\n" for n in range(500)), 1),
    Cell("ask", "code", "%%claude\nedit", 2),
    Cell("h", "markdown", HOSTILE_SOURCE, None),
]


def test_one_card_shows_every_cell_whole_with_the_three_answers(
    loop: asyncio.AbstractEventLoop,
) -> None:
    tool_input = review(
        [
            {"insert": {"after": None, "cell_type": "code", "source": "plot()\n"}},
            {"replace": {"cell": "a", "old": "row_250 = 250", "new": "row_250 = -1"}},
            {"delete": {"cell": "h"}},
        ],
        CELLS,
    )
    card, text = card_for(loop, TOOL, tool_input)
    assert "Edit the notebook: 3 cells (1 new, 1 changed, 1 deleted)" in text
    assert "New code cell gen, below cell ask:" in text and "+plot()" in text
    assert "-row_250 = 250" in text and "+row_250 = -1" in text
    assert " row_0 = 0" in text and " row_499 = 499" in text  # the whole cell, not 3 lines
    assert "Delete markdown cell h:" in text
    for label in ("Allow once", ALWAYS_LABEL, "Deny"):
        assert label in text
    assert "reason" in card.reason.placeholder


def test_an_edit_of_a_claude_cell_says_so_and_names_the_fields_it_adds(
    loop: asyncio.AbstractEventLoop,
) -> None:
    cells = [*CELLS, Cell("old", "code", "%%time\n%%claude\nabout {df}", 3)]
    edit = {"replace": {"cell": "old", "old": "{df}", "new": "{df} {os.environ} <b>{x.y}</b>"}}
    tool_input = mark_claude_cells(review([edit], cells))
    card, text = card_for(loop, TOOL, tool_input)
    assert "Edit the notebook: 1 cell (1 changed), in a cell that runs Claude" in text
    assert "This cell runs Claude" in text
    assert "adds fields that read your variables when the cell runs: {os.environ}, {x.y}" in text
    assert "<b>{x.y}" not in raw_values(card.widget)  # escaped as every body is
    plain = review([{"replace": {"cell": "a", "old": "x = 1", "new": "x = 2"}}], cells)
    _, text = card_for(loop, TOOL, mark_claude_cells(plain))
    assert "This cell runs Claude" not in text and "adds fields" not in text


def test_hostile_cell_sources_are_inert_text_in_the_card(loop: asyncio.AbstractEventLoop) -> None:
    tool_input = review(
        [{"replace": {"cell": "h", "old": "<b>bold</b>", "new": f"![x]({BASE}/new.png)"}}], CELLS
    )
    card, text = card_for(loop, TOOL, tool_input)
    assert f"<img src='{BASE}/src.png'>" in text  # shown as text
    sent = raw_values(card.widget)
    assert loaders(sent) == [], loaders(sent)
    assert "<img" not in sent and "<iframe" not in sent and "<b>bold" not in sent


def test_the_saved_record_keeps_the_proposed_diff_inert() -> None:
    """The tool card in the cell's saved output holds the diff (a headless run's record)."""
    edits = {
        "edits": [
            {"insert": {"after": None, "cell_type": "markdown", "source": corpus_text(BASE)}},
            {"replace": {"cell": "a", "old": "x = 1", "new": HOSTILE_SOURCE}},
            {"delete": {"cell": "m"}},
        ]
    }
    b = fx.Builder("edit")
    view, _ = fx.run_turn(
        [
            b.init(),
            b.message_start("m1"),
            *b.streamed_tool("m1", 0, "toolu_e1", TOOL, edits),
            b.message_stop("m1"),
        ]
    )
    view.finish()
    (data, _meta), *_ = static_outputs(view)
    html = turn_html(view)
    assert data["text/html"] == html
    assert "+x = 1" not in html and "-x = 1" in html and "# delete cell m" in html
    assert loaders(html) == [] and "<img" not in html.lower()
    markdown = turn_markdown(view)
    assert "```diff" in markdown and "-x = 1" in markdown
    rendered = mistune.create_markdown(escape=False)(markdown)
    assert isinstance(rendered, str) and loaders(rendered) == []


def test_the_tool_card_says_in_one_line_what_each_edit_does() -> None:
    from byre_jupyter.ui.toolinfo import summarize_tool_input

    edits = {
        "edits": [
            {"insert": {"after": None, "cell_type": "code", "source": "x", "id": "n1"}},
            {"replace": {"cell": "a", "old": "x", "new": "y"}},
            {"delete": {"cell": "b"}},
        ]
    }
    assert summarize_tool_input(TOOL, edits) == "3 edits: insert n1, change a, delete b"
    assert summarize_tool_input(TOOL, {"edits": "nope"}).startswith('{"edits"')
