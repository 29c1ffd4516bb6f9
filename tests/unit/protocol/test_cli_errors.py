"""The one classifier of the CLI's error messages: what each kind is recognised by, and that
every phrase says which CLI it was seen on (the pinned one, scripts/install-cli.sh)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from byre_jupyter.protocol.cli_errors import PATTERNS, CliErrorKind, classify

PINNED = re.search(
    r"2\.\d+\.\d+", (Path(__file__).parents[3] / "scripts" / "install-cli.sh").read_text()
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("No conversation found with session ID: 3f2a", CliErrorKind.NO_CONVERSATION),
        ("Invalid API key · Fix external API key", CliErrorKind.NOT_LOGGED_IN),
        ("Not logged in · Please run /login", CliErrorKind.NOT_LOGGED_IN),
        ('API Error: 401 {"type":"authentication_error"}', CliErrorKind.NOT_LOGGED_IN),
        ("API Error: 529 overloaded", None),
        ("", None),
    ],
)
def test_messages_are_classified_by_kind(text: str, kind: CliErrorKind | None) -> None:
    assert classify(text) is kind


def test_every_phrase_names_the_cli_it_was_seen_on() -> None:
    assert PINNED is not None
    assert {p.seen_on for p in PATTERNS} == {PINNED.group(0)}
    assert all(p.phrase == p.phrase.lower() for p in PATTERNS)  # matched lowered
