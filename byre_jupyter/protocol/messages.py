"""Typed stream-json messages: the one place where wire dicts become Python objects.

:func:`parse_message` turns one decoded stdout line into a frozen dataclass that keeps the
original dict as ``raw``. Wire names in camelCase (``modelUsage``) become snake_case attributes
here and nowhere else. Types and subtypes the protocol docs list are *known*; anything else still
parses (into :class:`Message` / :class:`SystemMessage` with ``known=False``) so it can be logged
and passed on, never dropped and never fatal.

Reference: ``docs/protocol.md`` (the shapes the real CLI 2.1.328 sends). The known-type lists
below are the names in the 2.1.328 binary's message schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .image import Image

__all__ = [
    "KNOWN_SYSTEM_SUBTYPES",
    "KNOWN_TYPES",
    "SCRIPTED_MESSAGE_ID",
    "ApiRetryMessage",
    "ApiStreamEvent",
    "AssistantMessage",
    "Block",
    "CompactBoundary",
    "ContentBlockDelta",
    "ContentBlockStart",
    "ContentBlockStop",
    "ContextCategory",
    "ContextUsage",
    "ControlCancelRequest",
    "ControlRequest",
    "ControlResponse",
    "ImageBlock",
    "InitMessage",
    "Message",
    "MessageDelta",
    "MessageStart",
    "MessageStop",
    "ModelFallback",
    "PromptSuggestion",
    "RateLimitEvent",
    "ResultMessage",
    "SlashCommand",
    "StreamEvent",
    "SystemMessage",
    "TaskMessage",
    "TextBlock",
    "ThinkingBlock",
    "TokenUsage",
    "ToolResultBlock",
    "ToolUseBlock",
    "UnknownBlock",
    "UnknownStreamEvent",
    "UserMessage",
    "parse_block",
    "parse_blocks",
    "parse_commands",
    "parse_context_usage",
    "parse_message",
    "parse_stream_event",
    "without_image_notes",
]

#: Top-level ``type`` values of CLI 2.1.3xx stdout lines (the schema names found in the 2.1.328
#: binary).
KNOWN_TYPES: frozenset[str] = frozenset(
    {
        "user", "assistant", "result", "system", "stream_event", "prompt_suggestion",
        "rate_limit_event", "tool_progress", "tool_use_summary", "auth_status",
        "transcript_mirror", "control_request", "control_response", "control_cancel_request",
        "keep_alive", "update_environment_variables", "command_lifecycle",
    }
)  # fmt: skip

#: ``system`` subtypes named in the 2.1.328 binary's message schema.
KNOWN_SYSTEM_SUBTYPES: frozenset[str] = frozenset(
    {
        "init", "compact_boundary", "api_retry", "api_error", "hook_started", "hook_progress",
        "hook_response", "plugin_install", "permission_denied", "permission_retry", "status",
        "post_turn_summary", "task_started", "task_progress", "task_updated",
        "task_notification", "task_summary", "task_list_statuses", "session_state_changed",
        "session_metadata", "session_title_changed", "session_writes_lost", "informational",
        "stop_hook_summary", "memory_recall", "memory_saved", "agents_killed",
        "instruction_size_warning", "away_summary", "thinking", "thinking_tokens",
        "mirror_error", "control_request_progress", "model_fallback", "model_consent_fallback",
        "model_refusal_fallback", "model_refusal_no_fallback", "file_snapshot",
        "files_persisted", "file_attachments_missing", "scheduled_task_fire",
        "peer_message_hold", "turn_duration", "turn_handoff_available", "turn_preempted",
        "local_command_output", "background_tasks_changed", "feedback_draft_queued",
        "worker_shutting_down", "ui_focus", "ui_invalidate", "ui_log", "ui_notify",
        "ui_notify_cancel", "ui_panes", "ui_placed", "ui_scroll", "ui_status", "ui_toast",
        "commands_changed", "notification", "elicitation_complete", "permission_check_status",
        "code_change_published", "vcs_state_changed", "dev_intent", "per_turn_effort_changed",
        "inherited_asks_settled", "cloud_session_delta", "late_allow_not_run", "shell_cwd",
        "upgrade_relay_marker",
    }
)  # fmt: skip


# --- token counts ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts of an API message, a turn, or a model's running total in a process."""

    #: Input the API read afresh, without the cache (the wire's ``input_tokens``).
    uncached: int = 0
    cache_creation: int = 0
    cache_read: int = 0
    output: int = 0

    @property
    def input(self) -> int:
        """The input tokens, the one definition the footer, ``%claude usage``, ``%claude
        sessions`` and the session all show: fresh input + cache writes + cache reads (the
        prompt's whole size; the cache changes its price, not its length)."""
        return self.uncached + self.cache_creation + self.cache_read

    @property
    def total(self) -> int:
        return self.input + self.output

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.uncached + other.uncached,
            self.cache_creation + other.cache_creation,
            self.cache_read + other.cache_read,
            self.output + other.output,
        )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _tokens(usage: Any) -> TokenUsage:
    """A ``usage`` object (snake_case: the API's, and the result line's)."""
    u = _map(usage)
    return TokenUsage(
        _count(u.get("input_tokens")),
        _count(u.get("cache_creation_input_tokens")),
        _count(u.get("cache_read_input_tokens")),
        _count(u.get("output_tokens")),
    )


def _model_tokens(model_usage: Any) -> dict[str, TokenUsage]:
    """The result line's ``modelUsage`` (camelCase: the CLI's own per-model running totals)."""
    return {
        str(model): TokenUsage(
            _count(u.get("inputTokens")),
            _count(u.get("cacheCreationInputTokens")),
            _count(u.get("cacheReadInputTokens")),
            _count(u.get("outputTokens")),
        )
        for model, u in _map(model_usage).items()
        if isinstance(u, Mapping)
    }


# --- content blocks -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """A content block of a user or assistant message; ``raw`` is the wire dict."""

    raw: Mapping[str, Any] = field(repr=False)

    @property
    def type(self) -> str:
        return str(self.raw.get("type", ""))


@dataclass(frozen=True, slots=True, kw_only=True)
class TextBlock(Block):
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingBlock(Block):
    thinking: str
    signature: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUseBlock(Block):
    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageBlock(Block):
    """An image, base64 encoded (Anthropic ``source`` style or MCP ``data``/``mimeType`` style).

    ``media_type`` and ``data`` are what the line says; ``image`` is what the bytes are,
    decided once as the line is parsed (``protocol/image.py``): None when they are no PNG,
    JPEG, GIF or WebP, whatever the line declared. Everything past this layer reads ``image``.
    """

    media_type: str
    data: str = field(repr=False)
    image: Image | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultBlock(Block):
    tool_use_id: str
    content: tuple[Block, ...]
    is_error: bool = False

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def images(self) -> tuple[ImageBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ImageBlock))


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownBlock(Block):
    """A block type we do not model (server_tool_use, document, ...); kept, never dropped."""


def parse_block(raw: Any) -> Block:
    if isinstance(raw, str):
        return TextBlock(raw={"type": "text", "text": raw}, text=raw)
    if not isinstance(raw, Mapping):
        return UnknownBlock(raw={"type": "invalid", "value": raw})
    kind = raw.get("type")
    if kind == "text":
        return TextBlock(raw=raw, text=str(raw.get("text", "")))
    if kind in ("thinking", "redacted_thinking"):
        return ThinkingBlock(
            raw=raw, thinking=str(raw.get("thinking", "")), signature=str(raw.get("signature", ""))
        )
    if kind in ("tool_use", "server_tool_use"):
        return ToolUseBlock(
            raw=raw,
            id=str(raw.get("id", "")),
            name=str(raw.get("name", "")),
            input=raw.get("input") or {},
        )
    if kind == "tool_result":
        content = raw.get("content")
        blocks = parse_blocks(content) if content is not None else ()
        return ToolResultBlock(
            raw=raw,
            tool_use_id=str(raw.get("tool_use_id", "")),
            content=blocks,
            is_error=bool(raw.get("is_error", False)),
        )
    if kind == "image":
        source = raw.get("source")
        if isinstance(source, Mapping) and source.get("type") == "base64":
            return _image_block(raw, source.get("media_type", ""), source.get("data", ""))
        if "data" in raw:  # MCP style
            return _image_block(raw, raw.get("mimeType", ""), raw.get("data", ""))
    return UnknownBlock(raw=raw)


def _image_block(raw: Mapping[str, Any], media_type: Any, data: Any) -> ImageBlock:
    text = str(data)
    return ImageBlock(raw=raw, media_type=str(media_type), data=text, image=Image.from_base64(text))


def parse_blocks(content: Any) -> tuple[Block, ...]:
    """Parse a message ``content``: a string (one text block) or a list of blocks."""
    if isinstance(content, list):
        return tuple(parse_block(b) for b in content)
    if content is None:
        return ()
    return (parse_block(content),)


# --- messages -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One stdout line. Subclasses add typed fields; ``raw`` keeps everything."""

    raw: Mapping[str, Any] = field(repr=False)
    known: bool = True

    @property
    def type(self) -> str:
        return str(self.raw.get("type", ""))

    @property
    def session_id(self) -> str | None:
        value = self.raw.get("session_id")
        return value if isinstance(value, str) else None

    @property
    def uuid(self) -> str | None:
        value = self.raw.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def parent_tool_use_id(self) -> str | None:
        value = self.raw.get("parent_tool_use_id")
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage(Message):
    content: tuple[Block, ...]
    tool_use_result: Any = None
    is_synthetic: bool = False
    is_replay: bool = False

    @property
    def tool_results(self) -> tuple[ToolResultBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolResultBlock))


#: How byre's scripted Messages API (``byre_jupyter/scripted``) starts every message id; the
#: Anthropic API's ids start ``msg_`` and a base32 tail, never this.
SCRIPTED_MESSAGE_ID = "msg_scripted_"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage(Message):
    """One content block of an API message (the CLI sends one line per block; group by id)."""

    message_id: str
    model: str
    content: tuple[Block, ...]
    stop_reason: str | None = None
    aborted: bool = False
    is_api_error: bool = False
    error: str | None = None
    #: The API message's usage as this line carries it (output counts so far).
    tokens: TokenUsage = TokenUsage()

    @property
    def scripted(self) -> bool:
        """Answered by byre's scripted Messages API (the offline demo, the tests), not a
        model: the CLI prices its tokens all the same, a cost nobody paid."""
        return self.message_id.startswith(SCRIPTED_MESSAGE_ID)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemMessage(Message):
    subtype: str


@dataclass(frozen=True, slots=True, kw_only=True)
class InitMessage(SystemMessage):
    """``system/init``: sent at the start of every turn (not at launch)."""

    model: str
    tools: tuple[str, ...]
    mcp_servers: tuple[Mapping[str, Any], ...]
    permission_mode: str | None
    capabilities: frozenset[str]
    cwd: str | None
    claude_code_version: str | None
    #: What a prompt may start with (``/NAME``): built-in commands, the project's and user's
    #: ``.claude/commands``, and the skills again (the CLI lists each user-invocable skill).
    slash_commands: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiRetryMessage(SystemMessage):
    attempt: int
    max_retries: int
    retry_delay_ms: float
    error_status: int | None
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactBoundary(SystemMessage):
    """``system/compact_boundary``: the CLI summarised the conversation here, by ``/compact``
    (``trigger`` "manual") or because the context window was nearly full ("auto"). The token
    figures are the context's size before and after."""

    trigger: str
    pre_tokens: int | None
    post_tokens: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFallback(SystemMessage):
    """``system/model_fallback``: the request went to another model than the one asked for."""

    trigger: str
    original_model: str
    fallback_model: str
    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskMessage(SystemMessage):
    """``system/task_*``: a background or foreground task (Bash after ~3 s, subagents)."""

    task_id: str
    tool_use_id: str | None
    description: str
    status: str | None
    summary: str | None
    task_type: str | None


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One command a prompt may start with (``/name args``), as the ``initialize`` response
    lists it: built-in commands, skills, and the project's and user's ``.claude/commands``."""

    name: str
    description: str = ""
    argument_hint: str = ""
    builtin: bool = False


def parse_commands(response: Mapping[str, Any]) -> tuple[SlashCommand, ...]:
    """The ``commands`` of an ``initialize`` response (entries without a name are skipped)."""
    commands = response.get("commands")
    return tuple(
        SlashCommand(
            name=c["name"],
            description=_str(c.get("description")) or "",
            argument_hint=_str(c.get("argumentHint")) or "",
            builtin=c.get("builtin") is True,
        )
        for c in (commands if isinstance(commands, list) else ())
        if isinstance(c, Mapping) and isinstance(c.get("name"), str) and c["name"]
    )


@dataclass(frozen=True, slots=True)
class ContextCategory:
    """One row of the CLI's context breakdown: ``kind`` is used, deferred, buffer or free."""

    name: str
    tokens: int
    kind: str = ""


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """The ``get_context_usage`` answer: what fills the window (the CLI counts it through the
    API's count_tokens), ``total`` of ``window`` tokens."""

    total: int
    window: int | None
    categories: tuple[ContextCategory, ...] = ()


def parse_context_usage(response: Mapping[str, Any]) -> ContextUsage:
    rows = response.get("categories")
    return ContextUsage(
        total=_count(response.get("totalTokens")),
        window=_count(response.get("maxTokens")) or None,
        categories=tuple(
            ContextCategory(r["name"], _count(r.get("tokens")), _str(r.get("kind")) or "")
            for r in (rows if isinstance(rows, list) else ())
            if isinstance(r, Mapping) and isinstance(r.get("name"), str)
        ),
    )


# --- API stream events (inside stream_event lines) -----------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiStreamEvent:
    """One raw Messages API stream event, typed; ``raw`` is the ``event`` dict."""

    raw: Mapping[str, Any] = field(repr=False)

    @property
    def type(self) -> str:
        return str(self.raw.get("type", ""))


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageStart(ApiStreamEvent):
    """An API message begins: its id, model and input usage."""

    message_id: str
    model: str | None
    tokens: TokenUsage


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageDelta(ApiStreamEvent):
    """Near the end of an API message: the stop reason and the output usage so far."""

    stop_reason: str | None
    tokens: TokenUsage


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageStop(ApiStreamEvent):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentBlockStart(ApiStreamEvent):
    """Block ``index`` of the message begins; ``block`` as far as it is known (parsed)."""

    index: int
    block: Block


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentBlockDelta(ApiStreamEvent):
    """More of block ``index``. ``kind`` is the delta's type (``text_delta``,
    ``thinking_delta``, ``input_json_delta``, ``signature_delta``, ...); ``text`` its payload
    (the text, the thinking, the partial JSON or the signature), "" for other kinds."""

    index: int
    kind: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentBlockStop(ApiStreamEvent):
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownStreamEvent(ApiStreamEvent):
    """An event type we do not model (or one missing its index); kept, never dropped."""


_DELTA_PAYLOAD = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "input_json_delta": "partial_json",
    "signature_delta": "signature",
}


def parse_stream_event(raw: Mapping[str, Any]) -> ApiStreamEvent:
    """Type one API stream event (the ``event`` of a ``stream_event`` line)."""
    kind = raw.get("type")
    index = raw.get("index")
    if kind == "content_block_delta" and isinstance(index, int):
        delta = _map(raw.get("delta"))
        delta_kind = str(delta.get("type", ""))
        payload = delta.get(_DELTA_PAYLOAD.get(delta_kind, ""), "")
        return ContentBlockDelta(
            raw=raw, index=index, kind=delta_kind, text=payload if isinstance(payload, str) else ""
        )
    if kind == "content_block_start" and isinstance(index, int):
        return ContentBlockStart(
            raw=raw, index=index, block=parse_block(_map(raw.get("content_block")))
        )
    if kind == "content_block_stop" and isinstance(index, int):
        return ContentBlockStop(raw=raw, index=index)
    if kind == "message_start":
        message = _map(raw.get("message"))
        return MessageStart(
            raw=raw,
            message_id=str(message.get("id") or ""),
            model=_str(message.get("model")),
            tokens=_tokens(message.get("usage")),
        )
    if kind == "message_delta":
        return MessageDelta(
            raw=raw,
            stop_reason=_str(_map(raw.get("delta")).get("stop_reason")),
            tokens=_tokens(raw.get("usage")),
        )
    if kind == "message_stop":
        return MessageStop(raw=raw)
    return UnknownStreamEvent(raw=raw)


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEvent(Message):
    """A ``stream_event`` line (``--include-partial-messages``): one API stream event, typed
    here as :attr:`api_event`, so consumers dispatch on its class instead of re-reading dicts."""

    event: Mapping[str, Any]
    _api_event: ApiStreamEvent | None = field(default=None, repr=False, compare=False)

    @property
    def api_event(self) -> ApiStreamEvent:
        """The typed event, parsed on first use and kept: the session never reads it, so the
        hot path (tens of thousands of deltas a second) does not pay for it; each consumer that
        does reads the same object."""
        parsed = self._api_event
        if parsed is None:
            parsed = parse_stream_event(self.event)
            object.__setattr__(self, "_api_event", parsed)  # a cache, not a change of value
        return parsed

    @property
    def event_type(self) -> str:
        return str(self.event.get("type", ""))

    @property
    def api_message_id(self) -> str | None:
        """The CLI's own note of the API message id (also on lines after ``message_start``)."""
        value = self.raw.get("api_message_id")
        return value if isinstance(value, str) and value else None

    @property
    def index(self) -> int | None:
        value = self.event.get("index")
        return value if isinstance(value, int) else None

    @property
    def delta(self) -> Mapping[str, Any]:
        value = self.event.get("delta")
        return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultMessage(Message):
    """Ends a turn. Note: an API failure is ``subtype="success"`` with ``is_error=True``."""

    subtype: str
    is_error: bool
    result: str | None
    duration_ms: float | None
    duration_api_ms: float | None
    num_turns: int | None
    #: The CLI's running total for the conversation, not this turn's cost
    #: (``byre_jupyter.session.accounting`` derives that).
    total_cost_usd: float | None
    usage: Mapping[str, Any]
    #: This turn's tokens (``usage``).
    tokens: TokenUsage = TokenUsage()
    #: The CLI's running token totals per model in this process (``modelUsage``).
    model_usage: Mapping[str, TokenUsage] = field(default_factory=dict)
    stop_reason: str | None
    terminal_reason: str | None
    api_error_status: int | None
    errors: tuple[str, ...]
    permission_denials: tuple[Any, ...]
    origin_kind: str | None
    #: The slash command that made this result without the model's turn loop (``compact``,
    #: ``context``); None for a prompt.
    local_command: str | None = None
    #: Each model's context window in tokens (``modelUsage[...].contextWindow``).
    context_windows: Mapping[str, int] = field(default_factory=dict)

    @property
    def interrupted(self) -> bool:
        return self.subtype == "error_during_execution" or (self.terminal_reason or "").startswith(
            "aborted"
        )

    @property
    def budget_exhausted(self) -> bool:
        """The CLI's spending cap (``--max-budget-usd``) ended the turn: 2.1.328 sends subtype
        ``error_max_budget_usd``, ``terminal_reason`` ``budget_exhausted``, ``is_error`` and
        ``errors: ["Reached maximum budget ($0.01)"]``; the result text is the answer so far
        (the turn that crossed the cap) or empty (every later one, sent no request)."""
        return self.subtype == "error_max_budget_usd" or self.terminal_reason == "budget_exhausted"

    @property
    def failure_text(self) -> str:
        """What went wrong, in the CLI's words, for a result with ``is_error``: the errors of a
        budget stop (its result text is an answer, not an error), else the result text, the
        errors, or the reason."""
        errors = "; ".join(self.errors)
        if self.budget_exhausted:
            return errors or "Reached maximum budget"
        return self.result or errors or f"The turn failed ({self.terminal_reason or self.subtype})."


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitEvent(Message):
    """``rate_limit_event``: the account's rate-limit state changed. ``status`` is
    ``allowed``, ``allowed_warning`` or ``rejected``; ``resets_at`` Unix seconds (None if not
    given); ``limit_type`` e.g. ``five_hour``."""

    status: str
    resets_at: float | None
    limit_type: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSuggestion(Message):
    """``prompt_suggestion``: the CLI's guess at the user's next prompt, after a turn."""

    suggestion: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlRequest(Message):
    request_id: str
    subtype: str
    request: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlResponse(Message):
    request_id: str
    subtype: str  # "success" | "error"
    response: Mapping[str, Any]
    error: str | None
    error_code: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlCancelRequest(Message):
    request_id: str


# --- parsing --------------------------------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _map(value: Any) -> Mapping[str, Any]:
    # ``type() is dict`` first: json.loads makes dicts, and the ABC check costs more than the
    # rest of a stream event's parse.
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def _user(raw: Mapping[str, Any]) -> Message:
    return UserMessage(
        raw=raw,
        content=parse_blocks(_map(raw.get("message")).get("content")),
        tool_use_result=raw.get("tool_use_result"),
        is_synthetic=bool(raw.get("isSynthetic", False)),
        is_replay=bool(raw.get("isReplay", False)),
    )


def _assistant(raw: Mapping[str, Any]) -> Message:
    msg = _map(raw.get("message"))
    return AssistantMessage(
        raw=raw,
        message_id=str(msg.get("id", "")),
        model=str(msg.get("model", "")),
        content=parse_blocks(msg.get("content")),
        stop_reason=_str(msg.get("stop_reason")),
        aborted=bool(raw.get("aborted", False)),
        is_api_error=bool(raw.get("is_api_error_message", False)),
        error=_str(raw.get("error")),
        tokens=_tokens(msg.get("usage")),
    )


def _system(raw: Mapping[str, Any]) -> Message:
    subtype = str(raw.get("subtype", ""))
    known = subtype in KNOWN_SYSTEM_SUBTYPES
    if subtype == "init":
        caps = raw.get("capabilities")
        servers = raw.get("mcp_servers")
        tools = raw.get("tools")
        return InitMessage(
            raw=raw,
            subtype=subtype,
            model=str(raw.get("model", "")),
            tools=tuple(str(t) for t in tools) if isinstance(tools, list) else (),
            mcp_servers=tuple(s for s in servers if isinstance(s, Mapping))
            if isinstance(servers, list)
            else (),
            permission_mode=_str(raw.get("permissionMode")),
            capabilities=frozenset(str(c) for c in caps) if isinstance(caps, list) else frozenset(),
            cwd=_str(raw.get("cwd")),
            claude_code_version=_str(raw.get("claude_code_version")),
            slash_commands=_strs(raw.get("slash_commands")),
            skills=_strs(raw.get("skills")),
            agents=_strs(raw.get("agents")),
        )
    if subtype == "compact_boundary":
        meta = _map(raw.get("compact_metadata"))
        return CompactBoundary(
            raw=raw,
            subtype=subtype,
            trigger=_str(meta.get("trigger")) or "",
            pre_tokens=_int(meta.get("pre_tokens")),
            post_tokens=_int(meta.get("post_tokens")),
        )
    if subtype == "model_fallback":
        return ModelFallback(
            raw=raw,
            subtype=subtype,
            trigger=_str(raw.get("trigger")) or "",
            original_model=_str(raw.get("original_model")) or "",
            fallback_model=_str(raw.get("fallback_model")) or "",
            content=_str(raw.get("content")) or "",
        )
    if subtype == "api_retry":
        return ApiRetryMessage(
            raw=raw,
            subtype=subtype,
            attempt=_int(raw.get("attempt")) or 0,
            max_retries=_int(raw.get("max_retries")) or 0,
            retry_delay_ms=_num(raw.get("retry_delay_ms")) or 0.0,
            error_status=_int(raw.get("error_status")),
            error=str(raw.get("error", "")),
        )
    if subtype.startswith("task_") and subtype != "task_list_statuses":
        patch = _map(raw.get("patch"))
        return TaskMessage(
            raw=raw,
            subtype=subtype,
            known=known,
            task_id=str(raw.get("task_id", "")),
            tool_use_id=_str(raw.get("tool_use_id")),
            description=str(raw.get("description", "")),
            status=_str(raw.get("status")) or _str(patch.get("status")),
            summary=_str(raw.get("summary")),
            task_type=_str(raw.get("task_type")),
        )
    return SystemMessage(raw=raw, subtype=subtype, known=known)


def _stream_event(raw: Mapping[str, Any]) -> Message:
    return StreamEvent(raw=raw, event=_map(raw.get("event")))


def _result(raw: Mapping[str, Any]) -> Message:
    errors = raw.get("errors")
    denials = raw.get("permission_denials")
    return ResultMessage(
        raw=raw,
        subtype=str(raw.get("subtype", "")),
        is_error=bool(raw.get("is_error", False)),
        result=_str(raw.get("result")),
        duration_ms=_num(raw.get("duration_ms")),
        duration_api_ms=_num(raw.get("duration_api_ms")),
        num_turns=_int(raw.get("num_turns")),
        total_cost_usd=_num(raw.get("total_cost_usd")),
        usage=_map(raw.get("usage")),
        tokens=_tokens(raw.get("usage")),
        model_usage=_model_tokens(raw.get("modelUsage")),
        stop_reason=_str(raw.get("stop_reason")),
        terminal_reason=_str(raw.get("terminal_reason")),
        api_error_status=_int(raw.get("api_error_status")),
        errors=tuple(str(e) for e in errors) if isinstance(errors, list) else (),
        permission_denials=tuple(denials) if isinstance(denials, list) else (),
        origin_kind=_str(_map(raw.get("origin")).get("kind")),
        local_command=_str(raw.get("local_command")),
        context_windows={
            str(model): window
            for model, u in _map(raw.get("modelUsage")).items()
            if (window := _count(_map(u).get("contextWindow")))
        },
    )


def _rate_limit(raw: Mapping[str, Any]) -> Message:
    info = _map(raw.get("rate_limit_info"))
    resets = _num(info.get("resetsAt"))
    if resets is not None and resets > 1e11:  # milliseconds (seconds stay below until 5138)
        resets /= 1000.0
    return RateLimitEvent(
        raw=raw,
        status=_str(info.get("status")) or "",
        resets_at=resets,
        limit_type=_str(info.get("rateLimitType")),
    )


def _suggestion(raw: Mapping[str, Any]) -> Message:
    return PromptSuggestion(raw=raw, suggestion=_str(raw.get("suggestion")) or "")


def _control_request(raw: Mapping[str, Any]) -> Message:
    request = _map(raw.get("request"))
    return ControlRequest(
        raw=raw,
        request_id=str(raw.get("request_id", "")),
        subtype=str(request.get("subtype", "")),
        request=request,
    )


def _control_response(raw: Mapping[str, Any]) -> Message:
    body = _map(raw.get("response"))
    return ControlResponse(
        raw=raw,
        request_id=str(body.get("request_id", "")),
        subtype=str(body.get("subtype", "")),
        response=_map(body.get("response")),
        error=_str(body.get("error")),
        error_code=_str(body.get("error_code")),
    )


def _control_cancel(raw: Mapping[str, Any]) -> Message:
    return ControlCancelRequest(raw=raw, request_id=str(raw.get("request_id", "")))


_PARSERS: dict[str, Callable[[Mapping[str, Any]], Message]] = {
    "stream_event": _stream_event,
    "assistant": _assistant,
    "user": _user,
    "system": _system,
    "result": _result,
    "control_request": _control_request,
    "control_response": _control_response,
    "control_cancel_request": _control_cancel,
    "rate_limit_event": _rate_limit,
    "prompt_suggestion": _suggestion,
}


def parse_message(raw: Mapping[str, Any]) -> Message:
    """Turn one decoded JSON object from the CLI into a typed message.

    Never raises for a dict: malformed fields degrade to defaults and the full dict stays in
    ``raw``. Types outside :data:`KNOWN_TYPES` come back as :class:`Message` with
    ``known=False``.
    """
    kind = raw.get("type")
    if kind == "stream_event":  # most lines of a turn
        return _stream_event(raw)
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is not None:
        return parser(raw)
    return Message(raw=raw, known=isinstance(kind, str) and kind in KNOWN_TYPES)


#: The line the CLI adds to a tool result for every image it saved:
#: ``[Image: source: ~/.claude/projects/<cwd>/<session>/tool-results/....png]`` (docs/protocol.md),
#: on its own or at the end of the result's text.
_IMAGE_NOTE = re.compile(r"^[ \t]*\[Image: source: [^\n]*\][ \t]*(?:\n|$)", re.M)


def without_image_notes(text: str) -> str:
    """A tool result's text without the CLI's image-source notes (they name a local path
    under the author's home; the image itself travels as its own block)."""
    return _IMAGE_NOTE.sub("", text)
