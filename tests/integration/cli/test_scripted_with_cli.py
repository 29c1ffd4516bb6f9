"""The real ``claude`` CLI against the scripted fake Messages API, over raw stream-json.

No byre transport here on purpose: these tests pin down that the fake server speaks the
Messages API well enough for the pinned CLI (2.1.328), using only ``subprocess`` and the argv
and environment byre launches it with (docs/protocol.md, section 1; minus ``--mcp-config``: no
MCP host).
"""

from __future__ import annotations

import json
import os
import platform
import queue
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from byre_jupyter.scripted import (
    Cut,
    Error,
    Reply,
    ScriptedAPI,
    ScriptedRequest,
    Text,
    Thinking,
    ToolUse,
)

REPO = Path(__file__).resolve().parents[3]
_ARCH = "arm64" if platform.machine() in ("aarch64", "arm64") else "x64"
CLI_PATH = Path(
    os.environ.get("BYRE_CLAUDE_PATH")
    or REPO / f".byre/cli/node_modules/@anthropic-ai/claude-code-linux-{_ARCH}/claude"
)

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(
        not (CLI_PATH.is_file() and os.access(CLI_PATH, os.X_OK)),
        reason=f"claude CLI not found at {CLI_PATH} (run scripts/install-cli.sh or set "
        "BYRE_CLAUDE_PATH)",
    ),
]

LINE_TIMEOUT = 60.0  # per awaited line; generous for a loaded 2-core box


class CLI:
    """One ``claude`` process speaking stream-json, with a line reader that can time out."""

    def __init__(
        self, api: ScriptedAPI, root: Path, extra_env: dict[str, str] | None = None
    ) -> None:
        for sub in ("home", "tmp", "work"):
            (root / sub).mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root / "home"),
            "TMPDIR": str(root / "tmp"),
            "LANG": "C.UTF-8",
            "SHELL": "/bin/bash",
            "USER": os.environ.get("USER", "root"),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "IS_SANDBOX": "1",  # bypassPermissions is refused for root without it
            **(extra_env or {}),
        }
        argv = [
            str(CLI_PATH),
            "--output-format", "stream-json",
            "--input-format", "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--permission-mode", "bypassPermissions",
            "--allow-dangerously-skip-permissions",
            "--settings", '{"attribution":{"commit":"","pr":""}}',
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=root / "work",
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # the protocol says non-JSON stdout lines are ignored
            if isinstance(obj, dict):
                self.lines.put(obj)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def initialize(self) -> None:
        self.send(
            {
                "type": "control_request",
                "request_id": "r1",
                "request": {"subtype": "initialize", "hooks": None},
            }
        )

    def prompt(self, text: str) -> None:
        self.send(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": "",
            }
        )

    def control(self, request_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """Send a control request and return its control_response ``response``."""
        self.send({"type": "control_request", "request_id": request_id, "request": request})
        reply = self.read_until(
            lambda m: (
                m.get("type") == "control_response"
                and m["response"].get("request_id") == request_id
            )
        )
        response: dict[str, Any] = reply["response"]
        return response

    def read_until(self, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Read lines (kept in ``seen``) until one matches; fail after LINE_TIMEOUT of silence."""
        while True:
            try:
                msg = self.lines.get(timeout=LINE_TIMEOUT)
            except queue.Empty:
                pytest.fail(f"no matching line within {LINE_TIMEOUT} s; stderr: {self.stderr!r}")
            if msg is None:
                pytest.fail(f"CLI exited ({self.proc.poll()}); stderr: {''.join(self.stderr)}")
            self.seen.append(msg)
            if pred(msg):
                return msg
            if msg.get("type") == "result":
                pytest.fail(f"the turn ended before the awaited line: {msg!r}")

    def result(self) -> dict[str, Any]:
        return self.read_until(lambda m: m.get("type") == "result")

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=20)
            except (subprocess.TimeoutExpired, BrokenPipeError):
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture(autouse=True)
def unscripted_fails(api: ScriptedAPI) -> None:
    """Anything a test did not script is a failure the CLI reports at once (no retries)."""
    api.default = Error(400, "scripted test: unexpected request")


@pytest.fixture
def cli(api: ScriptedAPI, tmp_path: Path) -> Iterator[CLI]:
    proc = CLI(api, tmp_path)
    proc.initialize()
    yield proc
    proc.close()


def stream_events(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["event"] for m in seen if m.get("type") == "stream_event"]


def text_deltas(seen: list[dict[str, Any]]) -> str:
    return "".join(
        e["delta"]["text"]
        for e in stream_events(seen)
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    )


def messages_api(api: ScriptedAPI) -> list[ScriptedRequest]:
    return [r for r in api.requests if r.path == "/v1/messages"]


# ------------------------------------------------------------------------------------ tests


def test_text_deltas_concatenate_to_the_result(api: ScriptedAPI, cli: CLI) -> None:
    reply_text = "Hello there! This is a *streamed* scripted reply, in 5-char chunks."
    api.on("GREETING_TOKEN", Reply(Text(reply_text, chunk=5)))
    cli.prompt("say hi GREETING_TOKEN")
    result = cli.result()
    assert result["is_error"] is False, result
    assert result["result"] == reply_text
    assert text_deltas(cli.seen) == reply_text
    n_deltas = sum(e["type"] == "content_block_delta" for e in stream_events(cli.seen))
    assert n_deltas == -(-len(reply_text) // 5)
    (req,) = messages_api(api)
    assert req.stream and req.headers["x-api-key"] == "test"
    # The CLI appends a role:"system" env block after the prompt; the rule still matched.
    assert req.messages[-1]["role"] == "system"
    assert req.last_user_text == "say hi GREETING_TOKEN"
    start = stream_events(cli.seen)[0]
    assert start["type"] == "message_start"
    assert start["message"]["id"] == "msg_scripted_1"


def test_thinking_block_and_signature_are_accepted(api: ScriptedAPI, cli: CLI) -> None:
    api.on("THINK_TOKEN", Reply(Thinking("pondering deeply", chunk=4), Text("Thought done.")))
    cli.prompt("THINK_TOKEN")
    result = cli.result()
    assert result["is_error"] is False and result["result"] == "Thought done."
    thinking = [
        block
        for m in cli.seen
        if m.get("type") == "assistant"
        for block in m["message"]["content"]
        if block["type"] == "thinking"
    ]
    assert [b["thinking"] for b in thinking] == ["pondering deeply"]
    assert thinking[0]["signature"]


def test_bash_tool_round_trip(api: ScriptedAPI, cli: CLI) -> None:
    api.on(
        "BASH_TOKEN",
        Reply(
            Text("Running it."),
            ToolUse("Bash", {"command": "echo scripted-$((6*7))", "description": "Echo"}),
        ),
    )
    # Newer rule, checked first: once the tool result is back, answer with text (no loop).
    api.on(
        lambda r: any(t["tool_name"] == "Bash" for t in r.last_tool_results),
        Reply(Text("Bash finished.")),
    )
    cli.prompt("please BASH_TOKEN")
    result = cli.result()
    assert result["is_error"] is False, result
    assert result["result"] == "Bash finished."
    assert result["num_turns"] == 2

    tool_uses = [
        b
        for m in cli.seen
        if m.get("type") == "assistant"
        for b in m["message"]["content"]
        if b["type"] == "tool_use"
    ]
    assert tool_uses == [
        {
            "type": "tool_use",
            "id": "toolu_scripted_1",
            "name": "Bash",
            "input": {"command": "echo scripted-$((6*7))", "description": "Echo"},
        }
    ]
    first, second = messages_api(api)
    assert first.last_tool_results == []
    # "scripted-42" proves the shell really ran the command (it is not in the command text).
    assert second.last_tool_results == [
        {
            "tool_use_id": "toolu_scripted_1",
            "tool_name": "Bash",
            "is_error": False,
            "text": "scripted-42",
            "has_image": False,
        }
    ]


def test_server_error_ends_the_turn_without_retries(api: ScriptedAPI, cli: CLI) -> None:
    api.default = Error(500, "Internal server error")
    cli.prompt("anything")
    result = cli.result()  # no retries: the default schedule takes ~3 minutes (checked below)
    assert result["is_error"] is True
    assert result["api_error_status"] == 500
    assert result["terminal_reason"] == "api_error"
    assert "500" in result["result"]
    assert len(messages_api(api)) == 1
    assert not [m for m in cli.seen if m.get("subtype") == "api_retry"]


def test_non_stream_probe_after_set_model(api: ScriptedAPI, cli: CLI) -> None:
    api.on(lambda r: not r.stream, Reply(Text("probe answer")))
    api.on("MODEL_TOKEN", Reply(Text("from the made-up model")))
    response = cli.control("m1", {"subtype": "set_model", "model": "claude-made-up-model-9"})
    assert response["subtype"] == "success", response
    cli.prompt("MODEL_TOKEN")
    result = cli.result()
    assert result["is_error"] is False, result
    assert result["result"] == "from the made-up model"
    probes = [r for r in messages_api(api) if not r.stream]
    assert probes, "expected the CLI's non-streaming probe for an unknown model"
    assert probes[0].body["max_tokens"] == 1
    assert {r.model for r in messages_api(api)} == {"claude-made-up-model-9"}


def test_count_tokens_answers_get_context_usage(api: ScriptedAPI, cli: CLI) -> None:
    api.on("CTX_TOKEN", Reply(Text("ok")))
    cli.prompt("CTX_TOKEN")
    assert cli.result()["is_error"] is False
    response = cli.control("c1", {"subtype": "get_context_usage"})
    assert response["subtype"] == "success", response
    assert response["response"]["totalTokens"] > 0
    assert any(r.path == "/v1/messages/count_tokens" for r in api.requests)


def test_interrupt_mid_stream_drops_the_connection(api: ScriptedAPI, cli: CLI) -> None:
    api.on("LONG_TOKEN", Reply(Text("word " * 400, chunk=5, delay=0.05)))
    cli.prompt("LONG_TOKEN")
    cli.read_until(
        lambda m: (
            m.get("type") == "stream_event"
            and m["event"].get("delta", {}).get("type") == "text_delta"
        )
    )
    cli.send({"type": "control_request", "request_id": "i1", "request": {"subtype": "interrupt"}})
    result = cli.result()
    assert result["subtype"] == "error_during_execution"
    assert result["terminal_reason"] == "aborted_streaming"
    (req,) = messages_api(api)
    assert api.wait_for_disconnect(req.index, timeout=10) == req.index


def test_cut_stream_then_the_cli_falls_back_to_a_non_stream_request(
    api: ScriptedAPI, cli: CLI
) -> None:
    # CLI 2.1.328 retries a broken stream once as a non-streaming request, even with
    # CLAUDE_CODE_MAX_RETRIES=0; the sequence rule answers that retry. The cut is held until the
    # CLI has forwarded the 3 deltas: when deltas and close arrive together it forwards none.
    streamed = "abcdefghij" * 5
    api.on("CUT_TOKEN", [Cut(Reply(Text(streamed, chunk=5)), after_deltas=3, hold=True), "ok"])
    cli.prompt("CUT_TOKEN")
    for _ in range(3):
        cli.read_until(
            lambda m: (
                m.get("type") == "stream_event"
                and m["event"].get("delta", {}).get("type") == "text_delta"
            )
        )
    api.release()
    result = cli.result()
    assert result["is_error"] is False, result
    assert result["result"] == "ok"
    first, second = messages_api(api)
    assert first.stream is True and second.stream is False
    # The partial stream reached the host, then the CLI closed it itself (no message_delta);
    # the fallback's message has another id and arrives as a plain assistant line.
    assert text_deltas(cli.seen) == streamed[:15]
    events = stream_events(cli.seen)
    assert [e["type"] for e in events[-2:]] == ["content_block_stop", "message_stop"]
    assert "message_delta" not in [e["type"] for e in events]
    assistants = [m["message"] for m in cli.seen if m.get("type") == "assistant"]
    assert [(a["id"], a["content"]) for a in assistants] == [
        ("msg_scripted_2", [{"type": "text", "text": "ok"}])
    ]
