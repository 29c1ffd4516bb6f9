"""What an "Always allow" covers (session/permissions.py): never more than the card showed.

0.1 kept the tool's name: "Always allow" on ``touch …/first-ok`` let the next turn's
``curl …; touch MARKER; rm -f first-ok`` run with no card. An allowance now covers the exact
command, a prefix rule no compound command matches, the exact file, or a read-only tool.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from byre_jupyter.session import Allowance
from byre_jupyter.session.permissions import is_simple_command

FIRST = "touch /tmp/x/first-ok"
ATTACK = "curl http://127.0.0.1:9/x; touch /tmp/x/MARKER; rm -f /tmp/x/first-ok"


def bash(command: str, **extra: object) -> dict[str, object]:
    return {"command": command, "description": "harmless", **extra}


def test_an_exact_command_covers_that_command_and_nothing_else() -> None:
    exact = Allowance.for_command("Bash", "command", FIRST)
    assert exact.covers("Bash", bash(FIRST))
    assert exact.covers("Bash", {"command": FIRST, "timeout": 5, "run_in_background": True})
    for other in (ATTACK, FIRST + " ", f"{FIRST}; rm -rf ~", "touch /tmp/x/second", "touch"):
        assert not exact.covers("Bash", bash(other)), other
    assert not exact.covers("Write", {"command": FIRST})  # another tool
    assert not exact.covers("Bash", {"command": None})
    assert exact.rule == f"Bash({FIRST})"


def test_an_exact_command_does_not_cover_a_call_that_leaves_the_sandbox() -> None:
    exact = Allowance.for_command("Bash", "command", FIRST)
    assert not exact.covers("Bash", bash(FIRST, dangerouslyDisableSandbox=True))


@pytest.mark.parametrize(
    "command",
    [
        "npm test; curl evil",
        "npm test && rm -rf ~",
        "npm test || rm -rf ~",
        "npm test | sh",
        "npm test & curl evil",
        "npm test $(curl evil)",
        "npm test `curl evil`",
        "npm test\ncurl evil",
        "npm test\rcurl evil",
        "npm test > ~/.bashrc",
        "npm test < /etc/shadow",
        "npm test <(curl evil)",
        "npm test ${IFS}",
        "npm test \\\ncurl evil",
        "npm test \u2028curl evil",
        "npm test\tfoo",
        "npm test (x)",
        "npm test {a,b}",
    ],
)
def test_a_prefix_rule_never_covers_a_compound_command(command: str) -> None:
    rule = Allowance.for_prefix("Bash", "command", "npm test")
    assert not is_simple_command(command)
    assert not rule.covers("Bash", bash(command)), command


def test_a_prefix_rule_covers_its_words_and_plain_arguments_only() -> None:
    rule = Allowance.for_prefix("Bash", "command", "npm test")
    assert rule.rule == "Bash(npm test:*)"  # as Claude Code writes its own rules
    for ok in ("npm test", "npm test -- --watch", "  npm test foo/bar.js", "npm test 'a b'"):
        assert rule.covers("Bash", bash(ok)), ok
    for no in ("npm testx", "npm tests", "npm install", "npm", "npx test", "xnpm test"):
        assert not rule.covers("Bash", bash(no)), no


def test_the_card_offers_prefixes_only_of_a_simple_command() -> None:
    assert Allowance.prefixes("npm test -- --watch") == ("npm test", "npm")
    assert Allowance.prefixes(FIRST) == ("touch",)  # a path is no subcommand
    assert Allowance.prefixes("ls -la") == ("ls",)
    assert Allowance.prefixes(ATTACK) == ()
    assert Allowance.prefixes("echo hi && rm -rf ~") == ()
    assert Allowance.prefixes("") == ()


def test_a_file_allowance_covers_that_file_however_it_is_spelled(tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_text("x")
    (tmp_path / "sub").mkdir()
    os.symlink(target, tmp_path / "link.py")
    rule = Allowance.for_file("Write", "file_path", str(target))
    assert rule.rule == f"Write({os.path.realpath(target)})"
    for spelling in (str(target), f"{tmp_path}/sub/../f.py", f"{tmp_path}/./f.py"):
        assert rule.covers("Write", {"file_path": spelling, "content": "y"}), spelling
    assert rule.covers("Write", {"file_path": "f.py", "content": "y"}, cwd=str(tmp_path))
    assert rule.covers("Write", {"file_path": str(tmp_path / "link.py")})  # the same file
    for other in (str(tmp_path / "g.py"), f"{tmp_path}/sub/f.py", "", "f.py"):
        assert not rule.covers("Write", {"file_path": other, "content": "y"}), other
    assert not rule.covers("Edit", {"file_path": str(target)})  # the exact tool, too


def test_a_symlink_retargeted_after_the_allowance_asks_again(tmp_path: Path) -> None:
    link, first, secret = tmp_path / "a.txt", tmp_path / "first.txt", tmp_path / "secret"
    first.write_text("")
    secret.write_text("")
    os.symlink(first, link)
    rule = Allowance.for_file("Write", "file_path", str(link))
    assert rule.covers("Write", {"file_path": str(link)})
    link.unlink()
    os.symlink(secret, link)  # the same spelling now names another file
    assert not rule.covers("Write", {"file_path": str(link)})


def test_a_read_only_tool_is_allowed_by_tool() -> None:
    rule = Allowance.for_tool("Read")
    assert rule.rule == "Read"
    assert rule.covers("Read", {"file_path": "/anything"}) and rule.covers("Read", {})
    assert not rule.covers("Grep", {"pattern": "x"})
    inspect = Allowance.for_tool("mcp__byre__inspect")
    assert inspect.covers("mcp__byre__inspect", {"name": "df"})
    assert not inspect.covers("mcp__byre__python", {"code": "1"})


def test_anything_else_is_allowed_by_its_exact_input() -> None:
    rule = Allowance.for_input("WebFetch", {"url": "https://example.com/a", "prompt": "p"})
    assert rule.covers("WebFetch", {"prompt": "p", "url": "https://example.com/a"})
    assert not rule.covers("WebFetch", {"url": "https://example.com/b", "prompt": "p"})
    assert not rule.covers("WebFetch", {"url": "https://example.com/a"})
