"""Where output goes: live widgets, a streaming static slot, or a terminal.

The choice (``Claude.live``): widgets when an interactive frontend sent the cell. JupyterLab,
Notebook 7, VS Code and Positron all put the cell's ``cellId`` in the execute_request metadata;
nbclient and papermill send no metadata at all (nbclient 0.10 calls ``kc.execute(code, ...)``,
which has no metadata argument), so headless runs create no widget state. Without widgets, the
same ``display_id`` slot shows the static bundle, refreshed a few times a second.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from IPython.display import DisplayHandle, display

from ..ui import LiveView, TerminalPrinter, TurnView, static_outputs
from ..ui.approval import ApprovalCard
from ..ui.blocks import BlockView
from ..ui.coalesce import Coalescer

__all__ = ["Surface", "frontend_kind", "make_surface"]


class Surface(Protocol):
    def set_models(self, models: Sequence[str], value: str | None) -> None: ...
    def update(self, changed: Sequence[BlockView]) -> None: ...
    def finish(self) -> None: ...
    def ask(self, tool_name: str, tool_input: Mapping[str, Any]) -> ApprovalCard | None: ...
    def reject_pending(self, reason: str) -> None: ...
    def show_permission_mode(self, mode: str) -> None: ...


def frontend_kind(shell: Any) -> str:
    """``"lab"`` (an interactive frontend: it can show widgets), ``"headless"`` (a kernel
    with another client, e.g. nbclient), or ``"terminal"`` (plain IPython, no kernel)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return "terminal"
    forced = os.environ.get("BYRE_LIVE")
    if forced in ("0", "1"):
        return "lab" if forced == "1" else "headless"
    try:
        parent = kernel.get_parent("shell")
    except TypeError:  # older ipykernel signature
        parent = kernel.get_parent()
    metadata = parent.get("metadata", {}) if isinstance(parent, Mapping) else {}
    if isinstance(metadata, Mapping) and metadata.get("cellId"):
        return "lab"
    return "headless"


def _publish_static(view: TurnView, handle: DisplayHandle, *, update: bool) -> None:
    outputs = static_outputs(view)
    data, metadata = outputs[0]
    if update:
        handle.update(data, metadata=metadata, raw=True)
    else:
        handle.display(data, metadata=metadata, raw=True)
    return None


def _replace_with_static(view: TurnView, handle: DisplayHandle) -> None:
    """The end of a turn: the slot gets the whole exchange; each image follows, stored once."""
    outputs = static_outputs(view)
    data, metadata = outputs[0]
    handle.update(data, metadata=metadata, raw=True)
    for extra_data, extra_metadata in outputs[1:]:
        display(extra_data, metadata=extra_metadata, raw=True)


class WidgetSurface:
    """A LiveView in a display_id slot, replaced by the static bundle at the end."""

    def __init__(
        self,
        view: TurnView,
        *,
        models: Sequence[str],
        on_stop: Callable[[], None],
        on_model: Callable[[str], None],
        loop: asyncio.AbstractEventLoop,
        permission_mode: str | None = None,
        on_permission_mode: Callable[[str], None] | None = None,
    ) -> None:
        self.view = view
        self.loop = loop
        self.live = LiveView(
            view,
            models=models,
            on_stop=on_stop,
            on_model=on_model,
            loop=loop,
            permission_mode=permission_mode,
            on_permission_mode=on_permission_mode,
        )
        self.pending: list[ApprovalCard] = []
        self.handle = DisplayHandle()
        self.handle.display(self.live.widget)

    def ask(self, tool_name: str, tool_input: Mapping[str, Any]) -> ApprovalCard | None:
        card = ApprovalCard(tool_name, tool_input, loop=self.loop, own=self.live.own)
        self.pending.append(card)
        card.decision.add_done_callback(lambda _f: self._settled(card))
        self.live.show_extra(card.widget)
        return card

    def _settled(self, card: ApprovalCard) -> None:
        if card in self.pending:
            self.pending.remove(card)
        self.live.hide_extra(card.widget)

    def reject_pending(self, reason: str) -> None:
        for card in list(self.pending):
            card.reject(reason)

    def show_permission_mode(self, mode: str) -> None:
        self.live.set_permission_mode(mode)

    def set_models(self, models: Sequence[str], value: str | None) -> None:
        self.live.set_models(models, value)

    def update(self, changed: Sequence[BlockView]) -> None:
        self.live.update(changed)

    def finish(self) -> None:
        self.reject_pending("The turn ended before an answer.")
        try:
            self.live.finish()
            _replace_with_static(self.view, self.handle)
        finally:
            self.live.close()


class _NoControls:
    """For surfaces without widgets: no model menu, and nobody to click, so permission prompts
    get the configured headless policy (``ask`` returns None)."""

    def set_models(self, models: Sequence[str], value: str | None) -> None:
        return None

    def ask(self, tool_name: str, tool_input: Mapping[str, Any]) -> ApprovalCard | None:
        return None

    def reject_pending(self, reason: str) -> None:
        return None

    def show_permission_mode(self, mode: str) -> None:
        return None


class StaticSurface(_NoControls):
    """No widgets: the static bundle in a display_id slot, refreshed ~4 times a second."""

    def __init__(
        self, view: TurnView, *, loop: asyncio.AbstractEventLoop, interval: float = 0.25
    ) -> None:
        self.view = view
        self.handle = DisplayHandle()
        _publish_static(view, self.handle, update=False)
        self._coalescer = Coalescer(
            loop, lambda _ids: _publish_static(view, self.handle, update=True), interval
        )

    def update(self, changed: Sequence[BlockView]) -> None:
        if changed:
            self._coalescer.mark([b.id for b in changed])

    def finish(self) -> None:
        self._coalescer.close()
        _replace_with_static(self.view, self.handle)


class TerminalSurface(_NoControls):
    """Plain IPython: print the stream as it grows."""

    def __init__(self, view: TurnView) -> None:
        self.view = view
        self.printer = TerminalPrinter()

    def update(self, changed: Sequence[BlockView]) -> None:
        self.printer.update(self.view, changed)

    def finish(self) -> None:
        self.printer.update(self.view, list(self.view.walk()))


def make_surface(
    kind: str,
    live: bool | str,
    view: TurnView,
    *,
    models: Sequence[str],
    on_stop: Callable[[], None],
    on_model: Callable[[str], None],
    loop: asyncio.AbstractEventLoop,
    permission_mode: str | None = None,
    on_permission_mode: Callable[[str], None] | None = None,
) -> Surface:
    if kind == "terminal":
        return TerminalSurface(view)
    widgets = live is True or (live == "auto" and kind == "lab")
    if widgets:
        return WidgetSurface(
            view,
            models=models,
            on_stop=on_stop,
            on_model=on_model,
            loop=loop,
            permission_mode=permission_mode,
            on_permission_mode=on_permission_mode,
        )
    return StaticSurface(view, loop=loop)
