"""The live view's copy buttons on a growing block, redone only past the last change
(``live._CopyButtons``): at every flush the HTML is exactly what wrapping it whole gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from byre_jupyter.ui import live
from byre_jupyter.ui.markdown import render_markdown

# Pieces that make and break the two tags, and cut them anywhere.
PIECES = ["<pre ", "</pre>", "<", "<pr", "</", "pre", "e ", ">", " ", "x", "<span>", "é"]


@st.composite
def flushes(draw: st.DrawFn) -> list[str]:
    """HTML strings as a growing block's flushes give them: each the last one cut somewhere
    (mostly near its end), then more written; sometimes something else altogether."""
    html = ""
    out = []
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.integers(0, 9)) == 0:
            html = ""
        cut = draw(st.integers(0, len(html)))
        html = html[:cut] + "".join(draw(st.lists(st.sampled_from(PIECES), max_size=8)))
        out.append(html)
    return out


@given(flushes())
def test_each_flush_is_wrapped_as_a_whole_wrap_would(seq: list[str]) -> None:
    buttons = live._CopyButtons()
    for html in seq:
        assert buttons(html) == live._with_copy_buttons(html), seq


def test_a_streamed_answer_with_code_boxes_is_wrapped_as_a_whole_wrap_would() -> None:
    text = (
        "Two boxes:\n```python\nx = '<pre '  # a tag in the code\n```\n"
        "then\n~~~\n</pre> and <pre\n~~~\nand a third:\n```\n" + "y = 1\n" * 40 + "```\n"
    )
    buttons = live._CopyButtons()
    boxes = 0
    for end in range(1, len(text) + 1, 3):
        html = render_markdown(text[:end], growing=True)
        wrapped = buttons(html)
        assert wrapped == live._with_copy_buttons(html)
        boxes = max(boxes, wrapped.count('<span class="byre-copy">Copy</span>'))
    assert boxes == 3
