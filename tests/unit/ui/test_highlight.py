"""Code blocks: highlighted like the notebook's code, boxed, escaped, and loading nothing."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from support import wire as fx

from byre_jupyter.ui.highlight import CODE_STYLE_PROPERTIES, highlight_code, language_of
from byre_jupyter.ui.markdown import render_markdown
from byre_jupyter.ui.record import turn_html
from byre_jupyter.ui.viewmodel import TurnView

KEYWORD = "color:var(--jp-mirror-editor-keyword-color, #008000)"


def styles_of(html: str) -> list[str]:
    """Every style attribute of a real element (not text that looks like one)."""
    found: list[str] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend(v or "" for k, v in attrs if k == "style")

    Collect().feed(html)
    return found


def text_of(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_a_python_fence_is_highlighted_with_the_notebooks_colours() -> None:
    html = render_markdown("```python\ndef f(x):\n    return 'a'  # note\n```\n")
    assert f'<span style="{KEYWORD};font-weight:bold">def</span>' in html
    assert "var(--jp-mirror-editor-string-color, #ba2121)" in html
    assert "var(--jp-mirror-editor-comment-color, #408080);font-style:italic" in html
    assert text_of(html) == "def f(x):\n    return 'a'  # note\n\n"
    # boxed like a code cell, in the notebook's code font, in either theme
    assert "background-color:var(--jp-cell-editor-background, #f5f5f5)" in html
    assert "font-family:var(--jp-code-font-family, monospace)" in html
    assert "border:1px solid var(--jp-cell-editor-border-color, #e0e0e0)" in html


@pytest.mark.parametrize("info", ["py", "Python", "python3 title=x", "{.python}"])
def test_the_language_comes_from_the_info_string(info: str) -> None:
    assert KEYWORD in render_markdown(f"```{info}\nimport os\n```\n")


@pytest.mark.parametrize("info", ["", "no-such-language", 'x" onclick="alert(1)', "<b>"])
def test_without_a_known_language_the_block_is_boxed_but_plain(info: str) -> None:
    html = render_markdown(f"```{info}\nimport os <b>\n```\n")
    assert "<span" not in html and "cell-editor-background" in html
    assert "onclick" not in html and "<b>" not in html
    assert text_of(html).strip() == "import os &lt;b&gt;"


def test_model_code_is_escaped_token_by_token() -> None:
    hostile = '<script>alert(1)</script>\n"><img src=x onerror=alert(1)>\n'
    for lang in ("html", "python", "bash", "js"):
        html = render_markdown(f"```{lang}\n{hostile}```\n")
        assert "<script" not in html and "<img" not in html and "onerror=" in text_of(html)


def test_only_colour_and_font_styles_and_never_a_url() -> None:
    corpus = "".join(
        f"```{lang}\n<p style=\"background:url(http://e/y)\">\nx = url('http://e/x')\n```\n"
        for lang in ("python", "css", "html", "diff", "json", "sql", "bash")
    )
    html = render_markdown(corpus)
    assert styles_of(html)
    for style in styles_of(html):
        assert "url(" not in style, style
        props = {decl.split(":", 1)[0].strip() for decl in style.split(";") if decl.strip()}
        assert props <= CODE_STYLE_PROPERTIES, props


def test_language_of() -> None:
    assert language_of("python title='a'") == "python"
    assert language_of(None) == language_of("") == language_of("<x>") == ""


def test_saved_html_has_highlighted_code() -> None:
    view = TurnView("s", "p", clock=lambda: 0.0)
    b = fx.Builder()
    for wire in [
        b.message_start("m"),
        b.block_start("m", 0, {"type": "text", "text": ""}),
        b.text_delta("m", 0, "Here:\n\n```python\nimport os\n```\n"),
    ]:
        view.apply(fx.parse_all([wire])[0])
    assert KEYWORD in turn_html(view)


def test_huge_code_is_shown_plain() -> None:
    code = "x = 1\n" * 40_000
    html = highlight_code(code, "python")
    assert "<span" not in html and text_of(html) == code + "\n"
