"""The reply DSL and rule set of the scripted fake Messages API.

A *script* decides what the fake model answers to each ``POST /v1/messages`` request. It is a
list of rules, checked newest first, plus a default. A rule pairs a matcher (a keyword looked up
case-insensitively in the text of the last ``role == "user"`` message, or a predicate on the
parsed :class:`ScriptedRequest`) with a responder (an action, a callable building one from the
request, or a sequence of those consumed in order whose last item repeats).

Actions describe one HTTP answer:

* :class:`Reply` -- one API message made of :class:`Text`, :class:`Thinking` and
  :class:`ToolUse` blocks, streamed as SSE (or returned as JSON for non-streaming requests).
* :class:`Error` -- an HTTP error carrying the Anthropic error JSON body.
* :class:`Hang` -- accept the request and send nothing until released or disconnected.
* :class:`Slow` -- wait before sending the headers of another action.
* :class:`Cut` -- stream some deltas of a reply, then drop the connection mid-message.
* :class:`Malformed` -- a 200 SSE response whose lines are garbage.

This module holds no I/O; :mod:`byre_jupyter.scripted.server` does the HTTP side.

Why match on the last *user*-role message: the real CLI inserts ``role: "system"`` messages
(environment block, model-change notices) into ``messages``, so ``messages[-1]`` is often not
what the user typed (measured with CLI 2.1.328).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypedDict

__all__ = [
    "Action",
    "Block",
    "Cut",
    "Error",
    "Hang",
    "Malformed",
    "Matcher",
    "Reply",
    "Responder",
    "Rule",
    "Script",
    "ScriptedRequest",
    "Slow",
    "Text",
    "Thinking",
    "ToolResultInfo",
    "ToolUse",
    "error_type_for_status",
]


# --------------------------------------------------------------------------------------------
# Content blocks


@dataclass(frozen=True)
class Text:
    """A text block streamed as ``text_delta``s of ``chunk`` characters, ``delay`` s apart."""

    text: str
    chunk: int = 8
    delay: float = 0.0

    def __post_init__(self) -> None:
        if self.chunk < 1:
            raise ValueError("chunk must be >= 1")


@dataclass(frozen=True)
class Thinking:
    """A thinking block: ``thinking_delta``s, then one ``signature_delta``."""

    thinking: str
    chunk: int = 8
    delay: float = 0.0
    signature: str = "c2NyaXB0ZWQtc2lnbmF0dXJl"  # any non-empty string will do

    def __post_init__(self) -> None:
        if self.chunk < 1:
            raise ValueError("chunk must be >= 1")
        if not self.signature:
            raise ValueError("signature must be non-empty")


@dataclass(frozen=True)
class ToolUse:
    """A tool_use block; its input is streamed as ``pieces`` ``input_json_delta``s.

    ``id`` defaults to ``toolu_scripted_N``, assigned fresh each time the block is served.
    """

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    pieces: int = 3

    def __post_init__(self) -> None:
        if self.pieces < 1:
            raise ValueError("pieces must be >= 1")


Block: TypeAlias = Text | Thinking | ToolUse


# --------------------------------------------------------------------------------------------
# Actions


class Reply:
    """One API message made of content blocks.

    ``stop_reason`` defaults to ``"tool_use"`` when a :class:`ToolUse` block is present, else
    ``"end_turn"``. ``delay_first`` waits after ``message_start`` before the first block (a
    time-to-first-token). ``usage`` overrides keys of the reported usage (``input_tokens``,
    ``output_tokens``, ...). A plain string is shorthand for a :class:`Text` block.
    """

    __slots__ = ("blocks", "delay_first", "stop_reason", "usage")

    def __init__(
        self,
        *blocks: Block | str,
        stop_reason: str | None = None,
        delay_first: float = 0.0,
        usage: Mapping[str, int] | None = None,
    ) -> None:
        self.blocks: tuple[Block, ...] = tuple(Text(b) if isinstance(b, str) else b for b in blocks)
        for b in self.blocks:
            if not isinstance(b, (Text, Thinking, ToolUse)):
                raise TypeError(f"not a content block: {b!r}")
        self.stop_reason = stop_reason
        self.delay_first = delay_first
        self.usage: dict[str, int] = dict(usage or {})

    @property
    def effective_stop_reason(self) -> str:
        """The ``stop_reason`` sent in ``message_delta``."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"

    @property
    def text(self) -> str:
        """The concatenated text of the :class:`Text` blocks."""
        return "".join(b.text for b in self.blocks if isinstance(b, Text))

    def __repr__(self) -> str:
        return f"Reply({', '.join(map(repr, self.blocks))}, stop_reason={self.stop_reason!r})"


_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_type_for_status(status: int) -> str:
    """The Anthropic ``error.type`` for an HTTP status (``api_error`` when unknown)."""
    return _ERROR_TYPES.get(status, "api_error")


@dataclass(frozen=True)
class Error:
    """An HTTP error with body ``{"type":"error","error":{"type":..., "message":...}}``.

    ``retry_after`` (seconds) becomes a ``retry-after`` header; the CLI treats it as a floor on
    its back-off (measured with CLI 2.1.328).
    """

    status: int
    message: str = "scripted error"
    retry_after: float | None = None
    error_type: str | None = None

    @property
    def type(self) -> str:
        """The ``error.type`` of the body."""
        return self.error_type or error_type_for_status(self.status)

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return {"type": "error", "error": {"type": self.type, "message": self.message}}


@dataclass(frozen=True)
class Hang:
    """Accept the request and send nothing (not even headers).

    The handler waits until :meth:`ScriptedAPI.release` is called, the client disconnects or
    the server stops. After a release it serves ``then`` if given, else closes the connection.
    """

    then: Action | None = None


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` before sending the headers of ``reply``."""

    seconds: float
    reply: Action


@dataclass(frozen=True)
class Cut:
    """Stream ``reply`` for ``after_deltas`` content_block_delta events, then drop the connection.

    The close is abrupt: the chunked body is never terminated and no ``message_stop`` is sent.
    With ``hold=True`` the handler waits for :meth:`ScriptedAPI.release` before it cuts, so a
    test can first watch the deltas arrive at the client. A non-streaming request gets half
    of the JSON body, then the close.

    CLI 2.1.328 answers a broken stream with one *non-streaming* retry of the same request,
    even with ``CLAUDE_CODE_MAX_RETRIES=0``; script that second request too (a sequence rule).
    """

    reply: Reply
    after_deltas: int = 1
    hold: bool = False  # wait for ScriptedAPI.release() before cutting (deterministic tests)


@dataclass(frozen=True)
class Malformed:
    """A 200 ``text/event-stream`` response whose lines are not valid SSE/JSON.

    A non-streaming request gets the same lines as an ``application/json`` body instead.
    """

    lines: tuple[str, ...] = (
        "event: message_start",
        "data: {this is not json",
        "garbage line without a field",
        "data: ]]]",
    )


Action: TypeAlias = Reply | Error | Hang | Slow | Cut | Malformed


# --------------------------------------------------------------------------------------------
# Requests


class ToolResultInfo(TypedDict):
    """One ``tool_result`` block of the last user-role message."""

    tool_use_id: str
    tool_name: str | None  # looked up from the assistant tool_use with that id
    is_error: bool
    text: str
    has_image: bool


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message ``content`` as a list of blocks (a plain string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _tool_result_text(content: Any) -> tuple[str, bool]:
    texts: list[str] = []
    has_image = False
    for b in _blocks(content):
        if b.get("type") == "text":
            texts.append(str(b.get("text", "")))
        elif b.get("type") == "image":
            has_image = True
    return "\n".join(texts), has_image


#: A plan file as the CLI's plan-mode reminder names it.
_PLAN_FILE = re.compile(r"(/[^\s\"\\]*/plans/[\w.-]+\.md)")


def _message_text(message: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for b in _blocks(message.get("content")):
        if b.get("type") == "text":
            parts.append(str(b.get("text", "")))
        elif b.get("type") == "tool_result":
            parts.append(_tool_result_text(b.get("content"))[0])
    return "\n".join(parts)


@dataclass(frozen=True)
class ScriptedRequest:
    """One recorded HTTP request, with the Messages API fields pre-parsed.

    ``path`` is the path without its query string (the CLI sends ``?beta=true``); ``headers``
    has lower-case keys; ``body`` is the parsed JSON body (``{}`` when absent or invalid).
    """

    index: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str | None:
        m = self.body.get("model")
        return m if isinstance(m, str) else None

    @property
    def stream(self) -> bool:
        """True when the body asks for SSE (``stream: true``)."""
        return self.body.get("stream") is True

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages")
        return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []

    @property
    def user_messages(self) -> list[dict[str, Any]]:
        """The ``role == "user"`` messages, in order (``role: "system"`` ones are skipped)."""
        return [m for m in self.messages if m.get("role") == "user"]

    @property
    def assistant_text(self) -> str:
        """The text blocks of the ``role == "assistant"`` messages (the answers so far, as the
        CLI sends them back in the history), one per line."""
        texts = (_message_text(m) for m in self.messages if m.get("role") == "assistant")
        return "\n".join(t for t in texts if t)

    @property
    def last_user_message(self) -> dict[str, Any] | None:
        users = self.user_messages
        return users[-1] if users else None

    @property
    def last_user_text(self) -> str:
        """Text of the last user-role message: its text blocks and its tool_results' text."""
        m = self.last_user_message
        return _message_text(m) if m is not None else ""

    @property
    def is_compaction(self) -> bool:
        """The CLI asks for a summary of the conversation (``/compact``, or an automatic
        compaction when the window is nearly full): CLI 2.1.328 opens the prompt with this
        line. A rule on it answers with a summary of the test's size (``usage``)."""
        return self.last_user_text.startswith("CRITICAL: Respond with TEXT ONLY.")

    @property
    def first_user_text(self) -> str:
        """Text of the first user-role message (a subagent's prompt lands here)."""
        users = self.user_messages
        return _message_text(users[0]) if users else ""

    @property
    def last_tool_results(self) -> list[ToolResultInfo]:
        """The tool_result blocks of the last user-role message (empty if it has none)."""
        m = self.last_user_message
        if m is None:
            return []
        names = self.tool_use_names()
        out: list[ToolResultInfo] = []
        for b in _blocks(m.get("content")):
            if b.get("type") != "tool_result":
                continue
            text, has_image = _tool_result_text(b.get("content"))
            tid = str(b.get("tool_use_id", ""))
            out.append(
                ToolResultInfo(
                    tool_use_id=tid,
                    tool_name=names.get(tid),
                    is_error=bool(b.get("is_error", False)),
                    text=text,
                    has_image=has_image,
                )
            )
        return out

    def tool_use_names(self) -> dict[str, str]:
        """``{tool_use_id: tool name}`` for every tool_use block in assistant messages."""
        names: dict[str, str] = {}
        for m in self.messages:
            if m.get("role") != "assistant":
                continue
            for b in _blocks(m.get("content")):
                if b.get("type") == "tool_use":
                    names[str(b.get("id", ""))] = str(b.get("name", ""))
        return names

    @property
    def plan_file(self) -> str | None:
        """The plan file the CLI's plan-mode reminder names ("create your plan at
        /…/.claude/plans/plan-….md"), for a script that plans as Claude does: Write it, then
        call ExitPlanMode (with ``{}`` the CLI hands the host no plan)."""
        # The reminder is not always a user message's text block: read the messages whole.
        found = _PLAN_FILE.findall(json.dumps(self.messages, ensure_ascii=False))
        return found[-1] if found else None

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered in the request's ``tools``."""
        tools = self.body.get("tools")
        if not isinstance(tools, list):
            return []
        return [str(t.get("name")) for t in tools if isinstance(t, dict) and "name" in t]

    def __repr__(self) -> str:
        text = self.last_user_text
        short = text if len(text) <= 60 else text[:57] + "..."
        return (
            f"ScriptedRequest(#{self.index} {self.method} {self.path} model={self.model!r} "
            f"stream={self.stream} last_user_text={short!r})"
        )


def rough_token_count(body: Mapping[str, Any]) -> int:
    """A crude token estimate (4 characters per token) for usage and count_tokens."""
    return max(1, len(json.dumps(body, ensure_ascii=False)) // 4)


# --------------------------------------------------------------------------------------------
# Rules

Matcher: TypeAlias = str | Callable[[ScriptedRequest], bool]
Responder: TypeAlias = Action | str | Callable[[ScriptedRequest], "Action | str"]


def _resolve(responder: Responder, req: ScriptedRequest) -> Action:
    item = responder
    if callable(item) and not isinstance(item, (Reply, Error, Hang, Slow, Cut, Malformed)):
        item = item(req)
    if isinstance(item, str):
        return Reply(Text(item))
    if not isinstance(item, (Reply, Error, Hang, Slow, Cut, Malformed)):
        raise TypeError(f"responder produced {item!r}, not an action")
    return item


class Rule:
    """A matcher and its responders. ``times`` limits how often it fires (None: unlimited).

    With several responders they are used in order and the last one repeats.
    """

    def __init__(
        self, match: Matcher, responders: Sequence[Responder], times: int | None = None
    ) -> None:
        if not responders:
            raise ValueError("a rule needs at least one responder")
        if times is not None and times < 1:
            raise ValueError("times must be >= 1")
        self.match = match
        self.responders = list(responders)
        self.times = times
        self.hits = 0

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.hits >= self.times

    def matches(self, req: ScriptedRequest) -> bool:
        if self.exhausted:
            return False
        if isinstance(self.match, str):
            return self.match.lower() in req.last_user_text.lower()
        return bool(self.match(req))

    def take(self) -> Responder:
        """The responder for this hit; counts the hit."""
        r = self.responders[min(self.hits, len(self.responders) - 1)]
        self.hits += 1
        return r

    def __repr__(self) -> str:
        m = self.match if isinstance(self.match, str) else getattr(self.match, "__name__", "fn")
        return f"Rule({m!r}, hits={self.hits}, times={self.times})"


class Script:
    """An ordered rule set plus a default; thread-safe.

    Rules are checked newest first; the first that matches answers. Without a match the
    ``default`` responder answers.
    """

    def __init__(self, default: Responder | None = None) -> None:
        self._lock = threading.Lock()
        self._rules: list[Rule] = []
        self.default: Responder = default if default is not None else Reply(Text("OK."))

    def on(
        self,
        match: Matcher,
        reply: Responder | Sequence[Responder],
        *,
        times: int | None = None,
    ) -> Rule:
        """Add a rule; a list/tuple ``reply`` is a sequence (consumed in order, last repeats)."""
        responders: list[Responder] = (
            list(reply) if isinstance(reply, (list, tuple)) else [reply]  # type: ignore[list-item]
        )
        rule = Rule(match, responders, times)
        with self._lock:
            self._rules.append(rule)
        return rule

    def remove(self, rule: Rule) -> None:
        with self._lock:
            self._rules.remove(rule)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    @property
    def rules(self) -> list[Rule]:
        with self._lock:
            return list(self._rules)

    def choose(self, req: ScriptedRequest) -> Action:
        """The action answering ``req`` (rules newest first, then the default)."""
        with self._lock:
            responder: Responder = self.default
            for rule in reversed(self._rules):
                if rule.matches(req):
                    responder = rule.take()
                    break
        # Callables run outside the lock so they may inspect or even modify the script.
        return _resolve(responder, req)
