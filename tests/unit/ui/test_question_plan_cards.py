"""Claude's questions and plans get cards of their own: the options as choices, the
plan as a plan, and answers the CLI hands on to Claude."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.asking import QUESTION

from byre_jupyter.session import Allow, Deny
from byre_jupyter.ui.approval_card import ApprovalCard
from byre_jupyter.ui.cards import make_card
from byre_jupyter.ui.plan_card import (
    KEEP_PLANNING,
    MAX_PLAN_BYTES,
    PlanCard,
    approved_mode,
    plan_text,
)
from byre_jupyter.ui.question_card import (
    NOT_ANSWERED,
    QuestionCard,
    answer_lines,
    answered_input,
    parse_questions,
)

from .test_approval import html_text, raw_values

ONE = QUESTION
TWO = {
    "questions": [
        *ONE["questions"],
        {
            "question": "Which toppings?",
            "header": "Toppings",
            "multiSelect": True,
            "options": [{"label": "Cheese"}, {"label": "Olives"}, {"label": "Basil"}],
        },
    ]
}


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def settle(loop: asyncio.AbstractEventLoop, card: QuestionCard | PlanCard) -> object:
    return loop.run_until_complete(card.decision)


# -- questions --------------------------------------------------------------------------------


def test_the_registry_gives_questions_and_plans_their_own_cards(
    loop: asyncio.AbstractEventLoop,
) -> None:
    assert isinstance(make_card("AskUserQuestion", ONE, loop=loop), QuestionCard)
    assert isinstance(make_card("ExitPlanMode", {"plan": "# p"}, loop=loop), PlanCard)
    assert isinstance(make_card("Bash", {"command": "ls"}, loop=loop), ApprovalCard)
    # Nothing a person could answer: the generic card shows the input whole.
    assert isinstance(make_card("AskUserQuestion", {"questions": "x"}, loop=loop), ApprovalCard)


def test_parse_questions_skips_what_is_malformed() -> None:
    hostile = {
        "questions": [
            "not a mapping",
            {"question": "", "options": []},
            {"question": "Q?", "options": [{"label": ""}, {"label": 3}, "x", {"label": "ok"}]},
            {"question": "Q?", "options": [{"label": "dup"}]},  # the answers' key is the text
        ]
    }
    (q,) = parse_questions(hostile)
    assert q.text == "Q?" and [o.label for o in q.options] == ["ok"] and not q.multi
    assert parse_questions({"questions": None}) == ()


def test_one_click_answers_a_single_choice_card(loop: asyncio.AbstractEventLoop) -> None:
    card = QuestionCard("AskUserQuestion", ONE, loop=loop)
    red, blue = card.option_buttons["Which colour?"]
    assert (red.description, blue.description) == ("Red", "Blue")
    blue.value = True  # the click
    decision = settle(loop, card)
    assert decision == Allow(updated_input={**ONE, "answers": {"Which colour?": "Blue"}})
    assert red.disabled and blue.disabled and card.answer_button.disabled


def test_answer_sends_multi_select_joined_and_other_text(loop: asyncio.AbstractEventLoop) -> None:
    card = QuestionCard("AskUserQuestion", TWO, loop=loop)
    card.option_buttons["Which colour?"][0].value = True  # two questions: no one-click
    assert not card.decision.done()
    cheese, _olives, basil = card.checkboxes["Which toppings?"]
    cheese.value = basil.value = True
    card.answer_button.click()
    decision = settle(loop, card)
    assert isinstance(decision, Allow) and decision.updated_input is not None
    assert decision.updated_input["answers"] == {
        "Which colour?": "Red",
        "Which toppings?": "Cheese, Basil",
    }
    assert decision.updated_input["questions"] == TWO["questions"]  # the original input


def test_other_text_replaces_a_single_choice(loop: asyncio.AbstractEventLoop) -> None:
    card = QuestionCard("AskUserQuestion", ONE, loop=loop)
    card.others["Which colour?"].value = "  Green, please "
    card.answer_button.click()
    decision = settle(loop, card)
    assert isinstance(decision, Allow) and decision.updated_input is not None
    assert decision.updated_input["answers"] == {"Which colour?": "Green, please"}


def test_no_answer_tells_claude_so(loop: asyncio.AbstractEventLoop) -> None:
    card = QuestionCard("AskUserQuestion", TWO, loop=loop)
    card.answer_button.click()  # nothing chosen
    assert settle(loop, card) == Deny(NOT_ANSWERED)
    card = QuestionCard("AskUserQuestion", ONE, loop=loop)
    card.skip_button.click()
    assert settle(loop, card) == Deny(NOT_ANSWERED)


def test_model_text_in_a_question_card_is_text(loop: asyncio.AbstractEventLoop) -> None:
    evil = {
        "questions": [
            {
                "question": "<img src=x onerror=alert(1)>Pick\u202e?",
                "header": "<script>h</script>",
                "options": [{"label": "<b>bold</b>", "description": "<iframe src=//x>"}],
            }
        ]
    }
    card = QuestionCard("AskUserQuestion", evil, loop=loop)
    sent = raw_values(card.widget)
    assert "<img" not in sent and "<script" not in sent and "<iframe" not in sent
    assert "⟨U+202E⟩" in sent  # a bidi override is shown, not obeyed
    # Button labels are widget text (never HTML); the answer is the raw label Claude sent.
    (button,) = card.option_buttons[evil["questions"][0]["question"]]  # type: ignore[index]
    assert button.description == "<b>bold</b>"
    button.value = True
    decision = settle(loop, card)
    assert isinstance(decision, Allow) and decision.updated_input is not None
    assert list(decision.updated_input["answers"].values()) == ["<b>bold</b>"]


def test_answer_lines_for_the_record() -> None:
    questions = parse_questions(TWO)
    lines = answer_lines(questions, {"Which colour?": "Blue"})
    assert lines == ["Which colour? → Blue", "Which toppings? → (no answer)"]
    assert answered_input({"questions": []}, {"a": "b"}) == {"questions": [], "answers": {"a": "b"}}


# -- plans ------------------------------------------------------------------------------------


def test_the_plan_is_rendered_as_sanitized_markdown(loop: asyncio.AbstractEventLoop) -> None:
    plan = "# Steps\n\n1. **Read** the data\n2. <script>alert(1)</script>\n\n![x](http://evil/leak)"
    card = PlanCard("ExitPlanMode", {"plan": plan}, loop=loop, folder="/nonexistent")
    sent = raw_values(card.widget)
    assert "<h1>Steps</h1>" in sent and "<strong>Read</strong>" in sent
    # The script stays text, the image an inert line: nothing loads.
    assert "<script" not in sent and "&lt;script&gt;" in sent
    assert "<img" not in sent and "src=" not in sent


def test_approve_continues_in_the_chosen_mode(loop: asyncio.AbstractEventLoop) -> None:
    card = PlanCard("ExitPlanMode", {"plan": "p"}, loop=loop, folder="/nonexistent")
    card.mode_menu.value = "acceptEdits"
    card.approve.click()
    decision = settle(loop, card)
    assert isinstance(decision, Allow) and approved_mode(decision) == "acceptEdits"
    assert decision.updated_input == {"plan": "p"}
    assert card.approve.disabled and card.keep.disabled
    card = PlanCard("ExitPlanMode", {"plan": "p"}, loop=loop, folder="/nonexistent")
    card.approve.click()
    assert approved_mode(settle(loop, card)) == "default"  # type: ignore[arg-type]


def test_keep_planning_sends_the_feedback(loop: asyncio.AbstractEventLoop) -> None:
    card = PlanCard("ExitPlanMode", {"plan": "p"}, loop=loop, folder="/nonexistent")
    card.feedback.value = "also add tests"
    card.keep.click()
    decision = settle(loop, card)
    assert isinstance(decision, Deny) and "also add tests" in decision.message
    card = PlanCard("ExitPlanMode", {}, loop=loop, folder="/nonexistent")
    assert "Claude wrote no plan" in html_text(card.widget.children[1].value)
    card.keep.click()
    assert settle(loop, card) == Deny(KEEP_PLANNING)


def test_the_plan_file_is_read_only_inside_the_plans_folder(tmp_path: Path) -> None:
    plans = tmp_path / "home" / ".claude" / "plans"
    plans.mkdir(parents=True)
    good = plans / "plan-a.md"
    good.write_text("# The plan")
    assert plan_text({"planFilePath": str(good)}, str(plans)) == "# The plan"
    assert plan_text({"plan": "given", "planFilePath": str(good)}, str(plans)) == "given"
    # An attacker-chosen path: outside the folder, through a symlink, a folder, too big.
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN")
    link = plans / "plan-link.md"
    os.symlink(secret, link)
    big = plans / "plan-big.md"
    big.write_text("x" * (MAX_PLAN_BYTES + 1))
    for path in (secret, link, plans, big, plans / ".." / ".." / "secret.txt", "/etc/passwd"):
        assert plan_text({"planFilePath": str(path)}, str(plans)) == "", path
    fifo = plans / "plan-fifo.md"
    os.mkfifo(fifo)  # a read would block the kernel
    assert plan_text({"planFilePath": str(fifo)}, str(plans)) == ""


def test_questions_and_plans_in_the_saved_record() -> None:
    from byre_jupyter.ui import TurnView
    from byre_jupyter.ui.record import static_outputs

    view = TurnView("s", "plan it")
    view.add_notice("question", "Claude asked, you answered:\nWhich colour? → Blue")
    view.add_notice("plan", "# Steps\n\n1. do <script>x</script>")
    view.finish()
    data, _ = static_outputs(view)[0]
    html, md = str(data["text/html"]), str(data["text/markdown"])
    assert "Which colour? → Blue" in html and "Which colour? → Blue" in md
    assert "<h1>Steps</h1>" in html and "<script" not in html
    assert "Steps" in md and "<script" not in md
