"""stream_event lines are typed once, in protocol/: ``StreamEvent.api_event``.

Shapes as the real CLI 2.1.328 sends them (docs/protocol.md, section 4); hostile variants must
parse to something (never raise) and never smuggle a non-string where text is promised.
"""

from __future__ import annotations

from typing import Any

import pytest

from byre_jupyter.protocol import (
    ContentBlockDelta,
    ContentBlockStart,
    ContentBlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
    TextBlock,
    ThinkingBlock,
    TokenUsage,
    ToolUseBlock,
    UnknownStreamEvent,
    parse_message,
)


def line(event: Any, **extra: Any) -> StreamEvent:
    message = parse_message(
        {
            "type": "stream_event",
            "event": event,
            "session_id": "s",
            "parent_tool_use_id": None,
            **extra,
        }
    )
    assert isinstance(message, StreamEvent)
    return message


def test_message_start_and_delta_carry_id_model_and_usage() -> None:
    start = line(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "model": "claude-opus-5-5",
                "content": [],
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        },
        api_message_id="msg_1",
    )
    assert start.api_event == MessageStart(
        raw=start.event,
        message_id="msg_1",
        model="claude-opus-5-5",
        tokens=TokenUsage(uncached=12, output=1),
    )
    assert start.api_message_id == "msg_1"
    delta = line(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 20},
        }
    ).api_event
    assert isinstance(delta, MessageDelta)
    assert (delta.stop_reason, delta.tokens) == ("end_turn", TokenUsage(output=20))
    assert isinstance(line({"type": "message_stop"}).api_event, MessageStop)


@pytest.mark.parametrize(
    ("block", "kind"),
    [
        ({"type": "text", "text": ""}, TextBlock),
        ({"type": "thinking", "thinking": "", "signature": ""}, ThinkingBlock),
        ({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}, ToolUseBlock),
    ],
)
def test_content_block_start_parses_its_block(block: dict[str, Any], kind: type) -> None:
    event = line({"type": "content_block_start", "index": 2, "content_block": block}).api_event
    assert isinstance(event, ContentBlockStart) and event.index == 2
    assert isinstance(event.block, kind)


@pytest.mark.parametrize(
    ("delta", "kind", "text"),
    [
        ({"type": "text_delta", "text": "Hel"}, "text_delta", "Hel"),
        ({"type": "thinking_delta", "thinking": "hmm"}, "thinking_delta", "hmm"),
        ({"type": "input_json_delta", "partial_json": '{"com'}, "input_json_delta", '{"com'),
        ({"type": "signature_delta", "signature": ""}, "signature_delta", ""),
        ({"type": "citations_delta", "citation": {}}, "citations_delta", ""),
        ({"type": "text_delta", "text": ["not", "text"]}, "text_delta", ""),
        ({"type": "text_delta"}, "text_delta", ""),
        ("not a dict", "", ""),
    ],
)
def test_content_block_delta_payload(delta: Any, kind: str, text: str) -> None:
    event = line({"type": "content_block_delta", "index": 0, "delta": delta}).api_event
    assert event == ContentBlockDelta(raw=event.raw, index=0, kind=kind, text=text)


def test_stop_unknown_and_malformed_events_parse_without_raising() -> None:
    assert line({"type": "content_block_stop", "index": 1}).api_event == ContentBlockStop(
        raw={"type": "content_block_stop", "index": 1}, index=1
    )
    for event in (
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}},  # no index
        {"type": "content_block_stop", "index": "1"},
        {"type": "ping"},
        {},
        "not an event",
        None,
    ):
        parsed = line(event)
        assert isinstance(parsed.api_event, UnknownStreamEvent)
    assert line({"type": "message_start", "message": "x"}).api_event == MessageStart(
        raw={"type": "message_start", "message": "x"},
        message_id="",
        model=None,
        tokens=TokenUsage(),
    )


def test_the_typed_event_is_parsed_once_and_shared() -> None:
    event = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "a"},
    }
    first, second = line(event), line(event)
    assert first.api_event is first.api_event  # parsed once, kept
    assert first == second  # the cache is no part of the value
