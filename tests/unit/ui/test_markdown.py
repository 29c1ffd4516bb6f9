"""render_markdown (safe HTML) and inert_markdown (Markdown inert in every renderer)."""

from __future__ import annotations

import re

import mistune
import pytest

from byre_jupyter.ui.markdown import inert_markdown, render_markdown

# A permissive renderer, like JupyterLab for trusted output: raw HTML passes through.
_permissive = mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])


@pytest.mark.parametrize(
    "attack",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<iframe src='https://evil'></iframe>",
        "<style>body{display:none}</style>",
        '<a href="javascript:alert(1)">x</a>',
        "<svg onload=alert(1)>",
    ],
)
def test_raw_html_in_model_text_stays_visible_text(attack: str) -> None:
    html = render_markdown(f"before {attack} after")
    assert "<script" not in html and "<iframe" not in html and "<style" not in html
    assert "<img" not in html and "<svg" not in html and "<a " not in html
    assert "&lt;" in html and "before" in html and "after" in html


def test_javascript_links_are_neutralised() -> None:
    html = render_markdown(
        "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(2)) [z](https://ok.example)"
    )
    assert "javascript:" not in html.lower()
    assert 'href="https://ok.example"' in html


def test_markdown_features() -> None:
    html = render_markdown("# T\n\n**b** `c`\n\n```python\nx = '<b>'\n```\n\n|a|b|\n|-|-|\n|1|2|\n")
    assert "<h1>T</h1>" in html and "<strong>b</strong>" in html and "<code>c</code>" in html
    code = re.search(r"<pre style=\"[^\"]*\"><code[^>]*>(.*?)</code></pre>", html, re.S)
    assert code is not None, html
    assert re.sub(r"<[^>]+>", "", code.group(1)) == "x = '&lt;b&gt;'\n"  # spans: highlighted
    assert "<table>" in html and "<td>1</td>" in html
    assert 'class="language-python"' not in html  # classes are not on the allow-list


def test_inert_markdown_keeps_code_blocks_and_quotes() -> None:
    text = (
        "Use <b>bold</b> & `a<b>` here\n\n```html\n<script>x</script>\n```\n\n"
        "> quoted <i>\n[bad](javascript:alert(1)) <https://ok.example>"
    )
    out = inert_markdown(text)
    # Outside our fences every "<" is an entity, in code spans too (they may not be spans
    # to every renderer); "&" and ">" cannot open anything and stay.
    assert "Use &lt;b>bold&lt;/b> & `a&lt;b>` here" in out
    assert "```html\n<script>x</script>\n```" in out
    assert "> quoted &lt;i>" in out
    assert "](" not in out and "https://ok.example" in out


@pytest.mark.parametrize(
    "text",
    [
        "a ` b\n\n<script>x</script>\n\nc ` d",  # a "span" across paragraphs is no span
        "\\`<script>`",  # an escaped backtick opens nothing
        "    ```\n<script>x</script>",  # an indented "fence" is indented code
        "- a\n\n  ```\n<script>x</script>",  # a list item's fence closes with the item
        "| `<script> | x` |\n|-|-|\n|1|2|",  # GFM splits cells before code spans
        "``` foo`bar\n<script>x</script>",  # a backtick in the info string: not a fence
        "> q <script>x</script>\n> ```\n> <script>x</script>",
        "[a]: javascript:alert(1)\n\n[x][a]",
    ],
)
def test_inert_markdown_is_inert_even_in_a_permissive_renderer(text: str) -> None:
    html = _permissive(inert_markdown(text))
    assert isinstance(html, str)
    assert "<script" not in html and 'href="javascript:' not in html
