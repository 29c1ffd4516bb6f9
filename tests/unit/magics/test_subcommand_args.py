"""``%claude SUBCOMMAND``'s argument parsing: one parser per subcommand.

Bad input raises exactly ``UsageError`` carrying the subcommand's usage line, before anything
changes; ``--help`` prints the subcommand's help instead of raising ``SystemExit``. A plain
InteractiveShell with the extension loaded; no session ever starts a CLI.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import byre_jupyter.magics as magics_pkg
import byre_jupyter.magics.magics as magics_mod


def sessions() -> dict[str, tuple[int, Any, bool]]:
    ext = magics_pkg.extension()
    return {e.name: (id(e.session), e.session.model, e.session.closed) for e in ext.conversations}


@pytest.mark.parametrize(
    ("line", "usage"),
    [
        # Each of these used to act on a session before (or instead of) rejecting the line.
        ("model sonnet opus -s fresh", "usage: %claude model"),
        ("model --bogus -s fresh", "usage: %claude model"),
        ("model -s", "usage: %claude model"),
        ("new a b", "usage: %claude new"),
        ("resume a b c", "usage: %claude resume"),
        ("permissions --clear --all", "usage: %claude permissions"),
        ("checkout", "usage: %claude checkout"),
        ("checkout #1 #2", "usage: %claude checkout"),
        ("sessions extra", "usage: %claude sessions"),
        ("conversations extra", "usage: %claude conversations"),
        ("resume #1 review", "usage: %claude resume"),
        ("doctor --fix", "usage: %claude doctor"),
        ("undo last", "usage: %claude undo"),
        ("undo #1 #2", "usage: %claude undo"),
    ],
)
def test_bad_arguments_raise_the_usage_line_and_change_nothing(
    shell: InteractiveShell, line: str, usage: str
) -> None:
    magics_pkg.extension().session("default").model = "opus"
    before = sessions()
    with pytest.raises(UsageError) as raised:
        shell.run_line_magic("claude", line)
    assert usage in str(raised.value)
    assert sessions() == before


@pytest.mark.parametrize(
    "sub", ["model", "new", "resume", "conversations", "checkout", "permissions", "help"]
)
def test_subcommand_help_prints_and_changes_nothing(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], sub: str
) -> None:
    before = sessions()
    shell.run_line_magic("claude", f"{sub} --help")  # argparse would raise SystemExit
    out = capsys.readouterr().out
    assert out.startswith(f"usage: %claude {sub}"), out
    assert sessions() == before
    shell.run_line_magic("claude", f"help {sub}")
    assert capsys.readouterr().out == out


def test_model_help_is_not_taken_for_a_model_name(shell: InteractiveShell) -> None:
    shell.run_line_magic("claude", "model --help")
    assert magics_pkg.extension().conversations.peek("default") is None


def test_help_lists_every_subcommand_with_its_usage(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("claude", "help")  # terminal IPython: text
    out = capsys.readouterr().out
    for sub in ("sessions", "model", "new", "resume", "checkout", "permissions", "doctor"):
        assert f"%claude {sub}" in out
    assert "%claude model [-h] [-s NAME] [MODEL]" in out
    with pytest.raises(UsageError, match="unknown subcommand 'frobnicate'"):
        shell.run_line_magic("claude", "help frobnicate")


@pytest.mark.parametrize(
    ("line", "session", "model"),
    [
        ("model sonnet", "default", "sonnet"),
        ("model sonnet -s other", "other", "sonnet"),
        ("model -s other sonnet", "other", "sonnet"),
        ("model --session other opus", "other", "opus"),
        ("model default -s other", "other", None),
    ],
)
def test_model_spellings(shell: InteractiveShell, line: str, session: str, model: Any) -> None:
    magics_pkg.extension().session(session).model = "haiku"
    assert shell.run_line_magic("claude", line) is None
    assert magics_pkg.extension().conversations.peek(session).model == model
    shown = shell.run_line_magic("claude", f"model -s {session}")
    assert shown == (model or "default")


def test_name_spellings(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("claude", "new")
    shell.run_line_magic("claude", "new side")
    assert capsys.readouterr().out.splitlines() == [
        "session 'default': fresh conversation",
        "session 'side': fresh conversation",
    ]
    shell.run_line_magic("claude", "permissions side")
    shell.run_line_magic("claude", "permissions --clear side")
    shell.run_line_magic("claude", "permissions side --clear")
    shell.run_line_magic("claude", "stop side")
    assert capsys.readouterr().out.splitlines() == [
        "session 'side': nothing is always allowed (every tool asks)",
        "session 'side': nothing was always allowed",
        "session 'side': nothing was always allowed",
        "session 'side' is idle",
    ]


def test_resume_from_is_parsed_and_a_missing_notebook_changes_nothing(
    shell: InteractiveShell,
) -> None:
    before = sessions()
    with pytest.raises(UsageError, match=r"no such file: .*other\.ipynb"):
        shell.run_line_magic("claude", "resume --from other.ipynb")
    with pytest.raises(UsageError, match=r"no such file: .*other\.ipynb"):
        shell.run_line_magic("claude", "resume side --from other.ipynb")
    with pytest.raises(UsageError, match="not both"):
        shell.run_line_magic("claude", "resume side abc --from other.ipynb")
    assert sessions() == before


def test_every_parser_has_a_handler(shell: InteractiveShell) -> None:
    magics = magics_pkg._MAGICS
    assert list(magics._handlers()) == list(magics_mod.SUBCOMMANDS)


def test_cell_effort_option_takes_the_clis_levels() -> None:
    from byre_jupyter.magics.magics import parse_cell_args

    assert parse_cell_args("-e high").effort == "high"
    assert parse_cell_args("--effort default").effort == "default"
    assert parse_cell_args("").effort is None
    with pytest.raises(UsageError, match="xhigh"):
        parse_cell_args("-e turbo")


def test_undo_runs_alone_in_its_cell_and_needs_the_bridge(shell: InteractiveShell) -> None:
    """A cell that is only ``%claude undo`` is an async cell (it awaits the review); without a
    frontend bridge it says so before showing anything. Not alone, it says where it runs."""
    result = shell.run_cell("%claude undo #1")
    assert isinstance(result.error_in_exec, UsageError), result.error_in_exec
    assert "no notebook frontend with byre_jupyter's bridge" in str(result.error_in_exec)
    with pytest.raises(UsageError, match="runs alone in a cell of its own"):
        shell.run_line_magic("claude", "undo")
