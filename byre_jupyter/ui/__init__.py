"""Rendering of ``%%claude`` turns: a pure view model, a live widget, static bundles.

``viewmodel`` (pure) folds protocol messages into blocks; ``static`` (pure) renders them as a
shareable mimebundle; ``live`` shows them as ipywidgets while the turn runs, throttled by
``coalesce``; ``terminal`` prints them for IPython without a frontend. Imports only
``byre_jupyter.protocol`` and the approval decision types (``session/permissions.py``) from the
rest of the package.

``LiveView`` is imported lazily so the pure parts load without ipywidgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from byre_jupyter.ui.coalesce import Coalescer
from byre_jupyter.ui.markdown import render_markdown
from byre_jupyter.ui.record import Output, static_outputs, terminal_text
from byre_jupyter.ui.terminal import TerminalPrinter
from byre_jupyter.ui.viewmodel import (
    BlockView,
    ImageView,
    NoticeView,
    RetryInfo,
    Status,
    TextView,
    ThinkingView,
    ToolCardView,
    TurnView,
)

if TYPE_CHECKING:
    from byre_jupyter.ui.live import LiveView

__all__ = [
    "BlockView",
    "Coalescer",
    "ImageView",
    "LiveView",
    "NoticeView",
    "Output",
    "RetryInfo",
    "Status",
    "TerminalPrinter",
    "TextView",
    "ThinkingView",
    "ToolCardView",
    "TurnView",
    "render_markdown",
    "static_outputs",
    "terminal_text",
]


def __getattr__(name: str) -> Any:
    if name == "LiveView":
        from byre_jupyter.ui.live import LiveView

        return LiveView
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
