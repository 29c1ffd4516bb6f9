"""The live ipywidgets view of a running turn.

Shown in a ``display_id`` slot while the turn runs and replaced by :func:`static_outputs` when
it ends (docs/kernel.md, section 4). Rules this module keeps (docs/kernel.md, sections 3 and 5):

* background updates only set traits; nothing writes through ``with out:``;
* pushes are coalesced to ≤ 12.5 Hz by :class:`Coalescer`, and only blocks whose ``version``
  moved are re-rendered, so a streaming answer resends just its growing block;
* widget callbacks may run on a subshell thread, so they only do
  ``loop.call_soon_threadsafe(...)``; the real work runs on the kernel's loop;
* :meth:`LiveView.close` closes every widget model it created (layouts and styles too), so
  nothing lingers in the kernel's widget registry or the saved notebook.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W

from byre_jupyter.protocol import PERMISSION_MODES
from byre_jupyter.ui.coalesce import Coalescer, LoopLike, TimerLike
from byre_jupyter.ui.comms import StatusKeeper, UpdateAcknowledger
from byre_jupyter.ui.format import (
    card_input_text,
    card_result_text,
    card_title,
    format_duration,
    format_tokens,
    truncate,
)
from byre_jupyter.ui.markdown import escape_text, render_markdown, split_blocks
from byre_jupyter.ui.style import RENDERED_CLASS, TURN_BORDER, TURN_MARGIN, TURN_PADDING
from byre_jupyter.ui.viewmodel import (
    BlockView,
    ImageView,
    NoticeView,
    TextView,
    ThinkingView,
    ToolCardView,
    TurnView,
    sniff_image_type,
)

__all__ = ["LiveView"]

_HEADER_ID = "\x00header"
# Flushes at 12.5 Hz: smooth enough (>= 10 updates/s), and with the header's 1 Hz tick and the
# freezes' children updates under 20 comm messages/s (bench/RESULTS.md, rendering; 20 Hz made
# 25/s). The tail resent per flush is below _FREEZE_CHARS, and only its last block is rendered
# again (render_markdown caches the others), so a longer tail costs bytes, not rendering, and
# halves the freezes' children updates (4000 made 20.5 comm messages/s on a quiet machine).
_INTERVAL = 0.08
_FREEZE_CHARS = 8000
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
# What the live view does in the browser, run once per view by its stylesheet's onload (an
# HTML widget sets innerHTML, where a <script> would not run). Our own constant, no model text
# in it, nothing loaded: a copy button writes its code block's text to the clipboard; Stop
# gives the focus back to the cell, so Shift+Enter goes on working (the button, disabled once
# the kernel took the click, would drop it to the page body); the streamed text is a polite
# live region; an approval card is an alertdialog named by its title and, when it starts
# waiting off-screen (Run All), is scrolled into view once. The saved record is sanitized (no
# scripts) and has none of this.
LIVE_JS = (
    "(function(s){"
    "var root=s.closest('.byre-live-root');"
    "if(!root||root.byreLive)return;root.byreLive=1;"
    "root.addEventListener('keydown',function(e){"
    "var t=e.target;if((e.key==='Enter'||e.key===' ')&&t&&t.classList&&"
    "t.classList.contains('byre-copy')){e.preventDefault();e.stopPropagation();t.click()}});"
    # A card's reason box syncs only when one of the card's buttons is clicked, just before
    # the click: ipywidgets holds a model's next update until the kernel acknowledged the
    # last but sends a click at once, so a sync on leaving the box let a click overtake the
    # rest of the reason when the kernel lagged. One update, sent first, arrives first.
    "var box=function(t){return t&&t.closest&&t.tagName==='INPUT'&&"
    "t.closest('.byre-approval-card')};"
    "root.addEventListener('change',function(e){"
    "if(!root.byreSync&&box(e.target)){e.stopPropagation()}},true);"
    "root.addEventListener('click',function(e){"
    "var b=e.target&&e.target.closest&&e.target.closest('.byre-approval-card button');"
    "var i=b&&b.closest('.byre-approval-card').querySelector('input');"
    "if(i){root.byreSync=1;try{i.dispatchEvent(new Event('change',{bubbles:true}))}"
    "finally{root.byreSync=0}}},true);"
    "root.addEventListener('click',function(e){"
    "var t=e.target;if(!t||!t.closest)return;"
    "var copy=t.closest('.byre-copy');"
    "if(copy){var pre=copy.parentElement.querySelector('pre');"
    "var done=function(w){copy.textContent=w;"
    "setTimeout(function(){copy.textContent='Copy'},1500)};"
    "if(pre&&navigator.clipboard){navigator.clipboard.writeText(pre.innerText)"
    ".then(function(){done('Copied')},function(){done('Copy failed')})}"
    "else{done('Copy failed')}return}"
    "if(t.closest('.byre-stop')){var cell=root.closest('.jp-Cell');"
    "if(cell){setTimeout(function(){cell.focus()},0)}}});"
    "var mark=function(){"
    "root.querySelectorAll('.byre-copy:not([tabindex])').forEach(function(b){"
    "b.setAttribute('tabindex','0')});"
    "var body=root.querySelector('.byre-live-body');"
    "if(body&&!body.hasAttribute('aria-live')){body.setAttribute('role','log');"
    "body.setAttribute('aria-live','polite');body.setAttribute('aria-label','Answer')}"
    "root.querySelectorAll('.byre-approval-card input:not([aria-label])').forEach("
    "function(i){i.setAttribute('aria-label','Reason for denying (optional, sent to Claude)')});"
    "root.querySelectorAll('.byre-approval-card').forEach(function(card){"
    "var title=card.querySelector('.byre-approval-title');"
    # whole: title, body and the answers' row rendered, so it is scrolled to its full size
    "if(card.byreSeen||!title||card.children.length<3||!card.querySelector('input'))return;"
    "card.byreSeen=1;"
    "card.setAttribute('role','alertdialog');"
    "card.setAttribute('aria-label',title.textContent.trim());"
    "var r=card.getBoundingClientRect();"
    "if(r.top<0||r.bottom>window.innerHeight){card.scrollIntoView({block:'nearest'})}})};"
    "new MutationObserver(mark).observe(root,{childList:true,subtree:true});mark()"
    "})(this)"
)
# The live view's only stylesheet: our own class names, no url(), nothing remote. The spinner
# turns by CSS, so it costs no kernel message per frame; the header stays in view (sticky)
# while a long answer scrolls. Its onload runs LIVE_JS.
LIVE_CSS = (
    f'<style onload="{LIVE_JS}">'
    "@keyframes byre-spin{to{transform:rotate(360deg)}}"
    ".byre-spinner{display:inline-block;width:0.75em;height:0.75em;box-sizing:border-box;"
    "border:2px solid currentColor;border-right-color:transparent;border-radius:50%;"
    "animation:byre-spin 0.9s linear infinite;opacity:0.7;vertical-align:-0.1em}"
    "@media (prefers-reduced-motion:reduce){.byre-spinner{animation-duration:3s}}"
    # Sticky needs every box between the header and the notebook's scroller to let it out:
    # the output area's boxes scroll (overflow:auto) by default, so while this view lives,
    # the ones holding it do not. min-width:0 keeps them as wide as the cell (a scroll box
    # had that for free): long unbreakable text scrolls inside its own block instead.
    ".jp-OutputArea:has(.byre-live-header),.jp-OutputArea-child:has(.byre-live-header),"
    ".jp-OutputArea-output:has(.byre-live-header),.jupyter-widgets.byre-live-root"
    "{overflow:visible!important;min-width:0!important}"
    ".jupyter-widgets.byre-live-header{position:sticky!important;top:0;z-index:3;"
    "background:var(--jp-layout-color0,#fff);align-items:center}"
    ".byre-live-header .widget-label{width:auto;min-width:0}"
    # The copy button floats in the code box's corner: the text lays out as in the record.
    ".byre-code{position:relative}"
    ".byre-copy{position:absolute;top:0.4em;right:0.4em;z-index:1;cursor:pointer;"
    "font-family:var(--jp-ui-font-family,sans-serif);font-size:var(--jp-ui-font-size0,11px);"
    "line-height:1.5;padding:0 0.6em;border-radius:3px;opacity:0.7;"
    "border:1px solid var(--jp-border-color1,#bdbdbd);"
    "background:var(--jp-layout-color1,#fff);color:var(--jp-ui-font-color1,#000)}"
    ".byre-code:hover .byre-copy,.byre-copy:focus{opacity:1}"
    ".byre-status.byre-waiting{opacity:1!important;font-weight:bold;"
    "color:var(--jp-warn-color0,#b35c00)}"
    "</style>"
)
# Each code box of the live text, wrapped with its copy button (our renderer writes every <pre>
# and escapes model text, so these tags are ours). A span with role=button, made focusable by
# LIVE_JS: the markup keeps to the tags and attributes that cannot load anything.
_PRE_OPEN = "<pre "
_COPY_BUTTON = (
    '<div class="byre-code"><span class="byre-copy" role="button" title="Copy code">Copy</span>'
    "<pre "
)
#: Widgets in a row keep their natural width and wrap instead of shrinking into "Allow …".
NO_SHRINK = "0 0 auto"
_PRE = "max-height:20em;overflow:auto;font-size:0.85em;margin:0.2em 0"
_NEST = "0 0 0 1em"

Own = Callable[[W.Widget], Any]


def _rendered(markdown: str, *, growing: bool = False) -> str:
    """Model markdown as the static record shows it: inside Jupyter's rendered-HTML class,
    so font, line height and margins match and the swap at the end does not reflow.
    ``growing`` text is still being written: half a table or fence is held back."""
    body = (
        render_markdown(markdown, growing=growing)
        .replace(_PRE_OPEN, _COPY_BUTTON)
        .replace("</pre>", "</pre></div>")
    )
    return f'<div class="{RENDERED_CLASS}">{body}</div>'


def _flat(own: Own) -> Any:
    """No widget margin: the static record has none around its blocks."""
    return own(W.Layout(margin="0"))


class _BlockWidget:
    """Widgets for one block; ``update`` re-renders only when the block's version moved."""

    def __init__(self, root: W.Widget) -> None:
        self.root = root
        self.version = -1

    def update(self, block: BlockView) -> None:
        if block.version != self.version:
            self.version = block.version
            self.render(block)

    def render(self, block: BlockView) -> None:
        raise NotImplementedError


class _TextWidget(_BlockWidget):
    """Streaming Markdown in pieces: finished blocks are frozen into HTML widgets of their own,
    so each push resends only the blocks still growing, and re-renders only the last one
    (render_markdown caches finished blocks). Re-rendering the whole answer per push made
    kernel CPU and bytes grow with the square of its length (bench/RESULTS.md, rendering).
    """

    def __init__(self, own: Own) -> None:
        self._own = own
        self.tail = own(W.HTML(layout=_flat(own)))
        self.box = own(W.VBox((self.tail,), layout=own(W.Layout(margin="0", padding="0"))))
        self._frozen_text = ""
        super().__init__(self.box)

    def render(self, block: BlockView) -> None:
        assert isinstance(block, TextView)
        text = block.text
        if not text.startswith(self._frozen_text):  # replaced (e.g. the final assistant line)
            self._reset()
        tail = text[len(self._frozen_text) :]
        # Freeze in batches of about _FREEZE_CHARS: each freeze costs a new widget and a
        # children update, so freezing every paragraph would double the message rate.
        if len(tail) > _FREEZE_CHARS:
            *done, last = split_blocks(tail)
            if done:
                finished = "".join(done)
                piece = self._own(W.HTML(_rendered(finished), layout=_flat(self._own)))
                self.box.children = (*self.box.children[:-1], piece, self.tail)
                self._frozen_text += finished
                tail = last
        self.tail.value = _rendered(tail, growing=not block.frozen)

    def _reset(self) -> None:
        for child in self.box.children[:-1]:
            child.close()
        self.box.children = (self.tail,)
        self._frozen_text = ""


class _NoticeWidget(_BlockWidget):
    def __init__(self, own: Own) -> None:
        self.html = own(W.HTML())
        super().__init__(self.html)

    def render(self, block: BlockView) -> None:
        assert isinstance(block, NoticeView)
        color = "color:#c0392b;" if block.notice_kind == "error" else ""
        self.html.value = f'<div style="{color}opacity:0.8">{escape_text(block.text)}</div>'


class _ThinkingWidget(_BlockWidget):
    # An Accordion, not an HTML <details>: re-rendering HTML would snap a <details> the user
    # opened shut 20 times a second while thinking streams; selected_index is a synced trait.
    def __init__(self, own: Own) -> None:
        self.html = own(W.HTML())
        self.acc = own(W.Accordion(children=(self.html,), titles=("Thinking…",)))
        self.acc.selected_index = None
        super().__init__(self.acc)

    def render(self, block: BlockView) -> None:
        assert isinstance(block, ThinkingView)
        self.html.value = f'<div style="opacity:0.7">{render_markdown(block.text)}</div>'
        self.acc.titles = ("Thinking" if block.frozen else "Thinking…",)


class _ImageWidget(_BlockWidget):
    def __init__(self, own: Own, image: ImageView) -> None:
        mime = sniff_image_type(image.data)
        widget: W.Widget
        if mime is None:
            widget = own(W.HTML(value=escape_text(f"<unsupported image from {image.origin}>")))
        else:
            widget = own(
                W.Image(
                    value=image.data,
                    format=mime.split("/", 1)[1],
                    layout=own(W.Layout(max_width="100%")),
                )
            )
        super().__init__(widget)

    def render(self, block: BlockView) -> None:
        pass  # images never change


class _CardWidget(_BlockWidget):
    """Accordion(details: input, result, nested children) + the card's images below it."""

    def __init__(self, own: Own) -> None:
        self.detail = own(W.HTML())
        self.children = own(W.VBox(layout=own(W.Layout(margin=_NEST))))
        self.acc = own(W.Accordion(children=(own(W.VBox((self.detail, self.children))),)))
        self.acc.selected_index = None
        self.images = own(W.VBox())
        super().__init__(own(W.VBox((self.acc, self.images))))

    def render(self, block: BlockView) -> None:
        assert isinstance(block, ToolCardView)
        self.acc.titles = (card_title(block),)
        parts: list[str] = []
        shown = card_input_text(block)
        if shown:
            parts.append(f'<pre style="{_PRE}">{escape_text(truncate(shown))}</pre>')
        if block.task_note:
            parts.append(f'<div style="opacity:0.7">{escape_text(block.task_note)}</div>')
        if card_result_text(block):  # none for a denied call: its notice says it
            color = ";color:#c0392b" if block.is_error else ""
            text = escape_text(truncate(card_result_text(block)))
            parts.append(f'<pre style="{_PRE}{color}">{text}</pre>')
        self.detail.value = "".join(parts)


@functools.singledispatch
def _widget_for(block: BlockView, own: Own) -> _BlockWidget:
    """The widget that draws ``block``: one factory per block type (``.register``)."""
    raise TypeError(f"no widget for {type(block).__name__}")


@_widget_for.register
def _(block: TextView, own: Own) -> _BlockWidget:
    return _TextWidget(own)


@_widget_for.register
def _(block: ThinkingView, own: Own) -> _BlockWidget:
    return _ThinkingWidget(own)


@_widget_for.register
def _(block: ToolCardView, own: Own) -> _BlockWidget:
    return _CardWidget(own)


@_widget_for.register
def _(block: ImageView, own: Own) -> _BlockWidget:
    return _ImageWidget(own, block)


@_widget_for.register
def _(block: NoticeView, own: Own) -> _BlockWidget:
    return _NoticeWidget(own)


class LiveView:
    """The widget tree for one turn, fed by :class:`TurnView` updates.

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
        on_permission_mode: Callable[[str], None] | None = None,
    ) -> None:
        self._view = view
        self._loop = loop
        self._on_stop = on_stop
        self._on_model = on_model
        self._tick_interval = tick
        self._owned: list[W.Widget] = []
        # Without it only the first edit of a menu or text box reaches the kernel mid-turn.
        self._acknowledger = UpdateAcknowledger()
        # Without it Lab's and Notebook 7's kernel status read "Idle" while the turn ran.
        self._kernel_status = StatusKeeper()
        self._kernel_status.install()
        self._syncing = False
        self._closed = False
        self._finished = False
        self._stopping = False
        self._blocks: dict[str, _BlockWidget] = {}
        self._header_seen = -1
        # The model the user chose mid-turn, and the model the turn ran on then: the choice
        # applies from the next request, so until the view's model moves the menu keeps the
        # choice and the status says when it takes effect.
        self._chosen: str | None = None
        self._model_at_choice: str | None = None

        self._name = self._own(
            W.HTML(
                value=f"Session <b>{escape_text(view.session_name)}</b>",
                layout=self._own(W.Layout(flex=NO_SHRINK, margin="0 0.6em 0 0")),
            )
        )
        self._model = self._own(
            W.Dropdown(
                options=(),
                description="Model",
                tooltip="Model",
                style={"description_width": "initial"},
                layout=self._own(W.Layout(width="auto", flex=NO_SHRINK)),
            )
        )
        self._stop = self._own(
            W.Button(
                description="Stop",
                icon="stop",
                tooltip="Interrupt this turn",
                layout=self._own(W.Layout(width="auto", flex=NO_SHRINK)),
            )
        )
        self._spinner = self._own(
            W.HTML(
                value='<span class="byre-spinner" aria-hidden="true"></span>',
                layout=self._own(W.Layout(flex=NO_SHRINK, width="1.2em", margin="0 0.3em 0 0.5em")),
            )
        )
        self._status = self._own(W.HTML(layout=self._own(W.Layout(flex="1 1 12em"))))
        self._css = self._own(W.HTML(LIVE_CSS, layout=self._own(W.Layout(display="none"))))
        self._on_permission_mode = on_permission_mode
        controls: list[W.Widget] = [self._name, self._model]
        self._mode: W.Dropdown | None = None
        if permission_mode is not None and on_permission_mode is not None:
            modes = list(dict.fromkeys([*PERMISSION_MODES, permission_mode]))
            self._mode = self._own(
                W.Dropdown(
                    options=modes,
                    value=permission_mode,
                    description="Permissions",
                    tooltip="Permission mode: when Claude must ask before using a tool",
                    style={"description_width": "initial"},
                    layout=self._own(W.Layout(width="auto", flex=NO_SHRINK)),
                )
            )
            self._mode.observe(self._mode_changed, names="value")
            controls.append(self._mode)
        # Approval cards now waiting in this view (the status says so).
        self._waiting: list[W.Widget] = []
        header = self._own(
            W.HBox(
                (*controls, self._stop, self._spinner, self._status, self._css),
                layout=self._own(W.Layout(flex_flow="row wrap")),
            )
        )
        header.add_class("byre-live-header")
        self._stop.add_class("byre-stop")
        self._body = self._own(W.VBox())
        self._body.add_class("byre-live-body")
        self._root = self._own(
            W.VBox(
                (header, self._body),
                layout=self._own(
                    W.Layout(border_left=TURN_BORDER, padding=TURN_PADDING, margin=TURN_MARGIN)
                ),
            )
        )
        self._root.add_class("byre-live-root")
        self.set_models(models)
        self._model.observe(self._model_changed, names="value")
        self._stop.on_click(self._stop_clicked)
        self._coalescer = Coalescer(loop, self._flush, interval)
        self._timer: TimerLike | None = None
        self._render_header()
        self._schedule_tick()

    # -- public -----------------------------------------------------------------------------

    @property
    def widget(self) -> W.Widget:
        """The root widget to ``display``."""
        return self._root

    @property
    def coalescer(self) -> Coalescer:
        return self._coalescer

    def widget_for(self, block_id: str) -> W.Widget | None:
        """The root widget showing block ``block_id`` (None until it was first pushed)."""
        block = self._blocks.get(block_id)
        return block.root if block is not None else None

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
        """Replace the dropdown's options; ``value`` defaults to the view's current model.

        An explicit ``value`` (the runner's word on the session's model) also ends a pending
        choice of the user's; without one, the user's pending choice stays shown.
        """
        if value is not None:
            self._chosen = None
        current = value or self._chosen or self._view.model or (self._model.value or None)
        self._show_models(models, current)

    def _show_models(self, models: Sequence[str], current: str | None) -> None:
        options = list(dict.fromkeys(models))
        if current and current not in options:
            options.insert(0, current)
        self._syncing = True
        try:
            self._model.options = tuple(options)
            self._model.value = current if current else (options[0] if options else None)
        finally:
            self._syncing = False

    def set_permission_mode(self, mode: str) -> None:
        """Show ``mode`` in the menu without calling back (e.g. after a refused switch)."""
        if self._mode is None or self._closed:
            return
        self._syncing = True
        try:
            if mode not in self._mode.options:
                self._mode.options = (*self._mode.options, mode)
            self._mode.value = mode
        finally:
            self._syncing = False

    def own(self, widget: Any) -> Any:
        """Register a widget made elsewhere (an approval card) so :meth:`close` closes it."""
        return self._own(widget)

    def show_approval(self, widget: W.Widget) -> None:
        """Append an approval card at the end of the body (where the conversation is now);
        until :meth:`hide_approval` the status says "waiting for your approval"."""
        if self._closed:
            return
        self._body.children = (*self._body.children, widget)
        self._waiting.append(widget)
        self._render_header()

    def hide_approval(self, widget: W.Widget) -> None:
        """Remove an answered card shown with :meth:`show_approval`."""
        if self._closed:
            return
        self._body.children = tuple(c for c in self._body.children if c is not widget)
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
        self._stop.disabled = True
        self._model.disabled = True
        if self._mode is not None:
            self._mode.disabled = True

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

    def _model_changed(self, change: dict[str, Any]) -> None:
        if self._syncing or self._closed:
            return
        new = change.get("new")
        if isinstance(new, str) and new:
            self._loop.call_soon_threadsafe(self._model_chosen, new)

    def _model_chosen(self, name: str) -> None:
        if self._closed:
            return
        self._chosen = name
        self._model_at_choice = self._view.model
        self._on_model(name)
        self._coalescer.mark([_HEADER_ID])

    def _mode_changed(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        new = change.get("new")
        if isinstance(new, str) and self._on_permission_mode is not None and not self._closed:
            self._loop.call_soon_threadsafe(self._on_permission_mode, new)

    def _stop_clicked(self, _button: W.Button) -> None:
        self._loop.call_soon_threadsafe(self._stop_on_loop)

    def _stop_on_loop(self) -> None:
        if self._stopping or self._finished or self._closed:
            return
        self._stopping = True
        self._stop.description = "Stopping…"
        self._stop.disabled = True
        self._on_stop()

    # -- rendering (on the loop) ------------------------------------------------------------

    def _own(self, widget: Any) -> Any:
        self._owned.append(widget)
        self._acknowledger.watch(widget)
        return widget

    def _flush(self, ids: set[str]) -> None:
        if self._closed:
            return
        for block in self._view.walk():
            # Blocks never pushed get a widget too, so a child always finds its parent's box.
            if block.id in ids or block.id not in self._blocks:
                widget = self._blocks.get(block.id)
                if widget is None:
                    widget = self._create(block)
                widget.update(block)
        if _HEADER_ID in ids:
            self._render_header()

    def _create(self, block: BlockView) -> _BlockWidget:
        widget = _widget_for(block, self._own)
        self._blocks[block.id] = widget
        box = self._body
        parent_id = self._view.parent_id(block.id)
        parent = self._blocks.get(parent_id) if parent_id else None
        if isinstance(parent, _CardWidget):
            box = parent.images if isinstance(block, ImageView) else parent.children
        box.children = (*box.children, widget.root)
        return widget

    def _render_header(self) -> None:
        view = self._view
        self._header_seen = view.header_version
        if self._chosen is None and view.model and view.model != self._model.value:
            self._show_models(list(self._model.options), view.model)
        mark = _DONE_MARKS.get(view.status)
        if mark is not None and self._spinner.value:
            self._spinner.value = ""  # the turn is over: the mark says how it ended
        if self._waiting and mark is None:
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
            parts.append(f"${view.cost_usd:.4f}")
        if view.retry is not None and view.status == "retrying":
            retry = view.retry
            code = f" {retry.error_status}" if retry.error_status is not None else ""
            parts.append(
                f"retry {retry.attempt}/{retry.max_retries} ({retry.error}{code}), "
                f"next in {retry.delay_s:.1f} s"
            )
        # Waiting for the user is the one status that must not be missed: it stands out.
        waiting = " byre-waiting" if self._waiting and mark is None else ""
        self._status.value = (
            f'<span class="byre-status{waiting}" role="status" aria-live="polite"'
            f' style="opacity:0.75">{escape_text(" · ".join(parts))}</span>'
        )

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
