"""Lazy access to the user's plotting and image libraries, and matplotlib figure tracking.

Nothing here imports matplotlib, PIL, numpy or pandas: a class is looked up only if the user's
code already imported its module (``sys.modules``), so loading the extension stays light and an
object can only be one of these types if its module is loaded anyway.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from io import BytesIO
from typing import Any

from ..protocol import Image

__all__ = [
    "FigureTracker",
    "as_figure",
    "close_figure",
    "lazy_class",
    "pil_to_png",
    "render_figure",
]


def lazy_class(module: str, name: str) -> type | None:
    """``module.name`` if ``module`` is already imported, else None."""
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def is_instance(obj: object, module: str, name: str) -> bool:
    cls = lazy_class(module, name)
    return cls is not None and isinstance(obj, cls)


def as_figure(obj: object) -> Any | None:
    """The matplotlib Figure for a Figure or Axes, else None."""
    if is_instance(obj, "matplotlib.figure", "Figure"):
        return obj
    if is_instance(obj, "matplotlib.axes", "Axes"):
        return getattr(obj, "figure", None)
    return None


def render_figure(figure: Any, dpi: int) -> Image:
    buffer = BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return Image(buffer.getvalue(), "image/png")  # we asked for PNG: no sniffing needed


def close_figure(figure: Any) -> None:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(figure)


def pil_to_png(image: Any, max_side: int = 1600) -> Image:
    """A PIL image as PNG, scaled down to ``max_side`` and converted to a PNG-friendly mode."""
    if image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        image = image.convert("RGBA" if "A" in image.mode else "RGB")
    if max(image.size) > max_side:
        image = image.copy()
        image.thumbnail((max_side, max_side))
    buffer = BytesIO()
    image.save(buffer, format="PNG")
    return Image(buffer.getvalue(), "image/png")


def _open_figures() -> list[Any]:
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return []
    return [manager.canvas.figure for manager in helpers.Gcf.get_all_fig_managers()]


class FigureTracker:
    """Which pyplot figures a run created, and which already-open ones it changed.

    A change to any artist marks its figure stale and calls ``figure.stale_callback``, so the
    tracker chains its own callback onto the figures open at :meth:`start` for the run's duration.
    """

    def __init__(self) -> None:
        self._before: dict[int, Any] = {}
        self._touched: set[int] = set()
        self._wrapped: list[tuple[Any, Callable[..., None], Any]] = []

    def start(self) -> None:
        for figure in _open_figures():
            self._before[id(figure)] = figure
            original = figure.stale_callback

            def callback(
                artist: Any, value: Any, figure: Any = figure, original: Any = original
            ) -> None:
                self._touched.add(id(figure))
                if original is not None:
                    original(artist, value)

            figure.stale_callback = callback
            self._wrapped.append((figure, callback, original))

    def stop(self) -> tuple[list[Any], list[Any]]:
        """Restore the callbacks; return (figures created by the run, open figures it changed)."""
        for figure, callback, original in self._wrapped:
            if figure.stale_callback is callback:
                figure.stale_callback = original
        self._wrapped.clear()
        now = _open_figures()
        created = [f for f in now if self._before.get(id(f)) is not f]
        changed = [f for f in now if self._before.get(id(f)) is f and id(f) in self._touched]
        return created, changed
