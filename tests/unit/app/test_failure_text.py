"""A failed turn's text in notebook terms: the CLI's login words become what to do here."""

from __future__ import annotations

from byre_jupyter.app.failure import LOGIN_HELP, notebook_error_text


def test_a_login_failure_reads_in_notebook_terms() -> None:
    assert notebook_error_text("Invalid API key · Fix external API key") == LOGIN_HELP
    assert notebook_error_text("API Error: 529 overloaded") == "API Error: 529 overloaded"


def test_a_budget_stop_says_the_cap_was_reached_not_the_answer() -> None:
    """CLI 2.1.328's result when --max-budget-usd stops a turn: its text is the answer so far,
    its errors say why (tests/integration/cli/test_launch_settings_cli.py runs the real one)."""
    from byre_jupyter.protocol import ResultMessage, parse_message

    result = parse_message(
        {
            "type": "result",
            "subtype": "error_max_budget_usd",
            "is_error": True,
            "result": "Here is the answer so far",
            "terminal_reason": "budget_exhausted",
            "errors": ["Reached maximum budget ($0.01)"],
            "total_cost_usd": 0.012,
            "usage": {},
        }
    )
    assert isinstance(result, ResultMessage) and result.budget_exhausted
    words = notebook_error_text(result.failure_text)
    assert words.startswith("Stopped: the spending cap ($0.01) was reached")
    assert "Claude.max_budget_usd" in words and "%claude resume" in words
    assert "answer so far" not in words
