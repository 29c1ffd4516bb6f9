"""An image's media type is sniffed once, where its bytes enter (``Image.sniffed`` for an
attached image, the view for a tool's), and travels with the image: the renderers take it from
the view and never sniff again, and a media type the bytes do not bear out never becomes one."""

from __future__ import annotations

import base64
import io
import sys

import pytest
from support import wire as fx

from byre_jupyter.protocol import Image, control
from byre_jupyter.ui.blocks import ImageView
from byre_jupyter.ui.record import static_outputs, terminal_text, turn_html, turn_markdown
from byre_jupyter.ui.terminal import TerminalPrinter
from byre_jupyter.ui.viewmodel import TurnView


def _tool_image_turn(data: bytes, claimed: str) -> list[fx.Wire]:
    b = fx.Builder("img")
    image = {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": claimed}
    return [
        b.init(),
        b.status(),
        b.message_start("msg_img_1"),
        *b.streamed_tool("msg_img_1", 0, "toolu_img", "mcp__byre__python_exec", {"code": "x"}),
        b.message_stop("msg_img_1"),
        b.tool_result("toolu_img", [image]),
        *b.final_answer("msg_img_2", "Done."),
        b.result("Done.", num_turns=2),
    ]


def _count_sniffs(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every call of the one sniffer, under each name a module of ours bound it to."""
    calls: list[bytes] = []
    original = control.sniff_image_type

    def counting(data: bytes) -> str | None:
        calls.append(data)
        return original(data)

    for name, module in list(sys.modules.items()):
        bound = getattr(module, "sniff_image_type", None)
        if name.startswith("byre_jupyter") and bound is original:
            monkeypatch.setattr(module, "sniff_image_type", counting)
    return calls


def _images(view: TurnView) -> list[ImageView]:
    return [block for block in view.walk() if isinstance(block, ImageView)]


def test_each_image_is_sniffed_once_on_its_way_to_every_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _count_sniffs(monkeypatch)
    attached = Image.sniffed(fx.PNG)
    assert attached is not None
    view, _ = fx.run_turn(_tool_image_turn(fx.PNG2, "image/png"), attached=(attached,))
    # The static record, its Markdown and HTML, the terminal text: none sniffs again.
    outputs = static_outputs(view)
    turn_html(view)
    turn_markdown(view)
    terminal_text(view)
    assert sorted(calls) == sorted([fx.PNG, fx.PNG2])
    mimes = [key for data, _meta in outputs for key in data if key.startswith("image/")]
    assert mimes == ["image/png", "image/png"]


def test_a_tool_image_carries_the_type_of_its_bytes_not_the_claimed_one() -> None:
    view, _ = fx.run_turn(_tool_image_turn(fx.PNG, "image/svg+xml"))
    (image,) = _images(view)
    assert image.media_type == "image/png"


def test_bytes_that_are_no_image_carry_no_media_type_and_are_never_shown_as_one() -> None:
    view, _ = fx.run_turn(_tool_image_turn(b"<svg onload=alert(1)>", "image/png"))
    (image,) = _images(view)
    assert image.media_type is None
    outputs = static_outputs(view)
    assert not [key for data, _meta in outputs for key in data if key.startswith("image/")]
    assert any("unsupported image data" in data.get("text/plain", "") for data, _ in outputs)
    printed = io.StringIO()
    TerminalPrinter(printed).update(view, list(view.walk()))
    assert "[image: unsupported image data, 21 bytes" in printed.getvalue()
