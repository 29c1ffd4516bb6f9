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


def _draft_parts(text: str) -> list[str]:
    """The plain text of each part the draft publishes for an answer of ``text``."""
    b = fx.Builder("fence")
    view, _ = fx.run_turn([b.init(), *b.final_answer("msg_fence", text)])
    update = Draft(view).refresh()
    return [part["text/plain"] for part in (*update.finished, update.tail)]


@pytest.mark.parametrize("name", sorted(NOT_FENCES))
def test_not_a_fence_for_any_consumer(name: str) -> None:
    line = NOT_FENCES[name]
    text = f"{line}\n<b>x</b>\n\n" + "word " * (DRAFT_PART_CHARS // 2)
    assert verbatim_spans(text) == []
    assert len(split_blocks(text)) == 2  # a blank line ends it: it is no fence
    # The inert Markdown treats what follows as prose: its "<" is an entity.
    assert "<b>" not in inert_markdown(text)
    # The draft cuts the answer in two and opens no fence in the second part.
    first, second = _draft_parts(text)
    assert "word" in second and not second.lstrip().startswith(("```", "~~~"))
    assert "```\n" not in first.replace(line, "")  # nor closes one in the first


def test_a_half_written_table_after_a_backtick_info_line_is_held_back() -> None:
    # "```js`x`" is no fence, so the table header still waiting for its delimiter row would
    # show as "| a | b |" text: it is held back, as after any paragraph.
    assert tolerant_markdown("```js`x`\n\n| a | b |") == "```js`x`\n"


def test_a_part_cut_inside_a_fence_closes_and_reopens_it_with_its_own_opener() -> None:
    # Still streaming: the fence is open, and a line inside it ends the finished part.
    code = "\n".join(f"line {n} = ```" for n in range(120))
    first, second = _draft_parts(f"Code:\n\n~~~~python\n{code}")
    assert first.rstrip().endswith("line 119 = ```\n~~~~")  # closed with its own opener
    assert second.startswith("~~~~python\n")  # and opened again as it was
