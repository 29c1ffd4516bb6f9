"""Block-by-block rendering (``split_blocks``) gives exactly what rendering the whole text
gives: the live view and the final record re-render a streamed answer from cached blocks
(kernel CPU, bench/RESULTS.md 3), so any cut that changes the HTML would be a visible
difference between two renderings of the same text."""

from __future__ import annotations

import pytest
from support.hostile_markdown import corpus_text

from byre_jupyter.ui import markdown as md

# Constructs that could tie blocks together across a blank line.
TRICKY = {
    "loose list": "Intro\n\n- one\n\n- two\n\n  more of two\n\nAfter the list.\n",
    "ordered": "1. a\n\n2. b\n\n10) c\n\nText\n",
    "fence with blank lines": "Before\n\n```python\nx = 1\n\n\ny = 2\n```\n\nAfter\n",
    "tilde fence holding backticks": "~~~\n```\n\nstill code\n~~~\n\nOut\n",
    "longer closing fence": "````\n```\n\ninside\n````\n\nOut\n",
    "not a closing fence": "```\ncode\n``` x\n\nstill code\n```\n\nOut\n",
    "backtick info with a backtick": "``` a`b\n\nparagraph, not code\n",
    "unclosed fence": "Text\n\n```\nopen\n\nto the end\n",
    "indented fence": "Text\n\n   ```\n   code\n\n   more\n   ```\n\nEnd\n",
    "maths block": "Before\n\n$$\na = b\n\nc = d\n$$\n\nAfter $x$ and $5 and $6\n",
    "indented code": "Para\n\n    code\n\n    more code\n\nPara\n",
    "quote": "> a\n\n> b\n>\n> c\n\nd\n",
    "table": "| a | b |\n|---|---|\n| 1 | 2 |\n\nText\n\n| c |\n|---|\n",
    "html block": "<pre>\n\nx\n</pre>\n\n<div>\n\ny\n</div>\n\nText <b>bold</b>\n",
    "headings and rules": "# H\n\nText\n\n---\n\nSetext\n===\n\n***\n\nEnd\n",
    "emphasis across lines": "*a\nb*\n\n_c_\n\n**d\n\ne**\n",
    "lazy continuation": "> quote\nlazy\n\nnext\n",
    "crlf": "a\r\n\r\nb\r\n\r\n- c\r\n\r\nd\r\n",
    "blank lines only": "\n\n\n\nText\n\n\n\n",
}


def _texts() -> dict[str, str]:
    texts = dict(TRICKY)
    texts["hostile corpus"] = corpus_text("http://127.0.0.1:9")
    texts["all tricky together"] = "\n\n".join(TRICKY.values())
    return texts


@pytest.mark.parametrize("name", sorted(_texts()))
def test_blocks_render_as_the_whole_text(name: str) -> None:
    text = _texts()[name]
    assert "".join(md.split_blocks(text)) == text
    assert md.render_markdown(text) == md._render(text)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_every_prefix_of_a_streamed_text_renders_as_the_whole_prefix(name: str) -> None:
    text = TRICKY[name]
    for end in range(len(text) + 1):
        prefix = text[:end]
        assert md.render_markdown(prefix) == md._render(prefix), repr(prefix)
        assert md.render_markdown(prefix, growing=True) == md._render(
            md.tolerant_markdown(prefix)
        ), repr(prefix)


def test_the_splitter_cuts_between_paragraphs_and_not_inside_fences() -> None:
    text = "a\n\nb\n\n```\nx\n\ny\n```\n\nc\n\n- l\n\nd"
    assert md.split_blocks(text) == ["a\n\n", "b\n\n", "```\nx\n\ny\n```\n\n", "c\n\n- l\n\n", "d"]
    assert md.split_blocks("$$\nx\n\ny\n$$\n\nz") == ["$$\nx\n\ny\n$$\n\n", "z"]


def test_a_reference_definition_serves_links_in_earlier_blocks() -> None:
    text = "See [the docs][d].\n\nMore text.\n\n[d]: https://example.org/docs\n"
    assert 'href="https://example.org/docs"' in md.render_markdown(text)
    assert 'href="https://example.org/docs"' in md.render_markdown(text, growing=True)


def test_finished_blocks_are_rendered_once() -> None:
    md._render_cached.cache_clear()
    paragraphs = [f"Paragraph {n} with *emphasis* and `code`.\n\n" for n in range(50)]
    for n in range(1, len(paragraphs) + 1):
        md.render_markdown("".join(paragraphs[:n]) + "Still grow", growing=True)
    info = md._render_cached.cache_info()
    # Each finished paragraph is rendered when it is first finished, then taken from the cache.
    assert info.misses == 50 and info.hits == sum(range(50))


def test_the_cache_holds_no_long_block() -> None:
    md._render_cached.cache_clear()
    fence = "```\n" + "x = 1\n" * 2000 + "```\n\n"
    for _ in range(3):
        md.render_markdown(fence + "Still grow", growing=True)
    assert md._render_cached.cache_info().currsize == 0
