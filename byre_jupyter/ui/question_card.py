"""Claude's questions (the CLI's ``AskUserQuestion``), answered in the asking cell.

The CLI offers ``AskUserQuestion`` in every mode but ``bypassPermissions`` and asks the host
about it with ``can_use_tool``. A plain allow makes the CLI tell Claude "The user did not
answer the questions"; the answers travel as the Agent SDKs send them: an allow whose
``updatedInput`` is the original input plus ``answers``, a mapping from each question's text to
the chosen label (multi-select labels joined with ", ") or the user's own words. The CLI then
hands Claude 'Your questions have been answered: "Which colour?"="Blue"' (measured with CLI
2.1.328).

:func:`parse_questions` reads the input (untrusted: anything malformed is skipped, and a
request with no usable question falls back to the generic approval card);
:func:`answered_input` builds the allow's input; :class:`QuestionCard` shows each question's
header and text, its options as buttons (checkboxes for ``multiSelect``) with their
descriptions beside them, and a free-text "Other". One click on an option answers a card of
one single-choice question; otherwise *Answer* sends the choices. Labels are widget text
(never HTML), with hidden characters shown as ``⟨U+…⟩`` markers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from byre_jupyter.session.permissions import Allow, Decision, Deny
from byre_jupyter.ui.card_frame import CardFrame
from byre_jupyter.ui.markdown import escape_text
from byre_jupyter.ui.reveal import reveal, reveal_html

__all__ = [
    "NOT_ANSWERED",
    "Option",
    "Question",
    "QuestionCard",
    "answer_lines",
    "answered_input",
    "parse_questions",
]

#: What Claude reads when the user dismisses the card without answering.
NOT_ANSWERED = "The user chose not to answer these questions."
#: Multi-select labels are joined like this, as the Agent SDKs join them.
JOIN = ", "
#: More than this many questions or options is not a question a person can answer in a cell:
#: the rest is not shown (and the generic card lists the input whole when none is usable).
MAX_QUESTIONS = 8
MAX_OPTIONS = 12


@dataclass(frozen=True)
class Option:
    label: str
    description: str = ""


@dataclass(frozen=True)
class Question:
    """One question of an ``AskUserQuestion`` call; ``text`` is its key in ``answers``."""

    text: str
    header: str = ""
    options: tuple[Option, ...] = ()
    multi: bool = False


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def parse_questions(tool_input: Mapping[str, Any]) -> tuple[Question, ...]:
    """The usable questions of an ``AskUserQuestion`` input (pure; malformed ones skipped)."""
    raw = tool_input.get("questions")
    if not isinstance(raw, list):
        return ()
    found: list[Question] = []
    seen: set[str] = set()
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        text = _str(item.get("question"))
        if not text.strip() or text in seen:  # answers are keyed by the text: keep it unique
            continue
        options = item.get("options")
        parsed = tuple(
            Option(_str(o.get("label")), _str(o.get("description")))
            for o in (options if isinstance(options, list) else [])
            if isinstance(o, Mapping) and _str(o.get("label")).strip()
        )
        seen.add(text)
        found.append(
            Question(
                text,
                _str(item.get("header")),
                parsed[:MAX_OPTIONS],
                item.get("multiSelect") is True,
            )
        )
    return tuple(found[:MAX_QUESTIONS])


def answered_input(tool_input: Mapping[str, Any], answers: Mapping[str, str]) -> dict[str, Any]:
    """The allow's ``updatedInput``: the original input plus ``answers`` (question text → the
    chosen label(s) or the user's words)."""
    return {**tool_input, "answers": dict(answers)}


def choice_text(labels: Sequence[str], other: str = "") -> str:
    """One question's answer: the chosen labels joined with ", ", then the "Other" text."""
    parts = [*labels, other.strip()] if other.strip() else list(labels)
    return JOIN.join(parts)


def answer_lines(questions: Sequence[Question], answers: Mapping[str, str]) -> list[str]:
    """The record of an answered card, one line per question: ``Q → A``, hidden characters
    shown as markers."""
    return [
        f"{reveal(q.text, one_line=True)} → "
        + (reveal(answers[q.text], one_line=True) if answers.get(q.text) else "(no answer)")
        for q in questions
    ]


_WRAP = "overflow-wrap:anywhere;word-break:break-word;line-height:1.4"
_DIM = "font-size:0.85em;opacity:0.75;line-height:1.4"


def question_html(question: Question) -> str:
    """A question's header (as a small chip) and its text; model text escaped at the leaf."""
    head = (
        f'<span class="byre-question-header">{reveal_html(question.header, one_line=True)}</span> '
        if question.header
        else ""
    )
    hint = " (choose any)" if question.multi else ""
    return (
        f'<div class="byre-question-text" style="{_WRAP}">{head}'
        f"<b>{reveal_html(question.text, one_line=True)}</b>"
        f'<span style="{_DIM}">{escape_text(hint)}</span></div>'
    )


class QuestionCard(CardFrame):
    """A live card for one ``AskUserQuestion`` call; ``await card.decision`` for the answer."""

    card_class = "byre-question-card"

    def _build(self) -> list[Any]:
        W, own = self._W, self._own
        self.questions = parse_questions(self.tool_input)
        count = len(self.questions)
        self.title = "Claude has a question" if count == 1 else f"Claude has {count} questions"
        #: Per question: its option buttons or checkboxes, and its "Other" text box.
        self._picked: dict[str, str] = {}
        self.option_buttons: dict[str, list[Any]] = {}
        self.checkboxes: dict[str, list[Any]] = {}
        self.others: dict[str, Any] = {}
        one_click = len(self.questions) == 1 and not self.questions[0].multi

        rows: list[Any] = [
            self.html(f'<div class="byre-approval-title"><b>{escape_text(self.title)}</b></div>')
        ]
        for question in self.questions:
            rows.append(self.html(question_html(question)))
            for option in question.options:
                label = reveal(option.label, one_line=True)
                if question.multi:
                    control = self.control(
                        W.Checkbox(
                            value=False,
                            description=label,
                            indent=False,
                            layout=own(W.Layout(width="auto")),
                        )
                    )
                    self.checkboxes.setdefault(question.text, []).append(control)
                else:
                    control = self.control(
                        W.ToggleButton(value=False, description=label, tooltip=label)
                    )
                    control.layout = own(W.Layout(width="auto"))
                    control.add_class("byre-question-option")
                    control.observe(
                        lambda change, q=question, o=option: self._toggled(q, o, change),
                        names="value",
                    )
                    self.option_buttons.setdefault(question.text, []).append(control)
                described = reveal(option.description, one_line=True)
                words = own(
                    W.HTML(
                        f'<span class="byre-question-description" style="{_DIM};{_WRAP}">'
                        f"{escape_text(described)}</span>",
                        layout=own(W.Layout(margin="0 0 0 0.5em")),
                    )
                )
                rows.append(self.row((control, words)))
            other = self.text_box("Other: your own answer")
            other.add_class("byre-question-other")
            self.others[question.text] = other
            rows.append(other)
        self.answer_button = self.button("Answer", "check", "success")
        self.skip_button = self.button("Don't answer", "times")
        self.answer_button.on_click(lambda _b: self._clicked(None))
        self.skip_button.on_click(lambda _b: self.settle(Deny(NOT_ANSWERED)))
        if one_click:
            hint = "Click an option, or write your own and press Answer."
        else:
            hint = "Choose, then press Answer."
        hint_html = own(W.HTML(f'<span style="{_DIM}">{escape_text(hint)}</span>'))
        rows.append(self.row((self.answer_button, self.skip_button, hint_html)))
        self._one_click = one_click
        return rows

    # -- answers ---------------------------------------------------------------------------

    def answers(self) -> dict[str, str]:
        """Question text → the current choice, for every question with one."""
        out: dict[str, str] = {}
        for question in self.questions:
            other = str(self.others[question.text].value or "")
            if question.multi:
                labels = [
                    option.label
                    for option, box in zip(
                        question.options, self.checkboxes.get(question.text, []), strict=False
                    )
                    if box.value
                ]
            else:
                picked = self._picked.get(question.text)
                # A single-choice question takes one answer: the user's own words win.
                labels = [picked] if picked is not None and not other.strip() else []
            text = choice_text(labels, other)
            if text:
                out[question.text] = text
        return out

    def answer(self, answers: Mapping[str, str]) -> Decision:
        """The decision sending ``answers`` (none at all: the user did not answer)."""
        if not answers:
            return Deny(NOT_ANSWERED)
        return Allow(updated_input=answered_input(self.tool_input, answers))

    def _toggled(self, question: Question, option: Option, change: Mapping[str, Any]) -> None:
        if not change.get("new"):
            if self._picked.get(question.text) == option.label:
                self._picked.pop(question.text, None)
            return
        self._picked[question.text] = option.label
        for button in self.option_buttons.get(question.text, []):  # one choice per question
            if button is not change.get("owner") and button.value:
                button.value = False
        if self._one_click:
            self._clicked({question.text: option.label})

    def _clicked(self, answers: Mapping[str, str] | None) -> None:  # any thread
        self.settle(self.answer(self.answers() if answers is None else answers))
