"""``Claude.read_tools = "ask"`` in JupyterLab: an ``inspect`` call by the model shows the same
approval card as the python tool, in the running cell; the click decides what the model gets.
"""

from __future__ import annotations

import pytest

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

from .harness import LabPage
from .test_approvals import (
    ALLOW,
    DENY,
    open_notebook,
    tool_result_for,
    wait_for_card,
)

pytestmark = pytest.mark.cli


@pytest.mark.parametrize("choice", ["allow", "deny"])
def test_read_tools_ask_shows_a_card_in_the_cell(
    lab: LabPage,
    api: ScriptedAPI,
    claude_env: dict[str, str],
    choice: str,
) -> None:
    open_notebook(
        lab,
        claude_env,
        "%config Claude.read_tools = 'ask'\nanswer_value = 4141",
        "%%claude\nREADTOOL: look at answer_value",
    )
    lab.run_cell(1, timeout=30)
    api.on("READTOOL", Reply(ToolUse("mcp__byre__inspect", {"name": "answer_value"})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("Inspected: READDONE")))

    lab.run_cell(2, wait=False)
    box = wait_for_card(lab, 2)
    assert "Inspect answer_value in your kernel" in box.inner_text()  # our title, not the model's
    box.locator(ALLOW if choice == "allow" else DENY).click()
    assert lab.wait_for_cell(2, timeout=60)
    assert "READDONE" in lab.output_text(2)
    result = tool_result_for(api, "mcp__byre__inspect")
    if choice == "allow":
        assert not result["is_error"] and "4141" in result["text"], result
    else:
        assert result["is_error"] and "4141" not in result["text"], result
