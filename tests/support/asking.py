"""The question Claude asks in the tests of the question card (AskUserQuestion's input, as the
CLI hands it to the host): one single-choice question, so one click answers the card."""

from __future__ import annotations

from typing import Any

QUESTION: dict[str, Any] = {
    "questions": [
        {
            "question": "Which colour?",
            "header": "Colour",
            "multiSelect": False,
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"},
            ],
        }
    ]
}
