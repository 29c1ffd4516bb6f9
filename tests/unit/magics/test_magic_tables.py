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
from byre_jupyter.session.accounting import SCRIPTED_COST


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


def test_sessions_and_usage_mark_a_scripted_sessions_cost_instead_of_dollars(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    """The offline demo's scripted API: the CLI's price for its tokens is no money paid."""
    ext = magics_pkg.extension()
    ext.session("demo").ledger.add(1.54, TokenUsage(), scripted=True)
    ext.session("paid").ledger.add(0.25, TokenUsage())
    shell.run_line_magic("claude", "sessions")
    rows = capsys.readouterr().out.splitlines()
    (demo,) = [r for r in rows if r.startswith("| demo |")]
    (paid,) = [r for r in rows if r.startswith("| paid |")]
    assert f"\\$1.5400 {SCRIPTED_COST}" in demo, demo
    assert "\\$0.2500" in paid and SCRIPTED_COST not in paid, paid
    shell.run_line_magic("claude", "usage")
    usage = capsys.readouterr().out
    (demo,) = [r for r in usage.splitlines() if r.startswith("| demo |")]
    assert f"1.5400 {SCRIPTED_COST}" in demo, demo
    assert f"2 turn(s), 1.7900 USD {SCRIPTED_COST} in all" in usage, usage


def test_doctor_prints_text_with_marks_every_font_has(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("claude", "doctor")
    out = capsys.readouterr().out
    assert "<IPython.core.display.Markdown object>" not in out
    assert "Claude CLI" in out and "| ✗ |" in out and "| ✓ |" in out
    assert not {"✅", "❌"} & set(out)


def test_usage_sums_the_kernel_closed_sessions_included_beside_its_budget(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    ext = magics_pkg.extension()
    for name, cost in (("first", 1.5), ("second", 0.25)):
        ext.session(name).ledger.add(cost, TokenUsage())
    shell.run_line_magic("claude", "close second")
    shell.run_line_magic("config", "Claude.kernel_budget_usd = 3")
    capsys.readouterr()
    shell.run_line_magic("claude", "usage")
    markdown = capsys.readouterr().out
    assert "| second |" not in markdown  # closed: gone from the table ...
    assert "2 turn(s), 1.7500 USD in all" in markdown  # ... not from the kernel's sum
    assert "kernel_budget_usd`: 3.0000 USD" in markdown and bare_dollars(markdown) == []


def test_sessions_table_shows_each_sessions_effort(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    """The effort a session runs with is in `%claude sessions`: the trait's for a new session,
    a switch's (the trait, `-e`, the header's menu, a typed `/effort`) for the session."""
    ext = magics_pkg.extension()
    ext.session("plain")
    shell.run_line_magic("config", "Claude.effort = 'high'")
    ext.session("eager")
    ext.session("plain").effort = "max"  # as a typed `/effort max` leaves it
    shell.run_line_magic("claude", "sessions")
    html = markdown2html_mistune(capsys.readouterr().out)
    header, *rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    cells = [re.findall(r"<t[dh]>(.*?)</t[dh]>", row, re.S) for row in (header, *rows)]
    column = cells[0].index("effort")
    assert {row[0]: row[column] for row in cells[1:]} == {"plain": "max", "eager": "high"}


def test_the_effort_trait_switches_existing_sessions(shell: InteractiveShell) -> None:
    ext = magics_pkg.extension()
    session = ext.session("one")
    shell.run_line_magic("config", "Claude.effort = 'xhigh'")
    assert session.effort == "xhigh"
    shell.run_line_magic("config", "Claude.effort = None")
    assert session.effort is None


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
