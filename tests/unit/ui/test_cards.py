"""Tool and subagent cards read as what was asked and answered, not as the CLI's frames."""

from __future__ import annotations

from byre_jupyter.ui.blocks import ToolCardView
from byre_jupyter.ui.format import card_input_text, card_result_text

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
