"""Tool and subagent cards read as what was asked and answered, not as the CLI's frames."""

from __future__ import annotations

from byre_jupyter.protocol.messages import AssistantMessage, ToolUseBlock, parse_message
from byre_jupyter.ui import TurnView
from byre_jupyter.ui.blocks import ToolCardView
from byre_jupyter.ui.format import card_input_text, card_result_text, card_title
from byre_jupyter.ui.record import block_html, static_outputs

HAND_BACK = (
    "<tools-used-before-summary>Bash, Read</tools-used-before-summary> "
    "[Subagent hand-back] The subagent finished. The report follows:\n"
    "  Found 3 files:\n  - a.py\n  - b.py\n"
    "agentId: a610f00d\n<usage>total_tokens: 900\ntool_uses: 2</usage>"
)


def card(name: str, tool_input: dict[str, object], result: str | None = None) -> ToolCardView:
    return ToolCardView(id="c", tool_use_id="t", name=name, input=tool_input, result_text=result)


def test_a_subagent_card_says_what_it_was_asked_and_answered() -> None:
    c = card("Agent", {"description": "List", "prompt": "list the files"}, HAND_BACK)
    assert card_input_text(c) == "Asked: list the files"
    answered = card_result_text(c)
    assert answered == "Answered: Found 3 files:\n- a.py\n- b.py", answered
    for frame in ("hand-back", "agentId", "usage", "tools-used"):
        assert frame not in answered


def test_other_input_is_listed_as_key_value_lines_not_json() -> None:
    c = card("Grep", {"pattern": "TODO", "path": "src", "-n": True})
    shown = card_input_text(c)
    assert shown == 'pattern: TODO\npath: src\n"-n": true', shown
    assert "{" not in shown


def test_other_results_are_untouched() -> None:
    c = card("Bash", {"command": "ls"}, "agentId: x\n<usage>u</usage>")
    assert card_result_text(c) == "agentId: x\n<usage>u</usage>"


def test_a_card_whose_approval_waits_says_so_and_leaves_the_command_to_the_approval() -> None:
    view = TurnView("default", "list it")
    view.apply(
        AssistantMessage(
            raw={},
            message_id="msg_1",
            model="m",
            content=(ToolUseBlock(raw={}, id="toolu_1", name="Bash", input={"command": "ls -la"}),),
        )
    )
    tool = view.card("toolu_1")
    assert tool is not None and "running" in card_title(tool)
    assert tool in view.awaiting_approval("toolu_1", True)  # the live view is told
    assert "waiting for approval" in card_title(tool) and "running" not in card_title(tool)
    # The approval card shows the whole command; the tool card does not repeat it meanwhile.
    assert card_input_text(tool) == ""
    assert "waiting for approval" in static_outputs(view)[0][0]["text/plain"]
    view.awaiting_approval("toolu_1", False)
    assert "running" in card_title(tool) and card_input_text(tool) == "$ ls -la"
    assert view.awaiting_approval("toolu_unknown", True) == []


def test_a_denial_shows_once() -> None:
    """Deny with a reason: the decision's notice says it (with what was denied); the tool
    card only marks itself denied, and the result's list of denials adds nothing."""
    view = TurnView("default", "clean up")
    for line in (
        {
            "type": "assistant",
            "message": {
                "id": "msg_1",
                "model": "m",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {"command": "rm -rf build"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "is_error": True,
                        "content": "not the build folder, it holds the report",
                    }
                ],
            },
        },
    ):
        view.apply(parse_message(line))
        if line["type"] == "assistant":
            view.awaiting_approval("toolu_1", True)
            # The click (app/approvals.py writes the decision's notice, then the card settles).
            view.add_notice(
                "permission",
                "Run a shell command: rm -rf build: not the build folder, it holds the report",
            )
            view.awaiting_approval("toolu_1", False, denied=True)
    view.finish(
        parse_message(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": "ok, leaving it",
                "permission_denials": [
                    {
                        "tool_name": "Bash",
                        "tool_use_id": "toolu_1",
                        "tool_input": {"command": "rm -rf build"},
                    }
                ],
            }
        )  # type: ignore[arg-type]
    )
    plain = static_outputs(view)[0][0]["text/plain"]
    assert plain.count("not the build folder") == 1, plain
    assert "not allowed" not in plain, plain
    tool = view.card("toolu_1")
    assert tool is not None and "denied" in card_title(tool) and "error" not in card_title(tool)


def test_the_record_shows_a_subagent_report_as_markdown_and_other_results_as_code() -> None:
    """A subagent answers in Markdown, as the answer does: the saved record renders it (the live
    view did, so the swap changed it), where a tool's output stays code."""
    html = block_html(card("Agent", {"description": "List", "prompt": "list"}, HAND_BACK))
    assert "<li>a.py</li>" in html and "<pre" not in html.split("Asked: list")[1], html
    tool = block_html(card("Bash", {"command": "ls"}, "Found 3 files:\n- a.py"))
    assert "<li>" not in tool and "- a.py</pre>" in tool, tool
