"""One tool table (ui/toolinfo.py) answers every per-tool question the renderers ask: summary,
body, diff, approval description, what "Always allow" covers, subagent results. A tool the
table does not name gets the generic entry, never an error."""

from __future__ import annotations

import typing

from byre_jupyter.ui import describe_call as approval_card
from byre_jupyter.ui.toolinfo import TOOLS, ApprovalKind, tool_info


def test_every_approval_kind_has_its_one_describer() -> None:
    kinds = set(typing.get_args(ApprovalKind))
    assert set(approval_card._DESCRIBERS) == kinds
    assert {info.approval for info in TOOLS.values()} <= kinds


def test_the_subagent_tools_share_one_entry() -> None:
    assert TOOLS["Agent"] is TOOLS["Task"] and TOOLS["Agent"].subagent
    assert [name for name, info in TOOLS.items() if info.subagent] == ["Agent", "Task"]


def test_unknown_tools_get_the_generic_entries() -> None:
    assert tool_info("SomethingNew").approval == "generic"
    assert tool_info("SomethingNew").allow == "input"
    assert tool_info("mcp__other__run").summary_keys == ("code",)
    assert tool_info("SomethingNew").summary_keys == ()
    title, _ = approval_card.describe_tool_request("mcp__other__run", {"x": 1})
    assert title == "Use other.run"


def test_what_always_allow_covers_follows_the_tool_kind() -> None:
    assert tool_info("Bash").allow == "command"
    for name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        assert tool_info(name).allow == "file", name
    for name in ("Read", "Grep", "Glob", "mcp__byre__variables", "mcp__byre__inspect"):
        assert tool_info(name).allow == "tool", name
    for name in ("mcp__byre__python", "WebFetch", "Agent", "mcp__other__x"):
        assert tool_info(name).allow == "input", name


def test_a_kernel_read_tools_card_summarises_its_own_input() -> None:
    """inspect and notebook name what they read on the card's line; the table once gave them
    the python tool's ``code`` key, so the line was the call's raw JSON."""
    from byre_jupyter.ui.toolinfo import summarize_tool_input

    assert summarize_tool_input("mcp__byre__inspect", {"name": "df.columns"}) == "df.columns"
    assert summarize_tool_input("mcp__byre__notebook", {"cell": "c-7"}) == "c-7"
    assert summarize_tool_input("mcp__byre__notebook", {"start": "a", "end": "b"}) == "a"
    assert tool_info("mcp__byre__notebook").allow == "tool"  # a read tool, as inspect is
