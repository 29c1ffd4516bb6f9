"""Pure protocol layer: framing, parsing, builders. No event loop, no processes."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byre_jupyter.errors import LineTooLongError
from byre_jupyter.protocol import (
    KNOWN_SYSTEM_SUBTYPES,
    KNOWN_TYPES,
    ApiRetryMessage,
    AssistantMessage,
    ControlRequest,
    ControlResponse,
    Image,
    ImageBlock,
    InitMessage,
    LineSplitter,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskMessage,
    TextBlock,
    TokenUsage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    encode_line,
    parse_block,
    parse_message,
    user_message,
)


def feed_all(splitter: LineSplitter, data: bytes, step: int) -> list[bytes | LineTooLongError]:
    out: list[bytes | LineTooLongError] = []
    for i in range(0, len(data), step):
        out.extend(splitter.feed(data[i : i + step]))
    out.extend(splitter.finish())
    return out


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 10_000])
def test_split_anywhere_inside_strings_and_multibyte_chars(step: int) -> None:
    messages = [{"text": "héllo → wörld 🎉", "n": i, "nested": "a\\nb"} for i in range(20)]
    data = b"".join(encode_line(m) for m in messages)
    lines = feed_all(LineSplitter(), data, step)
    assert [json.loads(line) for line in lines] == messages  # type: ignore[arg-type]


def test_blank_lines_skipped_and_tail_without_newline_kept() -> None:
    lines = feed_all(LineSplitter(), b'\n\n{"a":1}\n\n{"b":2}', 3)
    assert lines == [b'{"a":1}', b'{"b":2}']


@pytest.mark.parametrize("step", [5, 100, 1 << 20])
def test_line_over_limit_becomes_an_error_item_and_stream_goes_on(step: int) -> None:
    data = b'{"ok":1}\n' + b"x" * 1000 + b'\n{"ok":2}\n'
    items = feed_all(LineSplitter(max_line_bytes=100), data, step)
    assert items[0] == b'{"ok":1}'
    assert isinstance(items[1], LineTooLongError) and items[1].size >= 1000
    assert items[2] == b'{"ok":2}'
    assert len(items) == 3


def test_line_exactly_at_limit_passes() -> None:
    line = b"y" * 100
    assert feed_all(LineSplitter(max_line_bytes=100), line + b"\n", 7) == [line]


def test_unterminated_over_limit_tail_reported_at_finish() -> None:
    items = feed_all(LineSplitter(max_line_bytes=10), b"z" * 50, 4)
    assert len(items) == 1 and isinstance(items[0], LineTooLongError)


def items(found: list[bytes | LineTooLongError]) -> list[object]:
    return [(e.size, e.limit) if isinstance(e, LineTooLongError) else e for e in found]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"\n", b"\n\n", b"a", b"{}", b"x" * 7, b"\xc3\xa9", b"\r"]), max_size=60
    ),
    st.lists(st.integers(1, 40), min_size=1, max_size=20),
    st.integers(1, 20),
)
def test_split_cuts_every_chunking_as_feed_does(
    pieces: list[bytes], steps: list[int], limit: int
) -> None:
    """``split`` (line_batches' path: bytes.split where no line is too long) and ``feed`` give
    the same lines and errors for any chunking, over-long lines and lines across chunks
    included."""
    data = b"".join(pieces)
    chunks, at = [], 0
    for n in range(len(data)):
        step = steps[n % len(steps)]
        if at < len(data):
            chunks.append(data[at : at + step])
            at += step
    fed, cut = LineSplitter(max_line_bytes=limit), LineSplitter(max_line_bytes=limit)
    by_feed = [line for chunk in chunks for line in fed.feed(chunk)] + list(fed.finish())
    by_split = [line for chunk in chunks for line in cut.split(chunk)] + list(cut.finish())
    assert items(by_split) == items(by_feed)


def test_protocol_layer_imports_no_asyncio_ipython_or_widgets() -> None:
    code = (
        "import sys, byre_jupyter.protocol, byre_jupyter.errors;"
        "heavy=('asyncio','IPython','ipywidgets','traitlets','ipykernel');"
        "bad=[m for m in heavy if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# --- parsing --------------------------------------------------------------------------------

STREAM_DELTA = {
    "type": "stream_event",
    "event": {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "Hel"},
    },
    "session_id": "s",
    "parent_tool_use_id": None,
    "uuid": "u1",
}


def test_stream_event() -> None:
    m = parse_message(STREAM_DELTA)
    assert isinstance(m, StreamEvent)
    assert (m.event_type, m.index, m.delta["text"], m.session_id, m.uuid) == (
        "content_block_delta",
        0,
        "Hel",
        "s",
        "u1",
    )
    assert m.raw is STREAM_DELTA and m.type == "stream_event" and m.known


def test_assistant_blocks_and_flags() -> None:
    raw = {
        "type": "assistant",
        "message": {
            "id": "msg_1",
            "model": "claude-opus-5-5",
            "role": "assistant",
            "stop_reason": None,
            "content": [
                {"type": "text", "text": "Hi"},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "mystery_block", "x": 1},
            ],
        },
        "parent_tool_use_id": "toolu_agent",
        "aborted": True,
        "uuid": "u2",
    }
    m = parse_message(raw)
    assert isinstance(m, AssistantMessage)
    assert m.message_id == "msg_1" and m.aborted and m.parent_tool_use_id == "toolu_agent"
    text, tool, thinking, unknown = m.content
    assert isinstance(text, TextBlock) and text.text == "Hi"
    assert isinstance(tool, ToolUseBlock) and tool.input == {"command": "ls"}
    assert thinking.type == "thinking" and unknown.raw == {"type": "mystery_block", "x": 1}


def test_api_error_assistant_is_flagged() -> None:
    m = parse_message(
        {
            "type": "assistant",
            "message": {"id": "x", "model": "<synthetic>", "content": []},
            "is_api_error_message": True,
            "error": "server_error",
        }
    )
    assert isinstance(m, AssistantMessage) and m.is_api_error and m.error == "server_error"


def test_user_tool_result_with_image_anthropic_and_mcp_styles() -> None:
    raw = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"},
                        },
                        {"type": "text", "text": "[Image: source: /tmp/x.png]"},
                    ],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "plain",
                    "is_error": True,
                },
                {"type": "image", "data": "REVG", "mimeType": "image/jpeg"},
            ],
        },
        "tool_use_result": {"type": "image"},
    }
    m = parse_message(raw)
    assert isinstance(m, UserMessage)
    first, second = m.tool_results
    assert isinstance(first, ToolResultBlock) and first.images[0].media_type == "image/png"
    assert first.images[0].data == "QUJD"
    assert second.is_error and second.text == "plain"
    mcp_image = m.content[2]
    assert isinstance(mcp_image, ImageBlock) and mcp_image.media_type == "image/jpeg"


def test_init_result_retry_task() -> None:
    init = parse_message(
        {
            "type": "system",
            "subtype": "init",
            "session_id": "s",
            "model": "m",
            "tools": ["Bash"],
            "permissionMode": "default",
            "capabilities": ["interrupt_receipt_v1"],
            "mcp_servers": [{"name": "byre"}],
        }
    )
    assert isinstance(init, InitMessage)
    assert init.capabilities == {"interrupt_receipt_v1"} and init.permission_mode == "default"
    no_caps = parse_message({"type": "system", "subtype": "init"})
    assert isinstance(no_caps, InitMessage) and no_caps.capabilities == frozenset()

    result = parse_message(
        {
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": True,
            "terminal_reason": "aborted_streaming",
            "modelUsage": {"m": {}},
            "origin": {"kind": "task-notification"},
        }
    )
    assert isinstance(result, ResultMessage)
    assert (
        result.interrupted
        and result.model_usage == {"m": TokenUsage()}
        and result.origin_kind == "task-notification"
    )
    api_fail = parse_message(
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "terminal_reason": "api_error",
            "api_error_status": 500,
        }
    )
    assert isinstance(api_fail, ResultMessage) and api_fail.is_error and not api_fail.interrupted

    retry = parse_message(
        {
            "type": "system",
            "subtype": "api_retry",
            "attempt": 1,
            "max_retries": 10,
            "retry_delay_ms": 542,
            "error_status": 500,
            "error": "server_error",
        }
    )
    assert isinstance(retry, ApiRetryMessage) and retry.error_status == 500

    task = parse_message(
        {
            "type": "system",
            "subtype": "task_updated",
            "task_id": "t",
            "patch": {"status": "completed"},
        }
    )
    assert isinstance(task, TaskMessage) and task.status == "completed"


def test_control_messages() -> None:
    req = parse_message(
        {
            "type": "control_request",
            "request_id": "r1",
            "request": {"subtype": "can_use_tool", "tool_name": "Bash"},
        }
    )
    assert isinstance(req, ControlRequest) and req.subtype == "can_use_tool"
    err = parse_message(
        {
            "type": "control_response",
            "response": {
                "subtype": "error",
                "request_id": "r2",
                "error": "Unsupported",
                "error_code": "unsupported_request",
            },
        }
    )
    assert (
        isinstance(err, ControlResponse)
        and err.error_code == "unsupported_request"
        and err.response == {}
    )


@pytest.mark.parametrize("kind", sorted(KNOWN_TYPES - {"system"}))
def test_every_known_type_is_recognised(kind: str) -> None:
    assert parse_message({"type": kind}).known


@pytest.mark.parametrize("subtype", sorted(KNOWN_SYSTEM_SUBTYPES))
def test_every_known_system_subtype_is_recognised(subtype: str) -> None:
    m = parse_message({"type": "system", "subtype": subtype})
    assert isinstance(m, SystemMessage) and m.known


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "brand_new_type", "payload": [1, 2]},
        {"type": "system", "subtype": "brand_new_subtype"},
        {"no_type": True},
        {"type": 5},
    ],
)
def test_unknown_passes_through_unharmed(raw: dict) -> None:
    m = parse_message(raw)
    assert isinstance(m, Message) and not m.known and m.raw == raw


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "assistant", "message": "not a dict"},
        {"type": "user", "message": {"content": 7}},
        {"type": "result", "usage": [], "errors": "x", "num_turns": "3"},
        {"type": "stream_event", "event": None},
        {"type": "control_response", "response": None},
    ],
)
def test_malformed_fields_degrade_never_raise(raw: dict) -> None:
    assert parse_message(raw).raw == raw


# --- builders -------------------------------------------------------------------------------


def test_user_message_and_image_blocks() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"rest"
    image = Image.sniffed(png)
    assert image is not None
    block = image.content_block()
    assert block["source"]["media_type"] == "image/png"
    msg = user_message([block, {"type": "text", "text": "what?"}], session_id="s")
    assert msg["message"]["content"][1]["text"] == "what?" and msg["session_id"] == "s"
    assert Image.sniffed(b"GIF? no") is None  # unknown bytes make no image, so no image block


def test_an_image_block_is_what_its_bytes_are_not_what_it_declares() -> None:
    """The rule of protocol/image.py: the bytes decide; a declared type never does."""
    png = b"\x89PNG\r\n\x1a\n" + b"rest"
    encoded = base64.b64encode(png).decode()
    svg = base64.b64encode(b"<svg onload=alert(1)>").decode()
    lied = parse_block({"type": "image", "data": encoded, "mimeType": "image/svg+xml"})
    assert isinstance(lied, ImageBlock) and lied.image == Image(png, "image/png")
    source = {"type": "base64", "media_type": "image/png", "data": svg}
    script = parse_block({"type": "image", "source": source})
    assert isinstance(script, ImageBlock) and script.image is None
    assert Image.from_base64("not base64 at all!") is None
    with pytest.raises(ValueError, match="not an image type"):
        Image(b"<svg onload=alert(1)>", "image/svg+xml")


def test_effort_set_by_reads_the_clis_answer_to_a_typed_effort_command() -> None:
    from byre_jupyter.protocol import effort_set_by

    set_high = "Set effort level to high (this session only): Comprehensive ..."
    assert effort_set_by("/effort high", set_high) == (True, "high")
    assert effort_set_by("  /effort  HIGH", set_high) == (True, "high")
    assert effort_set_by("/effort auto", "Effort level set to auto (this session only)") == (
        True,
        None,
    )
    usage = "Usage: /effort <low|medium|high|xhigh|max|auto|ultracode [on|off]>"
    assert effort_set_by("/effort", usage) == (False, None)
    assert effort_set_by("/effortless high", set_high) == (False, None)  # another command
    assert effort_set_by("what does /effort high do?", set_high) == (False, None)
    assert effort_set_by("/effort high", None) == (False, None)
