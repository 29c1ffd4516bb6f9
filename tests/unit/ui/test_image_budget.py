"""Images saved into the notebook are bounded per turn (two turns made a 107 MB file).

Two 4 MB tool-result images under the default 5 MB budget: the first is saved whole, the second
is downscaled when Pillow is importable and replaced by a note with its type and size when not.
"""

from __future__ import annotations

import base64
import io
import random
import struct
import sys
import zlib

import pytest
from support import wire as fx

from byre_jupyter.app.config import Claude
from byre_jupyter.ui import record
from byre_jupyter.ui.record import static_outputs
from byre_jupyter.ui.viewmodel import TurnView

MB = 2**20
SIDE = 1200  # 1200 x 1200 RGB noise: about 4.1 MB as PNG (noise does not compress)


def noise_png(seed: int, side: int = SIDE) -> bytes:
    rng = random.Random(seed)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + rng.randbytes(side * 3) for _ in range(side))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 1))
        + chunk(b"IEND", b"")
    )


BIG = [noise_png(1), noise_png(2)]


def two_big_images_turn() -> list[fx.Wire]:
    b = fx.Builder("big")
    wires: list[fx.Wire] = [b.init()]
    for n, png in enumerate(BIG, start=1):
        image = {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(png).decode(),
            },
        }
        tool = {
            "type": "tool_use",
            "id": f"t{n}",
            "name": "mcp__byre__python_exec",
            "input": {"code": "plot()"},
        }
        wires += [b.assistant(f"m{n}", tool), b.tool_result(f"t{n}", [image])]
    return [*wires, *b.final_answer("m9", "Two plots."), b.result("Two plots.", num_turns=3)]


def saved_images(outputs: list[tuple[dict[str, str], dict[str, object]]]) -> list[bytes]:
    return [
        base64.b64decode(data[mime])
        for data, _ in outputs[1:]
        for mime in data
        if mime.startswith("image/")
    ]


def test_the_two_images_are_about_4_mb_each() -> None:
    assert all(4 * MB < len(png) < 4.5 * MB for png in BIG), [len(p) for p in BIG]


def test_without_pillow_the_image_over_budget_becomes_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # `from PIL import Image` raises ImportError
    view, _ = fx.run_turn(two_big_images_turn())
    outputs = static_outputs(view)
    assert len(outputs) == 3
    assert saved_images(outputs) == [BIG[0]]
    note = outputs[2][0]
    assert set(note) == {"text/plain"}
    text = note["text/plain"]
    assert "image 2" in text and "image/png" in text and f"{len(BIG[1]) / MB:.1f} MB" in text
    assert "not saved" in text and "5.0 MB" in text
    assert sum(map(len, saved_images(outputs))) <= 5 * MB


def test_with_pillow_the_image_over_budget_is_downscaled_to_fit() -> None:
    pytest.importorskip("PIL")
    view, _ = fx.run_turn(two_big_images_turn())
    outputs = static_outputs(view)
    images = saved_images(outputs)
    assert len(images) == 2 and images[0] == BIG[0]
    assert sum(map(len, images)) <= 5 * MB
    from PIL import Image

    with Image.open(io.BytesIO(images[1])) as small:
        assert small.format == "PNG" and 16 <= small.width < SIDE and small.height == small.width
    caption = outputs[2][0]["text/plain"]
    assert f"downscaled from {SIDE}x{SIDE}" in caption and "image 2" in caption


def test_an_image_too_large_to_decode_safely_becomes_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("PIL")
    monkeypatch.setattr(record, "_MAX_DECODE_PIXELS", SIDE * SIDE - 1)
    view, _ = fx.run_turn(two_big_images_turn())
    outputs = static_outputs(view)
    assert saved_images(outputs) == [BIG[0]]
    assert "not saved" in outputs[2][0]["text/plain"]


def test_the_budget_comes_from_the_view_or_the_keyword(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    assert TurnView("s", "p").image_budget == 5 * MB
    view, _ = fx.run_turn(two_big_images_turn())
    assert saved_images(static_outputs(view, image_budget=10 * MB)) == BIG
    assert saved_images(static_outputs(view, image_budget=0)) == []
    view.image_budget = 9 * MB
    assert saved_images(static_outputs(view)) == BIG


def test_the_trait_says_what_it_does() -> None:
    trait = Claude.class_traits()["max_saved_images_mb"]
    assert Claude().max_saved_images_mb == 5.0
    assert trait.help and "Pillow" in trait.help and trait.metadata.get("config") is True
