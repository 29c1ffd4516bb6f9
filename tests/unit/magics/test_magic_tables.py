"""`%claude sessions` / `usage` / `doctor` output: a `$` stays a dollar sign, the
doctor's marks are in every font, and terminal IPython gets text, not an object's repr.

A plain InteractiveShell (terminal IPython: no kernel), sessions that never start a CLI.
"""

from __future__ import annotations

import re

import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbconvert.filters.markdown_mistune import markdown2html_mistune

import byre_jupyter.magics as magics_pkg
from byre_jupyter.protocol import TokenUsage


def bare_dollars(markdown: str) -> list[str]:
    """``$`` signs Jupyter's math pass would pair up as LaTeX delimiters: every ``$`` not
    escaped by a backslash (JupyterLab's removeMath treats ``\\$`` as a literal)."""
    return re.findall(r"(?<!\\)\$", markdown)


def test_sessions_table_keeps_dollars_and_stays_a_table(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    ext = magics_pkg.extension()
    for name, cost in (("first", 1.5), ("second", 0.25)):
        ext.session(name).ledger.add(cost, TokenUsage())
    shell.run_line_magic("claude", "sessions")
    markdown = capsys.readouterr().out
    assert "<IPython.core.display.Markdown object>" not in markdown
    assert bare_dollars(markdown) == [], markdown  # two bare $ = one LaTeX span over two rows
    html = markdown2html_mistune(markdown)
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    assert len(rows) == 3, html  # header + two sessions
    assert "$1.5000" in rows[1] and "$0.2500" in rows[2]


def test_doctor_prints_text_with_marks_every_font_has(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("claude", "doctor")
    out = capsys.readouterr().out
    assert "<IPython.core.display.Markdown object>" not in out
    assert "Claude CLI" in out and "| ✗ |" in out and "| ✓ |" in out
    assert not {"✅", "❌"} & set(out)


def test_sessions_table_shows_the_mode_each_conversation_is_in(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    ext = magics_pkg.extension()
    ext.session("asks")
    ext.session("edits").switch_permission_mode("acceptEdits")
    shell.run_line_magic("claude", "sessions")
    html = markdown2html_mistune(capsys.readouterr().out)
    header, *rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    cells = [re.findall(r"<t[dh]>(.*?)</t[dh]>", row, re.S) for row in (header, *rows)]
    column = cells[0].index("mode")
    assert {row[0]: row[column] for row in cells[1:]} == {"asks": "default", "edits": "acceptEdits"}
