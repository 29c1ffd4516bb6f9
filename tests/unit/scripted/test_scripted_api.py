"""Fast tests of the scripted fake Messages API, over real HTTP with ``http.client`` (no CLI)."""

from __future__ import annotations

import http.client
import json
import select
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from byre_jupyter.scripted import (
    Cut,
    Error,
    Hang,
    Malformed,
    Reply,
    Script,
    ScriptedAPI,
    ScriptedRequest,
    Slow,
    Text,
    Thinking,
    ToolUse,
)
from byre_jupyter.scripted.demo import BANNER, DEFAULT_PYTHON_TOOL, demo_script

REPO = Path(__file__).resolve().parents[3]
MSG_PATH = "/v1/messages?beta=true"

# ------------------------------------------------------------------------------------ helpers


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def body(
    *messages: dict[str, Any] | str, stream: bool = True, model: str = "claude-test-1"
) -> dict[str, Any]:
    msgs = [user(m) if isinstance(m, str) else m for m in messages]
    b: dict[str, Any] = {"model": model, "max_tokens": 1024, "messages": msgs}
    if stream:
        b["stream"] = True
    return b


def connect(api: ScriptedAPI, timeout: float = 10.0) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", api.port, timeout=timeout)


def post(
    api: ScriptedAPI,
    payload: dict[str, Any],
    path: str = MSG_PATH,
    conn: http.client.HTTPConnection | None = None,
) -> http.client.HTTPResponse:
    conn = conn or connect(api)
    data = json.dumps(payload).encode()
    conn.request(
        "POST",
        path,
        body=data,
        headers={"content-type": "application/json", "x-api-key": "sk-test"},
    )
    return conn.getresponse()


def parse_sse(raw: str) -> list[tuple[str, dict[str, Any]]]:
    """``[(event name, data JSON)]``; asserts each event has both lines and valid JSON."""
    events = []
    for block in raw.split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        assert set(fields) == {"event", "data"}, block
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def stream(api: ScriptedAPI, payload: dict[str, Any]) -> list[dict[str, Any]]:
    resp = post(api, payload)
    assert resp.status == 200
    assert resp.getheader("content-type", "").startswith("text/event-stream")
    events = parse_sse(resp.read().decode())
    for name, data in events:
        assert name == data["type"]
    return [data for _, data in events]


def deltas(events: list[dict[str, Any]], kind: str, index: int | None = None) -> list[str]:
    key = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}
    return [
        e["delta"][key[kind]]
        for e in events
        if e["type"] == "content_block_delta"
        and e["delta"]["type"] == kind
        and (index is None or e["index"] == index)
    ]


def error_body(resp: http.client.HTTPResponse) -> dict[str, Any]:
    assert resp.getheader("content-type") == "application/json"
    data: dict[str, Any] = json.loads(resp.read())
    assert data["type"] == "error"
    return data


def raw_request(api: ScriptedAPI, payload: dict[str, Any]) -> socket.socket:
    """Send a request on a bare socket, so a test can watch for (the absence of) bytes."""
    sock = socket.create_connection(("127.0.0.1", api.port), timeout=10)
    data = json.dumps(payload).encode()
    head = (
        f"POST {MSG_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {len(data)}\r\n\r\n"
    ).encode()
    sock.sendall(head + data)
    return sock


def recv_all(sock: socket.socket) -> bytes:
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


# ------------------------------------------------------------------------------------ SSE


def test_stream_has_the_anthropic_event_order(api: ScriptedAPI) -> None:
    api.default = Reply(Thinking("hmm, let me see", chunk=5), Text("Hello world", chunk=4))
    events = stream(api, body("hi", model="claude-opus-5-5"))
    types = [e["type"] for e in events]
    assert types[:2] == ["message_start", "ping"]
    assert types[-2:] == ["message_delta", "message_stop"]
    body_types = [(e["type"], e.get("index"), e.get("delta", {}).get("type")) for e in events[2:-2]]
    assert body_types == [
        ("content_block_start", 0, None),
        *[("content_block_delta", 0, "thinking_delta")] * 3,
        ("content_block_delta", 0, "signature_delta"),
        ("content_block_stop", 0, None),
        ("content_block_start", 1, None),
        *[("content_block_delta", 1, "text_delta")] * 3,
        ("content_block_stop", 1, None),
    ]
    start = events[0]["message"]
    assert start["id"] == "msg_scripted_1"
    assert start["model"] == "claude-opus-5-5"
    assert start["role"] == "assistant" and start["content"] == []
    assert start["usage"]["input_tokens"] > 0
    assert events[2]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert events[8]["content_block"] == {"type": "text", "text": ""}
    assert events[-2]["delta"]["stop_reason"] == "end_turn"
    assert events[-2]["usage"]["output_tokens"] > 0
    signature = [e for e in events if e.get("delta", {}).get("type") == "signature_delta"]
    assert signature[0]["delta"]["signature"]


def test_message_ids_count_up(api: ScriptedAPI) -> None:
    ids = [stream(api, body("hi"))[0]["message"]["id"] for _ in range(2)]
    assert ids == ["msg_scripted_1", "msg_scripted_2"]


def test_text_deltas_reassemble_in_chunks(api: ScriptedAPI) -> None:
    text = "The quick brown fox jumps over the lazy dog. Ünïcode ✓ too."
    api.default = Reply(Text(text, chunk=7))
    events = stream(api, body("hi"))
    parts = deltas(events, "text_delta")
    assert "".join(parts) == text
    assert all(len(p) == 7 for p in parts[:-1]) and 0 < len(parts[-1]) <= 7
    assert len(parts) == -(-len(text) // 7)


def test_thinking_deltas_reassemble(api: ScriptedAPI) -> None:
    api.default = Reply(Thinking("step one, step two", chunk=3), Text("done"))
    events = stream(api, body("hi"))
    assert "".join(deltas(events, "thinking_delta", 0)) == "step one, step two"


def test_tool_use_input_json_reassembles(api: ScriptedAPI) -> None:
    tool_input = {"command": "echo 'hi there' && ls -la", "description": "Nested", "n": [1, 2]}
    api.default = Reply(Text("Running it."), ToolUse("Bash", tool_input, pieces=4))
    events = stream(api, body("hi"))
    start = next(e for e in events if e["type"] == "content_block_start" and e["index"] == 1)
    assert start["content_block"] == {
        "type": "tool_use",
        "id": "toolu_scripted_1",
        "name": "Bash",
        "input": {},
    }
    pieces = deltas(events, "input_json_delta", 1)
    assert len(pieces) == 4
    assert json.loads("".join(pieces)) == tool_input
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_tool_use_ids_fresh_per_serve_unless_given(api: ScriptedAPI) -> None:
    api.default = Reply(ToolUse("Read", {"file_path": "a"}), ToolUse("X", {}, id="toolu_mine"))

    def ids() -> list[str]:
        return [
            e["content_block"]["id"]
            for e in stream(api, body("hi"))
            if e["type"] == "content_block_start"
        ]

    assert ids() == ["toolu_scripted_1", "toolu_mine"]
    assert ids() == ["toolu_scripted_2", "toolu_mine"]


def test_stop_reason_and_usage_overrides(api: ScriptedAPI) -> None:
    api.default = Reply(Text("x"), stop_reason="max_tokens", usage={"output_tokens": 77})
    events = stream(api, body("hi"))
    assert events[-2]["delta"]["stop_reason"] == "max_tokens"
    assert events[-2]["usage"]["output_tokens"] == 77


def test_deltas_are_flushed_one_by_one(api: ScriptedAPI) -> None:
    # 60 s between deltas: the first one can only be read in time if it is sent on its own.
    api.default = Reply(Text("abcdef", chunk=3, delay=60))
    resp = post(api, body("hi"))
    seen = b""
    while b"text_delta" not in seen:
        line = resp.readline()
        assert line, "stream ended before the first delta"
        seen += line
    assert b'"abc"' in seen
    resp.close()
    api.stop()  # wakes the handler from its 60 s delay


#: How long a held-back stream must stay silent. A loaded machine only makes it quieter; what
#: fails is the server sending what it should hold back (which it does at once when broken).
QUIET = 0.5


def received_before_quiet(
    conn: http.client.HTTPConnection, resp: http.client.HTTPResponse
) -> bytes:
    """The stream's bytes until it stays silent for QUIET seconds (the server holding back)."""
    assert conn.sock is not None
    conn.sock.settimeout(QUIET)
    seen = b""
    try:
        while line := resp.readline():
            seen += line
    except TimeoutError:
        return seen
    raise AssertionError(f"the stream ended instead of holding back: {seen!r}")


def test_slow_waits_before_headers(api: ScriptedAPI) -> None:
    api.default = Slow(0.01, Reply(Text("late")))
    assert "".join(deltas(parse_data(post(api, body("hi"))), "text_delta")) == "late"
    # Held back: the request is in, no header comes (a 60 s wait, ended by stop()).
    api.default = Slow(60, Reply(Text("late")))
    conn = connect(api, timeout=QUIET)
    sent = len(api.requests)
    conn.request("POST", MSG_PATH, body=json.dumps(body("hi")).encode(),
                 headers={"content-type": "application/json", "x-api-key": "sk-test"})  # fmt: skip
    api.wait_for_request(after=sent)
    with pytest.raises(TimeoutError):
        conn.getresponse()
    api.stop()  # wakes the handler from its 60 s wait


def parse_data(resp: http.client.HTTPResponse) -> list[dict[str, Any]]:
    return [d for _, d in parse_sse(resp.read().decode())]


def test_delay_between_deltas_and_before_first(api: ScriptedAPI) -> None:
    api.default = Reply(Text("aabbcc", chunk=2, delay=0.01), delay_first=0.01)
    assert "".join(deltas(stream(api, body("hi")), "text_delta")) == "aabbcc"
    # Each delay holds the stream at its own place (60 s waits, ended by stop()).
    api.default = Reply(Text("aabbcc", chunk=2), delay_first=60)
    conn = connect(api)
    seen = received_before_quiet(conn, post(api, body("hi"), conn=conn))
    assert b"message_start" in seen and b"content_block" not in seen, seen
    api.default = Reply(Text("aabbcc", chunk=2, delay=60))
    conn = connect(api)
    seen = received_before_quiet(conn, post(api, body("hi"), conn=conn))
    assert b'"aa"' in seen and b'"bb"' not in seen, seen
    api.stop()


# ------------------------------------------------------------------------------------ other answers


@pytest.mark.parametrize(
    ("status", "etype"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
    ],
)
def test_errors_carry_status_and_anthropic_body(api: ScriptedAPI, status: int, etype: str) -> None:
    api.default = Error(status, message=f"boom {status}")
    resp = post(api, body("hi"))
    assert resp.status == status
    assert error_body(resp) == {
        "type": "error",
        "error": {"type": etype, "message": f"boom {status}"},
    }
    assert resp.getheader("retry-after") is None


def test_error_retry_after_and_custom_type(api: ScriptedAPI) -> None:
    api.default = Error(529, message="busy", retry_after=2, error_type="my_error")
    resp = post(api, body("hi"))
    assert resp.status == 529
    assert resp.getheader("retry-after") == "2"
    assert error_body(resp)["error"] == {"type": "my_error", "message": "busy"}


def test_count_tokens(api: ScriptedAPI) -> None:
    small = post(api, body("hi", stream=False), path="/v1/messages/count_tokens?beta=true")
    assert small.status == 200
    n_small = json.loads(small.read())["input_tokens"]
    big = post(api, body("hi " * 2000, stream=False), path="/v1/messages/count_tokens?beta=true")
    n_big = json.loads(big.read())["input_tokens"]
    assert isinstance(n_small, int) and 0 < n_small < n_big
    assert api.requests[0].path == "/v1/messages/count_tokens"
    assert api.requests[0].query == "beta=true"


def test_non_stream_request_gets_a_json_message(api: ScriptedAPI) -> None:
    api.on("probe", Reply(Thinking("t"), Text("Hi back"), ToolUse("Bash", {"command": "ls"})))
    resp = post(api, body("probe", stream=False, model="claude-made-up-model-9"))
    assert resp.status == 200
    assert resp.getheader("content-type") == "application/json"
    msg = json.loads(resp.read())
    assert msg["type"] == "message" and msg["role"] == "assistant"
    assert msg["id"].startswith("msg_scripted_")
    assert msg["model"] == "claude-made-up-model-9"
    assert msg["content"] == [
        {"type": "thinking", "thinking": "t", "signature": Thinking("t").signature},
        {"type": "text", "text": "Hi back"},
        {"type": "tool_use", "id": "toolu_scripted_1", "name": "Bash", "input": {"command": "ls"}},
    ]
    assert msg["stop_reason"] == "tool_use"
    assert msg["usage"]["input_tokens"] > 0
    assert api.requests[0].stream is False


def test_unknown_paths_get_404_json(api: ScriptedAPI) -> None:
    resp = post(api, body("hi"), path="/v1/complete")
    assert resp.status == 404
    assert error_body(resp)["error"]["type"] == "not_found_error"
    conn = connect(api)
    conn.request("GET", "/v1/models")
    get = conn.getresponse()
    assert get.status == 404
    assert error_body(get)["error"]["type"] == "not_found_error"
    assert [(r.method, r.path) for r in api.requests] == [
        ("POST", "/v1/complete"),
        ("GET", "/v1/models"),
    ]


def test_invalid_json_body_is_400(api: ScriptedAPI) -> None:
    conn = connect(api)
    conn.request("POST", MSG_PATH, body=b"{not json", headers={"content-type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 400
    assert error_body(resp)["error"]["type"] == "invalid_request_error"


def test_malformed_is_200_sse_with_garbage(api: ScriptedAPI) -> None:
    api.default = Malformed()
    resp = post(api, body("hi"))
    assert resp.status == 200
    assert resp.getheader("content-type", "").startswith("text/event-stream")
    raw = resp.read().decode()
    assert raw.strip()
    with pytest.raises((ValueError, AssertionError)):
        parse_sse(raw)


def test_keep_alive_serves_several_requests_on_one_connection(api: ScriptedAPI) -> None:
    api.default = Reply(Text("again"))
    conn = connect(api)
    for _ in range(3):
        resp = post(api, body("hi"), conn=conn)
        assert "".join(deltas(parse_data(resp), "text_delta")) == "again"
    assert len(api.requests) == 3


def test_script_exception_becomes_500(api: ScriptedAPI) -> None:
    def broken(req: ScriptedRequest) -> Reply:
        raise RuntimeError("bad responder")

    api.default = broken
    resp = post(api, body("hi"))
    assert resp.status == 500
    assert "bad responder" in error_body(resp)["error"]["message"]


# ------------------------------------------------------------------------------------ Hang / Cut


def test_hang_sends_nothing_until_release(api: ScriptedAPI) -> None:
    api.default = Hang(then=Reply(Text("released")))
    sock = raw_request(api, body("hi"))
    api.wait_for_request()
    readable, _, _ = select.select([sock], [], [], 0.3)
    assert not readable, "Hang sent bytes before release()"
    api.release()
    raw = recv_until(sock, b"0\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 200")
    assert b'"released"' in raw
    sock.close()


def recv_until(sock: socket.socket, end: bytes) -> bytes:
    out = b""
    while not out.endswith(end):
        chunk = sock.recv(65536)
        assert chunk, f"connection closed early after {out[-200:]!r}"
        out += chunk
    return out


def test_hang_without_then_closes_after_release(api: ScriptedAPI) -> None:
    api.default = Hang()
    sock = raw_request(api, body("hi"))
    api.wait_for_request()
    api.release()
    assert recv_all(sock) == b""


def test_hang_notices_client_disconnect(api: ScriptedAPI) -> None:
    api.default = Hang()
    sock = raw_request(api, body("hi"))
    req = api.wait_for_request()
    sock.close()
    assert api.wait_for_disconnect(req.index) == req.index
    # The server still answers others.
    api.default = Reply(Text("fine"))
    assert "".join(deltas(stream(api, body("hi")), "text_delta")) == "fine"


def test_release_only_releases_current_hangs(api: ScriptedAPI) -> None:
    api.default = Hang(then=Reply(Text("x")))
    api.release()  # nothing hanging yet: must not pre-release the next Hang
    sock = raw_request(api, body("hi"))
    api.wait_for_request()
    readable, _, _ = select.select([sock], [], [], 0.3)
    assert not readable
    api.release()
    assert recv_until(sock, b"0\r\n\r\n").startswith(b"HTTP/1.1 200")
    sock.close()


def test_stop_ends_hanging_handlers(api: ScriptedAPI) -> None:
    api.default = Hang()
    sock = raw_request(api, body("hi"))
    api.wait_for_request()
    api.stop()
    assert recv_all(sock) == b""
    assert api.disconnects == []  # our own shutdown is not a client disconnect


def test_cut_closes_mid_stream(api: ScriptedAPI) -> None:
    api.default = Cut(Reply(Text("abcdefghijkl", chunk=2)), after_deltas=3)
    resp = post(api, body("hi"))
    assert resp.status == 200
    with pytest.raises(http.client.IncompleteRead) as info:
        resp.read()
    events = parse_sse(info.value.partial.decode())
    types = [e for e, _ in events]
    assert "message_stop" not in types and "message_delta" not in types
    assert "".join(deltas([d for _, d in events], "text_delta")) == "abcdef"


def test_held_cut_waits_for_release(api: ScriptedAPI) -> None:
    api.default = Cut(Reply(Text("aabbccdd", chunk=2)), after_deltas=2, hold=True)
    resp = post(api, body("hi"))
    got = b""
    while got.count(b"text_delta") < 2:
        line = resp.readline()
        assert line, "stream ended before two deltas"
        got += line
    assert resp.fp is not None
    readable, _, _ = select.select([resp.fp], [], [], 0.3)
    assert not readable, "held Cut closed before release()"
    api.release()
    with pytest.raises(http.client.IncompleteRead):
        resp.read()
    assert api.disconnects == []  # the server cut, the client did not go away


def test_client_disconnect_mid_stream_is_recorded(api: ScriptedAPI) -> None:
    api.default = Reply(Text("x" * 100, chunk=1, delay=0.05))
    resp = post(api, body("hi"))
    assert b"message_start" in resp.readline()
    resp.close()
    req = api.requests[0]
    assert api.wait_for_disconnect(timeout=10) == req.index


# ------------------------------------------------------------------------------------ rules


def test_match_uses_last_user_role_message_skipping_system(api: ScriptedAPI) -> None:
    api.on("first", Reply(Text("matched first")))
    api.on("second", Reply(Text("matched second")))
    api.on("env block", Reply(Text("matched system")))
    payload = body(
        "first question",
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        user([{"type": "text", "text": "the second"}, {"type": "text", "text": "part"}]),
        {"role": "system", "content": [{"type": "text", "text": "# env block"}]},
    )
    events = stream(api, payload)
    assert "".join(deltas(events, "text_delta")) == "matched second"
    req = api.requests[0]
    assert req.last_user_text == "the second\npart"
    assert req.first_user_text == "first question"


def test_keyword_match_is_case_insensitive(api: ScriptedAPI) -> None:
    api.on("HeLLo", Reply(Text("hi!")))
    assert "".join(deltas(stream(api, body("well hello there")), "text_delta")) == "hi!"


def test_tool_results_count_as_text_and_are_exposed(api: ScriptedAPI) -> None:
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("got results")))
    api.on("nothing here", Reply(Text("wrong")))
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    payload = body(
        "run it",
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {}},
                {"type": "tool_use", "id": "toolu_b", "name": "Read", "input": {}},
            ],
        },
        user(
            [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "out: 42"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "is_error": True,
                    "content": [image, {"type": "text", "text": "[Image: source: x.png]"}],
                },
                {"type": "text", "text": "trailing note"},
            ]
        ),
    )
    events = stream(api, payload)
    assert "".join(deltas(events, "text_delta")) == "got results"
    req = api.requests[0]
    assert req.last_user_text == "out: 42\n[Image: source: x.png]\ntrailing note"
    assert req.last_tool_results == [
        {
            "tool_use_id": "toolu_a",
            "tool_name": "Bash",
            "is_error": False,
            "text": "out: 42",
            "has_image": False,
        },
        {
            "tool_use_id": "toolu_b",
            "tool_name": "Read",
            "is_error": True,
            "text": "[Image: source: x.png]",
            "has_image": True,
        },
    ]


def test_newest_rule_wins_and_default_catches_the_rest(api: ScriptedAPI) -> None:
    api.default = Reply(Text("default"))
    api.on("apple", Reply(Text("old")))
    api.on("apple", Reply(Text("new")))
    api.on(lambda r: r.model == "claude-special", Reply(Text("by model")))

    def text(payload: dict[str, Any]) -> str:
        return "".join(deltas(stream(api, payload), "text_delta"))

    assert text(body("apple pie")) == "new"
    assert text(body("banana")) == "default"
    assert text(body("apple", model="claude-special")) == "by model"


def test_one_shot_rule(api: ScriptedAPI) -> None:
    api.default = Reply(Text("default"))
    rule = api.on("go", Reply(Text("once")), times=1)
    texts = ["".join(deltas(stream(api, body("go")), "text_delta")) for _ in range(2)]
    assert texts == ["once", "default"]
    assert rule.hits == 1 and rule.exhausted


def test_sequence_rule_consumed_in_order_last_repeats(api: ScriptedAPI) -> None:
    api.on("go", [Error(500, "first fails"), Reply(Text("second")), Reply(Text("third"))])
    first = post(api, body("go"))
    assert first.status == 500
    first.read()
    texts = ["".join(deltas(stream(api, body("go")), "text_delta")) for _ in range(3)]
    assert texts == ["second", "third", "third"]


def test_callable_and_string_responders(api: ScriptedAPI) -> None:
    api.on("echo", lambda req: Reply(Text(req.last_user_text.upper())))
    api.on("plain", "just a string")
    assert "".join(deltas(stream(api, body("echo me")), "text_delta")) == "ECHO ME"
    assert "".join(deltas(stream(api, body("plain")), "text_delta")) == "just a string"


def test_shared_script_object() -> None:
    script = Script(default=Reply(Text("from script")))
    with ScriptedAPI(script=script) as api:
        script.on("x", Reply(Text("rule added on the script")))
        assert "".join(deltas(stream(api, body("x")), "text_delta")) == "rule added on the script"
        assert api.default is script.default


# ------------------------------------------------------------------------------------ recording


def test_requests_are_recorded(api: ScriptedAPI) -> None:
    stream(api, body("record me", model="claude-opus-5-5"))
    (req,) = api.requests
    assert req.index == 0 and req.method == "POST"
    assert req.path == "/v1/messages" and req.query == "beta=true"
    assert req.headers["x-api-key"] == "sk-test"
    assert req.headers["content-type"] == "application/json"
    assert req.body["messages"] == [{"role": "user", "content": "record me"}]
    assert req.model == "claude-opus-5-5"
    assert req.stream is True
    assert req.last_user_text == "record me"
    assert api.requests is not api.requests  # snapshots


def test_wait_for_request_blocks_until_a_match(api: ScriptedAPI) -> None:
    done = threading.Event()

    def later() -> None:
        stream(api, body("first"))
        stream(api, body("target"))
        done.set()

    threading.Thread(target=later, daemon=True).start()
    req = api.wait_for_request(lambda r: "target" in r.last_user_text, timeout=10)
    assert req.index == 1
    assert api.wait_for_request("TARGET").index == 1
    assert done.wait(10)
    with pytest.raises(TimeoutError):
        api.wait_for_request(after=2, timeout=0.1)
    with pytest.raises(TimeoutError):
        api.wait_for_request("absent", timeout=0.1)


def test_url_port_and_restart_guard() -> None:
    api = ScriptedAPI()
    with pytest.raises(RuntimeError):
        _ = api.url
    with api:
        assert api.url == f"http://127.0.0.1:{api.port}"
        assert api.port > 0
        with pytest.raises(RuntimeError):
            api.start()
    api.stop()  # idempotent


# ------------------------------------------------------------------------------------ demo script


def demo_text(api: ScriptedAPI, payload: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    events = stream(api, payload)
    tools = [
        e["content_block"] | {"input": json.loads("".join(deltas(events, "input_json_delta")))}
        for e in events
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"
    ]
    return "".join(deltas(events, "text_delta")), tools


def tool_round(prompt: str, name: str, result: Any, **extra: Any) -> dict[str, Any]:
    """A request body after the model called ``name`` and the CLI returned ``result``."""
    return body(
        prompt,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}],
        },
        user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": result, **extra}]),
    )


@pytest.fixture
def demo() -> Iterator[ScriptedAPI]:
    with ScriptedAPI(script=demo_script()) as server:
        yield server


def test_demo_default_is_markdown_with_banner(demo: ScriptedAPI) -> None:
    text, tools = demo_text(demo, body("hello"))
    assert text.startswith(BANNER) and not tools
    for piece in ("## ", "\n- ", "```python", "| keyword |"):
        assert piece in text
    other, _ = demo_text(demo, body("something unrelated"))
    assert other == text


def test_demo_notebook_words_in_the_clis_reminders_call_no_tool(demo: ScriptedAPI) -> None:
    """The CLI adds <system-reminder> blocks to the prompt's message (the notebook prompt,
    CLAUDE.md): their words must not start the notebook tools (the demo's "hello" cell read
    the notebook because a reminder said "insert" and "read the notebook")."""
    reminder = (
        "<system-reminder>To insert cells, read the notebook first; add a cell with "
        "edit_notebook, run cells with run_cells; fix an error.</system-reminder>"
    )
    text, tools = demo_text(demo, body(user([{"type": "text", "text": reminder + "\nhello"}])))
    assert not tools and "## Hello from the offline demo" in text
    _, tools = demo_text(demo, body(user([{"type": "text", "text": reminder + "\nadd a cell"}])))
    assert [t["name"] for t in tools] == ["mcp__byre__notebook"]


def test_demo_bash_round_trip_does_not_loop(demo: ScriptedAPI) -> None:
    text, tools = demo_text(demo, body("run bash please"))
    assert text.startswith(BANNER)
    assert [(t["name"], t["input"]) for t in tools] == [
        ("Bash", {"command": "echo hello from bash && uname -s", "description": "Say hello"})
    ]
    # The tool output itself contains "bash": the follow-up must still be text.
    text, tools = demo_text(demo, tool_round("run bash please", "Bash", "hello from bash\nLinux"))
    assert not tools
    assert text.startswith(BANNER) and "hello from bash\nLinux" in text


def test_demo_think_and_slow(demo: ScriptedAPI) -> None:
    events = stream(demo, body("think hard"))
    assert deltas(events, "thinking_delta", 0)
    assert "".join(deltas(events, "text_delta", 1)).startswith(BANNER)
    req = ScriptedRequest(0, "POST", "/v1/messages", "", {}, body("a slow one"))
    slow = demo_script().choose(req)
    assert isinstance(slow, Reply)
    (block,) = slow.blocks
    assert isinstance(block, Text) and block.delay == 0.02 and len(block.text) >= 1800
    assert block.text.startswith(BANNER)


def test_demo_image_reads_the_given_png(demo: ScriptedAPI) -> None:
    _, tools = demo_text(demo, body("show the image /tmp/x/fig.png please"))
    assert tools[0]["name"] == "Read"
    assert tools[0]["input"] == {"file_path": "/tmp/x/fig.png"}
    _, tools = demo_text(demo, body("look at `out/chart.png` please"))
    assert tools[0]["input"] == {"file_path": "out/chart.png"}
    _, tools = demo_text(demo, body("show me an image"))
    assert tools[0]["input"] == {"file_path": "plot.png"}
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    text, tools = demo_text(demo, tool_round("image", "Read", [image]))
    assert not tools and "image" in text


def test_demo_python_tool(demo: ScriptedAPI) -> None:
    _, tools = demo_text(demo, body("use python"))
    assert tools[0]["name"] == DEFAULT_PYTHON_TOOL
    code = tools[0]["input"]["code"]
    assert "sum(range(10))" in code and "matplotlib" in code
    compile(code, "<demo>", "exec")
    text, tools = demo_text(
        demo,
        tool_round("use python", DEFAULT_PYTHON_TOOL, [{"type": "text", "text": "sum = 45"}]),
    )
    assert not tools and "sum = 45" in text


def test_demo_subagent_flow(demo: ScriptedAPI) -> None:
    _, tools = demo_text(demo, body("start a subagent"))
    assert tools[0]["name"] == "Agent"
    assert tools[0]["input"]["prompt"] == "SUBAGENT_TASK: list files"
    assert tools[0]["input"]["run_in_background"] is False
    # The subagent's own first request, then its Bash result.
    _, tools = demo_text(demo, body("SUBAGENT_TASK: list files"))
    assert tools[0]["name"] == "Bash" and tools[0]["input"]["command"] == "ls"
    text, tools = demo_text(demo, tool_round("SUBAGENT_TASK: list files", "Bash", "a\nb"))
    assert not tools and "Found the files." in text
    # The main agent gets the CLI's hand-back frame around the report.
    hand_back = (
        "  <tools-used-before-summary>Bash</tools-used-before-summary>\n  \n[Subagent hand-back] "
        "… The report follows:\n  *(scripted model: offline demo)*\n  \n  Found the files.\n"
        "agentId: a1 (use SendMessage …)\n<usage>subagent_tokens: 1</usage>"
    )
    text, tools = demo_text(
        demo, tool_round("start a subagent", "Agent", [{"type": "text", "text": hand_back}])
    )
    assert not tools
    assert text == f"{BANNER}\n\nThe subagent is done. Its report:\n\n> Found the files."


def test_demo_tool_error_is_reported_not_retried(demo: ScriptedAPI) -> None:
    text, tools = demo_text(
        demo,
        tool_round("use python", DEFAULT_PYTHON_TOOL, "No such tool available", is_error=True),
    )
    assert not tools and "error" in text and "No such tool available" in text


# ------------------------------------------------------------------------------------ __main__


@pytest.mark.slow  # starts python -m byre_jupyter.scripted
def test_module_entry_point_prints_url_and_serves() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "byre_jupyter.scripted", "--port", "0", "--script", "demo"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        port = int(url.rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", MSG_PATH, body=json.dumps(body("hello")))
        resp = conn.getresponse()
        assert resp.status == 200
        text = "".join(deltas(parse_data(resp), "text_delta"))
        assert text.startswith(BANNER)
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


def test_malformed_non_stream_is_invalid_json(api: ScriptedAPI) -> None:
    api.default = Malformed()
    resp = post(api, body("hi", stream=False))
    assert resp.status == 200
    assert resp.getheader("content-type") == "application/json"
    with pytest.raises(ValueError):
        json.loads(resp.read())


def test_cut_non_stream_sends_half_a_body(api: ScriptedAPI) -> None:
    api.default = Cut(Reply(Text("some text")), after_deltas=1)
    resp = post(api, body("hi", stream=False))
    assert resp.status == 200
    with pytest.raises(http.client.IncompleteRead):
        resp.read()
