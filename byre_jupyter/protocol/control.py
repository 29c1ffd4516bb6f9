"""Builders for what the host writes to the CLI: user turns and control-channel messages.

Control requests and responses share stdin/stdout with the messages
(``docs/protocol.md``, section 6):
``{"type":"control_request","request_id":ID,"request":{"subtype":...}}`` one way and
``{"type":"control_response","response":{"subtype":"success"|"error","request_id":ID,...}}`` back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

__all__ = [
    "EFFORT_LEVELS",
    "PERMISSION_MODES",
    "PermissionMode",
    "cancel_request",
    "control_request",
    "effort_option",
    "effort_set_by",
    "error_response",
    "model_label",
    "model_option",
    "success_response",
    "user_message",
]


class PermissionMode(str, Enum):
    """The permission modes the CLI accepts (``--permission-mode``, ``set_permission_mode``),
    each with what it means: the one list. The config trait, the header menu and its help, and
    the README's table take theirs from here. A member is its CLI word (``str``), so it
    compares equal to the word and goes onto argv and into JSON as it is."""

    meaning: str

    def __new__(cls, word: str, meaning: str) -> PermissionMode:
        member = str.__new__(cls, word)
        member._value_ = word
        member.meaning = meaning
        return member

    def __str__(self) -> str:
        return str(self.value)  # the CLI's word, not "PermissionMode.DEFAULT"

    @classmethod
    def of(cls, word: str | None) -> PermissionMode | None:
        """The mode ``word`` names, or None when it names none."""
        return next((mode for mode in cls if mode.value == word), None)

    DEFAULT = ("default", "Claude asks before a tool that is not allowed yet")
    ACCEPT_EDITS = ("acceptEdits", "file edits are allowed without asking; other tools ask")
    PLAN = ("plan", "Claude plans and reads, and changes nothing")
    BYPASS = ("bypassPermissions", "every tool runs without asking")
    DONT_ASK = ("dontAsk", "never ask; a tool that is not allowed yet is denied")
    AUTO = ("auto", "the CLI decides per tool whether to ask")


#: The modes' words, in the menu's order.
PERMISSION_MODES: tuple[str, ...] = tuple(mode.value for mode in PermissionMode)


#: The effort levels the CLI accepts (``--effort``, ``apply_flag_settings`` ``effortLevel``,
#: ``/effort``; 2.1.328's ``--help``): the one list; the trait, ``-e`` and the menu read it.
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")


def effort_option(name: str | None) -> str | None:
    """The effort to tell the CLI for what a user typed: ``None`` (the model's own default, no
    ``--effort``) for nothing or ``"default"``, else one of :data:`EFFORT_LEVELS`; anything
    else raises ``ValueError`` naming them."""
    name = (name or "").strip().lower()
    if not name or name == "default":
        return None
    if name not in EFFORT_LEVELS:
        raise ValueError(f"unknown effort {name!r}: one of default, {', '.join(EFFORT_LEVELS)}")
    return name


_EFFORT_SET = re.compile(r"Set effort level to (\w+)|Effort level set to (auto)\b")


def effort_set_by(command: str, answer: str | None) -> tuple[bool, str | None]:
    """What a ``/effort`` command the user sent as a prompt did, from the CLI's answer (its
    result text, 2.1.328: "Set effort level to high (this session only): ...", "Effort level
    set to auto ..."): ``(True, level)`` when it set one (``None`` for auto: the model's
    default), ``(False, None)`` when it set nothing (usage, unknown option, another command)."""
    if command.split(maxsplit=1)[:1] != ["/effort"] or not answer:
        return False, None
    found = _EFFORT_SET.match(answer.strip())
    if found is None:
        return False, None
    level = (found.group(1) or "").lower()
    return True, level if level in EFFORT_LEVELS else None


def model_option(name: str | None) -> str | None:
    """The model to tell the CLI for what a user typed: ``None`` (the CLI's own default, no
    ``--model``) for nothing or ``"default"`` in any case, else the name (an alias such as
    ``sonnet`` or a full id) stripped. ``"default"`` is what the menus and ``%claude model``
    show for the CLI's default, but it is no model name."""
    name = (name or "").strip()
    return None if not name or name.lower() == "default" else name


def model_label(model: str | None) -> str:
    """What the menus and ``%claude model`` show for a session's model: ``"default"`` for the
    CLI's own (None), the inverse of :func:`model_option`."""
    return model or "default"


def control_request(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {"subtype": subtype, **fields},
    }


def success_response(request_id: str, response: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": request_id,
            "response": dict(response or {}),
        },
    }


def error_response(request_id: str, error: str) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "error", "request_id": request_id, "error": error},
    }


def cancel_request(request_id: str) -> dict[str, Any]:
    """Tell the CLI we no longer need the answer to one of our own requests."""
    return {"type": "control_cancel_request", "request_id": request_id}


def user_message(
    prompt: str | Iterable[Mapping[str, Any]],
    *,
    session_id: str = "",
    uuid: str | None = None,
    parent_tool_use_id: str | None = None,
) -> dict[str, Any]:
    """A user turn. ``prompt`` is a string or a list of content blocks (images, text)."""
    content: Any = prompt if isinstance(prompt, str) else [dict(b) for b in prompt]
    message: dict[str, Any] = {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
    }
    if uuid is not None:
        message["uuid"] = uuid
    return message
