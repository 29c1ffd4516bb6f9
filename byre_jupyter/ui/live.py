"""The live view of a running turn: one anywidget model, rendered by ``live.js``.

Shown in a ``display_id`` slot while the turn runs and replaced by the static record when it
ends (docs/kernel.md, sections 3 to 5). The kernel keeps the state in traits and renders every
piece of HTML itself (sanitized with nh3); the ES module ``live.js`` next to this file draws
it, runs the controls and the copy buttons, and sends the user's clicks back as custom
messages. What this module keeps:

* one widget model for the view (an ipywidgets box around it holds the approval cards, which
  stay ipywidgets: ui/approval_card.py);
* only what changed goes over the comm: each flush sets ``changes`` to the pieces whose
  content moved (a finished Markdown block once, the growing block, a card that changed), so
  comm bytes grow with the answer, not with its square;
* pushes are coalesced to ≤ 12.5 Hz by :class:`Coalescer`;
* widget callbacks may run on a subshell thread, so they only do
  ``loop.call_soon_threadsafe(...)``; the real work runs on the kernel's loop;
* :meth:`LiveView.close` closes every widget model it created, so nothing lingers in the
  kernel's widget registry or the saved notebook.

The view has the record's lines: the prompt line on top (the record's own markup) and, where
the record has its footer, one bar with the status and the controls, so the swap at the end
changes neither the layout nor the height (docs/kernel.md, section 4).
"""

from __future__ import annotations

import bisect
import functools
import pathlib
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import anywidget
import ipywidgets as W
import traitlets as T

from byre_jupyter.protocol import EFFORT_LEVELS, PERMISSION_MODES, PermissionMode
from byre_jupyter.session.accounting import format_cost
from byre_jupyter.ui.coalesce import Coalescer, LoopLike, TimerLike
from byre_jupyter.ui.comms import StatusKeeper, UpdateAcknowledger
from byre_jupyter.ui.format import (
    card_input_note,
    card_input_text,
    card_result_text,
    card_title,
    context_bar,
    format_duration,
    format_tokens,
    truncate,
)
from byre_jupyter.ui.markdown import escape_text, render_markdown, split_blocks
from byre_jupyter.ui.record import block_html, final_clean, prompt_line, waiting_bundle
from byre_jupyter.ui.style import RENDERED_CLASS, TURN_STYLE
from byre_jupyter.ui.toolinfo import tool_info
from byre_jupyter.ui.viewmodel import (
    BlockView,
    ImageView,
    NoticeView,
    TextView,
    ThinkingView,
    ToolCardView,
    TurnView,
)

__all__ = ["PERMISSION_HELP", "LiveView", "LiveWidget"]

_HERE = pathlib.Path(__file__).parent
_HEADER_ID = "\x00header"
# Flushes at 12.5 Hz: smooth enough (>= 10 updates/s), and with the header's 1 Hz tick under
# 20 comm messages/s (bench/RESULTS.md, rendering).
_INTERVAL = 0.08
_DONE_MARKS = {"done": "✓", "error": "✗", "interrupted": "■"}
# What each status means to the user (the view's own words are short and technical).
_STATUS_WORDS = {
    "requesting": "waiting for Claude",
    "streaming": "writing",
    "tool": "running a tool",
    "retrying": "retrying",
    "done": "done",
    "error": "failed",
    "interrupted": "stopped",
}
#: What each permission mode means, shown beside the menu (its options' and its own title).
PERMISSION_HELP = {mode.value: f"{mode.value}: {mode.meaning}" for mode in PermissionMode}
# Each code box of the live text, wrapped with its copy button (our renderer writes every <pre>
# and escapes model text, so these tags are ours); live.js makes the span a focusable button
# (the sanitizer keeps no role or tabindex attributes).
_PRE_OPEN = "<pre "
_COPY_BUTTON = '<div class="byre-code"><span class="byre-copy">Copy</span><pre '
#: Each tag of a code box and what the live view writes for it.
_BOXED = {_PRE_OPEN: _COPY_BUTTON, "</pre>": "</pre></div>"}
_PRE_TAGS = re.compile("|".join(map(re.escape, _BOXED)))
_PRE = "max-height:20em;overflow:auto;font-size:0.85em;margin:0.2em 0"
#: Image types the module shows (an image's sniffed ``media_type``), as ``data:`` URLs.

Own = Callable[[W.Widget], Any]
Piece = dict[str, Any]


def _rendered(markdown: str, *, growing: bool = False) -> str:
    """Model markdown as the static record shows it, with a copy button on each code box.
    ``growing`` text is still being written: half a table or fence is held back. (The frame
    is in Jupyter's rendered-HTML class, as the record's output is, so font, line height,
    margins and the width the text wraps at match, and the swap at the end does not reflow.)"""
    return _with_copy_buttons(render_markdown(markdown, growing=growing))


def _with_copy_buttons(html: str) -> str:
    return _PRE_TAGS.sub(lambda tag: _BOXED[tag.group()], html)


class _CopyButtons:
    """:func:`_with_copy_buttons` for the HTML of one growing block, flush after flush: the
    HTML mostly grows at its end, so only what follows the last ``<`` before the part it
    shares with the last call's is searched again (over a long code block's HTML, wrapping
    it whole was most of a flush). Our renderer writes every ``<pre`` tag (model text is
    escaped), and neither tag holds a second ``<``, so no tag crosses that point."""

    def __init__(self) -> None:
        self.html = self.out = ""
        #: Where each tag is in ``html``, and how much longer ``out`` is after it.
        self.tags: list[int] = []
        self.grown: list[int] = []

    def __call__(self, html: str) -> str:
        at = max(0, self.html.rfind("<", 0, _shared_prefix(self.html, html)))
        kept = bisect.bisect_left(self.tags, at)
        tags, grown = self.tags[:kept], self.grown[:kept]
        tail = html[at:]
        for tag in _PRE_TAGS.finditer(tail):
            tags.append(at + tag.start())
            grown.append((grown[-1] if grown else 0) + len(_BOXED[tag.group()]) - len(tag.group()))
        start = at + (self.grown[kept - 1] if kept else 0)
        self.out = self.out[:start] + _with_copy_buttons(tail)
        self.html, self.tags, self.grown = html, tags, grown
        return self.out


def compact(source: str, comment: str = "//") -> str:
    """``source`` (live.js, or live.css with ``comment="/*"``) without its comments,
    indentation and blank lines, as every turn's ``comm_open`` carries it: a quarter less
    (bench/widget_bytes.py). Only whole-line ``//`` comments go from JavaScript, every
    ``/* */`` comment from CSS; the lines of a template literal that spans lines stay as they
    are."""
    if comment == "/*":
        source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    kept: list[str] = []
    in_template = False
    for line in source.splitlines():
        bare = line.strip()
        if not in_template and (not bare or (comment == "//" and bare.startswith("//"))):
            continue
        kept.append(line if in_template else bare)
        in_template ^= line.count("`") % 2 == 1
    return "\n".join(kept) + "\n"


class LiveWidget(anywidget.AnyWidget):
    """The view's one model: ``head`` once, ``bar`` (the status), ``menus``, ``changes``."""

    _esm = compact((_HERE / "live.js").read_text(encoding="utf-8"))
    _css = compact((_HERE / "live.css").read_text(encoding="utf-8"), "/*")
    #: The frame's style and the record's prompt line (sanitized HTML): set once.
    head = T.Dict().tag(sync=True)
    #: The status line.
    bar = T.Dict().tag(sync=True)
    #: The controls' state: the menus' options and values, Stop's.
    menus = T.Dict().tag(sync=True)
    #: ``{"seq": n, "pieces": [...]}``: the pieces that changed since ``seq - 1``.
    changes = T.Dict({"seq": 0, "pieces": []}).tag(sync=True)


class _Root(W.VBox):  # type: ignore[misc]  # ipywidgets has no types
    """The view's box. Beside the widget's view, its output holds what a page without the
    kernel or the widget manager shows (ui/record.py :func:`waiting_bundle`): a notebook saved
    while the turn runs keeps that output as it was, and ipywidgets' own fallback is the box's
    Python repr."""

    def __init__(self, saved: dict[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._saved = saved

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return {**(super()._repr_mimebundle_(**kwargs) or {}), **self._saved}


class _Block:
    """What the frontend has of one block: its pieces, re-made when the version moved."""

    def __init__(self, block: BlockView, parent: str, slot: str) -> None:
        self.id = block.id
        self.parent = parent
        self.slot = slot
        self.version = -1
        self.sent: Piece | None = None

    def pieces(self, block: BlockView, seq: int) -> list[Piece]:
        """The pieces to send for ``block`` in change ``seq`` (none when nothing changed)."""
        if block.version == self.version:
            return []
        self.version = block.version
        piece = {"id": self.id, "parent": self.parent, "slot": self.slot}
        piece.update(_sanitized(_content(block)))
        if piece == self.sent:
            return []
        self.sent = piece
        return [piece]

    def snapshot(self, seq: int) -> list[Piece]:
        """Everything the frontend has of the block, whole, for change ``seq``."""
        return [self.sent] if self.sent is not None else []


def _utf16(text: str) -> int:
    """``text``'s length as JavaScript counts it (UTF-16 code units)."""
    if text.isascii():  # most HTML: no copy
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _shared_prefix(old: str, new: str) -> int:
    """How many leading characters ``old`` and ``new`` share. The growing block's HTML mostly
    changes near its end, so prefixes that stop 64, 1,024, 16,384 ... characters short of
    the end are tried first, one comparison each, and the binary search that follows slices
    only what lies after the longest one that matched: searching a long code block's HTML
    whole copied it some twenty times per flush."""
    limit = min(len(old), len(new))
    low, width = 0, 64
    while width < limit:
        if new.startswith(old[: limit - width]):
            low = limit - width
            break
        width *= 16
    high = limit
    while low < high:
        mid = (low + high + 1) // 2
        if old[low:mid] == new[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


class _Text(_Block):
    """Streaming Markdown: each finished Markdown block is sent once, as a piece of its own
    (``id/k``), and the block being written as a change to what was sent before: the HTML it
    keeps (``keep`` characters) and what follows (``add``). A growing paragraph, code block or
    table renders to HTML that mostly grows at its end, so each flush costs about what was
    written since the last one. Re-sending the whole answer per push made comm bytes grow with
    the square of its length (bench/widget_bytes.py)."""

    def __init__(self, block: BlockView, parent: str, slot: str) -> None:
        super().__init__(block, parent, slot)
        self.done_text = ""
        self.done: list[Piece] = []
        #: The change that last sent the growing block: a diff applies to that one only.
        self.sent_seq = 0
        self.copy_buttons = _CopyButtons()

    def pieces(self, block: BlockView, seq: int) -> list[Piece]:
        assert isinstance(block, TextView | ThinkingView)
        if block.version == self.version:
            return []
        self.version = block.version
        out: list[Piece] = []
        text = block.text
        reset = not text.startswith(self.done_text)  # replaced (e.g. the final assistant line)
        if reset:
            self.done_text, self.done = "", []
        *finished, tail = split_blocks(text[len(self.done_text) :]) or [""]
        for part in finished:
            piece = {
                "id": f"{self.id}/{len(self.done)}",
                "parent": self.id,
                "slot": "done",
                "kind": "html",
                "html": final_clean(_rendered(part)),
            }
            self.done.append(piece)
            self.done_text += part
            out.append(piece)
        growing = not block.frozen
        # The block being written is sanitized once, by render_markdown's nh3 pass: the
        # record's fence (final_clean) changes nothing in it (test_no_remote_loads.py holds
        # it to that over 1,200 prefixes of the hostile corpus), and cleaning it again whole
        # at every flush was most of the kernel's work on a long code block. It passes the
        # record's fence when it is finished, as a piece of its own or at the turn's end.
        html = ""
        if tail.strip():
            if growing:
                html = self.copy_buttons(render_markdown(tail, growing=True))
            else:
                html = final_clean(_rendered(tail))
        head: Piece = {
            "id": self.id,
            "parent": self.parent,
            "slot": self.slot,
            "kind": "text",
            "growing": growing,
            "html": html,
        }
        before = self.sent
        if head == before and not reset:
            return out
        self.sent = head
        wire: Piece = {**head, "reset": reset}
        if before is not None and not reset:
            # Only what changed: the frontend has the rest (its place, its kind). In UTF-16
            # units, as live.js slices strings; ``base`` names the change it edits.
            keep = _shared_prefix(before["html"], html)
            wire = {"id": self.id, "keep": _utf16(html[:keep]), "add": html[keep:],
                    "size": _utf16(html), "base": self.sent_seq}  # fmt: skip
            if growing != before["growing"]:
                wire["growing"] = growing
        self.sent_seq = seq
        out.insert(0, wire)
        return out

    def snapshot(self, seq: int) -> list[Piece]:
        self.sent_seq = seq
        return [*super().snapshot(seq), *self.done]


class _Thinking(_Block):
    """A thinking card whose text streams as the answer's does: the card (its title) is one
    piece, its text a :class:`_Text` inside it (slot ``text``), so a long thought costs what
    was written since the last flush, not the whole thought again at each one."""

    def __init__(self, block: BlockView, parent: str, slot: str) -> None:
        super().__init__(block, parent, slot)
        self.text = _Text(block, block.id, "text")
        self.text.id = f"{block.id}/t"

    def pieces(self, block: BlockView, seq: int) -> list[Piece]:
        return [*super().pieces(block, seq), *self.text.pieces(block, seq)]

    def snapshot(self, seq: int) -> list[Piece]:
        return [*super().snapshot(seq), *self.text.snapshot(seq)]


@functools.singledispatch
def _content(block: BlockView) -> Piece:
    """The piece's content for ``block``: one function per block type (``.register``)."""
    raise TypeError(f"no live piece for {type(block).__name__}")


@_content.register
def _(block: NoticeView) -> Piece:
    return {"kind": "html", "html": block_html(block)}  # as the record shows it


@_content.register
def _(block: ThinkingView) -> Piece:
    # The text goes in the card's ``text`` slot, dimmed as in the record (_Thinking).
    return {"kind": "details", "title": "Thinking" if block.frozen else "Thinking…", "html": ""}


@_content.register
def _(block: ImageView) -> Piece:
    image = block.image  # its type one of protocol.IMAGE_TYPES: never SVG, never HTML
    if image is None:
        text = escape_text(f"<unsupported image from {block.origin}>")
        return {"kind": "html", "html": f"<div>{text}</div>"}
    return {"kind": "image", "type": image.media_type, "data": image.base64}


@_content.register
def _(block: ToolCardView) -> Piece:
    """The card's input above its subagent's work (``kids``), its result below, as in the
    record."""
    before: list[str] = []
    shown = card_input_text(block)
    if shown:
        before.append(f'<pre style="{_PRE}">{escape_text(truncate(shown))}</pre>')
    if note := card_input_note(block):
        before.append(f'<div style="opacity:0.7">{escape_text(note)}</div>')
    if block.task_note:
        before.append(f'<div style="opacity:0.7">{escape_text(block.task_note)}</div>')
    after = ""
    if card_result_text(block):  # none for a denied call: its notice says it
        text = truncate(card_result_text(block))
        if tool_info(block.name).subagent and not block.is_error:
            # A subagent answers in Markdown: shown as the answer's text is, not as code.
            after = _rendered(text)
        else:
            color = ";color:#c0392b" if block.is_error else ""
            after = f'<pre style="{_PRE}{color}">{escape_text(text)}</pre>'
    return {
        "kind": "details",
        "title": card_title(block),
        "error": block.is_error,
        "html": "".join(before),
        "after": after,
    }


def _sanitized(piece: Piece) -> Piece:
    """The piece with its HTML through the record's nh3 fence once more: the module sets it
    as innerHTML, so it holds nothing the saved record could not."""
    for key in ("html", "after"):
        if piece.get(key):
            piece = {**piece, key: final_clean(piece[key])}
    return piece


class LiveView:
    """The live view of one turn, fed by :class:`TurnView` updates.

    Call :meth:`update` with what :meth:`TurnView.apply` returned, :meth:`finish` when the turn
    ends (flushes and disables the controls), and :meth:`close` after the static bundle
    replaced it.
    """

    def __init__(
        self,
        view: TurnView,
        *,
        models: Sequence[str],
        on_stop: Callable[[], None],
        on_model: Callable[[str], None],
        loop: LoopLike,
        interval: float = _INTERVAL,
        tick: float = 1.0,
        permission_mode: str | None = None,
        modes: Sequence[str] | None = None,
        on_permission_mode: Callable[[str], None] | None = None,
        effort: str | None = None,
        on_effort: Callable[[str], None] | None = None,
        on_stop_task: Callable[[str], None] | None = None,
        kept: bool = False,
    ) -> None:
        self._view = view
        self._on_stop_task = on_stop_task
        self._loop = loop
        self._on_stop = on_stop
        self._on_model = on_model
        self._on_permission_mode = on_permission_mode
        self._on_effort = on_effort
        self._tick_interval = tick
        self._owned: list[W.Widget] = []
        # Without it only the first edit of an approval card's reason reaches the kernel.
        self._acknowledger = UpdateAcknowledger()
        # Without it Lab's and Notebook 7's kernel status read "Idle" while the turn ran.
        self._kernel_status = StatusKeeper()
        self._kernel_status.install()
        self._closed = False
        self._finished = False
        self._stopping = False
        self._blocks: dict[str, _Block] = {}
        self._seq = 0
        self._header_seen = -1
        # The model the user chose mid-turn, and the model the turn ran on then: the choice
        # applies from the next request, so until the view's model moves the menu keeps the
        # choice and the status says when it takes effect.
        self._chosen: str | None = None
        self._model_at_choice: str | None = None
        self._models: list[str] = []
        self._model = ""
        self._modes: list[str] | None = None
        self._mode = ""
        if permission_mode is not None and on_permission_mode is not None:
            # The modes offered (``modes``: those the machine's policy allows), and the one
            # in force even if it is not offered, so the menu shows the truth.
            offered = PERMISSION_MODES if modes is None else modes
            self._modes = list(dict.fromkeys([*offered, permission_mode]))
            self._mode = permission_mode
        # The effort menu: "default" (the model's own) and the CLI's levels; None: no menu.
        self._efforts = None if on_effort is None else ["default", *EFFORT_LEVELS]
        self._effort = effort or "default"
        # Approval cards now waiting in this view (the status says so).
        self._waiting: list[W.Widget] = []
        self._status = ""
        self._status_waiting = False
        self._status_done = False

        self.set_models(models)
        self._header_status()
        # Every widget model is opened with its whole state (and this one with the module's
        # code and stylesheet): the first bar and menus go with it, not in messages after
        # it, and the box and the view share one layout model (bench/widget_bytes.py).
        layout = self._own(W.Layout(margin="0", padding="0"))
        head = {
            "style": TURN_STYLE,
            "prompt": prompt_line(view),
            "frame": RENDERED_CLASS,
            "help": PERMISSION_HELP,
        }
        self._live: LiveWidget = self._own(
            LiveWidget(head=head, layout=layout, **self._bar_state())
        )
        self._live.on_msg(self._message)
        # ``kept``: the kernel follows the cell for a page that goes away, so the saved
        # form's line says the answer lands there (docs/bridge.md, "Pending answers").
        self._root = self._own(
            _Root(
                waiting_bundle(view, kept=kept),
                children=(self._live,),
                layout=layout,
                _dom_classes=("byre-live-root",),
            )
        )
        self._coalescer = Coalescer(loop, self._flush, interval)
        self._timer: TimerLike | None = None
        self._schedule_tick()

    # -- public -----------------------------------------------------------------------------

    @property
    def widget(self) -> W.Widget:
        """The root widget to ``display``."""
        return self._root

    @property
    def model(self) -> LiveWidget:
        """The view's one model (its traits are what the frontend draws)."""
        return self._live

    @property
    def coalescer(self) -> Coalescer:
        return self._coalescer

    def update(self, changed: Sequence[BlockView]) -> None:
        """Mark blocks dirty; the coalescer pushes them (and the header) at ≤ 1/interval Hz."""
        if self._closed:
            return
        ids = [b.id for b in changed]
        if self._view.header_version != self._header_seen:
            # Status, tokens, model or retry changed. Elapsed time alone waits for the tick,
            # so a streaming flush sends one comm message (the growing block), not two.
            ids.append(_HEADER_ID)
        if ids:
            self._coalescer.mark(ids)

    def set_models(self, models: Sequence[str], value: str | None = None) -> None:
        """Replace the menu's options; ``value`` defaults to the view's current model.

        An explicit ``value`` (the runner's word on the session's model) also ends a pending
        choice of the user's; without one, the user's pending choice stays shown.
        """
        if value is not None:
            self._chosen = None
        current = value or self._chosen or self._view.model or self._model or None
        self._show_models(models, current)
        if not self._closed and self._header_seen >= 0:
            self._publish_bar()

    def _show_models(self, models: Sequence[str], current: str | None) -> None:
        options = list(dict.fromkeys(models))
        if current and current not in options:
            options.insert(0, current)
        self._models = options
        self._model = current if current else (options[0] if options else "")

    def set_permission_mode(self, mode: str) -> None:
        """Show ``mode`` in the menu without calling back (e.g. after a refused switch)."""
        if self._modes is None or self._closed:
            return
        if mode not in self._modes:
            self._modes.append(mode)
        self._mode = mode
        self._publish_bar()

    def set_effort(self, effort: str | None) -> None:
        """Show ``effort`` (None: the model's default) in the menu without calling back (e.g.
        after a refused switch)."""
        if self._efforts is None or self._closed:
            return
        self._effort = effort or "default"
        self._publish_bar()

    def own(self, widget: Any) -> Any:
        """Register a widget made elsewhere (an approval card) so :meth:`close` closes it."""
        return self._own(widget)

    def show_approval(self, widget: W.Widget) -> None:
        """Show an approval card below the answer (where the conversation is now); until
        :meth:`hide_approval` the status says "waiting for your approval"."""
        if self._closed:
            return
        self._root.children = (*self._root.children, widget)
        self._waiting.append(widget)
        self._render_header()

    def hide_approval(self, widget: W.Widget) -> None:
        """Remove an answered card shown with :meth:`show_approval`."""
        if self._closed:
            return
        self._root.children = tuple(c for c in self._root.children if c is not widget)
        self._waiting = [w for w in self._waiting if w is not widget]
        self._render_header()

    def finish(self) -> None:
        """Push the final state now and disable the controls."""
        if self._closed:
            return
        self._finished = True
        self._kernel_status.uninstall()
        self._cancel_tick()
        self._coalescer.mark([_HEADER_ID, *(b.id for b in self._view.walk())])
        self._coalescer.flush_now()

    def close(self) -> None:
        """Stop timers and close every widget model this view created."""
        if self._closed:
            return
        self._closed = True
        self._kernel_status.uninstall()
        self._cancel_tick()
        self._coalescer.close()
        for widget in self._owned:
            for extra in (getattr(widget, "style", None), getattr(widget, "layout", None)):
                if isinstance(extra, W.Widget):
                    extra.close()
            widget.close()
        self._owned.clear()
        self._blocks.clear()

    # -- widget callbacks: any thread, so only hand over to the loop -----------------------

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """A click or choice from live.js: ``{"event": "stop" | "model" | "mode" | "effort" |
        "sync"}``."""
        if self._closed or not isinstance(content, dict):
            return
        event, value = content.get("event"), content.get("value")
        if event == "stop":
            self._loop.call_soon_threadsafe(self._stop_on_loop)
        elif event == "sync":
            self._loop.call_soon_threadsafe(self._resend)
        elif event == "model" and isinstance(value, str) and value:
            self._loop.call_soon_threadsafe(self._model_chosen, value)
        elif event == "mode" and isinstance(value, str) and value:
            self._loop.call_soon_threadsafe(self._mode_chosen, value)
        elif event == "effort" and isinstance(value, str) and value:
            self._loop.call_soon_threadsafe(self._effort_chosen, value)
        elif event == "stop_task" and isinstance(value, str) and value:
            self._loop.call_soon_threadsafe(self._stop_task, value)

    def _stop_task(self, task_id: str) -> None:
        # Only a task the view lists as running: the id comes from the page.
        if self._closed or self._finished or self._on_stop_task is None:
            return
        if task_id in self._view.tasks:
            self._on_stop_task(task_id)

    def _model_chosen(self, name: str) -> None:
        if self._closed or self._finished or name not in self._models:
            return
        self._chosen = name
        self._model = name
        self._model_at_choice = self._view.model
        self._on_model(name)
        self._coalescer.mark([_HEADER_ID])

    def _mode_chosen(self, mode: str) -> None:
        if self._closed or self._finished or self._modes is None or mode not in self._modes:
            return
        self._mode = mode
        if self._on_permission_mode is not None:
            self._on_permission_mode(mode)
        self._coalescer.mark([_HEADER_ID])

    def _effort_chosen(self, effort: str) -> None:
        if self._closed or self._finished or self._efforts is None or effort not in self._efforts:
            return
        self._effort = effort
        if self._on_effort is not None:
            self._on_effort(effort)
        self._coalescer.mark([_HEADER_ID])

    def _stop_on_loop(self) -> None:
        if self._stopping or self._finished or self._closed:
            return
        self._stopping = True
        self._publish_bar()
        self._on_stop()

    # -- rendering (on the loop) ------------------------------------------------------------

    def _own(self, widget: Any) -> Any:
        self._owned.append(widget)
        self._acknowledger.watch(widget)
        return widget

    def _flush(self, ids: set[str]) -> None:
        if self._closed:
            return
        pieces: list[Piece] = []
        seq = self._seq + 1
        for block, parent, slot in self._placed():
            known = self._blocks.get(block.id)
            if known is None:
                known = self._blocks[block.id] = self._tracker(block, parent, slot)
            elif block.id not in ids:
                continue
            pieces += known.pieces(block, seq)
        with self._live.hold_sync():
            if pieces:
                self._send(pieces)
            if _HEADER_ID in ids:
                self._render_header()

    def _placed(self) -> Iterator[tuple[BlockView, str, str]]:
        """Every block in document order, with its parent piece and the slot it goes in."""
        for block in self._view.walk():
            parent = self._view.parent_id(block.id)  # always a tool card
            if parent:
                yield block, parent, "images" if isinstance(block, ImageView) else "kids"
            else:
                yield block, "", "body"

    @staticmethod
    def _tracker(block: BlockView, parent: str, slot: str) -> _Block:
        if isinstance(block, TextView):
            return _Text(block, parent, slot)
        if isinstance(block, ThinkingView):
            return _Thinking(block, parent, slot)
        return _Block(block, parent, slot)

    def _send(self, pieces: list[Piece]) -> None:
        self._seq += 1
        self._live.changes = {"seq": self._seq, "pieces": pieces}

    def _resend(self) -> None:
        """Everything again, for a view that missed changes (opened late, a second view)."""
        if self._closed:
            return
        seq = self._seq + 1
        pieces = [p for known in self._blocks.values() for p in known.snapshot(seq)]
        with self._live.hold_sync():
            self._send(pieces)
            self._render_header()

    def _render_header(self) -> None:
        self._header_status()
        self._publish_bar()

    def _header_status(self) -> None:
        view = self._view
        self._header_seen = view.header_version
        if self._chosen is None and view.model and view.model != self._model:
            self._show_models(self._models, view.model)
        mark = _DONE_MARKS.get(view.status)
        waiting = bool(self._waiting) and mark is None
        if waiting:
            parts = ["waiting for your approval"]
        else:
            words = _STATUS_WORDS.get(view.status, view.status)
            parts = [f"{mark} {words}" if mark else words]
            if view.status == "tool":
                parts += [c.label for c in view.pending_cards()[:1]]
        parts.append(format_duration(view.elapsed_s))
        if self._chosen is not None and view.model == self._model_at_choice:
            parts.append(f"{self._chosen} from the next request")
        tokens_out = view.tokens_out if mark is not None else view.tokens_out_estimate
        if view.tokens_in or tokens_out:
            parts.append(f"{format_tokens(view.tokens_in)} in / {format_tokens(tokens_out)} out")
        if view.cost_usd is not None:
            parts.append(format_cost(view.cost_usd, scripted=view.scripted))
        if view.retry is not None and view.status == "retrying":
            retry = view.retry
            code = f" {retry.error_status}" if retry.error_status is not None else ""
            parts.append(
                f"retry {retry.attempt}/{retry.max_retries} ({retry.error}{code}), "
                f"next in {retry.delay_s:.1f} s"
            )
        self._status = " · ".join(parts)
        # Waiting for the user is the one status that must not be missed: it stands out.
        self._status_waiting = waiting
        self._status_done = mark is not None or self._finished

    def _bar_state(self) -> dict[str, dict[str, Any]]:
        return {
            "bar": {
                "status": self._status,
                "waiting": self._status_waiting,
                "done": self._status_done,
                **context_bar(self._view.context),
                # Each running task with its Stop (only where a stop can be sent).
                "tasks": [[k, v] for k, v in self._view.tasks.items()]
                if self._on_stop_task is not None and not self._finished
                else [],
            },
            "menus": {
                "models": list(self._models),
                "model": self._model,
                "modes": None if self._modes is None else list(self._modes),
                "mode": self._mode,
                "efforts": None if self._efforts is None else list(self._efforts),
                "effort": self._effort,
                "stopping": self._stopping,
                "disabled": self._finished,
            },
        }

    def _publish_bar(self) -> None:
        # Two traits: the status changes every second, the menus seldom, and a trait set to
        # an equal value sends nothing (the lists are copies, so a change is seen as one).
        with self._live.hold_sync():
            for name, value in self._bar_state().items():
                setattr(self._live, name, value)

    def _schedule_tick(self) -> None:
        if not self._closed and not self._finished and self._tick_interval > 0:
            self._timer = self._loop.call_later(self._tick_interval, self._tick)

    def _tick(self) -> None:
        # Elapsed time and spinner move even when no message arrives (a long Bash call). Through
        # the coalescer: while text streams, the header goes out with the next flush.
        self._timer = None
        if self._closed or self._finished:
            return
        self._coalescer.mark((_HEADER_ID,))
        self._schedule_tick()

    def _cancel_tick(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
