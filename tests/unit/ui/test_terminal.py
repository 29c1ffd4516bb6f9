"""TerminalPrinter: suffix-only text, one line per tool card, a footer."""

from __future__ import annotations

import io

from support import wire as fx

from byre_jupyter.ui.terminal import TerminalPrinter
from byre_jupyter.ui.viewmodel import TurnView


def run(wires: list[fx.Wire]) -> tuple[str, list[str]]:
    out = io.StringIO()
    printer = TerminalPrinter(out)
    clock = fx.FakeClock()
    view = TurnView("s", "p", clock=clock)
    writes: list[str] = []
    for msg in fx.parse_all(wires):
        clock.advance(0.1)
        before = out.tell()
        fx.settle(view, msg)
        printer.update(view, view.apply(msg))
        writes.append(out.getvalue()[before:])
    return out.getvalue(), writes


def test_text_is_printed_as_it_grows_without_repeats() -> None:
    text, writes = run(fx.plain_text())
    assert text.startswith(fx.PLAIN_TEXT)
    assert text.count("Hello there") == 1
    deltas = [w for w in writes if w]
    assert len(deltas) > 5 and all(len(w) <= 10 for w in deltas[:5])
    assert text.rstrip().endswith("$0.0123")


def test_tool_cards_are_one_line_each_and_nested() -> None:
    text, _ = run(fx.subagent())
    lines = text.splitlines()
    assert [ln for ln in lines if "●" in ln] == [
        "  ● Bash · ls · 0.1 s",
        "● Agent · List files · 1.4 s",
    ]
    assert "  " + fx.SUB_TEXT in lines
    assert lines[-1].startswith("— claude-opus-5-5 · 1.6 s")


def test_images_notices_and_interrupt() -> None:
    text, _ = run(fx.read_png())
    assert "[image: image/png" in text and "tool Read]" in text
    text, _ = run(fx.interrupt_mid_stream())
    assert fx.PARTIAL in text and "! Interrupted." in text and text.rstrip().endswith("interrupted")
