"""A notebook saved while a turn runs (autosave included) holds the live view's output as the
frontend got it: the widget's view and the representations beside it, which every reader
without the kernel or the widget manager shows (GitHub, nbviewer, ``nbconvert``). Those say
that the answer was still being written and where it goes (docs/bridge.md, "Pending answers");
the finished record, which replaces the view in its slot, does not."""

from __future__ import annotations

import html
from typing import Any, cast

import nbformat
import pytest
from nbconvert import HTMLExporter, MarkdownExporter
from support import wire as fx

from byre_jupyter.tools.bounded import ToolLimits
from byre_jupyter.tools.notebook import Cell, NotebookRead, render_notebook
from byre_jupyter.ui.coalesce import LoopLike
from byre_jupyter.ui.live import LiveView
from byre_jupyter.ui.record import static_outputs, waiting_text
from byre_jupyter.ui.viewmodel import TurnView

WIDGET = "application/vnd.jupyter.widget-view+json"
TEXT_TYPES = ("text/plain", "text/markdown", "text/html")
HOSTILE = "<img src=x onerror=alert(1)> **bold** [link](http://example.com/x)"


def live_bundle(view: TurnView, *, kept: bool) -> dict[str, Any]:
    """What the frontend gets (and saves) when the surface displays the live view."""
    live = LiveView(
        view,
        models=["opus"],
        on_stop=lambda: None,
        on_model=lambda _m: None,
        loop=cast(LoopLike, fx.ManualLoop()),
        kept=kept,
    )
    try:
        return dict(live.widget._repr_mimebundle_())
    finally:
        live.close()


def saved(bundle: dict[str, Any]) -> nbformat.NotebookNode:
    """A notebook holding the bundle as a ``%%claude`` cell's output, as Lab saves it."""
    cell = nbformat.v4.new_code_cell(
        "%%claude\nhello", outputs=[nbformat.v4.new_output("display_data", data=bundle)]
    )
    return nbformat.v4.new_notebook(cells=[cell])


@pytest.mark.parametrize("kept", [True, False])
def test_the_live_views_saved_form_says_the_answer_was_still_coming(kept: bool) -> None:
    view = TurnView("analysis", HOSTILE, clock=fx.FakeClock())
    bundle = live_bundle(view, kept=kept)
    line = waiting_text(kept=kept)
    assert WIDGET in bundle  # the live view itself, in a page with the widget manager
    assert "\n" not in line and len(line) < 160  # one short line
    assert ("open the notebook again" in line) is kept  # only where the kernel keeps it
    for mime in TEXT_TYPES:
        assert html.unescape(line) in html.unescape(bundle[mime]), mime
    # The prompt is there too, and never as markup: escaped in HTML, inert in Markdown.
    assert "<img" not in bundle["text/html"] and "&lt;img" in bundle["text/html"]
    assert "<img" not in bundle["text/markdown"] and "](http" not in bundle["text/markdown"]
    assert "**bold**" not in bundle["text/markdown"]
    # What readers without the kernel show of the saved notebook.
    markdown, _ = MarkdownExporter().from_notebook_node(saved(bundle))
    page, _ = HTMLExporter().from_notebook_node(saved(bundle))
    assert line in markdown and "VBox(" not in markdown
    assert html.escape(line, quote=False) in page or line in html.unescape(page)


def test_the_finished_record_that_replaces_it_has_no_such_line() -> None:
    view, _ = fx.run_turn(fx.plain_text(), prompt=HOSTILE)
    (data, _meta), *_images = static_outputs(view)
    for mime in TEXT_TYPES:
        for kept in (True, False):
            assert waiting_text(kept=kept) not in html.unescape(data[mime])


def test_the_read_tool_reads_a_running_turn_in_another_cell_as_its_prompt_and_the_line() -> None:
    view = TurnView("analysis", "Plot the bins", clock=fx.FakeClock())
    bundle = live_bundle(view, kept=True)
    output = {"output_type": "display_data", "data": bundle, "metadata": {}}
    cells = (Cell("bg", "code", "%%claude --bg\nPlot the bins", 1, (output,)),)
    found = render_notebook(
        NotebookRead(cells, where="n.ipynb", live=True),
        [0],
        asking="other",
        ran=lambda _n: None,
        images=False,
        limits=ToolLimits(),
    )
    text = str(found.content)
    assert "Plot the bins" in text and "still answering" in text and "VBox" not in text
