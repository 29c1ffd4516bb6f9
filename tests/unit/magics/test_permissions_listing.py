"""``%claude permissions`` lists the standing allowances exactly (tool and scope) and
``--clear`` ends them. 0.1 said "always allowed: Bash" while the allowance covered every
command; each rule is now listed whole, as the card showed it (app/approvals.py)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import byre_jupyter.magics as magics_pkg
from byre_jupyter.session import Allow, Allowance

FIRST = "touch /tmp/x/first-ok"
HIDDEN = "echo ok\u202e # looks done"


class Clicks:
    """A cell whose every card is answered "Always allow" with ``allowance``."""

    def __init__(self, allowance: Allowance) -> None:
        self.allowance = allowance

    def card(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str | None = None
    ) -> Any:
        future = asyncio.get_running_loop().create_future()
        future.set_result(Allow(remember=self.allowance))
        return SimpleNamespace(decision=future)

    def notice(self, kind: str, text: str) -> None:
        return None


def always(name: str, tool: str, tool_input: Mapping[str, Any], allowance: Allowance) -> None:
    ext = magics_pkg.extension()
    session = ext.conversations.peek(name)
    asyncio.run(ext.approvals.ask(session, Clicks(allowance), tool, tool_input))


def test_the_rules_are_listed_whole_and_cleared(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("claude", "new side")
    capsys.readouterr()
    always("side", "Bash", {"command": FIRST}, Allowance.for_command("Bash", "command", FIRST))
    always("side", "Bash", {"command": "npm test"}, Allowance.for_prefix("Bash", "command", "npm"))
    always("side", "Bash", {"command": HIDDEN}, Allowance.for_command("Bash", "command", HIDDEN))
    write = Allowance.for_file("Write", "file_path", "/tmp/f.py")
    always("side", "Write", {"file_path": "/tmp/f.py"}, write)
    always("side", "mcp__byre__inspect", {"name": "df"}, Allowance.for_tool("mcp__byre__inspect"))
    shell.run_line_magic("claude", "permissions side")
    assert capsys.readouterr().out.splitlines() == [
        "session 'side': always allowed in this conversation (5 rules):",
        f"  Bash({FIRST})  (this exact command only)",
        "  Bash(npm:*)  (commands starting with this, none chained or redirected)",
        "  Bash(echo ok⟨U+202E⟩ # looks done)  (this exact command only)",
        f"  Write({os.path.realpath('/tmp/f.py')})  (this file only)",
        "  byre.inspect  (every call of this tool)",
    ]
    shell.run_line_magic("claude", "permissions --clear side")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "session 'side': cleared 5 rules; what they covered asks again:"
    assert out[1] == f"  Bash({FIRST})  (this exact command only)" and len(out) == 6
    shell.run_line_magic("claude", "permissions side")
    assert capsys.readouterr().out == (
        "session 'side': nothing is always allowed (every tool asks)\n"
    )


def test_one_rule_is_one_rule(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("claude", "new side")
    always("side", "Read", {"file_path": "/a"}, Allowance.for_tool("Read"))
    capsys.readouterr()
    shell.run_line_magic("claude", "permissions side")
    assert capsys.readouterr().out.splitlines() == [
        "session 'side': always allowed in this conversation (1 rule):",
        "  Read  (every call of this tool)",
    ]
