"""Half-written markdown in the live view: no raw table or fence fragments at any moment."""

from __future__ import annotations

import re
from typing import cast

from support import wire as fx
from support.screen import Screen

from byre_jupyter.protocol.messages import parse_message
from byre_jupyter.ui.coalesce import LoopLike
from byre_jupyter.ui.live import LiveView
from byre_jupyter.ui.markdown import render_markdown, tolerant_markdown
from byre_jupyter.ui.viewmodel import TurnView

ANSWER = (
    "The results:\n\n"
    "| param | value | note |\n"
    "|:------|------:|------|\n"
    "| alpha | 0.5 | first |\n"
    "| beta | 12 | second |\n\n"
    "And the code:\n\n"
    "```python\nprint('| not a table |')\n```\n\n"
    "Done."
)


def visible_text_outside_code(html: str) -> str:
    html = re.sub(r"<pre.*?</pre>", "", html, flags=re.S)
    html = re.sub(r"<pre.*", "", html, flags=re.S)  # an open fence runs to the end
    return re.sub(r"<[^>]+>", "", html)


def test_every_prefix_renders_without_raw_table_or_fence_fragments() -> None:
    raw_before = 0
    for n in range(1, len(ANSWER) + 1):
        prefix = ANSWER[:n]
        if "|" in visible_text_outside_code(render_markdown(prefix)):
            raw_before += 1
        shown = visible_text_outside_code(render_markdown(tolerant_markdown(prefix)))
        assert "|" not in shown, (prefix, shown)
        assert "``" not in shown and not shown.rstrip().endswith("`"), (prefix, shown)
    assert raw_before > 50  # the plain renderer does show fragments: the test has teeth


def test_the_row_being_written_stays_in_its_table() -> None:
    prefix = ANSWER[: ANSWER.index("| beta | 12") + len("| beta | 1")]
    html = render_markdown(tolerant_markdown(prefix))
    assert "<td>beta</td>" in html and "<td>1</td>" in html.replace(
        '<td style="text-align:right">', "<td>"
    )


def test_finished_text_is_rendered_as_written() -> None:
    assert tolerant_markdown(ANSWER) == ANSWER
    assert tolerant_markdown("a line | with a pipe") == "a line | with a pipe"


def test_the_live_view_shows_the_tolerant_tail_and_the_whole_text_once_frozen() -> None:
    loop = fx.ManualLoop()
    view = TurnView("s", "p", clock=loop.time)
    live = LiveView(
        view, models=["opus"], on_stop=lambda: None, on_model=print, loop=cast(LoopLike, loop)
    )
    screen = Screen(live)
    b = fx.Builder()
    live.update(view.apply(parse_message(b.message_start("m"))))
    live.update(view.apply(parse_message(b.block_start("m", 0, {"type": "text", "text": ""}))))
    live.update(view.apply(parse_message(b.text_delta("m", 0, "Intro\n\n| a | b |\n| -"))))
    loop.advance(0.1)
    text_id = view.blocks[0].id
    assert "| a" not in screen.text(text_id) and "Intro" in screen.text(text_id)
    live.update(view.apply(parse_message(b.block_stop("m", 0))))
    loop.advance(0.1)
    assert "| a | b |" in screen.text(text_id)  # frozen: as written
    live.close()
