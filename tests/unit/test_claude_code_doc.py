"""docs/claude-code.md places every built-in slash command the pinned CLI offers: run in a
cell, a skill, one byre has its own for, or not applicable in a notebook. The CLI's lists are
the recording tests/integration/cli/test_slash_commands_cli.py checks against the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "claude-code.md"
RECORDED = ROOT / "tests" / "support" / "cli_init.json"
COMMAND = re.compile(r"`/([\w-]+)")


def sections() -> dict[str, set[str]]:
    """The slash commands named under each ``###`` heading of the doc's command part."""
    found: dict[str, set[str]] = {}
    heading = ""
    for line in DOC.read_text().split("## Slash commands", 1)[1].splitlines():
        if line.startswith("### "):
            heading = line[4:].strip()
            found[heading] = set()
        elif heading:
            found[heading] |= set(COMMAND.findall(line))
    return found


def test_every_command_the_cli_offers_has_its_place() -> None:
    recorded = json.loads(RECORDED.read_text())
    placed = set().union(*sections().values())
    missing = sorted(set(recorded["slash_commands"]) - placed)
    assert missing == [], f"docs/claude-code.md does not say where these are: {missing}"
    stale = sorted(placed - set(recorded["slash_commands"]))
    assert stale == [], f"docs/claude-code.md names commands the CLI no longer offers: {stale}"


def test_the_terminals_own_commands_are_listed_as_not_applicable() -> None:
    recorded = json.loads(RECORDED.read_text())
    terminal_only = set(recorded["terminal_slash_commands"]) - set(recorded["skills"])
    assert terminal_only <= sections()["Not applicable in a notebook"]


def test_skills_are_under_skills() -> None:
    recorded = json.loads(RECORDED.read_text())
    assert set(recorded["skills"]) <= sections()["Skills (the model follows them)"]


def test_the_features_table_names_real_subcommands() -> None:
    """Each ``%claude SUB`` the features table points to exists (``/resume``'s picker is
    ``%claude conversations`` and ``resume #N``)."""
    from byre_jupyter.magics.magics import SUBCOMMANDS

    features = DOC.read_text().split("## Features", 1)[1].split("## Slash commands", 1)[0]
    named = set(re.findall(r"(?<!%)%claude ([a-z][\w-]*)", features))
    assert {"conversations", "resume"} <= named
    assert named <= set(SUBCOMMANDS), sorted(named - set(SUBCOMMANDS))
    assert "`%claude resume #N`" in features
