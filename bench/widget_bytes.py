"""Comm bytes of the live view per turn, against the final record's bytes.

A Markdown answer (paragraphs, a list, a code block, a table, repeated to the size asked) is
streamed in process into :class:`~byre_jupyter.ui.live.LiveView`, four characters a delta, at
the scripted demo's fast pace (2 ms apart) and at its slow one (20 ms), on a hand-stepped loop
(``tests/support/wire.py``'s ``ManualLoop``: the coalescer's 12.5 Hz flushes at loop time, no
sleeps). Every comm the turn opens is counted with what it carries: the ``comm_open`` data (the
model's whole state, the module's code and stylesheet included) and each ``comm_msg`` (state
updates), as the JSON the kernel would send, without the Jupyter message envelope (a header of
a few hundred bytes per message: the message counts are given). The final bundle is the JSON
of the record's outputs (``static_outputs``: Markdown, HTML, text and metadata) that replace
the view. Goals: at most 2x the bundle for a 22,000-character
answer, at most 4x for a 1,500-character one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from .common import Section

__all__ = ["answer", "measure", "turn_bytes"]

_PARAGRAPH = (
    "The frame's `groupby` keeps **one row per key**, so the totals below add up to the "
    "column's sum; a key that appears twice in the input appears once here, with both "
    "values added. Missing values are skipped (`skipna=True`), which is why the count "
    "column can be smaller than the number of rows you started with.\n\n"
)
_LIST = "- first, read the file\n- then group by `region`\n- at last, sort by total\n\n"
_CODE = (
    "```python\nimport pandas as pd\n\ndf = pd.read_csv('sales.csv')\n"
    "totals = df.groupby('region')['amount'].sum().sort_values()\nprint(totals)\n```\n\n"
)
_TABLE = "| region | total |\n| --- | ---: |\n| north | 1,204 |\n| south | 981 |\n\n"


def answer(chars: int) -> str:
    """A Markdown answer of about ``chars`` characters (cut at a paragraph)."""
    unit = _PARAGRAPH + _LIST + _PARAGRAPH + _CODE + _TABLE
    text = (unit * (chars // len(unit) + 1))[:chars]
    return text.rstrip() + "\n"


@contextmanager
def _counting() -> Iterator[dict[str, int]]:
    """Count what every comm opened meanwhile carries (open data, then each message)."""
    import comm

    counts = {"bytes": 0, "messages": 0, "opens": 0}

    class Counted:
        def __init__(self, **kwargs: Any) -> None:
            self.comm_id = f"c{counts['opens']}"
            counts["opens"] += 1
            self.kernel = True  # ipywidgets sends only on a comm with a kernel
            self._closed = False
            counts["bytes"] += len(json.dumps(kwargs.get("data") or {}))

        def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
            counts["messages"] += 1
            counts["bytes"] += len(json.dumps(data or {}))
            counts["bytes"] += sum(len(memoryview(b)) for b in buffers or ())

        def on_msg(self, callback: Any) -> None:
            return None

        def on_close(self, callback: Any) -> None:
            return None

        def close(self, *args: Any, **kwargs: Any) -> None:
            self._closed = True

    original = comm.create_comm
    comm.create_comm = Counted
    try:
        yield counts
    finally:
        comm.create_comm = original


def turn_bytes(chars: int, delay: float) -> dict[str, float]:
    """Stream an answer of ``chars`` characters, 4 a delta, ``delay`` s apart, into a live
    view: its comm bytes and messages, and the final bundle's bytes."""
    tests = str(Path(__file__).resolve().parents[1] / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from support import wire as fx

    from byre_jupyter.protocol.messages import parse_message
    from byre_jupyter.ui.coalesce import LoopLike
    from byre_jupyter.ui.live import LiveView
    from byre_jupyter.ui.record import static_outputs
    from byre_jupyter.ui.viewmodel import TurnView

    text = answer(chars)
    loop = fx.ManualLoop()
    view = TurnView("analysis", "Sum the sales by region", clock=loop.time)
    b = fx.Builder("bytes")
    with _counting() as counts:
        live = LiveView(view, models=["default", "opus", "sonnet"], on_stop=lambda: None,
                        on_model=lambda _m: None, loop=cast(LoopLike, loop),
                        permission_mode="default", on_permission_mode=lambda _m: None)  # fmt: skip
        for wire in (b.init(), b.status(), b.message_start("m")):
            live.update(view.apply(parse_message(wire)))
        live.update(view.apply(parse_message(b.block_start("m", 0, {"type": "text", "text": ""}))))
        for i in range(0, len(text), 4):
            live.update(view.apply(parse_message(b.text_delta("m", 0, text[i : i + 4]))))
            loop.advance(delay)
        result = parse_message(b.result(text))
        fx.settle(view, result)
        live.update(view.finish(result))  # type: ignore[arg-type]
        live.finish()
        live.close()
    bundle = sum(
        len(json.dumps(data)) + len(json.dumps(meta)) for data, meta in static_outputs(view)
    )
    return {
        "chars": len(text),
        "bytes": counts["bytes"],
        "messages": counts["messages"],
        "opens": counts["opens"],
        "bundle": bundle,
        "ratio": counts["bytes"] / bundle,
    }


def measure(sizes: tuple[int, ...] = (1_500, 22_000)) -> Section:
    section = Section("widget_bytes", "Live view: comm bytes per turn", __doc__ or "")
    table = section.table(
        "Comm bytes of one turn",
        "answer chars", "pace", "comm bytes", "messages", "models", "final bundle", "ratio",
    )  # fmt: skip
    results: dict[tuple[int, str], dict[str, float]] = {}
    for size in sizes:
        for pace, delay in (("fast (2 ms)", 0.002), ("slow (20 ms)", 0.02)):
            r = results[(size, pace)] = turn_bytes(size, delay)
            # Numbers, not text: the table formats them, and the smoke test reads them.
            table.add(
                int(r["chars"]), pace, int(r["bytes"]), int(r["messages"]), int(r["opens"]),
                int(r["bundle"]), round(r["ratio"], 2),
            )  # fmt: skip
    for size, limit in ((1_500, 4.0), (22_000, 2.0)):
        if size in sizes:
            fast = results[(size, "fast (2 ms)")]["ratio"]
            section.check(
                f"comm bytes ≤ {limit:g}x the final bundle, {size:,}-character answer (fast pace)",
                f"{fast:.2f}x",
                fast <= limit,
            )
    section.notes.append(
        "At the slow pace the flushes carry a few characters each, so the per-message "
        "overhead (the piece's id and offsets, ipywidgets' update frame) and the 1 Hz status "
        "line dominate; the bytes still grow linearly with the answer."
    )
    return section
