"""Each bridge message is described once (byre_jupyter/bridge/messages.py): the TypeScript
side imports the checked-in rendering, labextension/src/messages.json, and this holds it
equal to the Python description (labextension/test/protocol.test.ts checks the other side)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from byre_jupyter.bridge import messages
from byre_jupyter.bridge.messages import (
    KERNEL_MESSAGES,
    Editing,
    Hello,
    RefusedHello,
    Reply,
    TurnOpened,
    describe,
    parse_page_message,
)

CHECKED_IN = Path(__file__).parents[3] / "labextension" / "src" / "messages.json"


def test_the_typescript_sides_description_is_the_pythons() -> None:
    assert json.loads(CHECKED_IN.read_text()) == describe(), (
        "run: python -m byre_jupyter.bridge --schema > labextension/src/messages.json"
    )


def sample(kind: str) -> Any:
    return {"string": "c1", "number": 3, "boolean": True, "array": [], "object": {}}[kind]


@pytest.mark.parametrize("entry", describe()["kernel"], ids=lambda e: e.get("method", e["type"]))
def test_each_kernel_message_goes_on_the_wire_with_the_described_fields(
    entry: dict[str, Any],
) -> None:
    (cls,) = [
        c
        for c in KERNEL_MESSAGES
        if c.type == entry["type"] and getattr(c, "method", None) == entry.get("method")
    ]
    described = entry.get("params", entry.get("fields"))
    message = cls(**{name: sample(kind) for name, kind in described.items()})
    wire = message.to_wire("7") if "resend" in entry else message.to_wire()
    assert wire["type"] == entry["type"]
    carried = (
        wire["params"] if "params" in entry else {k: v for k, v in wire.items() if k != "type"}
    )
    assert set(carried) == set(described)
    json.dumps(wire)  # it goes over a comm


def test_the_pages_messages_parse_as_described_and_round_trip() -> None:
    hello = Hello("0.1.0", "lab", "a.ipynb")
    assert parse_page_message(hello.to_wire()) == hello
    fields = next(e["fields"] for e in describe()["page"] if e["type"] == "hello")
    assert set(hello.to_wire()) == {"type", *fields}
    assert parse_page_message(Editing("c").to_wire()) == Editing("c")
    assert parse_page_message(TurnOpened("c").to_wire()) == TurnOpened("c")
    assert parse_page_message({"type": "event", "name": "turn.opened", "cell": 3}) is None
    ok = Reply("1", True, {"cells": []})
    assert parse_page_message(ok.to_wire()) == ok
    assert parse_page_message(Reply("2", False, error="no").to_wire()) == Reply(
        "2", False, None, "no"
    )


@pytest.mark.parametrize(
    "junk",
    [
        None,
        7,
        [],
        {"type": "reply"},
        {"type": "reply", "id": 3, "ok": True},
        {"type": "event", "name": "editing", "cell": ["c"]},
        {"type": "event", "name": "typing"},
        {"type": "request", "id": "1", "method": "read"},
    ],
)
def test_anything_else_from_a_page_is_ignored(junk: object) -> None:
    assert parse_page_message(junk) is None


def test_a_hello_of_another_protocol_or_shape_is_refused_and_its_texts_are_bounded() -> None:
    good = Hello("0.1.0", "lab", "a").to_wire()
    assert parse_page_message({**good, "protocol": messages.PROTOCOL + 1}) == RefusedHello(
        str(messages.PROTOCOL + 1)
    )
    assert parse_page_message({**good, "path": ["a"]}) == RefusedHello("3")
    long = parse_page_message({**good, "path": "p" * 10_000})
    assert isinstance(long, Hello) and len(long.path) == messages.MAX_HELLO_TEXT


def test_the_messages_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Editing("c").cell = "d"  # type: ignore[misc]
