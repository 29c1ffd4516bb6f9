"""Streaming plain-text output for IPython without a Jupyter frontend (terminal IPython).

Text is printed as it grows (only the new suffix), each tool card as one line once it has its
result, notices as they appear, and a footer when the turn is finished.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from typing import TextIO

from byre_jupyter.ui.format import card_title, footer_parts
from byre_jupyter.ui.viewmodel import (
    BlockView,
    ImageView,
    NoticeView,
    TextView,
    ToolCardView,
    TurnView,
)

__all__ = ["TerminalPrinter"]


class TerminalPrinter:
    """Print a turn incrementally to ``stream``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout
        self._printed: dict[str, str] = {}  # text block id -> text printed so far
        self._done: set[str] = set()  # cards, notices, images already printed
        self._current: str | None = None  # text block whose line is still open
        self._footer = False

    def update(self, view: TurnView, changed: Sequence[BlockView]) -> None:
        """Print what ``changed`` adds; print the footer once ``view.finished``."""
        for block in changed:
            self._print(block, self._depth(view, block.id))
        if view.finished and not self._footer:
            self._footer = True
            self._end_text()
            self._write("— " + " · ".join(footer_parts(view)) + "\n")
        self._stream.flush()

    @functools.singledispatchmethod
    def _print(self, block: BlockView, depth: int) -> None:
        """Print what ``block`` adds: one method per block type (``.register``)."""

    @_print.register
    def _(self, block: TextView, depth: int) -> None:
        self._text(block, depth)

    @_print.register
    def _(self, block: ToolCardView, depth: int) -> None:
        if block.frozen and block.id not in self._done:
            self._line(f"{'  ' * depth}● {card_title(block)}", block.id)

    @_print.register
    def _(self, block: NoticeView, depth: int) -> None:
        if block.frozen and block.id not in self._done:
            self._line(f"{'  ' * depth}! {block.text}", block.id)

    @_print.register
    def _(self, block: ImageView, depth: int) -> None:
        if block.id not in self._done:
            size = f"{block.size:,} bytes"
            kind = block.media_type or "unsupported image data"
            line = f"{'  ' * depth}[image: {kind}, {size}, {block.origin}]"
            self._line(line, block.id)

    def _depth(self, view: TurnView, block_id: str) -> int:
        depth = 0
        parent = view.parent_id(block_id)
        while parent is not None:
            depth += 1
            parent = view.parent_id(parent)
        return depth

    def _text(self, block: TextView, depth: int) -> None:
        printed = self._printed.get(block.id, "")
        text = block.text
        if text == printed:
            return
        if self._current != block.id:
            self._end_text()
            self._current = block.id
        if text.startswith(printed):
            suffix = text[len(printed) :]
        else:  # the authoritative assistant text differs from the stream: print it whole
            self._write("\n")
            suffix = text
        if depth:
            suffix = suffix.replace("\n", "\n" + "  " * depth)
            if not printed:
                suffix = "  " * depth + suffix
        self._write(suffix)
        self._printed[block.id] = text

    def _end_text(self) -> None:
        if self._current is not None:
            if not self._printed.get(self._current, "").endswith("\n"):
                self._write("\n")
            self._current = None

    def _line(self, line: str, block_id: str) -> None:
        self._end_text()
        self._done.add(block_id)
        self._write(line + "\n")

    def _write(self, text: str) -> None:
        self._stream.write(text)
