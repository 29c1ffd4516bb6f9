"""`%claude commands` lists what the CLI offers (the initialize response's commands, with
descriptions, and init's skills); `%claude context` the context window's figures. A plain
InteractiveShell; the session never starts a CLI (its answers are set as the CLI gives them)."""

from __future__ import annotations

import re

import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbconvert.filters.markdown_mistune import markdown2html_mistune

import byre_jupyter.magics as magics_pkg
from byre_jupyter.protocol import parse_message
from byre_jupyter.session import ContextFill

COMMANDS = [
    {"name": "greet", "description": "Say hello (project)", "argumentHint": "NAME"},
    {"name": "compact", "description": "Clear history but keep a summary", "builtin": True},
    {"name": "evil", "description": "<img src=x onerror=alert(1)> | x", "argumentHint": "`"},
]


def test_commands_lists_the_clis_commands_with_descriptions_and_skills(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    session = magics_pkg.extension().session("default")
    session.server_info = {"commands": COMMANDS}
    session.last_init = parse_message(
        {"type": "system", "subtype": "init", "slash_commands": ["greet"], "skills": ["greet"]}
    )  # type: ignore[assignment]
    shell.run_line_magic("claude", "commands")
    markdown = capsys.readouterr().out
    html = markdown2html_mistune(markdown)
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    assert len(rows) == 1 + len(COMMANDS), html  # stays one table: '|' escaped
    assert "/greet NAME" in rows[1] and "Say hello (project)" in rows[1] and "skill" in rows[1]
    assert "/compact" in rows[2] and "built in" in rows[2]
    assert "<img" not in html


def test_commands_before_the_cli_has_started_says_how_to_get_the_list(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("claude", "commands")
    assert "%%claude" in capsys.readouterr().out


def test_context_shows_the_gauges_figures(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    session = magics_pkg.extension().session("default")
    session.context.fill = ContextFill(13_400, 200_000)
    shell.run_line_magic("claude", "context")
    out = capsys.readouterr().out
    assert "13.4k / 200k" in out and "7%" in out and "/context" in out


def test_the_breakdown_is_a_table_whatever_the_category_names() -> None:
    from byre_jupyter.magics.magics import context_table
    from byre_jupyter.protocol import parse_context_usage

    usage = parse_context_usage(
        {
            "categories": [
                {"name": "System prompt", "tokens": 2_000},
                {"name": "MCP tools | <b>x</b>", "tokens": 500},
            ],
            "totalTokens": 2_500,
            "maxTokens": 200_000,
        }
    )
    html = markdown2html_mistune(context_table(usage))
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    assert len(rows) == 4, html  # header, two categories, total
    assert "2k" in rows[1] and "1.0%" in rows[1] and "<b>" not in html
    assert "2.5k of 200k" in rows[3]
