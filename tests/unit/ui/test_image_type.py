"""An image's media type is sniffed once, where its bytes enter (``Image.sniffed`` for an
attached image, the view for a tool's), and travels with the image: the renderers take it from
the view and never sniff again, and a media type the bytes do not bear out never becomes one."""

from __future__ import annotations

import base64
import io
import sys

import pytest
from support import wire as fx
from support.screen import Screen

from byre_jupyter.protocol import Image
from byre_jupyter.protocol import image as control
from byre_jupyter.tools.bounded import ToolLimits
from byre_jupyter.tools.notebook import Cell, NotebookRead, render_notebook
from byre_jupyter.ui.blocks import ImageView, ToolCardView
from byre_jupyter.ui.live import LiveView
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


def test_one_image_with_a_wrong_declared_type_has_the_same_type_in_every_view() -> None:
    """A tool says "image/svg+xml" of PNG bytes: the live view, the saved record, the terminal
    and the turn's result (``-o VAR``) all say image/png, and none of them says SVG."""
    wires = _tool_image_turn(fx.PNG, "image/svg+xml")
    loop = fx.ManualLoop()
    view = TurnView("analysis", "p", clock=loop.time)
    live = LiveView(
        view, models=["opus"], on_stop=lambda: None, on_model=lambda _m: None, loop=loop
    )
    screen = Screen(live)
    for message in fx.parse_all(wires):
        fx.settle(view, message)
        live.update(view.apply(message))
        loop.advance(0.001)
    live.finish()
    (card,) = [b for b in view.walk() if isinstance(b, ToolCardView)]
    (piece,) = screen.kids(card.id, "images")
    saved = [key for data, _ in static_outputs(view) for key in data if key.startswith("image/")]
    (result_image,) = fx.summarise(wires).images
    assert piece["type"] == "image/png"
    assert saved == ["image/png"]
    printed = io.StringIO()
    TerminalPrinter(printed).update(view, list(view.walk()))
    assert "[image: image/png, " in printed.getvalue()
    assert result_image.media_type == "image/png" and result_image.data == fx.PNG


def test_a_notebook_output_whose_image_is_no_image_is_not_sent_to_claude_as_one() -> None:
    """A saved notebook is untrusted: an ``image/png`` output holding SVG with script reaches
    Claude as a note, never as an image item (the view would not show it as one either)."""
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'
    output = {"output_type": "display_data", "data": {"image/png": base64.b64encode(svg).decode()}}
    read = NotebookRead(cells=(Cell("c1", "code", "show()", 1, (output,)),), where="n", live=True)
    result = render_notebook(
        read, [0], asking=None, ran=lambda _i: None, images=True, limits=ToolLimits()
    )
    assert not [item for item in result.content if item["type"] == "image"]
    assert "not an image" in result.content[0]["text"]
