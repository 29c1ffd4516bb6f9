"""Code that runs *inside* the benchmark kernel (imported by cells as ``bench.inkernel``).

* :func:`replay_render`: benchmark 3. Parses a recorded text turn up front, then feeds the
  messages at a fixed pace through the real rendering pipeline of ``%%claude``
  (:class:`~byre_jupyter.ui.TurnView` → ``WidgetSurface`` = :class:`~byre_jupyter.ui.LiveView`
  with its :class:`~byre_jupyter.ui.Coalescer`, then the static replacement) and reports wall
  time, kernel CPU (``time.process_time()``) and the coalescer's flush count.
* :func:`install_latency_hooks` / :func:`latency_report`: benchmark 4. Monkeypatches (in this
  kernel only; no product code changes) ``LineSplitter.split`` to stamp when each numbered
  text delta's line leaves the transport's splitter, and ``ipywidgets.Widget._send`` to stamp
  when a widget ``update`` carrying rendered text is handed to the comm (i.e. queued on
  IOPub). Latency of delta *i* = first send whose text already contains token *i* - the read
  stamp of *i*.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

__all__ = ["install_latency_hooks", "latency_report", "replay_render"]


class _NoSurface:
    """A surface that shows nothing: the replay's own cost (its pacing), for a baseline."""

    class live:
        class coalescer:
            flush_count = 0

    def update(self, changed: Any) -> None:
        pass

    def finish(self) -> None:
        pass


async def replay_render(path: str, duration: float, baseline: bool = False) -> dict[str, Any]:
    """Replay the turn in ``path`` over ``duration`` seconds through the widget surface (or,
    with ``baseline``, into a surface that does nothing)."""
    from byre_jupyter.app.surfaces import SurfaceControls, WidgetSurface
    from byre_jupyter.protocol import parse_message
    from byre_jupyter.ui import TurnView

    with open(path, "rb") as f:
        messages = [parse_message(json.loads(line)) for line in f if line.strip()]
    loop = asyncio.get_running_loop()
    view = TurnView("bench", "replay")
    surface: Any = (
        _NoSurface()
        if baseline
        else WidgetSurface(
            view,
            SurfaceControls(
                models=["default"], on_stop=lambda: None, on_model=lambda _m: None, loop=loop
            ),
        )
    )
    step = duration / max(1, len(messages) - 1)
    cpu0 = time.process_time()
    t0 = loop.time()
    i = 0
    while i < len(messages):
        # Apply every message that is due (like a pipe read delivering a few lines), then
        # sleep until the next one is due; the loop always gets a turn in between.
        now = loop.time()
        while i < len(messages) and t0 + i * step <= now:
            surface.update(view.apply(messages[i]))
            i += 1
        if i < len(messages):
            await asyncio.sleep(max(0.0, t0 + i * step - loop.time()))
    turn_wall = loop.time() - t0
    flushes = surface.live.coalescer.flush_count
    surface.finish()  # final push, static replacement, widget models closed
    return {
        "messages": len(messages),
        "text_chars": sum(len(b.text) for b in view.blocks if hasattr(b, "text")),
        "turn_wall": turn_wall,
        "wall": loop.time() - t0,
        "cpu": time.process_time() - cpu0,
        "flushes": flushes,
    }


# --- latency hooks ------------------------------------------------------------------------------

_READ: dict[int, float] = {}
_SENT: list[tuple[float, int]] = []
_TOKEN_LINE = re.compile(rb'"text_delta","text":"w(\d{5}) "')
_TOKEN_TEXT = re.compile(r"w(\d{5})")
_installed = False


def install_latency_hooks() -> None:
    global _installed
    if _installed:
        return
    import ipywidgets

    from byre_jupyter.protocol.framing import LineSplitter

    split = LineSplitter.split  # what line_batches cuts each chunk with
    send = ipywidgets.Widget._send

    def timed_split(self: Any, chunk: bytes) -> Any:
        items = split(self, chunk)
        now = time.perf_counter()
        for item in items:
            if isinstance(item, bytes) and b'"text_delta"' in item:
                m = _TOKEN_LINE.search(item)
                if m:
                    _READ.setdefault(int(m.group(1)), now)
        return items

    def timed_send(self: Any, msg: Any, buffers: Any = None) -> Any:
        result = send(self, msg, buffers)
        state = msg.get("state") if isinstance(msg, dict) else None
        if isinstance(state, dict):
            # The live view's text travels in its ``changes`` trait: finished blocks once, the
            # growing one as what follows the part the frontend keeps. The newest token any
            # piece of the update holds is the one this send shows.
            tokens = _TOKEN_TEXT.findall(json.dumps(state.get("changes", state.get("value"))))
            if tokens:
                _SENT.append((time.perf_counter(), max(int(token) for token in tokens)))
        return result

    LineSplitter.split = timed_split  # type: ignore[method-assign,unused-ignore]
    ipywidgets.Widget._send = timed_send
    _installed = True


def reset_latency() -> None:
    _READ.clear()
    _SENT.clear()


def latency_report() -> dict[str, Any]:
    """Per-delta latency (ms) from the read stamp to the first send that shows it."""
    sends = sorted(_SENT)
    latencies: list[float] = []
    missing = 0
    j = 0
    for token, read_at in sorted(_READ.items()):
        # Sends are in time order and their max token only grows; find the first covering send.
        while j < len(sends) and sends[j][1] < token:
            j += 1
        if j == len(sends):
            missing += 1
            continue
        latencies.append((sends[j][0] - read_at) * 1000.0)
    return {
        "latencies_ms": latencies,
        "deltas": len(_READ),
        "sends": len(sends),
        "missing": missing,
    }


def text_of(path: str) -> int:
    return Path(path).stat().st_size
