"""Where output goes: live widgets, a streaming static slot, or a terminal.

The choice (``Claude.live``): widgets when an interactive frontend sent the cell. JupyterLab,
Notebook 7, VS Code and Positron all put the cell's ``cellId`` in the execute_request metadata;
nbclient and papermill send no metadata at all (nbclient 0.10 calls ``kc.execute(code, ...)``,
which has no metadata argument), so headless runs create no widget state. Without widgets, the
answer streams as a draft, a window on its tail (:class:`StaticSurface`, ``ui/draft.py``:
sanitized HTML), and the static bundle takes its slot at the end.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from IPython.display import DisplayHandle, display

from ..tools.notebook_run import parent_request
from ..tools.pending_answers import Outputs
from ..ui import LiveView, TerminalPrinter, TurnView, static_outputs
from ..ui.blocks import BlockView
from ..ui.cards import Card, make_card
from ..ui.coalesce import Coalescer
from ..ui.draft import Draft

__all__ = [
    "Restate",
    "Surface",
    "SurfaceControls",
    "current_cell_id",
    "frontend_kind",
    "make_surface",
]


class Surface(Protocol):
    def set_models(self, models: Sequence[str], value: str | None) -> None: ...
    def update(self, changed: Sequence[BlockView]) -> None: ...
    def finish(self, extra: Mapping[str, Any] | None = None) -> None: ...
    def record(self) -> Restate: ...
    def ask(self, tool_name: str, tool_input: Mapping[str, Any]) -> Card | None: ...
    def reject_pending(self, reason: str) -> None: ...
    def show_permission_mode(self, mode: str) -> None: ...
    def show_effort(self, effort: str | None) -> None: ...


def current_cell_id(shell: Any) -> str | None:
    """The ``cellId`` the frontend sent with the running cell, or None (nbclient, papermill,
    terminal IPython): JupyterLab, Notebook 7, VS Code and Positron send it."""
    metadata = parent_request(shell).get("metadata", {})
    cell = metadata.get("cellId") if isinstance(metadata, Mapping) else None
    return cell if isinstance(cell, str) and cell else None


def frontend_kind(shell: Any) -> str:
    """``"lab"`` (an interactive frontend: it can show widgets), ``"headless"`` (a kernel
    with another client, e.g. nbclient), or ``"terminal"`` (plain IPython, no kernel)."""
    if getattr(shell, "kernel", None) is None:
        return "terminal"
    return "lab" if current_cell_id(shell) is not None else "headless"


def _publish_static(view: TurnView, handle: DisplayHandle, *, update: bool) -> None:
    outputs = static_outputs(view)
    data, metadata = outputs[0]
    if update:
        handle.update(data, metadata=metadata, raw=True)
    else:
        handle.display(data, metadata=metadata, raw=True)
    return None


class Keeping(Protocol):
    """Where a turn's cell is followed for a page that goes away (``Slot`` of
    tools/pending_answers.py)."""

    @property
    def kept(self) -> bool: ...
    def showing(self, live: Callable[[], Outputs]) -> None: ...
    def finished(self, outputs: Outputs) -> None: ...
    def waiting(self, waiting: bool) -> None: ...


def _replace_with_static(
    view: TurnView,
    handle: DisplayHandle,
    extra: Mapping[str, Any] | None = None,
    keeping: Keeping | None = None,
) -> None:
    """The end of a turn: the slot gets the whole exchange; each image follows, stored once.
    A page that went away meanwhile gets them when one connects (``keeping``)."""
    outputs = static_outputs(view, extra=extra)
    data, metadata = outputs[0]
    handle.update(data, metadata=metadata, raw=True)
    for extra_data, extra_metadata in outputs[1:]:
        display(extra_data, metadata=extra_metadata, raw=True)
    if keeping is not None:
        keeping.finished(as_outputs(outputs))


def as_outputs(bundles: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> Outputs:
    """``(data, metadata)`` bundles as display outputs for the page, metadata included: a
    finished record keeps its ``byre`` key where the page writes it (labextension/src/
    restore.ts), so a notebook saved after a restore reads as one whose page never went away
    (the read tool's answer, ``%claude history``, the portable record of ``resume --from``)."""
    return [
        {"output_type": "display_data", "data": dict(data), "metadata": dict(metadata)}
        for data, metadata in bundles
    ]


def widget_outputs(widget: Any) -> Outputs:
    """A live widget's view as one output, its models announced to the page again first
    (children before the parents whose state names them): a page that loaded during the
    turn does not know them, and asks the kernel for them only after the cell ends."""
    for each in _tree(widget, set()):
        comm = getattr(each, "comm", None)
        if comm is None:
            continue
        from ipywidgets.widgets.widget import __protocol_version__, _remove_buffers

        state, buffer_paths, buffers = _remove_buffers(each.get_state())
        comm.open(
            data={"state": state, "buffer_paths": buffer_paths},
            metadata={"version": __protocol_version__},
            buffers=buffers,
        )
    bundle = widget._repr_mimebundle_()
    return [{"output_type": "display_data", "data": dict(bundle or {}), "metadata": {}}]


def _tree(widget: Any, seen: set[int]) -> Iterator[Any]:
    """Our widget and every widget its traits hold, children first (each once)."""
    from ipywidgets import Widget

    if id(widget) in seen:
        return
    seen.add(id(widget))
    for name in widget.keys:
        value = getattr(widget, name, None)
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, Widget):
                yield from _tree(item, seen)
    yield widget


#: Shows a finished turn's record again in its output, with other ``extra`` metadata.
Restate = Callable[[Mapping[str, Any] | None], None]


def _restate(view: TurnView, handle: DisplayHandle, extra: Mapping[str, Any] | None) -> None:
    """The finished record again with other ``extra`` metadata (its stale mark changed, or a
    later turn took over the portable record); its images, separate outputs, stay as they
    are."""
    data, metadata = static_outputs(view, image_budget=0, extra=extra)[0]
    handle.update(data, metadata=metadata, raw=True)


def _record(view: TurnView, handle: DisplayHandle) -> Restate:
    """:func:`_restate` for one record, holding its view and output slot only: a turn's node
    keeps it while the conversation tree lives, where the surface holds the live widgets, and
    through their controls the whole turn (58.9 KiB a short turn in a kernel, kept for every
    turn: bench/RESULTS.md, memory)."""
    return functools.partial(_restate, view, handle)


@dataclass(frozen=True)
class SurfaceControls:
    """What a cell's surface offers the user and whom it tells (``make_surface``)."""

    models: Sequence[str]
    on_stop: Callable[[], None]
    on_model: Callable[[str], None]
    loop: asyncio.AbstractEventLoop
    #: None: no permission menu (a surface that cannot change the mode, such as the bench's).
    permission_mode: str | None = None
    #: The modes the menu offers (app/policy.py ``offered_modes``); None: every mode.
    modes: Sequence[str] | None = None
    on_permission_mode: Callable[[str], None] | None = None
    #: The session's effort (None: the model's default); no ``on_effort``: no effort menu.
    effort: str | None = None
    on_effort: Callable[[str], None] | None = None
    background: bool = False
    #: Stops one running task (None: no Stop per task).
    on_stop_task: Callable[[str], None] | None = None


class WidgetSurface:
    """A LiveView in a display_id slot, replaced by the static bundle at the end."""

    def __init__(
        self, view: TurnView, controls: SurfaceControls, keeping: Keeping | None = None
    ) -> None:
        self.view = view
        self.loop = controls.loop
        self.keeping = keeping
        self.live = LiveView(
            view,
            models=controls.models,
            on_stop=controls.on_stop,
            on_model=controls.on_model,
            loop=controls.loop,
            permission_mode=controls.permission_mode,
            modes=controls.modes,
            on_permission_mode=controls.on_permission_mode,
            effort=controls.effort,
            on_effort=controls.on_effort,
            on_stop_task=controls.on_stop_task,
            kept=keeping is not None and keeping.kept,
        )
        self.pending: list[Card] = []
        self.handle = DisplayHandle()
        self.handle.display(self.live.widget)
        if keeping is not None:  # a page that loads during the turn is shown it again
            keeping.showing(functools.partial(widget_outputs, self.live.widget))

    def ask(self, tool_name: str, tool_input: Mapping[str, Any]) -> Card | None:
        card = make_card(tool_name, tool_input, loop=self.loop, own=self.live.own)
        self.pending.append(card)
        card.decision.add_done_callback(lambda _f: self._settled(card))
        self.live.show_approval(card.widget)
        # Every card (approval, question, plan) starts and stops waiting here: the pages that
        # do not show this cell's output are told, so they can say so (docs/bridge.md).
        if self.keeping is not None:
            self.keeping.waiting(True)
        return card

    def _settled(self, card: Card) -> None:
        if card in self.pending:
            self.pending.remove(card)
            if self.keeping is not None:
                self.keeping.waiting(False)
        self.live.hide_approval(card.widget)

    def reject_pending(self, reason: str) -> None:
        for card in list(self.pending):
            card.reject(reason)

    def show_permission_mode(self, mode: str) -> None:
        self.live.set_permission_mode(mode)

    def show_effort(self, effort: str | None) -> None:
        self.live.set_effort(effort)

    def set_models(self, models: Sequence[str], value: str | None) -> None:
        self.live.set_models(models, value)

    def update(self, changed: Sequence[BlockView]) -> None:
        self.live.update(changed)

    def finish(self, extra: Mapping[str, Any] | None = None) -> None:
        self.reject_pending("The turn ended before an answer.")
        try:
            self.live.finish()
            _replace_with_static(self.view, self.handle, extra, self.keeping)
        finally:
            self.live.close()

    def record(self) -> Restate:
        return _record(self.view, self.handle)


class _NoControls:
    """For surfaces without widgets: no model menu, and nobody to click, so permission prompts
    get the configured headless policy (``ask`` returns None)."""

    def set_models(self, models: Sequence[str], value: str | None) -> None:
        return None

    def ask(self, tool_name: str, tool_input: Mapping[str, Any]) -> Card | None:
        return None

    def reject_pending(self, reason: str) -> None:
        return None

    def show_permission_mode(self, mode: str) -> None:
        return None

    def show_effort(self, effort: str | None) -> None:
        return None


class StaticSurface(_NoControls):
    """No widgets: a draft while the turn runs (``ui/draft.py``: the window on the answer's
    tail, in one slot), the static bundle in that slot at the end, its images after it.

    A background (``--bg``) turn refreshes its whole bundle in place instead: a notebook saved
    before it ends keeps a whole record, whose note says the answer was still coming.
    """

    def __init__(
        self,
        view: TurnView,
        *,
        loop: asyncio.AbstractEventLoop,
        interval: float = 0.25,
        draft: bool = True,
        keeping: Keeping | None = None,
    ) -> None:
        self.view = view
        self.keeping = keeping
        self.handle = DisplayHandle()
        self._draft = Draft(view) if draft else None
        if self._draft is not None:
            self.handle.display(self._draft.refresh(), raw=True)
        else:
            _publish_static(view, self.handle, update=False)
        if keeping is not None:
            keeping.showing(lambda: as_outputs(static_outputs(view, image_budget=0)[:1]))
        self._coalescer = Coalescer(loop, self._flush, interval)

    def _flush(self, _ids: Any) -> None:
        if self._draft is not None:
            self.handle.update(self._draft.refresh(), raw=True)
        else:
            _publish_static(self.view, self.handle, update=True)

    def update(self, changed: Sequence[BlockView]) -> None:
        if changed:
            self._coalescer.mark([b.id for b in changed])

    def finish(self, extra: Mapping[str, Any] | None = None) -> None:
        self._coalescer.close()
        _replace_with_static(self.view, self.handle, extra, self.keeping)

    def record(self) -> Restate:
        return _record(self.view, self.handle)


class TerminalSurface(_NoControls):
    """Plain IPython: print the stream as it grows."""

    def __init__(self, view: TurnView) -> None:
        self.view = view
        self.printer = TerminalPrinter()

    def update(self, changed: Sequence[BlockView]) -> None:
        self.printer.update(self.view, changed)

    def finish(self, extra: Mapping[str, Any] | None = None) -> None:
        self.printer.update(self.view, list(self.view.walk()))

    def record(self) -> Restate:
        return lambda extra: None  # printed text has no metadata


def make_surface(
    kind: str,
    live: bool | str,
    view: TurnView,
    controls: SurfaceControls,
    keeping: Keeping | None = None,
) -> Surface:
    """The turn's surface; ``keeping`` follows its cell for a page that goes away (None: no
    cell id, or no bridge)."""
    if kind == "terminal":
        return TerminalSurface(view)
    widgets = live is True or (live == "auto" and kind == "lab")
    if widgets:
        return WidgetSurface(view, controls, keeping)
    return StaticSurface(view, loop=controls.loop, draft=not controls.background, keeping=keeping)
