"""Script-capable link destinations in the markdown fallback are neutralised whole."""

from byre_jupyter.ui.markdown import escape_markdown_html


def test_javascript_link_with_parentheses_is_replaced_whole() -> None:
    out = escape_markdown_html("[x](javascript:alert(1)) then [y](https://example.com)")
    assert out == "[x](#harmful-link) then [y](https://example.com)"
