"""A failed turn's text in notebook terms: the CLI's login words become what to do here."""

from __future__ import annotations

from byre_jupyter.app.failure import LOGIN_HELP, notebook_error_text


def test_a_login_failure_reads_in_notebook_terms() -> None:
    assert notebook_error_text("Invalid API key · Fix external API key") == LOGIN_HELP
    assert notebook_error_text("API Error: 529 overloaded") == "API Error: 529 overloaded"
