"""The live view's message rate while a long answer streams (rendering).

Every widget state update is one comm message to the frontend. At 2,000 deltas a second of
Markdown prose (paragraphs, code spans, emphasis) the view must send at most 20 of them a
second in all (the text and the header together), and still update the text at least 10 times a
second so streaming does not look choppy. A fake clock drives the coalescer: no sleeps."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, cast

import ipywidgets as W
import pytest
from support import wire as fx

from byre_jupyter.protocol.messages import parse_message
from byre_jupyter.ui.coalesce import LoopLike
from byre_jupyter.ui.live import LiveView
from byre_jupyter.ui.viewmodel import TurnView

WORDS = [
    "the",
    "model",
    "`df.groupby()`",
    "returns",
    "**note**",
    "_maybe_",
    "42%",
    "数据",
    "é",
    "(see",
    "below)",
    "array",
]


def prose(n: int, seed: int = 0) -> list[str]:
    """``n`` deltas of a word or two; a paragraph break every 40."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        piece = " ".join(rng.choice(WORDS) for _ in range(rng.choice((1, 2)))) + " "
        out.append(piece + ("\n\n" if i % 40 == 39 else ""))
    return out


@pytest.mark.skipif(
    tuple(int(p) for p in W.__version__.split(".")[:2]) < (8, 1),
    reason="ipywidgets 8.0 sends no update without a kernel's comm (8.1+ always has one): "
    "the coalescer is the same code there, measured on the newer releases",
)
def test_a_fast_stream_sends_at_most_20_messages_a_second_and_at_least_10_text_updates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sends: list[tuple[float, str]] = []
    loop = fx.ManualLoop()
    original = W.Widget._send

    def counting(self: W.Widget, msg: Any, buffers: Any = None) -> None:
        if isinstance(msg, dict) and msg.get("method") == "update":
            sends.append((loop.time(), ",".join(sorted(msg["state"]))))
        original(self, msg, buffers)

    monkeypatch.setattr(W.Widget, "_send", counting)
    view = TurnView("s", "go", clock=loop.time)
    live = LiveView(
        view, models=["default"], on_stop=lambda: None, on_model=lambda _m: None,
        loop=cast(LoopLike, loop),
    )  # fmt: skip
    b = fx.Builder()
    live.update(view.apply(parse_message(b.message_start("m"))))
    live.update(view.apply(parse_message(b.block_start("m", 0, {"type": "text", "text": ""}))))
    loop.advance(1.0)
    deltas, seconds = prose(10_000), 5.0
    start = loop.time()
    sends.clear()
    for piece in deltas:
        live.update(view.apply(parse_message(b.text_delta("m", 0, piece))))
        loop.advance(seconds / len(deltas))
    assert loop.time() - start == pytest.approx(seconds)
    kinds = Counter(state for _t, state in sends)
    assert len(sends) / seconds <= 20, kinds  # 20 Hz flushes made 23/s here, 25/s in bench
    text_updates = sum(n for state, n in kinds.items() if "changes" in state.split(","))
    assert text_updates / seconds >= 10, kinds  # the growing text
    # Never a burst either: at most 20 messages in any one second of the stream.
    for second in range(int(seconds)):
        window = [t for t, _s in sends if start + second <= t < start + second + 1]
        assert len(window) <= 20, (second, len(window))
    live.finish()
    live.close()
