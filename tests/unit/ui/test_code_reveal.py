"""Hidden characters in an answer's code blocks are shown as markers, in what the live view
and the record show and in what Copy copies (the ``<pre>``'s text); wide tables are bounded."""

from __future__ import annotations

import re

from support import wire as fx

from byre_jupyter.ui.live import _rendered
from byre_jupyter.ui.markdown import MAX_TABLE_COLUMNS, inert_markdown, render_markdown

RLO = "\u202e"
CODE = f"```python\naccess = 'user' {RLO}# admin \u2066\nzero\u200bwidth = 1\n```\n"


def _pre_texts(html: str) -> list[str]:
    """The text of each ``<pre>``: what Copy writes to the clipboard (``pre.innerText``)."""
    return [re.sub(r"<[^>]+>", "", body) for body in re.findall(r"<pre.*?</pre>", html, re.S)]


def test_bidi_and_zero_width_characters_in_code_blocks_are_revealed() -> None:
    for html in (render_markdown(CODE), _rendered(CODE), _rendered(CODE, growing=True)):
        (code,) = _pre_texts(html)
        assert RLO not in code and "\u2066" not in code and "\u200b" not in code
        assert "⟨U+202E⟩" in code and "⟨U+2066⟩" in code and "⟨U+200B⟩" in code
        assert 'class="byre-hidden-char"' in html  # styled: not the same text typed literally
    markdown = inert_markdown(CODE)
    assert RLO not in markdown and "⟨U+202E⟩# admin" in markdown


def test_the_saved_record_reveals_them_too() -> None:
    b = fx.Builder("reveal")
    view, _ = fx.run_turn([b.init(), *b.final_answer("msg_reveal", CODE)])
    from byre_jupyter.ui.record import static_outputs

    data = static_outputs(view)[0][0]
    assert RLO not in data["text/html"] and "⟨U+202E⟩" in data["text/html"]
    assert RLO not in data["text/markdown"] and "⟨U+202E⟩" in data["text/markdown"]


def _table(columns: int, rows: int = 3) -> str:
    def row(cell: str) -> str:
        return "|" + "|".join(cell for _ in range(columns)) + "|"

    return "\n".join([row("h"), row("-"), *(row("x") for _ in range(rows))])


def test_a_table_wider_than_the_bound_is_shown_as_text() -> None:
    html = render_markdown(f"Before.\n\n{_table(5000)}\n\nAfter.")
    assert "<table" not in html and "<pre" in html and "|h|h|" in html
    assert "<p>Before.</p>" in html and "<p>After.</p>" in html
    narrow = render_markdown(_table(MAX_TABLE_COLUMNS - 1))
    assert "<table>" in narrow and "<pre" not in narrow


def test_a_wide_table_in_code_stays_code() -> None:
    html = render_markdown(f"````\n{_table(200)}\n````\n")
    (code,) = _pre_texts(html)
    assert code.count("|h") == 200 and "```" not in code
