"""Link destinations in the Markdown we publish: none is left, so no script-capable or
tracking URL is one click away, however it is spelled (entities, tabs, angle brackets)."""

import pytest

from byre_jupyter.ui.markdown import inert_markdown


@pytest.mark.parametrize(
    "link",
    [
        "[x](javascript:alert(1))",
        "[x](java&#115;cript:alert(1))",
        "[x](<java\tscript:alert(1)>)",
        "[x][a]\n\n[a]: javascript:alert(1)",
    ],
)
def test_no_link_destination_survives(link: str) -> None:
    out = inert_markdown(link)
    assert "](" not in out and "]:" not in out
    assert "cript:alert(1)" in out  # still shown, as text


def test_bare_urls_stay_readable() -> None:
    out = inert_markdown("[y](https://example.com) and https://example.org/x")
    assert "https://example.com" in out and "https://example.org/x" in out
