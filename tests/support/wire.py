"""Message sequences in the real CLI 2.1.328 shapes (docs/protocol.md).

Each scenario returns the wire dicts of one turn, in the order the CLI sends them; tests parse
them with ``parse_message`` so the UI sees exactly what the session layer would hand it.
Everything is deterministic (fixed ids, uuids and timings) so golden files are stable.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
from collections.abc import Callable, Iterable
from typing import Any

from byre_jupyter.protocol import Image
from byre_jupyter.protocol.messages import Message, ResultMessage, parse_message
from byre_jupyter.session import Turn, TurnResult
from byre_jupyter.session.accounting import CostMeter
from byre_jupyter.ui.blocks import BlockView
from byre_jupyter.ui.viewmodel import TurnView

from .rig import tiny_png

Wire = dict[str, Any]
SID = "5e551011-0000-4000-8000-000000000001"
MODEL = "claude-opus-5-5"


PNG = tiny_png(2, 2)
PNG_B64 = base64.b64encode(PNG).decode("ascii")
PNG2 = tiny_png(3, 1, (10, 120, 240))
PNG2_B64 = base64.b64encode(PNG2).decode("ascii")


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Builder:
    """Builds wire dicts with deterministic uuids."""

    def __init__(self, prefix: str = "u") -> None:
        self._ids = itertools.count(1)
        self._prefix = prefix

    def uuid(self) -> str:
        return f"{self._prefix}-{next(self._ids):04d}"

    # -- system ---------------------------------------------------------------------------

    def init(self, model: str = MODEL) -> Wire:
        return {
            "type": "system",
            "subtype": "init",
            "session_id": SID,
            "model": model,
            "tools": ["Bash", "Read", "Edit", "Task", "mcp__byre__python_exec"],
            "mcp_servers": [{"name": "byre", "status": "connected", "source": "sdk"}],
            "permissionMode": "bypassPermissions",
            "cwd": "/work/nb",
            "capabilities": ["interrupt_receipt_v1"],
            "uuid": self.uuid(),
        }

    def status(self, status: str = "requesting") -> Wire:
        return {
            "type": "system",
            "subtype": "status",
            "status": status,
            "session_id": SID,
            "uuid": self.uuid(),
        }

    def system(self, subtype: str, **fields: Any) -> Wire:
        return {
            "type": "system",
            "subtype": subtype,
            "session_id": SID,
            "uuid": self.uuid(),
            **fields,
        }

    # -- stream events ----------------------------------------------------------------------

    def event(self, event: Wire, msg_id: str, parent: str | None = None) -> Wire:
        return {
            "type": "stream_event",
            "event": event,
            "session_id": SID,
            "parent_tool_use_id": parent,
            "uuid": self.uuid(),
            "api_message_id": msg_id,
        }

    def message_start(self, msg_id: str, model: str = MODEL, input_tokens: int = 1200) -> Wire:
        message: Wire = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
                "output_tokens": 1,
            },
        }
        wire = self.event({"type": "message_start", "message": message}, msg_id)
        wire["ttft_ms"] = 13
        return wire

    def block_start(self, msg_id: str, index: int, block: Wire) -> Wire:
        return self.event(
            {"type": "content_block_start", "index": index, "content_block": block}, msg_id
        )

    def text_delta(self, msg_id: str, index: int, text: str) -> Wire:
        return self.event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": text},
            },
            msg_id,
        )

    def thinking_delta(self, msg_id: str, index: int, text: str) -> Wire:
        return self.event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "thinking_delta", "thinking": text},
            },
            msg_id,
        )

    def json_delta(self, msg_id: str, index: int, partial: str) -> Wire:
        return self.event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": partial},
            },
            msg_id,
        )

    def block_stop(self, msg_id: str, index: int) -> Wire:
        return self.event({"type": "content_block_stop", "index": index}, msg_id)

    def message_delta(self, msg_id: str, stop_reason: str, output_tokens: int) -> Wire:
        return self.event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
            msg_id,
        )

    def message_stop(self, msg_id: str) -> Wire:
        return self.event({"type": "message_stop"}, msg_id)

    # -- assistant / user -------------------------------------------------------------------

    def assistant(
        self,
        msg_id: str,
        block: Wire,
        *,
        parent: str | None = None,
        model: str = MODEL,
        aborted: bool = False,
        **extra: Any,
    ) -> Wire:
        wire: Wire = {
            "type": "assistant",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [block],
                "stop_reason": None,
                "usage": {"input_tokens": 1200, "output_tokens": 1},
                "context_management": None,
            },
            "parent_tool_use_id": parent,
            "session_id": SID,
            "uuid": self.uuid(),
            "timestamp": "2026-05-09T10:00:00.000Z",
            "request_id": "req_fake_1",
        }
        if aborted:
            wire["aborted"] = True
        wire.update(extra)
        return wire

    def user(self, content: list[Wire] | str, *, parent: str | None = None, **extra: Any) -> Wire:
        return {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": parent,
            "session_id": SID,
            "uuid": self.uuid(),
            "timestamp": "2026-05-09T10:00:01.000Z",
            **extra,
        }

    def tool_result(
        self,
        tool_use_id: str,
        content: str | list[Wire],
        *,
        is_error: bool | None = None,
        parent: str | None = None,
        tool_use_result: Any = None,
    ) -> Wire:
        block: Wire = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        return self.user(
            [block],
            parent=parent,
            tool_use_result=tool_use_result,
            tool_result_meta=[{"id": tool_use_id, "permission_decision": {"decision": "accept"}}],
        )

    def result(self, text: str | None = "", **overrides: Any) -> Wire:
        wire: Wire = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": text,
            "stop_reason": "end_turn",
            "terminal_reason": "completed",
            "session_id": SID,
            "num_turns": 1,
            "duration_ms": 1585,
            "duration_api_ms": 1473,
            "ttft_ms": 574,
            "total_cost_usd": 0.01234,
            "usage": {
                "input_tokens": 1200,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 300,
                "output_tokens": 42,
            },
            "modelUsage": {MODEL: {"inputTokens": 1200, "outputTokens": 42}},
            "permission_denials": [],
            "api_error_status": None,
            "queued_turn_count": 0,
            "result_index": 0,
            "uuid": self.uuid(),
        }
        wire.update(overrides)
        return wire

    # -- composites -------------------------------------------------------------------------

    def streamed_text(
        self, msg_id: str, index: int, pieces: list[str], **assistant: Any
    ) -> list[Wire]:
        """content_block_start → deltas → assistant (authoritative) → content_block_stop (§2)."""
        return [
            self.block_start(msg_id, index, {"type": "text", "text": ""}),
            *(self.text_delta(msg_id, index, p) for p in pieces),
            self.assistant(msg_id, {"type": "text", "text": "".join(pieces)}, **assistant),
            self.block_stop(msg_id, index),
        ]

    def streamed_tool(
        self, msg_id: str, index: int, tool_id: str, name: str, inp: Wire
    ) -> list[Wire]:
        return [
            self.block_start(
                msg_id, index, {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
            ),
            self.json_delta(msg_id, index, "{"),
            self.assistant(msg_id, {"type": "tool_use", "id": tool_id, "name": name, "input": inp}),
            self.block_stop(msg_id, index),
        ]

    def final_answer(self, msg_id: str, text: str) -> list[Wire]:
        return [
            self.status(),
            self.message_start(msg_id),
            *self.streamed_text(msg_id, 0, _split(text)),
            self.message_delta(msg_id, "end_turn", 12),
            self.message_stop(msg_id),
        ]


def _split(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


# --- scenarios ------------------------------------------------------------------------------

PLAIN_TEXT = "Hello there! This is a **streamed** fake reply.\n\n- one\n- two\n"


def plain_text() -> list[Wire]:
    b = Builder("plain")
    return [
        b.init(),
        b.status(),
        b.message_start("msg_plain"),
        *b.streamed_text("msg_plain", 0, _split(PLAIN_TEXT)),
        b.message_delta("msg_plain", "end_turn", 20),
        b.message_stop("msg_plain"),
        b.result(PLAIN_TEXT),
    ]


THINKING = "The user greets me. I should greet back."
THOUGHT_ANSWER = "Hi! I thought about it first."


def thinking_then_text() -> list[Wire]:
    b = Builder("think")
    m = "msg_think"
    return [
        b.init(),
        b.status(),
        b.message_start(m),
        b.block_start(m, 0, {"type": "thinking", "thinking": "", "signature": ""}),
        *(b.thinking_delta(m, 0, p) for p in _split(THINKING)),
        b.system("thinking_tokens", estimated_tokens=12, estimated_tokens_delta=3),
        b.event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": ""},
            },
            m,
        ),
        b.assistant(m, {"type": "thinking", "thinking": THINKING, "signature": "sig-real"}),
        b.block_stop(m, 0),
        *b.streamed_text(m, 1, _split(THOUGHT_ANSWER)),
        b.message_delta(m, "end_turn", 30),
        b.message_stop(m),
        b.result(THOUGHT_ANSWER),
    ]


BASH_TOOL = "toolu_bash_01"
BASH_COMMAND = "for i in 1 2 3 4 5; do echo line$i; sleep 1; done"
BASH_OUTPUT = "line1\nline2\nline3\nline4\nline5"


def bash_roundtrip() -> list[Wire]:
    b = Builder("bash")
    m1, m2 = "msg_bash_1", "msg_bash_2"
    return [
        b.init(),
        b.status(),
        b.message_start(m1),
        *b.streamed_text(m1, 0, ["I'll run ", "it."]),
        *b.streamed_tool(
            m1,
            1,
            BASH_TOOL,
            "Bash",
            {"command": BASH_COMMAND, "description": "Print five lines slowly"},
        ),
        b.message_delta(m1, "tool_use", 40),
        b.message_stop(m1),
        b.system(
            "task_started",
            task_id="b7o93xwce",
            run_id="r1",
            tool_use_id=BASH_TOOL,
            description="Print five lines slowly",
            is_backgrounded=False,
            task_type="local_bash",
        ),
        b.system(
            "task_notification",
            task_id="b7o93xwce",
            tool_use_id=BASH_TOOL,
            status="completed",
            output_file="",
            summary="Print five lines slowly",
        ),
        b.tool_result(
            BASH_TOOL,
            BASH_OUTPUT,
            is_error=False,
            tool_use_result={
                "stdout": BASH_OUTPUT,
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            },
        ),
        *b.final_answer(m2, "Bash finished."),
        b.result("Bash finished.", num_turns=2),
    ]


READ_TOOL = "toolu_read_01"


def read_png() -> list[Wire]:
    b = Builder("read")
    m1, m2 = "msg_read_1", "msg_read_2"
    return [
        b.init(),
        b.status(),
        b.message_start(m1),
        *b.streamed_tool(m1, 0, READ_TOOL, "Read", {"file_path": "/work/nb/red.png"}),
        b.message_delta(m1, "tool_use", 20),
        b.message_stop(m1),
        b.tool_result(
            READ_TOOL,
            [
                {
                    "type": "image",
                    "source": {"type": "base64", "data": PNG_B64, "media_type": "image/png"},
                }
            ],
            tool_use_result={"type": "image", "file": {"base64": PNG_B64, "type": "image/png"}},
        ),
        *b.final_answer(m2, "It is a small red square."),
        b.result("It is a small red square.", num_turns=2),
    ]


MCP_TOOL = "toolu_mcp_01"
MCP_CODE = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nprint(6 * 7)"


IMAGE_NOTE = (
    "[Image: source: /root/.claude/projects/-work-nb/s/tool-results/mcp-byre-blob-1795-s746x1.png]"
)


def mcp_image(text: str = "executed 10 chars; out: 42", note_inline: bool = False) -> list[Wire]:
    """A kernel tool's text and image; the CLI's note of where it saved the image comes as its
    own text block or (as 2.1.328 writes it for our tools) at the end of the text."""
    b = Builder("mcp")
    m1, m2 = "msg_mcp_1", "msg_mcp_2"
    image: Wire = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG2_B64},
    }
    content: list[Wire] = (
        [{"type": "text", "text": f"{text}\n{IMAGE_NOTE}\n"}, image]
        if note_inline
        else [{"type": "text", "text": text}, image, {"type": "text", "text": IMAGE_NOTE}]
    )
    return [
        b.init(),
        b.status(),
        b.message_start(m1),
        *b.streamed_tool(m1, 0, MCP_TOOL, "mcp__byre__python_exec", {"code": MCP_CODE}),
        b.message_delta(m1, "tool_use", 25),
        b.message_stop(m1),
        b.tool_result(MCP_TOOL, content, tool_use_result=content),
        *b.final_answer(m2, "The plot is above; the answer is 42."),
        b.result("The plot is above; the answer is 42.", num_turns=2),
    ]


AGENT_TOOL = "toolu_agent_01"
SUB_BASH = "toolu_sub_bash_01"
SUB_TEXT = "Found 3 files: a.py, b.py, c.py."


def subagent() -> list[Wire]:
    b = Builder("agent")
    m1, m2 = "msg_agent_1", "msg_agent_2"
    sub: dict[str, Any] = {
        "agent_id": "a610",
        "subagent_type": "general-purpose",
        "task_description": "List files",
    }
    sub_ls = b.assistant(
        "msg_sub_1",
        {
            "type": "tool_use",
            "id": SUB_BASH,
            "name": "Bash",
            "input": {"command": "ls", "description": "List"},
        },
        parent=AGENT_TOOL,
        **sub,
    )
    return [
        b.init(),
        b.status(),
        b.message_start(m1),
        *b.streamed_tool(
            m1,
            0,
            AGENT_TOOL,
            "Agent",
            {
                "description": "List files",
                "prompt": "SUBAGENT_TASK: list the files",
                "subagent_type": "general-purpose",
                "run_in_background": False,
            },
        ),
        b.message_delta(m1, "tool_use", 50),
        b.message_stop(m1),
        b.system(
            "task_started",
            task_id="a610",
            tool_use_id=AGENT_TOOL,
            description="List files",
            subagent_type="general-purpose",
            is_backgrounded=False,
            spawn_depth=1,
            task_type="local_agent",
            prompt="SUBAGENT_TASK: list the files",
        ),
        b.user(
            [{"type": "text", "text": "SUBAGENT_TASK: list the files"}], parent=AGENT_TOOL, **sub
        ),
        sub_ls,
        b.tool_result(SUB_BASH, "a.py\nb.py\nc.py", is_error=False, parent=AGENT_TOOL),
        b.system(
            "task_progress",
            task_id="a610",
            tool_use_id=AGENT_TOOL,
            description="Running List files",
            usage={"total_tokens": 900, "tool_uses": 1, "duration_ms": 800},
            last_tool_name="Bash",
        ),
        b.assistant("msg_sub_2", {"type": "text", "text": SUB_TEXT}, parent=AGENT_TOOL, **sub),
        b.system("task_updated", task_id="a610", patch={"status": "completed"}),
        b.system(
            "task_notification",
            task_id="a610",
            tool_use_id=AGENT_TOOL,
            status="completed",
            summary=SUB_TEXT,
            usage={"total_tokens": 900, "tool_uses": 1, "duration_ms": 1200},
        ),
        b.tool_result(
            AGENT_TOOL,
            [
                {
                    "type": "text",
                    "text": "<tools-used-before-summary>Bash</tools-used-before-summary> "
                    "[Subagent hand-back] " + SUB_TEXT,
                }
            ],
        ),
        *b.final_answer(m2, "The subagent found three files."),
        b.result("The subagent found three files.", num_turns=2),
    ]


PARTIAL = "Counting: 1, 2, 3,"


def interrupt_mid_stream() -> list[Wire]:
    b = Builder("intr")
    m = "msg_intr"
    return [
        b.init(),
        b.status(),
        b.message_start(m),
        b.block_start(m, 0, {"type": "text", "text": ""}),
        *(b.text_delta(m, 0, p) for p in _split(PARTIAL, 5)),
        b.assistant(m, {"type": "text", "text": PARTIAL}, aborted=True),
        b.user([{"type": "text", "text": "[Request interrupted by user]"}]),
        b.result(
            None,
            subtype="error_during_execution",
            is_error=True,
            stop_reason=None,
            terminal_reason="aborted_streaming",
            duration_ms=812,
            total_cost_usd=0.002,
            errors=["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"],
        ),
    ]


API_ERROR_TEXT = (
    "API Error: 500 Internal server error. This is a server-side issue, usually temporary — "
    "try again in a moment."
)


def api_retries(count: int = 2) -> list[Wire]:
    b = Builder("retry")
    return [
        b.system(
            "api_retry",
            attempt=n,
            max_retries=2,
            retry_delay_ms=542 * n,
            error_status=500,
            error="server_error",
        )
        for n in range(1, count + 1)
    ]


def api_error() -> list[Wire]:
    b = Builder("apierr")
    return [
        b.init(),
        b.status(),
        *api_retries(2),
        b.assistant(
            "6a1f0000-0000-4000-8000-00000000dead",
            {"type": "text", "text": API_ERROR_TEXT},
            model="<synthetic>",
            error="server_error",
            is_api_error_message=True,
            api_error_status=500,
            api_error_type="api_error",
        ),
        b.result(
            API_ERROR_TEXT,
            is_error=True,
            terminal_reason="api_error",
            api_error_status=500,
            stop_reason="stop_sequence",
            total_cost_usd=0,
            usage={"input_tokens": 0, "output_tokens": 0},
            duration_ms=2500,
        ),
    ]


def retry_then_success() -> list[Wire]:
    b = Builder("retryok")
    return [
        b.init(),
        b.status(),
        *api_retries(2),
        *b.final_answer("msg_retryok", "Third time lucky."),
        b.result("Third time lucky."),
    ]


EDIT_TOOL = "toolu_edit_01"


def edit_file() -> list[Wire]:
    b = Builder("edit")
    m1, m2 = "msg_edit_1", "msg_edit_2"
    inp = {
        "file_path": "/work/nb/util.py",
        "old_string": "def f(x):\n    return x\n",
        "new_string": "def f(x):\n    return x * 2\n",
    }
    return [
        b.init(),
        b.status(),
        b.message_start(m1),
        *b.streamed_tool(m1, 0, EDIT_TOOL, "Edit", inp),
        b.message_stop(m1),
        b.tool_result(EDIT_TOOL, "The file /work/nb/util.py has been updated."),
        *b.final_answer(m2, "Doubled it."),
        b.result("Doubled it.", num_turns=2),
    ]


XSS = "<script>alert(1)</script>"
XSS_IMG = '"><img src=x onerror=alert(1)>'


def hostile() -> list[Wire]:
    """Script tags and handlers in model text, tool output, a file name and a media type."""
    b = Builder("xss")
    m1, m2 = "msg_xss_1", "msg_xss_2"
    answer = (
        f"Here you go {XSS} and {XSS_IMG}\n\n[click](javascript:alert(1)) "
        '<a href="javascript:alert(2)">x</a>\n\n```html\n' + XSS + "\n```\n"
    )
    bad_image = [{"type": "image", "data": PNG_B64, "mimeType": f"image/png{XSS}"}]
    return [
        b.init(),
        b.status(),
        b.message_start(m1),
        *b.streamed_tool(m1, 0, "toolu_xss_bash", "Bash", {"command": f"echo '{XSS}'"}),
        *b.streamed_tool(m1, 1, "toolu_xss_read", "Read", {"file_path": f"/tmp/{XSS_IMG}.png"}),
        *b.streamed_tool(m1, 2, "toolu_xss_mcp", "mcp__byre__python_exec", {"code": XSS}),
        b.message_stop(m1),
        b.tool_result("toolu_xss_bash", f"{XSS}\n{XSS_IMG}"),
        b.tool_result("toolu_xss_read", [{"type": "text", "text": XSS_IMG}], is_error=True),
        b.tool_result("toolu_xss_mcp", bad_image),
        b.system("permission_denied", tool_name=XSS, message=XSS_IMG),
        *b.final_answer(m2, answer),
        b.result(answer, num_turns=2),
    ]


SCENARIOS: dict[str, Callable[[], list[Wire]]] = {
    "plain_text": plain_text,
    "thinking_then_text": thinking_then_text,
    "bash_roundtrip": bash_roundtrip,
    "read_png": read_png,
    "mcp_image": mcp_image,
    "subagent": subagent,
    "interrupt_mid_stream": interrupt_mid_stream,
    "api_error": api_error,
    "retry_then_success": retry_then_success,
    "edit_file": edit_file,
    "hostile": hostile,
}


def parse_all(wires: Iterable[Wire]) -> list[Message]:
    return [parse_message(w) for w in wires]


def run_turn(
    wires: Iterable[Wire],
    *,
    prompt: str = "Say hello",
    attached: tuple[Image, ...] = (),
    step: float = 0.1,
) -> tuple[TurnView, list[list[BlockView]]]:
    """Feed a whole turn into a fresh TurnView (clock +``step`` per message).

    Returns the view and what each ``apply`` returned. Does not call ``finish`` beyond what the
    result message does.
    """
    clock = FakeClock()
    view = TurnView("analysis", prompt, attached, clock=clock)
    changes = []
    for msg in parse_all(wires):
        clock.advance(step)
        settle(view, msg)
        changes.append(view.apply(msg))
    return view, changes


def settle(view: TurnView, msg: Message) -> None:
    """Before a result line: what the session makes of it (the turn's own cost and tokens,
    ``session.accounting``), as the turn controller gives it to the view."""
    if isinstance(msg, ResultMessage):
        cost = CostMeter().cost(msg)  # a process's first turn: its whole running total
        view.settle(
            TurnResult(
                msg.result or "", msg.session_id, msg.is_error, cost_usd=cost, tokens=msg.tokens
            )
        )


class IdleHost:
    """The session behind a :class:`~byre_jupyter.session.Turn` fed by hand: nothing to
    interrupt or cancel."""

    session_id = "s"

    async def interrupt(self) -> list[str]:
        return []

    async def cancel(self, turn: Turn) -> None:
        pass


def summarise(wires: Iterable[Wire]) -> TurnResult:
    """What the session makes of a whole turn's lines (``TurnResult``, a cell's ``-o VAR``),
    for comparing with what :func:`run_turn`'s view makes of the same lines."""

    async def run() -> TurnResult:
        turn = Turn(IdleHost(), "p")
        *messages, last = parse_all(wires)
        for message in messages:
            turn.add(message)
        assert isinstance(last, ResultMessage)
        turn.finish(last)
        return await turn.result()

    return asyncio.run(run())


class ManualLoop:
    """A stand-in event loop stepped by hand: ``advance(dt)`` runs timers that became due.

    It implements exactly what :class:`byre_jupyter.ui.coalesce.LoopLike` asks for, so tests
    are deterministic and never sleep.
    """

    class Timer:
        def __init__(self, when: float, seq: int, fn: Callable[..., Any], args: tuple[Any, ...]):
            self.when, self.seq, self.fn, self.args = when, seq, fn, args
            self.cancelled = False

        def cancel(self) -> None:
            self.cancelled = True

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self._seq = itertools.count()
        self.timers: list[ManualLoop.Timer] = []
        self.soon: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> ManualLoop.Timer:
        timer = ManualLoop.Timer(self.now + max(0.0, delay), next(self._seq), fn, args)
        self.timers.append(timer)
        return timer

    def call_soon_threadsafe(self, fn: Callable[..., Any], *args: Any) -> None:
        self.soon.append((fn, args))

    def run_ready(self) -> None:
        """Run call_soon callbacks and timers due now (what one loop iteration would do)."""
        self.advance(0.0)

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while True:
            while self.soon:
                fn, args = self.soon.pop(0)
                fn(*args)
            due = [t for t in self.timers if not t.cancelled and t.when <= end]
            if not due:
                break
            timer = min(due, key=lambda t: (t.when, t.seq))
            self.timers.remove(timer)
            self.now = max(self.now, timer.when)
            timer.fn(*timer.args)
        self.now = end
        self.timers = [t for t in self.timers if not t.cancelled]
