"""One fence scanner (``verbatim_spans``) for every place that asks where code is: block
splitting, the streaming tolerance, the inert Markdown and the draft. Four scanners disagreed:
a four-space-indented ```` ``` ```` opened a fence for the draft (it re-opened a fence that
does not exist in the next part) and not for the renderer; ```` ```js`x` ```` was a fence to
the streaming tolerance only (it stopped holding back a half-written table)."""

from __future__ import annotations

import pytest
from support import wire as fx

from byre_jupyter.ui.draft import DRAFT_PART_CHARS, Draft
from byre_jupyter.ui.markdown import (
    inert_markdown,
    split_blocks,
    tolerant_markdown,
    verbatim_spans,
)

# Neither is a fence to CommonMark (mistune, markdown-it, cmark) or marked.
NOT_FENCES = {"indented": "    ```", "backtick-info": "```js`x`"}


def _draft_window(text: str) -> str:
    """The plain text the draft's window shows for an answer of ``text``, below the line that
    says how much is above it."""
    b = fx.Builder("fence")
    view, _ = fx.run_turn([b.init(), *b.final_answer("msg_fence", text)])
    note, _, shown = Draft(view).refresh()["text/plain"].partition("\n\n")
    assert "characters above" in note  # the window moved on
    return shown


@pytest.mark.parametrize("name", sorted(NOT_FENCES))
def test_not_a_fence_for_any_consumer(name: str) -> None:
    line = NOT_FENCES[name]
    text = f"{line}\n<b>x</b>\n\n" + "word " * (DRAFT_PART_CHARS // 2)
    assert verbatim_spans(text) == ()
    assert len(split_blocks(text)) == 2  # a blank line ends it: it is no fence
    # The inert Markdown treats what follows as prose: its "<" is an entity.
    assert "<b>" not in inert_markdown(text)
    # The draft's window moves past the line and opens no fence.
    shown = _draft_window(text)
    assert "word" in shown and line not in shown
    assert not shown.lstrip().startswith(("```", "~~~"))


def test_a_half_written_table_after_a_backtick_info_line_is_held_back() -> None:
    # "```js`x`" is no fence, so the table header still waiting for its delimiter row would
    # show as "| a | b |" text: it is held back, as after any paragraph.
    assert tolerant_markdown("```js`x`\n\n| a | b |") == "```js`x`\n"


def test_a_window_that_starts_inside_a_fence_reopens_it_with_its_own_opener() -> None:
    # Still streaming: the fence is open, and a line inside it is where the window starts.
    code = "\n".join(f"line {n} = ```" for n in range(120))
    shown = _draft_window(f"Code:\n\n~~~~python\n{code}")
    assert "Code:" not in shown and "line 119 = ```" in shown
    assert shown.startswith("~~~~python\nline ")  # opened again as it was
