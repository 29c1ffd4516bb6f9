"""What the CLI's error messages mean: the one place that reads the CLI's words.

The CLI reports some failures only as text: on stderr before it exits, or as a turn's result
text. Each kind below lists the phrases it is recognised by, each with the CLI version it was
seen on (the pinned one, ``docs/protocol.md``), so a new CLI that rewords one shows up in a
single table. Matching is by substring, case-insensitive.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["PATTERNS", "CliErrorKind", "Pattern", "classify"]


class CliErrorKind(enum.Enum):
    #: ``--resume=ID`` of a conversation the CLI never recorded (docs/protocol.md, section 7).
    NO_CONVERSATION = "no-conversation"
    #: No usable credentials: the CLI's own words send the user to its REPL's ``/login``.
    NOT_LOGGED_IN = "not-logged-in"
    #: ``--max-budget-usd`` reached (a result of subtype ``error_max_budget_usd``).
    BUDGET = "budget"


@dataclass(frozen=True)
class Pattern:
    kind: CliErrorKind
    #: Lower case: matched against the lowered message.
    phrase: str
    #: The CLI version the phrase was seen on.
    seen_on: str


PATTERNS: tuple[Pattern, ...] = (
    Pattern(CliErrorKind.NO_CONVERSATION, "no conversation found", "2.1.328"),
    Pattern(CliErrorKind.NOT_LOGGED_IN, "not logged in", "2.1.328"),
    Pattern(CliErrorKind.NOT_LOGGED_IN, "/login", "2.1.328"),
    # "Invalid API key · Fix external API key" (tests/integration/faults/test_fault_api.py).
    Pattern(CliErrorKind.NOT_LOGGED_IN, "invalid api key", "2.1.328"),
    # The API's own error type, passed through in the result text.
    Pattern(CliErrorKind.NOT_LOGGED_IN, "authentication_error", "2.1.328"),
    # "Reached maximum budget ($0.01)", the result's errors (tests/integration/cli/
    # test_launch_settings_cli.py).
    Pattern(CliErrorKind.BUDGET, "reached maximum budget", "2.1.328"),
)


def classify(text: str) -> CliErrorKind | None:
    """The kind of a CLI error message, or None when it is none we know."""
    lowered = text.lower()
    for pattern in PATTERNS:
        if pattern.phrase in lowered:
            return pattern.kind
    return None
