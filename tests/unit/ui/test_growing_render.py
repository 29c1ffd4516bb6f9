"""The growing block rendered in pieces: at every flush the live HTML is what a whole render of
the text so far gives, byte for byte, for every shape of answer, and the pieces are really
rendered once (a spy counts what is lexed and rendered, not time)."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from byre_jupyter.ui import highlight, markdown
from byre_jupyter.ui.highlight import CHUNK_LINES
from byre_jupyter.ui.markdown import (
    PARAGRAPH_PIECE_CHARS,
    TABLE_PIECE_ROWS,
    normalize_newlines,
    render_markdown,
    split_blocks,
    tolerant_markdown,
)

WORDS = [
    "the",
    "data",
    "frame",
    "`df.groupby()`",
    "**note**",
    "_maybe_",
    "snake_case",
    "→",
    "é",
    "数据",
    "✓",
    "0.25",
    "42%",
    "(see)",
    "[link](https://example.org/a)",
    "~~old~~",
    "$x^2$",
    "$5",
    "a*b",
    "x<y",
]  # prose, markup, and what leaves something open
PLAIN = [w for w in WORDS if not set(w) & set("*<$")]  # words that leave nothing open


def whole(text: str, *, growing: bool) -> str:
    """What render_markdown gave before it rendered the growing block in pieces: every block
    whole, the last through tolerant_markdown while it grows."""
    *done, last = split_blocks(normalize_newlines(text))
    last = tolerant_markdown(last) if growing else last
    return "".join(map(markdown._render, done)) + markdown._render(last)


def python_code(lines: int) -> str:
    out = []
    for n in range(lines // 8):
        out += [
            f"def top_{n}(frame, column='value', *, limit={n}):",
            '    """Return the largest rows.',
            "",
            f"    A docstring of several lines, so a chunk edge can fall inside it ({n}).",
            '    """',
            "    rows = frame.sort_values(column).head(limit)  # a comment",
            f"    return {{'name': \"top_{n}\", 'total': sum(rows) / {n + 1}.5}}",
            "",
        ]
    return "\n".join(out)


def shape(name: str) -> str:
    rng = random.Random(3)
    if name == "code":
        return f"Here it is:\n\n```python\n{python_code(32)}\n```\n\nDone."
    if name == "open fence":
        return f"```py\n{python_code(24)}"
    if name == "table":
        rows = "\n".join(
            f"| {n} | {' '.join(rng.choices(WORDS, k=3))} | `x|{n}` |"
            for n in range(2 * TABLE_PIECE_ROWS + 5)
        )
        return f"The table:\n\n| n | words | code |\n|---|:--|--:|\n{rows}\n\nAfter."
    if name == "paragraph":
        # mostly words that leave nothing open, so it is cut; now and then one that does
        words = [
            rng.choice(WORDS) if n % 97 == 0 else rng.choice(PLAIN)
            for n in range(3 * PARAGRAPH_PIECE_CHARS // 6)
        ]
        return "Here is the whole story. " + " ".join(words)
    if name == "prose":
        paragraphs = [" ".join(rng.choices(WORDS, k=60)) for _ in range(6)]
        return "\n\n".join(paragraphs)
    if name == "mix":
        return (
            f"{' '.join(rng.choices(WORDS, k=40))}\n\n```python\n{python_code(24)}\n```\n\n"
            f"| a | b |\n|---|---|\n"
            + "\n".join(f"| {n} | *{n}* |" for n in range(TABLE_PIECE_ROWS + 3))
            + f"\n\n{' '.join(rng.choices(PLAIN, k=PARAGRAPH_PIECE_CHARS * 2 // 5))}"
        )
    raise ValueError(name)


def deltas(text: str, size: int = 11) -> Iterator[str]:
    """Every prefix of ``text`` a streamed answer passes, ``size`` characters at a time."""
    for end in range(size, len(text) + size, size):
        yield text[:end]


SHAPES = ("code", "open fence", "table", "paragraph", "prose", "mix")


@pytest.mark.parametrize("name", SHAPES)
def test_the_live_html_at_every_flush_is_the_whole_render(name: str) -> None:
    text = shape(name)
    for prefix in deltas(text):
        assert render_markdown(prefix, growing=True) == whole(prefix, growing=True), prefix
    # and the final record's rendering is the one it always was
    assert render_markdown(text) == whole(text, growing=False)


@pytest.mark.parametrize(
    "text",
    [
        # an emphasis, a code span and a link left open in one piece, closed in a later one
        "Open "
        + "word " * (PARAGRAPH_PIECE_CHARS // 3)
        + "**bold `code [link "
        + "more " * 600
        + "end** code` here](https://example.org) after "
        + "tail " * 300,
        # a docstring longer than the longest chunk: no chunk may end inside it
        "```python\n"
        + "x = 1\n" * 10
        + '"""\n'
        + "doc line\n" * (highlight._MAX_CHUNK_LINES + CHUNK_LINES)
        + '"""\n'
        + "y = 2\n" * 16,
        # a row that makes the table no table at all, after many good rows
        "| a | b |\n|---|---|\n"
        + "| 1 | 2 |\n" * (2 * TABLE_PIECE_ROWS)
        + "| 1 | 2 | 3 | 4 |\n"
        + "| 5 | 6 |\n" * 5,
        # a table row and a fence line inside a paragraph's single line stay text
        "Words " * (PARAGRAPH_PIECE_CHARS // 2) + "| not | a | table | ``` and # no heading",
        # hidden characters and markup in code chunks
        "```html\n" + "<b>\u202e x</b> &amp; \u200b\n" * 24,
    ],
    ids=["left open", "docstring", "bad row", "one line", "hidden chars"],
)
def test_constructs_across_a_cut_render_as_the_whole(text: str) -> None:
    for prefix in deltas(text, 31):
        assert render_markdown(prefix, growing=True) == whole(prefix, growing=True), prefix


def test_the_final_record_of_code_is_highlighted_whole() -> None:
    """The documented gap of code_chunks (a C comment opened in one chunk, closed in a later
    one) never reaches the record: only the live view renders in pieces."""
    code = "/* a comment\n" + "int x = 1;\n" * 24 + "*/\nint y;\n"
    text = f"```c\n{code}```\n"
    record = render_markdown(text)
    assert record == whole(text, growing=False)
    assert re.search(r'italic">/\* a comment\n(int x = 1;\n)+\*/</span>', record)


# --- the spy: what the incremental path really lexes and renders per flush ---------------------


def spy(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[str]:
    seen: list[str] = []
    real: Callable[..., object] = getattr(module, name)

    def wrapper(text: str, *args: object) -> object:
        seen.append(text)
        return real(text, *args)

    monkeypatch.setattr(module, name, wrapper)
    return seen


def test_a_growing_fence_lexes_each_finished_chunk_once(monkeypatch: pytest.MonkeyPatch) -> None:
    highlight._chunk.cache_clear()
    lexed = spy(monkeypatch, highlight, "_highlighted")
    code = python_code(80)
    renders = 0
    for prefix in deltas(f"```python\n{code}\n```\n", 40):
        render_markdown(prefix, growing=True)
        renders += 1
    # a whole render per flush lexes the whole block each time (80 lines at the end); a chunk
    # is CHUNK_LINES, or the few lines of a docstring (5 in python_code), and the open tail
    assert max(text.count("\n") for text in lexed) <= max(CHUNK_LINES, 5) + CHUNK_LINES
    # a new chunk at most, and the open tail, per flush (finished chunks come from the cache)
    assert len(lexed) <= 2 * renders


def test_a_growing_fence_resumes_at_the_last_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flush takes the chunks the flush before found and looks only past them, for two
    blocks growing at once too: the tries per flush stay bounded while the blocks grow, where
    finding each cut again (even from the cache) takes a try per chunk, over the whole block."""
    code = python_code(320)
    other = python_code(320).replace("frame", "table")  # another session's, at the same time
    tries = spy(monkeypatch, highlight, "_chunk")
    per_flush = []
    both = zip(deltas(f"```python\n{code}", 60), deltas(f"```py\n{other}", 60), strict=False)
    for prefix, second in both:
        before = len(tries)
        render_markdown(prefix, growing=True)
        render_markdown(second, growing=True)
        per_flush.append(len(tries) - before)
    assert max(per_flush[len(per_flush) // 2 :]) <= 8, per_flush


def test_a_resumed_fence_renders_as_a_fresh_one_after_another_block() -> None:
    """Another fence between two flushes (another session's turn), or a text that diverges
    inside what was chunked, never takes the last call's chunks."""
    code = python_code(80)
    other = code.replace("top_3", "top_three")  # the same start, then something else
    texts = [
        f"```python\n{code}",
        f"```diff\n{code}",  # the same code in another language (one whose lexer is line by
        # line: a C lexer's declaration pattern reads past a line, the documented gap)
        f"```python\n{other}",
        f"```python\n{code[: len(code) // 2]}" + "# x\n" * 9,
    ]
    for text in texts:
        for prefix in deltas(text, 7):
            assert render_markdown(prefix, growing=True) == whole(prefix, growing=True)
    for text in texts:  # each straight after the one before, at its full length
        assert render_markdown(text, growing=True) == whole(text, growing=True)


def test_a_long_finished_block_is_highlighted_once_for_the_live_view_and_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The live view renders a finished block whole, and the record the turn ends with renders
    it again a moment later: a long code block (over the small-block cache's size) is lexed
    whole once for both."""
    lexed = spy(monkeypatch, highlight, "_highlighted")
    code = python_code(320) + f"# {random.random()}"  # a block no test rendered
    text = f"Here:\n\n```python\n{code}\n```\n"
    *_, block = markdown.split_blocks(text)
    assert len(block) > markdown._CACHED_BLOCK_CHARS
    first = render_markdown(block)  # the live view, the block frozen
    assert render_markdown(text).endswith(first)  # the record
    assert sum(1 for t in lexed if t.startswith(code[:40])) == 1, len(lexed)


def test_a_growing_table_renders_each_finished_piece_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    markdown._render_cached.cache_clear()
    rendered = spy(monkeypatch, markdown, "_markdown")
    rows = "\n".join(f"| {n} | value {n} |" for n in range(10 * TABLE_PIECE_ROWS))
    for prefix in deltas(f"| a | b |\n|---|---|\n{rows}\n", 20):
        render_markdown(prefix, growing=True)
    assert max(text.count("\n") for text in rendered) <= TABLE_PIECE_ROWS + 2
    full = Counter(t for t in rendered if t.count("\n") == TABLE_PIECE_ROWS + 1)
    # each full piece once as the last piece with its last row written, once finished: a
    # whole render per flush would render it again at every flush after
    assert len(full) >= 9 and max(full.values()) <= 2


def test_a_long_table_is_rendered_whole_neither_live_nor_in_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A finished table renders in the same pieces as it did while it grew, which the live
    view rendered already: the live view's last flush and the record take them from the cache,
    where rendering the whole table again was a third of what a long table cost its turn."""
    rows = "\n".join(f"| {n} | value {n} {random.random()} |" for n in range(40 * TABLE_PIECE_ROWS))
    text = f"The table:\n\n| a | b |\n|---|--:|\n{rows}\n\nAfter."
    *_, table, _after = split_blocks(text)
    assert len(table) > markdown._CACHED_BLOCK_CHARS
    expected = whole(text, growing=False)  # (before the spy: the reference renders it whole)
    rendered = spy(monkeypatch, markdown, "_markdown")
    for prefix in deltas(text, 40):
        render_markdown(prefix, growing=True)
    live = render_markdown(table)  # the live view, the table frozen
    record = render_markdown(text)
    assert max(text.count("\n") for text in rendered) <= TABLE_PIECE_ROWS + 2
    assert record == expected
    assert live in record


_CELL = st.lists(
    st.sampled_from(
        ["a", "1", " ", "`", "\\|", "*", "_", "<b>", "&", "[x](y)", "é", ":", "-", "~", "$"]
    ),
    max_size=8,
).map("".join)


@st.composite
def finished_tables(draw: st.DrawFn) -> str:
    """A table as a model may finish it: mostly good rows, and now and then one of another
    width, without its closing pipe, indented, with trailing spaces, or a line that ends or
    spoils the table."""
    width = draw(st.integers(1, 4))
    header = "|" + "|".join(draw(st.lists(_CELL, min_size=width, max_size=width))) + "|"
    delimiter = (
        "|"
        + "|".join(draw(st.sampled_from(["---", ":--", "--:", ":-:", " - "])) for _ in range(width))
        + "|"
    )
    rows = []
    for _ in range(draw(st.integers(TABLE_PIECE_ROWS + 1, 4 * TABLE_PIECE_ROWS))):
        if draw(st.integers(0, 39)):  # mostly a good row, as wide as the header
            rows.append("|" + "|".join(draw(st.lists(_CELL, min_size=width, max_size=width))) + "|")
            continue
        cells = draw(st.lists(_CELL | st.just("a\\"), min_size=0, max_size=width + 2))
        row = "|" + "|".join(cells) + draw(st.sampled_from(["|", "", " | ", "\\|"]))
        rows.append(draw(st.sampled_from(["", " ", "   ", "x", "> "])) + row)
    return "\n".join([header, delimiter, *rows])


@settings(max_examples=150, deadline=None)
@given(finished_tables(), st.sampled_from(["", "\n", "\n\nAfter."]))
# mistune 3.3.0 renders this one to other cells in pieces than whole (the oldest tier found it)
@example("||\n|---|\n||\n||a\n||\n||\n||\n||\n||\n||\n||", "")
def test_a_finished_table_renders_as_it_always_did(table: str, after: str) -> None:
    """The record of a finished long table, rendered from its pieces, is the whole render byte
    for byte (the small-block cache's bound made small, so that every table here is long)."""
    text = f"Intro.\n\n{table}{after}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown, "_CACHED_BLOCK_CHARS", 16)
        render_markdown(f"Intro.\n\n{table}", growing=True)  # the live view, as it grew
        assert render_markdown(text) == whole(text, growing=False)


def test_a_long_table_no_live_view_grew_is_rendered_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The draft and a headless run render a table only when it is finished: its pieces would
    all be rendered cold, the head again in each, which costs more than the whole."""
    rows = "\n".join(f"| {n} | cold {n} {random.random()} |" for n in range(40 * TABLE_PIECE_ROWS))
    text = f"Before.\n\n| a | b |\n|---|--:|\n{rows}\n"
    expected = whole(text, growing=False)
    rendered = spy(monkeypatch, markdown, "_markdown")
    assert render_markdown(text) == expected
    assert rendered == split_blocks(text)  # each block once, the table whole


def test_a_growing_paragraph_renders_each_finished_piece_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    markdown._closed_piece.cache_clear()
    rendered = spy(monkeypatch, markdown, "_markdown")
    text = "Long " + " ".join(random.Random(1).choices(PLAIN, k=6 * PARAGRAPH_PIECE_CHARS // 6))
    for prefix in deltas(text, 13):
        render_markdown(prefix, growing=True)
    assert len(text) > 5 * PARAGRAPH_PIECE_CHARS
    # (a whole render per flush renders the whole paragraph, five pieces long, at the end)
    assert max(map(len, rendered)) < 2 * PARAGRAPH_PIECE_CHARS


def test_a_flush_of_a_growing_fence_scans_it_for_fences_at_most_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The live view's splitter, the block's tolerance and its fence all ask where the code
    is; each scan reads the whole block, so a flush asks the scanner at most twice (with and
    without ``$$``), however often the same text is asked about."""
    from byre_jupyter.ui.blocks import TextView
    from byre_jupyter.ui.live import _Text

    scans: list[int] = []
    edge = markdown._VERBATIM_EDGE

    class Counting:
        def finditer(self, text: str) -> Iterator[re.Match[str]]:
            scans.append(len(text))
            return edge.finditer(text)

    monkeypatch.setattr(markdown, "_VERBATIM_EDGE", Counting())
    getattr(markdown.verbatim_spans, "cache_clear", lambda: None)()
    block = TextView(id="t")
    tracker = _Text(block, "", "body")
    per_flush = []
    for prefix in deltas(f"Here it is:\n\n```python\n{python_code(40)}", 37):
        block.text, block.version = prefix, block.version + 1
        before = len(scans)
        tracker.pieces(block, block.version)
        per_flush.append(len(scans) - before)
    assert max(per_flush[4:]) <= 2, per_flush
