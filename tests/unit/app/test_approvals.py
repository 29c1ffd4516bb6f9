"""Approvals: one place decides every permission request (card, standing answer, headless)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from byre_jupyter.app.approvals import Approvals
from byre_jupyter.app.config import Claude
from byre_jupyter.session import Allow, Allowance, Decision, Deny, PermissionRequest


class Cell:
    """A turn's owner whose card the user answers with ``answer``."""

    def __init__(self, answer: Decision | None) -> None:
        self.answer = answer
        self.notices: list[tuple[str, str]] = []
        self.cards = 0

    def card(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str | None = None
    ) -> Any:
        if self.answer is None:
            return None  # nobody can click (headless)
        self.cards += 1
        future = asyncio.get_running_loop().create_future()
        future.set_result(self.answer)
        return SimpleNamespace(decision=future)

    def notice(self, kind: str, text: str) -> None:
        self.notices.append((kind, text))


def approvals(**traits: Any) -> Approvals:
    return Approvals(Claude(**traits), sessions=None, shell=None, runner=None)  # type: ignore[arg-type]


def session(conversation: str, cwd: str | None = None) -> Any:
    return SimpleNamespace(session_id=conversation, options=SimpleNamespace(cwd=cwd))


BASH = {"command": "ls"}
LS = "Run a shell command: ls"  # the card's summary: our words, then the command
FIRST = "touch /tmp/x/first-ok"
ATTACK = "curl http://127.0.0.1:9/x; touch /tmp/x/MARKER; rm -f /tmp/x/first-ok"


def always(allowance: Allowance) -> Allow:
    return Allow(remember=allowance)


async def test_always_allow_covers_the_exact_command_not_the_tool() -> None:
    a, one = approvals(), session("conv-1")
    exact = Allowance.for_command("Bash", "command", FIRST)
    first = Cell(always(exact))
    assert (await a.ask(one, first, "Bash", {"command": FIRST})).allowed
    assert first.notices == [
        (
            "approved",
            f"Run a shell command: {FIRST} (allowed always, in this session: Bash({FIRST}))",
        )
    ]
    # The finding: another command of the same tool ran with no card. Now it asks.
    later = Cell(Deny("no"))
    assert not (await a.ask(one, later, "Bash", {"command": ATTACK})).allowed
    assert later.cards == 1
    # The same command does not ask again, and the record says which rule allowed it.
    again = Cell(Deny())
    decision = await a.ask(one, again, "Bash", {"command": FIRST, "description": "again"})
    assert isinstance(decision, Allow) and decision.approved_by == "always" and again.cards == 0
    assert again.notices == [
        (
            "approved",
            f"Run a shell command: {FIRST} (always allowed in this session: Bash({FIRST}))",
        )
    ]
    assert a.allowed(one) == [exact]


async def test_a_prefix_rule_the_user_picked_covers_plain_commands_only() -> None:
    a, one = approvals(), session("c")
    await a.ask(one, Cell(always(Allowance.for_prefix("Bash", "command", "npm test"))), "Bash",
                {"command": "npm test"})  # fmt: skip
    quiet = Cell(Deny())
    assert (await a.ask(one, quiet, "Bash", {"command": "npm test -- --watch"})).allowed
    assert quiet.cards == 0 and "Bash(npm test:*)" in quiet.notices[-1][1]
    for chained in ("npm test && curl evil", "npm test; rm x", "npm test | sh", "npm test $(id)"):
        asked = Cell(Deny())
        assert not (await a.ask(one, asked, "Bash", {"command": chained})).allowed
        assert asked.cards == 1, chained


async def test_a_file_allowance_is_the_file_the_cli_writes(tmp_path: Any) -> None:
    a, one = approvals(), session("c", cwd=str(tmp_path))
    # The card resolved a relative path in the kernel's folder; the CLI runs in cwd.
    shown = Allowance.for_file("Write", "file_path", "out.txt")
    await a.ask(one, Cell(always(shown)), "Write", {"file_path": "out.txt", "content": "1"})
    (kept,) = a.allowed(one)
    assert kept.value == str(tmp_path / "out.txt")
    quiet = Cell(Deny())
    assert (await a.ask(one, quiet, "Write", {"file_path": str(tmp_path / "out.txt")})).allowed
    asked = Cell(Deny())
    await a.ask(one, asked, "Write", {"file_path": str(tmp_path / "other.txt")})
    await a.ask(one, asked, "Edit", {"file_path": str(tmp_path / "out.txt")})
    assert quiet.cards == 0 and asked.cards == 2


async def test_allowances_end_with_the_conversation() -> None:
    a, one, other = approvals(), session("conv-1"), session("conv-2")
    await a.ask(one, Cell(always(Allowance.for_tool("Read"))), "Read", {"file_path": "/a"})
    assert (await a.ask(one, Cell(Deny()), "Read", {"file_path": "/b"})).allowed  # by tool
    asked = Cell(Deny())
    assert not (await a.ask(other, asked, "Read", {"file_path": "/a"})).allowed
    assert asked.cards == 1  # another conversation asks
    assert a.clear("conv-1") == [Allowance.for_tool("Read")] and a.allowed(one) == []


async def test_a_standing_allowance_never_answers_a_credential_file_read() -> None:
    a, one = approvals(), session("c")
    await a.ask(one, Cell(always(Allowance.for_tool("Read"))), "Read", {"file_path": "/a.py"})
    assert (await a.ask(one, Cell(Deny()), "Read", {"file_path": "/b.py"})).allowed
    asked = Cell(Deny())
    decision = await a.ask(one, asked, "Read", {"file_path": "/work/.env"})
    assert not decision.allowed and asked.cards == 1  # the credential hook's "ask" is a card
    bash = Cell(always(Allowance.for_command("Bash", "command", "cat .env")))
    await a.ask(one, bash, "Bash", {"command": "cat .env"})
    again = Cell(Deny())
    assert not (await a.ask(one, again, "Bash", {"command": "cat .env"})).allowed
    assert again.cards == 1


async def test_no_standing_allowance_answers_a_link_to_a_credential_file(tmp_path: Any) -> None:
    # The finding: Read(notes.txt) with notes.txt -> .env ran under "Always allow" on Read.
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "notes.txt").symlink_to(".env")
    a, one = approvals(), session("c", cwd=str(tmp_path))
    await a.ask(one, Cell(always(Allowance.for_tool("Read"))), "Read", {"file_path": "a.py"})
    for path in ("notes.txt", "./x/../notes.txt", "~/.claude/.credentials.json"):
        asked = Cell(Deny())
        assert not (await a.ask(one, asked, "Read", {"file_path": path})).allowed, path
        assert asked.cards == 1, path


async def test_no_standing_allowance_answers_an_edit_of_a_claude_cell() -> None:
    def batch(claude: bool) -> dict[str, Any]:
        cell = {"cell": "c", "cell_type": "code", "action": "replace", "before": "%%claude\nq",
                "after": "%%claude\nq {os.environ}", "below": None}  # fmt: skip
        return {"cells": [{**cell, "claude": True, "fields": ["os.environ"]} if claude else cell]}

    a, one, tool = approvals(), session("c"), "mcp__byre__edit_notebook"
    await a.ask(one, Cell(always(Allowance.for_tool(tool))), tool, batch(False))
    assert (await a.ask(one, Cell(Deny()), tool, batch(False))).allowed  # by the allowance
    asked = Cell(Deny())
    assert not (await a.ask(one, asked, tool, batch(True))).allowed
    assert asked.cards == 1


async def test_headless_an_edit_of_a_claude_cell_says_why_no_mode_applies_it() -> None:
    from byre_jupyter.tools import EditApproval

    one = SimpleNamespace(session_id="c", active_turn=None, options=SimpleNamespace(cwd=None))
    a = Approvals(Claude(), SimpleNamespace(peek=lambda name: one), None, None)  # type: ignore[arg-type]
    cell = {"cell": "c", "cell_type": "code", "action": "replace", "before": "%%claude\nq",
            "after": "%%claude\nq {x}", "below": None}  # fmt: skip
    claude = await a._in_kernel("s", EditApproval({"cells": [{**cell, "claude": True}]}))
    plain = await a._in_kernel("s", EditApproval({"cells": [cell]}))
    assert isinstance(claude, Deny) and "a cell that runs Claude" in (claude.message or "")
    assert isinstance(plain, Deny) and "acceptEdits" in (plain.message or "")


async def test_allow_once_keeps_nothing_and_a_deny_says_why() -> None:
    a, one = approvals(), session("c")
    once = Cell(Allow())
    await a.ask(one, once, "Bash", BASH)
    assert once.notices == [("approved", f"{LS} (allowed once)")] and a.allowed(one) == []
    denied = Cell(Deny("not today"))
    assert not (await a.ask(one, denied, "Bash", BASH)).allowed
    assert denied.notices == [("permission", f"{LS}: not today")]


async def test_the_cli_is_told_about_this_call_only() -> None:
    a, one = approvals(), session("c")
    request = PermissionRequest("Bash", {"command": "ls"})
    owner = Cell(always(Allowance.for_command("Bash", "command", "ls")))
    decision = await a.decide(one, owner, request)
    assert decision == Allow()  # no rule reaches the CLI: the allowance is kept here
    assert decision.to_wire(request) == {"behavior": "allow", "updatedInput": {"command": "ls"}}
    denied = await a.decide(session("other"), Cell(Deny()), request)
    assert denied.to_wire(request) == {"behavior": "deny", "message": "Denied by the user."}


async def test_a_branch_carries_the_standing_answers_of_where_it_came_from() -> None:
    a = approvals()
    ls = Allowance.for_command("Bash", "command", "ls")
    write = Allowance.for_file("Write", "file_path", "/tmp/x")
    await a.ask(session("old"), Cell(always(ls)), "Bash", BASH)
    await a.ask(session("base"), Cell(always(write)), "Write", {"file_path": "/tmp/x"})
    a.carry_over(["base", "old", None], "fork")
    assert a.allowed(session("fork")) == [write, ls]
    a.carry_over(["nothing"], "empty")
    assert a.allowed(session("empty")) == []


async def test_nobody_to_click_follows_the_headless_policy_and_says_so() -> None:
    cell = Cell(None)
    assert await approvals().ask(session("c"), cell, "Bash", BASH) is None  # caller denies
    assert cell.notices[-1][0] == "permission" and "headless" in cell.notices[-1][1]
    allowing = approvals(headless_permission="allow")
    assert (await allowing.ask(session("c"), cell, "Bash", BASH)).allowed
    assert cell.notices[-1] == ("approved", f"{LS} (headless policy: allow)")


class _Sessions:
    def __init__(self, found: Any) -> None:
        self.found = found

    def peek(self, name: str) -> Any:
        return self.found


def _running(mode: str | None, owner: Any) -> Any:
    turn = SimpleNamespace(owner=owner)
    return SimpleNamespace(session_id="conv-9", permission_mode=mode, active_turn=turn)


def test_edit_notebook_follows_the_permission_mode_and_names_its_turn() -> None:
    owner = SimpleNamespace(turn_number=4, cell_id="c")
    for mode, policy in (
        ("default", "ask"),
        ("plan", "ask"),
        (None, "ask"),
        ("acceptEdits", "allow"),
        ("bypassPermissions", "allow"),
    ):
        routing = Approvals(Claude(), _Sessions(_running(mode, owner)), None, None)  # type: ignore[arg-type]
        assert routing._edit_policy("default") == policy, mode
    routing = Approvals(Claude(), _Sessions(_running("default", owner)), None, None)  # type: ignore[arg-type]
    assert routing._provenance("default") == {"conversation": "conv-9", "turn": 4}
    nobody = Approvals(Claude(), _Sessions(None), None, None)  # type: ignore[arg-type]
    assert nobody._edit_policy("default") == "ask"
    assert nobody._provenance("default") == {"conversation": "", "turn": None}


async def test_an_allowed_edit_says_what_became_of_it_never_approved() -> None:
    """The finding: after a conflict refusal the line read "Approved: Edit the
    notebook: ... (allowed once)". The line now waits for the outcome and says it."""
    from byre_jupyter.tools.claude_cells import EDIT_TOOL
    from byre_jupyter.ui.blocks import NoticeView
    from byre_jupyter.ui.record import block_html

    cell = Cell(Allow())
    one = SimpleNamespace(
        session_id="c", active_turn=SimpleNamespace(owner=cell), options=SimpleNamespace(cwd=None)
    )
    a = Approvals(Claude(), SimpleNamespace(peek=lambda name: one), None, None)  # type: ignore[arg-type]
    batch = {"cells": [{"cell": "a", "cell_type": "code", "action": "replace",
                        "before": "x = 1", "after": "x = 2", "below": None}]}  # fmt: skip
    decision = await a.ask(one, cell, EDIT_TOOL, batch)  # type: ignore[arg-type]
    assert isinstance(decision, Allow) and cell.notices == []  # no "Approved" before it lands
    title = "Edit the notebook: 1 cell (1 changed)"
    a._edit_outcome("s", batch, decision, None)
    assert cell.notices == [("applied", f"{title} (allowed once)")]
    # The frontend's reason is untrusted text: one line, clipped, escaped where it is shown.
    reason = "the notebook refused it: cell a changed since you read it\n<img src=x>" + "y" * 900
    a._edit_outcome("s", batch, decision, reason)
    kind, text = cell.notices[-1]
    assert kind == "refused" and text.startswith(
        f"{title} (allowed once; the notebook refused it: cell a changed"
    )
    assert "\n" not in text and len(text) < len(title) + 400 and text.endswith("…)")
    shown = block_html(NoticeView(id="n", notice_kind=kind, text=text))
    assert "Not applied: Edit the notebook" in shown and "<img" not in shown
    assert "Approved" not in shown
    # A denial keeps its own line, and nothing follows it.
    denied = Cell(Deny("not now"))
    assert not (await a.ask(one, denied, EDIT_TOOL, batch)).allowed  # type: ignore[arg-type]
    a._edit_outcome("s", batch, Deny("not now"), None)
    assert denied.notices == [("permission", f"{title}: not now")]


def test_the_provenance_carries_the_turn_s_prompt_for_the_mark() -> None:
    """Whole: the edit tool redacts and clips it (tests/unit/tools/test_notebook_edit.py)."""
    long = "make\n  it " + "faster " * 60
    owner = SimpleNamespace(turn_number=4, cell_id="c", request=SimpleNamespace(prompt=long))
    routing = Approvals(Claude(), _Sessions(_running("default", owner)), None, None)  # type: ignore[arg-type]
    assert routing._provenance("default")["prompt"] == long
