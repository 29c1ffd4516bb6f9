"""Claude's questions and plans in a real JupyterLab at 700 px.

The real CLI asks two questions (one single choice, one multi-select) and then, in plan mode,
hands over the plan Claude wrote to its plan file. The question card shows the options as
buttons and checkboxes and a free-text "Other"; what the user picked reaches the model. The
plan card shows the plan rendered; *Approve* with "accept edits" switches the session's mode,
so Claude's next Write runs without a card.

Screenshots: tests/artifacts/question-card-700px-{light,dark}.png and
plan-card-700px-{light,dark}.png (the card alone), question-card-700px-chosen.png (Blue,
Caveats and an Other text chosen, before Answer).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

import pytest

from byre_jupyter.scripted import Reply, ScriptedAPI, ScriptedRequest, Text, ToolUse

from .harness import ARTIFACTS, LabPage, new_notebook
from .test_approval_cards import _CLIPPING
from .test_approvals import LOAD, static_data, tool_result_for
from .test_surface import set_theme

pytestmark = pytest.mark.cli

QUESTIONS = {
    "questions": [
        {
            "question": "Which colour should the chart use?",
            "header": "Colour",
            "multiSelect": False,
            "options": [
                {"label": "Red", "description": "warm, stands out"},
                {"label": "Blue", "description": "cool, easy on the eye"},
            ],
        },
        {
            "question": "What goes in the report?",
            "header": "Sections",
            "multiSelect": True,
            "options": [
                {"label": "Summary", "description": "three sentences"},
                {"label": "Table", "description": "the raw numbers"},
                {"label": "Caveats", "description": "what the data cannot say"},
            ],
        },
    ]
}
PLAN = (
    "# Plan: a small report\n\n1. **Load** the data\n2. Plot it <script>alert(1)</script>\n"
    "3. Write `report.md`\n\n| Step | Touches |\n|---|---|\n| 3 | `report.md` |\n"
)
ANSWER = 'button.widget-button[title="Answer"]'
APPROVE = 'button.widget-button:has-text("Approve")'


def wrote(fragment: str) -> Callable[[ScriptedRequest], bool]:
    return lambda r: any(
        t["tool_name"] == "Write" and fragment in t["text"] for t in r.last_tool_results
    )


def answered(tool: str) -> Callable[[ScriptedRequest], bool]:
    return lambda r: any(t["tool_name"] == tool for t in r.last_tool_results)


def test_a_question_card_and_a_plan_card_at_700px(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = f"asking-{secrets.token_hex(4)}"
    report = lab.server.root_dir / folder / "report.md"

    def plan_file(req: ScriptedRequest) -> Reply:
        assert req.plan_file, "the plan-mode reminder names no plan file"
        return Reply(ToolUse("Write", {"file_path": req.plan_file, "content": PLAN}))

    api.on("QCARD", Reply(ToolUse("AskUserQuestion", QUESTIONS)), times=1)
    api.on(answered("AskUserQuestion"), Reply(Text("QDONE")))
    api.on("PCARD", plan_file, times=1)
    api.on(wrote("/plans/"), Reply(ToolUse("ExitPlanMode", {})))
    api.on(
        answered("ExitPlanMode"),
        Reply(ToolUse("Write", {"file_path": str(report), "content": "the report"})),
    )
    api.on(wrote("report.md"), Reply(Text("PLANDONE")))

    lab.open_notebook(
        new_notebook(
            LOAD,
            '%config Claude.permission_mode = "plan"',
            "%%claude\nQCARD: ask me",
            "%%claude\nPCARD: plan it",
        ),
        path=f"{folder}/asking.ipynb",
        kernel_env=claude_env,
    )
    lab.page.set_viewport_size({"width": 700, "height": 900})
    lab.run_cell(0, timeout=60)
    lab.run_cell(1, timeout=60)

    # -- the question card --------------------------------------------------------------------
    lab.run_cell(2, wait=False)
    card = lab.output_locator(2).locator(".byre-question-card")
    card.wait_for(state="visible", timeout=60_000)
    text = card.inner_text()
    for shown in ("Claude has 2 questions", "Colour", "Which colour should the chart use?"):
        assert shown in text, text
    assert "cool, easy on the eye" in text and "what the data cannot say" in text
    assert card.get_attribute("role") == "alertdialog"
    assert card.get_attribute("aria-label") == "Claude has 2 questions"
    assert card.locator("input[type=checkbox]").count() == 3
    card.screenshot(path=str(ARTIFACTS / "question-card-700px-light.png"))
    set_theme(lab, "JupyterLab Dark")
    card.screenshot(path=str(ARTIFACTS / "question-card-700px-dark.png"))
    set_theme(lab, "JupyterLab Light")
    clip = card.evaluate(_CLIPPING)  # nothing cut or sticking out at 700 px
    assert clip["problems"] == [] and clip["right"] <= clip["viewport"], clip

    card.locator('button.byre-question-option:has-text("Blue")').click()
    card.get_by_label("Caveats").check()
    others = card.locator('input[placeholder="Other: your own answer"]')
    assert others.count() == 2
    others.nth(1).fill("a chart")  # typed, never blurred: the Answer click syncs it first
    card.screenshot(path=str(ARTIFACTS / "question-card-700px-chosen.png"))
    card.locator(ANSWER).click()
    result = tool_result_for(api, "AskUserQuestion")
    assert not result["is_error"], result
    assert '"Which colour should the chart use?"="Blue"' in result["text"], result
    assert '"What goes in the report?"="Caveats, a chart"' in result["text"], result
    assert lab.wait_for_cell(2, timeout=90)
    md = static_data(lab, 2)["text/markdown"]
    assert "Which colour should the chart use? → Blue" in md, md

    # -- the plan card ------------------------------------------------------------------------
    lab.run_cell(3, wait=False)
    plan = lab.output_locator(3).locator(".byre-plan-card")
    plan.wait_for(state="visible", timeout=60_000)
    body = plan.locator(".byre-plan-body")
    assert body.locator("h1").inner_text() == "Plan: a small report"
    assert body.locator("strong").first.inner_text() == "Load"
    assert body.locator("table td").count() == 2
    assert body.locator("script").count() == 0 and "<script>" in body.inner_text()
    plan.screenshot(path=str(ARTIFACTS / "plan-card-700px-light.png"))
    set_theme(lab, "JupyterLab Dark")
    plan.screenshot(path=str(ARTIFACTS / "plan-card-700px-dark.png"))
    set_theme(lab, "JupyterLab Light")
    plan.locator("select").select_option(label="then accept edits (acceptEdits)")
    plan.locator(APPROVE).click()
    assert lab.wait_for_cell(3, timeout=90)
    assert report.read_text() == "the report"  # acceptEdits: the Write ran with no card
    assert "PLANDONE" in lab.output_text(3)
    md = static_data(lab, 3)["text/markdown"]
    assert "Claude's plan (continuing in acceptEdits)" in md and "Plan: a small report" in md
    assert "Permission mode: acceptEdits" in md
