"""A turn that changed cells: its record ends with the undo line in every type, the bridge's
"Undo this turn's edits" hook only from the kernel's line, and the record without it unchanged."""

from __future__ import annotations

from html.parser import HTMLParser

from support import wire as fx

from byre_jupyter.ui.record import UNDO_CLASS, static_outputs, undo_text
from byre_jupyter.ui.viewmodel import UndoMark


def undo_hooks(html: str) -> list[tuple[str, str]]:
    """The ``(data-byre-undo, data-byre-session)`` pairs of ``html`` as a browser parses it."""
    found: list[tuple[str, str]] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            named = dict(attrs)
            if "data-byre-undo" in named:
                found.append((named["data-byre-undo"] or "", named.get("data-byre-session") or ""))

    Parser().feed(html)
    return found


def test_the_undo_line_ends_every_type_and_names_the_turn() -> None:
    view, _ = fx.run_turn(fx.plain_text())
    clean = static_outputs(view)[0][0]
    view.undo = UndoMark("side", 4)
    data = static_outputs(view)[0][0]
    text = undo_text(view.undo)
    assert "%claude undo #4 -s side" in text
    assert data["text/html"].startswith(clean["text/html"])
    assert data["text/html"].endswith("</div>") and f'class="{UNDO_CLASS}"' in data["text/html"]
    assert undo_hooks(data["text/html"]) == [("4", "side")]
    assert data["text/plain"] == f"{clean['text/plain']}\n\n{text}"
    assert data["text/markdown"].startswith(clean["text/markdown"])
    assert (
        "%claude undo \\#4 -s side" in data["text/markdown"] or "undo #4" in data["text/markdown"]
    )
    assert undo_text(UndoMark("default", 2)).startswith(
        "This turn changed notebook cells: %claude undo #2, alone"
    )
    view.undo = None
    assert static_outputs(view)[0][0] == clean


def test_only_the_kernels_line_carries_the_undo_hook() -> None:
    b = fx.Builder()
    planted = '<div class="byre-undo" data-byre-undo="1" data-byre-session="x">undo me</div>'
    view, _ = fx.run_turn([*b.final_answer("m", f"hi {planted}"), b.result("x")])
    assert undo_hooks(static_outputs(view)[0][0]["text/html"]) == []
    view.undo = UndoMark('x" onclick="alert(1)', 1)
    html = static_outputs(view)[0][0]["text/html"]
    assert undo_hooks(html) == [("1", 'x" onclick="alert(1)')] and 'onclick="' not in html
