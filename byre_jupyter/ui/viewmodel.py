"""The event → view mapping for one ``%%claude`` turn: a pure, kernel-free view model.

:class:`TurnView` consumes the typed messages of :mod:`byre_jupyter.protocol.messages` one at a
time and keeps a tree of mutable block views (text, thinking, tool cards, images, notices) plus
header state (model, status, tokens, cost). :meth:`TurnView.apply` returns only the blocks whose
content changed, so the live widget can push just those (docs/kernel.md, section 5).

The rules follow the real CLI 2.1.328 (``docs/protocol.md``):

* text/thinking grow from ``stream_event`` deltas keyed by (API message id, block index) (§2);
* the CLI sends **one** ``assistant`` line per content block, before that block's
  ``content_block_stop``; the k-th line of a message id is block index k and is authoritative (§2);
* tool cards start at ``content_block_start`` of a ``tool_use``, get their full input from the
  ``assistant`` line and their result from a later ``user`` ``tool_result`` (§3, §4, §8);
* subagent lines carry ``parent_tool_use_id`` and come without stream events (§10);
* ``aborted`` assistants and ``error_during_execution`` results mean "interrupted" (§6);
* an API failure is ``subtype="success"`` with ``is_error`` and
  ``terminal_reason="api_error"`` (§11).

Tool data is redacted where it enters (docs/security.md): every tool's input and result (the
CLI's own Bash, Read, WebFetch, subagents..., and Claude's tools in the kernel), task notes and
notices pass through :mod:`byre_jupyter.redact` with the known secret values (``secrets``)
before a block holds them, so the live view, the Markdown draft, the saved record and
``%claude transcript`` only ever see the redacted text. What is sent to the CLI is not touched.

Unknown message types are ignored here (the session layer logs them). No IPython imports.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from byre_jupyter.protocol.cli_errors import CliErrorKind, classify
from byre_jupyter.protocol.image import Image, decode_base64
from byre_jupyter.protocol.messages import (
    ApiRetryMessage,
    AssistantMessage,
    Block,
    CompactBoundary,
    ContentBlockDelta,
    ImageBlock,
    InitMessage,
    Message,
    MessageDelta,
    MessageStart,
    ModelFallback,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskMessage,
    TextBlock,
    ThinkingBlock,
    TokenUsage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    without_image_notes,
)
from byre_jupyter.redact import Secrets, redact_json, redact_text, redactions
from byre_jupyter.session.accounting import ContextFill, short_tokens
from byre_jupyter.session.turn import TurnResult
from byre_jupyter.ui.blocks import (
    BlockView,
    ImageView,
    NoticeView,
    RetryInfo,
    Status,
    TextView,
    ThinkingView,
    ToolCardView,
)
from byre_jupyter.ui.toolinfo import summarize_tool_input, tool_diff, tool_label

__all__ = [
    "DEFAULT_IMAGE_BUDGET",
    "BlockView",
    "ImageView",
    "NoticeView",
    "RetryInfo",
    "StaleMark",
    "Status",
    "TextView",
    "ThinkingView",
    "ToolCardView",
    "TurnView",
    "UndoMark",
    "summarize_tool_input",
    "tool_diff",
    "tool_label",
]


@dataclass(frozen=True)
class UndoMark:
    """A turn that changed notebook cells (tools/edit_log.py): its record says how to take the
    edits back (``%claude undo #TURN -s SESSION``), and the frontend bridge adds an *Undo this
    turn's edits* button that runs that line in a cell below (docs/bridge.md, "Undo")."""

    session: str
    turn: int


@dataclass(frozen=True)
class StaleMark:
    """An answer left on an older branch of its conversation (``app/conversation.py``): its
    record shows this mark at the top and the answer dimmed below it. ``since`` is the In [n]
    of the cell whose newer run left it behind (None: not known, e.g. ``%claude checkout``);
    ``cell`` is the id of the cell showing the answer, validated by the caller, which the
    frontend bridge's "Run again" button runs (docs/bridge.md); None: no button."""

    since: int | None = None
    cell: str | None = None


#: User-text lines the CLI sends on interrupt (§6); they mark the turn, they are not content.
_INTERRUPT_MARKERS = ("[Request interrupted by user",)
# The streamed text of each kind of delta (text, thinking, a tool's input JSON).
# Deltas whose payload counts toward the live output-token estimate (not signatures).
_COUNTED_DELTAS = frozenset({"text_delta", "thinking_delta", "input_json_delta"})
# Roughly how many characters one output token is, for a live estimate while streaming.
_CHARS_PER_TOKEN = 4
#: Image bytes a turn may save into the notebook by default (static outputs; Claude's trait
#: ``max_saved_images_mb`` sets it per turn). Two turns once made a 107 MB notebook.
DEFAULT_IMAGE_BUDGET = 5 * 1024 * 1024


def _without_home(text: str, home: str = os.path.expanduser("~")) -> str:
    """Tool output with the author's home directory written ``~``: saved and shared notebooks
    should not carry it. Only whole paths that start there (``/root/x``, not
    ``/rootfs`` or ``/opt/root/x``)."""
    if len(home) <= 1 or home not in text:
        return text
    return re.sub(r"(?<![\w./~-])" + re.escape(home) + r"(?![\w.-])", "~", text)


# --- the turn -------------------------------------------------------------------------------


#: No credentials, in notebook terms: the CLI's own words ("Not logged in · Please run /login")
#: send the user to its REPL, which a notebook does not have. Plain words, no Markdown marks:
#: the text is shown escaped in HTML and as plain text alike.
LOGIN_HELP = (
    "Claude Code is not logged in. Set ANTHROPIC_API_KEY (with %config Claude.env, or in the "
    "environment Jupyter starts from), or run claude once in a terminal and log in there. "
    "%claude doctor checks the setup."
)

#: A turn the CLI's spending cap stopped (its words: "Reached maximum budget ($0.01)"). The
#: cap is a launch flag and counts what one CLI process spent: a resumed conversation's new CLI
#: starts from zero (tests/integration/cli/test_launch_settings_cli.py).
BUDGET_HELP = (
    "Stopped: the spending cap{cap} was reached, Claude.max_budget_usd (the CLI's "
    "--max-budget-usd, counted over what this session's CLI process spent), so later turns "
    "stop at once too. To go on, continue the conversation with %claude resume (a new CLI, "
    "counting from zero; raise the cap first with %config Claude.max_budget_usd = ... if you "
    "like), or start a new one with --new."
)


def notebook_error_text(text: str) -> str:
    """The CLI's error text in notebook terms, when we know better words for it (its words
    are for its own REPL)."""
    kind = classify(text)
    if kind is CliErrorKind.NOT_LOGGED_IN:
        return LOGIN_HELP
    if kind is CliErrorKind.BUDGET:
        cap = re.search(r"\(\$[0-9.]+\)", text)
        return BUDGET_HELP.format(cap=f" {cap.group(0)}" if cap else "")
    return text


_M = TypeVar("_M", bound=Message)
_Handler = Callable[["TurnView", Any], None]
#: Message type -> TurnView's handler of it (``@_handles``): one entry per type, as ui/live.py
#: and ui/record.py dispatch on block types, instead of an ``isinstance`` ladder.
_HANDLERS: dict[type[Message], _Handler] = {}
#: The handler each concrete type resolved to (its own, else its nearest base's, else None).
_RESOLVED: dict[type[Message], _Handler | None] = {}


def _handles(
    kind: type[_M],
) -> Callable[[Callable[[TurnView, _M], None]], Callable[[TurnView, _M], None]]:
    def register(fn: Callable[[TurnView, _M], None]) -> Callable[[TurnView, _M], None]:
        _HANDLERS[kind] = fn
        return fn

    return register


def _handler_for(kind: type[Message]) -> _Handler | None:
    try:
        return _RESOLVED[kind]
    except KeyError:
        pass
    found = next((_HANDLERS[base] for base in kind.__mro__ if base in _HANDLERS), None)
    _RESOLVED[kind] = found
    return found


class TurnView:
    """View model of one turn: the block tree plus header state.

    Feed every message of the turn to :meth:`apply`, then call :meth:`finish`. Both return
    the blocks that changed (new blocks included), in the order they changed.
    ``image_budget`` is how many bytes of images the turn's static outputs may hold.
    ``secrets`` gives the exact values to redact from tool data (asked each time a tool's input
    or result arrives, so a secret the user defines mid-turn counts); by default the values of
    this process's secret-named environment variables.
    """

    def __init__(
        self,
        session_name: str,
        prompt: str,
        attached_images: Sequence[Image] = (),
        clock: Callable[[], float] = time.monotonic,
        image_budget: int = DEFAULT_IMAGE_BUDGET,
        secrets: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        self.session_name = session_name
        #: Set while this answer is stale: its record shows the mark (``ui/record.py``).
        self.stale: StaleMark | None = None
        #: Set when the turn changed cells: its record offers to take them back.
        self.undo: UndoMark | None = None
        self._secrets = secrets or Secrets.of_process
        self.image_budget = image_budget
        self.prompt = prompt
        self.clock = clock
        self.started_at = clock()
        self.blocks: list[BlockView] = []
        self.model: str | None = None
        self.status: Status = "starting"
        self.retry: RetryInfo | None = None
        self.tokens_in = 0
        self.tokens_out = 0
        # Characters streamed per message: its output tokens arrive only when it ends.
        self._msg_chars: dict[str, int] = {}
        #: The turn's own cost, from its TurnResult (:meth:`settle`): the CLI's result line
        #: carries the running total of its conversation, which the view never shows.
        self.cost_usd: float | None = None
        #: The turn was answered by byre's scripted API: its cost is shown as such.
        self.scripted = False
        self.duration_s: float | None = None
        self.session_id: str | None = None
        self.message_uuids: list[str] = []
        self.result_uuid: str | None = None
        self.usage: dict[str, Any] = {}
        self.interrupted = False
        self.is_error = False
        self.finished = False
        #: The conversation's context window, as full as the session's gauge read it last
        #: (the header's meter; :meth:`set_context`).
        self.context = ContextFill()
        #: The slash command the CLI ran itself for this turn (``compact``, ``context``).
        self.local_command: str | None = None
        #: The tasks running now (a Bash call after ~3 s, a subagent): id -> what it does.
        #: A new dict on each change (the header compares values).
        self.tasks: dict[str, str] = {}
        #: Bumped whenever header state changes (status, tokens, model, retry...).
        self.header_version = 0
        self._next_id = 0
        self._parents: dict[str, str | None] = {}
        self._stream: dict[tuple[str, int], BlockView] = {}
        self._assistant_lines: dict[str, int] = {}
        self._message_id: str | None = None
        self._msg_tokens: dict[str, tuple[int, int]] = {}
        self._cards: dict[str, ToolCardView] = {}
        self._tasks: dict[str, ToolCardView] = {}
        self._retry_notice: NoticeView | None = None
        self._changed: list[BlockView] = []
        self.attached_images: list[ImageView] = []
        for attached in attached_images:
            image = ImageView(
                id=self._new_id(), image=attached, size=attached.size, origin="attached"
            )
            self._parents[image.id] = None
            self.attached_images.append(image)

    # -- queries ----------------------------------------------------------------------------

    @property
    def elapsed_s(self) -> float:
        """Seconds since the turn started (the CLI's ``duration_ms`` once finished)."""
        if self.duration_s is not None:
            return self.duration_s
        return max(0.0, self.clock() - self.started_at)

    def walk(self) -> Iterator[BlockView]:
        """Every block depth-first in arrival order (card images and children after the card)."""

        def visit(blocks: Sequence[BlockView]) -> Iterator[BlockView]:
            for block in blocks:
                yield block
                if isinstance(block, ToolCardView):
                    yield from block.images
                    yield from visit(block.children)

        yield from visit(self.blocks)

    def images(self) -> list[ImageView]:
        """All images in display order: attached ones first, then in tree order."""
        return [*self.attached_images, *(b for b in self.walk() if isinstance(b, ImageView))]

    def parent_id(self, block_id: str) -> str | None:
        """Id of the tool card holding ``block_id`` (None at top level)."""
        return self._parents.get(block_id)

    def card(self, tool_use_id: str) -> ToolCardView | None:
        return self._cards.get(tool_use_id)

    @property
    def tokens_out_estimate(self) -> int:
        """Output tokens so far, the message still streaming estimated from its characters
        (its own count arrives only with its last event): what the live header shows."""
        total = 0
        for mid in set(self._msg_tokens) | set(self._msg_chars):
            reported = self._msg_tokens.get(mid, (0, 0))[1]
            total += max(reported, self._msg_chars.get(mid, 0) // _CHARS_PER_TOKEN)
        return max(total, self.tokens_out)

    def pending_cards(self) -> list[ToolCardView]:
        return [c for c in self._cards.values() if not c.has_result and not c.frozen]

    # -- updates ----------------------------------------------------------------------------

    def apply(self, msg: Message) -> list[BlockView]:
        """Fold one message into the view; return the blocks whose content changed. One
        handler per message type (``@_handles``), the most specific one for a subclass;
        a type with none changes nothing."""
        handler = _handler_for(type(msg))
        if handler is not None:
            handler(self, msg)
        return self._take_changed()

    def settle(self, result: TurnResult) -> None:
        """The turn's own cost and tokens, as the session accounted them (``TurnResult``)."""
        self.scripted = result.scripted
        self._set_header(cost_usd=result.cost_usd)
        self._show_tokens(result.tokens.input, result.tokens.output)

    def set_context(self, fill: ContextFill) -> None:
        """The context window's fill now (the session's gauge reads the messages)."""
        self._set_header(context=fill)

    def add_notice(self, kind: str, text: str) -> NoticeView:
        """Append a notice at top level (retry, error, interrupted, permission, info). Its text
        is redacted: notices quote tool calls ("Bash: curl -H ..." once approved)."""
        text = self._redact(text)
        notice = NoticeView(id=self._new_id(), notice_kind=kind, text=text, frozen=True)
        self._attach(notice, None)
        return notice

    def awaiting_approval(
        self, tool_use_id: str, waiting: bool, *, denied: bool = False
    ) -> list[BlockView]:
        """Mark the tool card of ``tool_use_id`` as waiting for its approval card, or no longer
        (``denied``: the user said no); returns the changed blocks for the surface (none when
        there is no such card)."""
        card = self.card(tool_use_id)
        if card is not None and (card.awaiting_approval, card.denied) != (waiting, denied):
            card.awaiting_approval, card.denied = waiting, denied
            self._touch(card)
        return self._take_changed()

    def withdraw(self, notice: NoticeView) -> None:
        """Take a top-level notice out again (one that held the place of an answer that has
        now arrived). The live view is replaced by the static record when the turn ends, so
        only the record needs to lose it."""
        if notice in self.blocks:
            self.blocks.remove(notice)
            self._parents.pop(notice.id, None)

    def finish(
        self,
        result: ResultMessage | None = None,
        *,
        error: str | None = None,
        interrupted: bool = False,
    ) -> list[BlockView]:
        """End the turn: take totals from ``result``, add notices, freeze every block.

        Safe to call more than once (``apply(result)`` already calls it); notices are not
        repeated.
        """
        self._finish(result, error=error, interrupted=interrupted)
        return self._take_changed()

    def _finish(
        self, result: ResultMessage | None, *, error: str | None, interrupted: bool
    ) -> None:
        if result is not None:
            self._on_result(result)
        if interrupted:
            self.interrupted = True
        if error:
            self.is_error = True
            self._error_notice(error)
        if self.interrupted and not any(
            isinstance(b, NoticeView) and b.notice_kind == "interrupted" for b in self.blocks
        ):
            self.add_notice("interrupted", "Interrupted.")
        if self.duration_s is None:
            self.duration_s = max(0.0, self.clock() - self.started_at)
        status: Status = "done"
        if self.interrupted:
            status = "interrupted"
        elif self.is_error:
            status = "error"
        self.finished = True
        self._set_header(status=status)
        for block in list(self.walk()):
            if not block.frozen:
                block.frozen = True
                self._touch(block)

    # -- internals: ids and change tracking ------------------------------------------------

    def _new_id(self) -> str:
        self._next_id += 1
        return f"b{self._next_id}"

    def _touch(self, block: BlockView) -> None:
        block.version += 1
        if block not in self._changed:
            self._changed.append(block)

    def _take_changed(self) -> list[BlockView]:
        changed, self._changed = self._changed, []
        return changed

    def _show_tokens(self, tokens_in: int, tokens_out: int) -> None:
        """The header's token counts: the one writer of them. Three sources know them, each
        better than the one before: the stream's per-message counts while the turn runs
        (:meth:`_count_tokens`), the result line's usage when it ends (:meth:`_on_result`),
        and the session's accounting of the turn (:meth:`settle`), which has the last word
        (the result line counts the whole conversation's process, not this turn)."""
        self._set_header(tokens_in=tokens_in, tokens_out=tokens_out)

    def _set_header(self, **values: Any) -> None:
        for name, value in values.items():
            if getattr(self, name) != value:
                setattr(self, name, value)
                self.header_version += 1

    def _container(self, parent_tool_use_id: str | None) -> ToolCardView | None:
        # Subagent lines nest under the card with that tool_use_id; unknown parents go to the
        # top level rather than vanish.
        if parent_tool_use_id is None:
            return None
        return self._cards.get(parent_tool_use_id)

    def _attach(self, block: BlockView, parent: ToolCardView | None) -> None:
        if parent is None:
            self.blocks.append(block)
            self._parents[block.id] = None
        else:
            parent.children.append(block)
            self._parents[block.id] = parent.id
        self._touch(block)

    def _new_card(self, tool_use_id: str, name: str, parent: ToolCardView | None) -> ToolCardView:
        card = ToolCardView(
            id=self._new_id(), name=name, tool_use_id=tool_use_id, started_at=self.clock()
        )
        if tool_use_id:
            self._cards[tool_use_id] = card
        self._attach(card, parent)
        return card

    def _new_block(self, block: Block, parent: ToolCardView | None) -> BlockView | None:
        """A view for an assistant content block that had no stream events."""
        if isinstance(block, TextBlock):
            view: BlockView = TextView(id=self._new_id())
        elif isinstance(block, ThinkingBlock):
            view = ThinkingView(id=self._new_id())
        elif isinstance(block, ToolUseBlock):
            existing = self._cards.get(block.id)
            if existing is not None:
                return existing
            return self._new_card(block.id, block.name, parent)
        else:
            return None
        self._attach(view, parent)
        return view

    # -- internals: stream events (§2) -----------------------------------------------------

    @_handles(StreamEvent)
    def _on_stream(self, msg: StreamEvent) -> None:
        api = msg.api_event  # typed once, in protocol/
        if type(api) is ContentBlockDelta:  # nearly every stream event: no dict re-reading
            self._on_delta(msg, api)
            return
        event = msg.event
        kind = msg.event_type
        parent = self._container(msg.parent_tool_use_id)
        if isinstance(api, MessageStart):
            self._message_id = api.message_id or str(msg.raw.get("api_message_id") or "")
            self._count_tokens(start=api.tokens)
            if msg.parent_tool_use_id is None:
                model = api.model
                if model and model != "<synthetic>":
                    self._set_header(model=model)
                self._set_header(status="streaming", retry=None)
            return
        if isinstance(api, MessageDelta):
            self._count_tokens(delta=api.tokens)
            return
        index = msg.index
        message_id = self._message_id or str(msg.raw.get("api_message_id") or "")
        if index is None:
            return
        key = (message_id, index)
        if kind == "content_block_start":
            block = event.get("content_block")
            block = block if isinstance(block, Mapping) else {}
            btype = block.get("type")
            view: BlockView | None = None
            if btype == "text":
                view = TextView(id=self._new_id(), text=str(block.get("text", "")))
                self._attach(view, parent)
            elif btype in ("thinking", "redacted_thinking"):
                view = ThinkingView(id=self._new_id(), text=str(block.get("thinking", "")))
                self._attach(view, parent)
            elif btype in ("tool_use", "server_tool_use"):
                tool_id = str(block.get("id", ""))
                view = self._cards.get(tool_id) or self._new_card(
                    tool_id, str(block.get("name", "")), parent
                )
                if msg.parent_tool_use_id is None:
                    self._set_header(status="tool")
            if view is not None:
                self._stream[key] = view
        elif kind == "content_block_stop":
            view = self._stream.get(key)
            if view is not None and not view.frozen and not isinstance(view, ToolCardView):
                view.frozen = True
                self._touch(view)

    def _on_delta(self, msg: StreamEvent, delta: ContentBlockDelta) -> None:
        message_id = self._message_id or msg.api_message_id or ""
        if delta.kind in _COUNTED_DELTAS:
            self._msg_chars[message_id] = self._msg_chars.get(message_id, 0) + len(delta.text)
        view = self._stream.get((message_id, delta.index))
        if view is None or view.frozen:
            return  # the assistant line already replaced it (authoritative)
        if (delta.kind == "text_delta" and isinstance(view, TextView)) or (
            delta.kind == "thinking_delta" and isinstance(view, ThinkingView)
        ):
            view.extend(delta.text)
            self._touch(view)

    def _count_tokens(
        self, *, start: TokenUsage | None = None, delta: TokenUsage | None = None
    ) -> None:
        if self._message_id is None:
            return
        tin, tout = self._msg_tokens.get(self._message_id, (0, 0))
        if start is not None:
            tin = start.input
            tout = max(tout, start.output)
        if delta is not None:
            tout = delta.output or tout
            tin = delta.input or tin
        self._msg_tokens[self._message_id] = (tin, tout)
        self._show_tokens(
            sum(t[0] for t in self._msg_tokens.values()),
            sum(t[1] for t in self._msg_tokens.values()),
        )

    # -- internals: assistant / user lines -------------------------------------------------

    @_handles(AssistantMessage)
    def _on_assistant(self, msg: AssistantMessage) -> None:
        top_level = msg.parent_tool_use_id is None
        if msg.uuid and top_level:
            self.message_uuids.append(msg.uuid)
        if top_level and msg.model and msg.model != "<synthetic>":
            self._set_header(model=msg.model)
        if msg.aborted:
            self._set_header(interrupted=True)
        if msg.is_api_error:
            # The synthetic "API Error: ..." line (§11): a notice, not an answer.
            text = "".join(b.text for b in msg.content if isinstance(b, TextBlock))
            self._set_header(is_error=True)
            self._error_notice(text or msg.error or "API error")
            return
        if top_level and self.status in ("starting", "requesting", "retrying"):
            self._set_header(status="streaming", retry=None)  # no stream events were sent
        parent = self._container(msg.parent_tool_use_id)
        first = self._assistant_lines.get(msg.message_id, 0)
        self._assistant_lines[msg.message_id] = first + len(msg.content)
        for offset, block in enumerate(msg.content):
            view = self._stream.get((msg.message_id, first + offset))
            if view is None:
                view = self._new_block(block, parent)
                if view is None:
                    continue
                self._stream[(msg.message_id, first + offset)] = view
            self._fill(view, block)

    def _fill(self, view: BlockView, block: Block) -> None:
        """Make ``view`` match the authoritative assistant ``block`` and freeze text/thinking.

        The assistant line comes before ``content_block_stop`` (§2); any later delta for the
        block is ignored because the line already holds the whole block.
        """
        if isinstance(view, TextView) and isinstance(block, TextBlock):
            view.text = block.text
        elif isinstance(view, ThinkingView) and isinstance(block, ThinkingBlock):
            view.text = block.thinking
        elif isinstance(view, ToolCardView) and isinstance(block, ToolUseBlock):
            view.name = block.name or view.name
            view.input = redact_json(block.input, self._secrets())
            view.redacted = redactions(block.input, view.input)
            # Saved with the notebook: a file a tool names (a plan file) shows from ``~``.
            view.input = redact_json(view.input, redact=_without_home)
            view.summary = summarize_tool_input(view.name, view.input)
            view.diff = tool_diff(view.name, view.input)
            if self._parents.get(view.id) is None:
                self._set_header(status="tool")
            self._touch(view)
            return  # a card stays open until its tool_result
        else:
            return
        view.frozen = True
        self._touch(view)

    @_handles(UserMessage)
    def _on_user(self, msg: UserMessage) -> None:
        results = msg.tool_results
        if not results:
            for block in msg.content:
                if isinstance(block, TextBlock) and block.text.startswith(_INTERRUPT_MARKERS):
                    self._set_header(interrupted=True)
            return  # prompts, subagent prompts, "Tool loaded." ...: not content
        for result in results:
            self._on_tool_result(result, msg.parent_tool_use_id)
        if not self.pending_cards() and self.status == "tool":
            self._set_header(status="requesting")

    def _on_tool_result(self, result: ToolResultBlock, parent_tool_use_id: str | None) -> None:
        card = self._cards.get(result.tool_use_id)
        if card is None:  # a result for a call we never saw: still show it
            card = self._new_card(result.tool_use_id, "tool", self._container(parent_tool_use_id))
        texts = [without_image_notes(b.text) for b in result.content if isinstance(b, TextBlock)]
        card.result_text = self._redact(_without_home("\n".join(t for t in texts if t.strip())))
        card.is_error = result.is_error
        for image in result.images:
            view = self._image(image, f"tool {card.label}")
            if view is not None:
                card.images.append(view)
                self._parents[view.id] = card.id
                self._touch(view)
        if card.started_at is not None:
            card.elapsed_s = max(0.0, self.clock() - card.started_at)
        card.frozen = True
        self._touch(card)

    def _redact(self, text: str) -> str:
        return redact_text(text, self._secrets())

    def _image(self, block: ImageBlock, origin: str) -> ImageView | None:
        # The wire's media type is the sender's claim: ``block.image`` is what the bytes are,
        # decided as the line was parsed (protocol/image.py).
        image, size = block.image, block.image.size if block.image else 0
        if image is None:  # no image: only its size is shown, so decode it for that alone
            data = decode_base64(block.data)
            if data is None:
                self.add_notice("info", f"An image from {origin} could not be decoded.")
                return None
            size = len(data)
        return ImageView(id=self._new_id(), image=image, size=size, origin=origin)

    # -- internals: system lines -----------------------------------------------------------

    @_handles(ApiRetryMessage)
    def _on_retry(self, msg: ApiRetryMessage) -> None:
        retry = RetryInfo(
            attempt=msg.attempt,
            max_retries=msg.max_retries,
            error_status=msg.error_status,
            error=msg.error,
            delay_s=msg.retry_delay_ms / 1000.0,
        )
        self._set_header(retry=retry, status="retrying")
        status = f" {retry.error_status}" if retry.error_status is not None else ""
        text = (
            f"API request failed ({retry.error or 'error'}{status}); retrying in "
            f"{retry.delay_s:.1f} s (attempt {retry.attempt}/{retry.max_retries})."
        )
        if self._retry_notice is None:
            # Not frozen: later attempts rewrite it in place; finish() freezes it.
            self._retry_notice = NoticeView(id=self._new_id(), notice_kind="retry", text=text)
            self._attach(self._retry_notice, None)
        else:
            self._retry_notice.text = text
            self._touch(self._retry_notice)

    @_handles(TaskMessage)
    def _on_task(self, msg: TaskMessage) -> None:
        self._track_task(msg)
        card = self._tasks.get(msg.task_id)
        if card is None and msg.tool_use_id:
            card = self._cards.get(msg.tool_use_id)
        if card is None:
            return
        if msg.task_id:
            self._tasks[msg.task_id] = card
            card.task_id = msg.task_id
        status = msg.status
        if status is None and msg.subtype in ("task_started", "task_progress"):
            status = "running"
        note = card.task_note
        if msg.subtype == "task_progress" and msg.description:
            note = self._redact(msg.description)
        elif msg.subtype == "task_notification" and msg.summary:
            note = self._redact(msg.summary)
        if (status or card.task_status) != card.task_status or note != card.task_note:
            card.task_status = status or card.task_status
            card.task_note = note
            self._touch(card)

    def _track_task(self, msg: TaskMessage) -> None:
        if not msg.task_id:
            return
        if msg.subtype == "task_started":
            what = msg.description or msg.task_type or "a task"
            self._set_header(tasks={**self.tasks, msg.task_id: self._redact(what)})
        elif msg.task_id in self.tasks and (
            msg.subtype == "task_notification"
            or msg.status in ("completed", "failed", "killed", "stopped")
        ):
            self._set_header(tasks={k: v for k, v in self.tasks.items() if k != msg.task_id})

    @_handles(CompactBoundary)
    def _on_compact(self, msg: CompactBoundary) -> None:
        how = (
            "compacted automatically (the context window was nearly full)"
            if msg.trigger == "auto"
            else "compacted"
        )
        if msg.pre_tokens is not None and msg.post_tokens is not None:
            figures = f"{short_tokens(msg.pre_tokens)} → {short_tokens(msg.post_tokens)} tokens"
            self.add_notice("compact", f"{how}: {figures}")
        else:
            self.add_notice("compact", f"{how}.")

    @_handles(ModelFallback)
    def _on_fallback(self, msg: ModelFallback) -> None:
        used = msg.fallback_model or "another model"
        asked = msg.original_model or "the model asked for"
        why = f" ({msg.trigger})" if msg.trigger else ""
        self.add_notice("warning", f"{asked} was not available{why}: this turn used {used}.")
        if msg.fallback_model:
            self._set_header(model=msg.fallback_model)

    @_handles(RateLimitEvent)
    def _on_rate_limit(self, msg: RateLimitEvent) -> None:
        if msg.status in ("", "allowed"):
            return
        kind = f" ({msg.limit_type})" if msg.limit_type else ""
        what = "Rate limit reached" if msg.status == "rejected" else "Close to the rate limit"
        when = ""
        if msg.resets_at is not None:
            # The kernel's local time: the user's, for a kernel on their machine.
            local = time.localtime(msg.resets_at)
            when = time.strftime(": it resets at %H:%M %Z", local)
            if time.strftime("%Y-%m-%d", local) != time.strftime("%Y-%m-%d"):
                when += time.strftime(" on %a %d %b", local)
        self.add_notice("warning", f"{what}{kind}{when}.")

    @_handles(InitMessage)
    def _on_init(self, msg: InitMessage) -> None:
        self._set_header(
            model=msg.model or self.model, session_id=msg.session_id or self.session_id
        )

    @_handles(ResultMessage)
    def _on_result_line(self, msg: ResultMessage) -> None:
        self._finish(msg, error=None, interrupted=False)

    @_handles(SystemMessage)
    def _on_system(self, msg: SystemMessage) -> None:
        if msg.subtype == "status":
            if msg.raw.get("status") == "requesting":
                self._set_header(status="requesting")
        elif msg.subtype == "permission_denied":
            tool = str(msg.raw.get("tool_name", "tool"))
            message = str(msg.raw.get("message", "")).strip()
            self.add_notice("permission", f"{tool} was not allowed: {message}".rstrip(": "))

    def _on_result(self, result: ResultMessage) -> None:
        if result.uuid:
            self.result_uuid = result.uuid
        if result.local_command is not None:
            self.local_command = result.local_command
            if not result.is_error and not (result.result or "").strip() and not self.blocks:
                # A command with nothing to show (/clear): the cell says it ran, not nothing.
                self.add_notice("info", f"/{self._redact(result.local_command)} ran.")
        self.usage = _plain(result.usage)
        if result.usage:
            self._show_tokens(result.tokens.input, result.tokens.output)
        if result.duration_ms is not None:
            self._set_header(duration_s=result.duration_ms / 1000.0)
        if result.session_id:
            self._set_header(session_id=result.session_id)
        if result.interrupted:
            self._set_header(interrupted=True)
        elif result.is_error:
            self._set_header(is_error=True)
            self._error_notice(result.failure_text)
        seen = {b.text for b in self.blocks if isinstance(b, NoticeView)}
        for denial in result.permission_denials:
            if isinstance(denial, Mapping):
                tool = str(denial.get("tool_name", "tool"))
                # A denial clicked on a card is said once already, by its decision's notice.
                card = self.card(str(denial.get("tool_use_id", "")))
                if card is not None and card.denied:
                    continue
                if not any(t.startswith(f"{tool} was not allowed") for t in seen):
                    self.add_notice("permission", f"{tool} was not allowed.")

    def _error_notice(self, text: str) -> None:
        # The synthetic API-error assistant line and the result carry the same text (§11):
        # one notice, in notebook terms.
        text = notebook_error_text(self._redact(text))
        for block in self.blocks:
            if (
                isinstance(block, NoticeView)
                and block.notice_kind == "error"
                and block.text == text
            ):
                return
        self.add_notice("error", text)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _plain(value: Any) -> Any:
    """A JSON-ready copy of a wire value (Mappings become dicts)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
