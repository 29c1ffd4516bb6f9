"""Size limits for what the kernel tools send back to Claude, and the text clipping they share.

Every tool result ends up in the model's context, so each one is bounded: captured streams keep
their head and tail while the code runs (a runaway ``print`` loop cannot exhaust memory), and the
sections of a result share one character budget.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_LIMITS",
    "BoundedText",
    "ToolLimits",
    "clip",
    "fit_budget",
    "pretty_repr",
    "truncation_note",
]


@dataclass(frozen=True)
class ToolLimits:
    """Bounds on the kernel tools' results."""

    max_output_chars: int = 20_000
    """``python``: stdout, stderr, displayed text, result repr and traceback share this budget."""
    max_images: int = 4
    """``python``: at most this many images (displayed images first, then figures)."""
    max_image_bytes: int = 3_750_000
    """Larger images are left out with a note (the API refuses images over ~5 MB base64)."""
    figure_dpi: int = 80
    """Resolution of matplotlib figures rendered to PNG."""
    max_variables: int = 200
    """``variables``: rows in the table."""
    max_history: int = 50
    """``history``: the most cells ``n`` may ask for."""
    history_input_chars: int = 2_000
    """``history``: each cell's input is clipped to this."""
    history_output_chars: int = 1_000
    """``history``: each cell's ``Out`` repr is clipped to this."""
    max_inspect_chars: int = 12_000
    """``inspect``: the whole text summary."""


DEFAULT_LIMITS = ToolLimits()


def pretty_repr(value: object, max_seq_length: int = 200) -> str:
    """IPython's pretty repr (long sequences cut by IPython), or a note if ``__repr__`` fails."""
    from IPython.lib.pretty import pretty  # IPython is always there when a kernel runs tools

    try:
        return str(pretty(value, max_width=100, max_seq_length=max_seq_length))  # type: ignore[no-untyped-call]
    except Exception as e:  # a broken __repr__ should not hide the rest of the result
        return f"<{type(value).__name__} object; repr failed: {type(e).__name__}: {e}>"


def truncation_note(omitted: int) -> str:
    return f"… {omitted} more characters truncated …"


def clip(text: str, budget: int, *, already_omitted: int = 0) -> str:
    """``text`` cut to about ``budget`` characters, keeping its head and tail around a note.

    ``already_omitted`` counts characters dropped earlier (by :class:`BoundedText`) from the
    middle; they are added to the note.
    """
    budget = max(budget, 0)
    if len(text) <= budget and not already_omitted:
        return text
    keep = min(len(text), budget)
    omitted = len(text) - keep + already_omitted
    head = text[: (keep * 2) // 3]
    tail = text[len(text) - (keep - len(head)) :] if keep > len(head) else ""
    return f"{head}\n{truncation_note(omitted)}\n{tail}"


def fit_budget(lengths: Sequence[int], budget: int) -> list[int]:
    """Split ``budget`` among sections: short ones keep everything, long ones share the rest."""
    allowed = [0] * len(lengths)
    remaining = max(budget, 0)
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for position, index in enumerate(order):
        share = remaining // (len(order) - position)
        allowed[index] = min(lengths[index], share)
        remaining -= allowed[index]
    return allowed


class BoundedText:
    """An append-only text sink that keeps at most ``limit`` characters of head and of tail."""

    def __init__(self, limit: int) -> None:
        self._limit = max(limit, 1)
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.omitted = 0

    def write(self, text: str) -> int:
        written = len(text)
        room = self._limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += min(room, len(text))
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail_len > self._limit:
                excess = self._tail_len - self._limit
                first = self._tail[0]
                if len(first) <= excess:
                    self._tail.popleft()
                    self._tail_len -= len(first)
                    self.omitted += len(first)
                else:
                    self._tail[0] = first[excess:]
                    self._tail_len -= excess
                    self.omitted += excess
        return written

    def getvalue(self) -> str:
        """Head and tail joined; :attr:`omitted` characters between them were dropped."""
        return "".join(self._head) + "".join(self._tail)

    def __len__(self) -> int:
        return self._head_len + self._tail_len + self.omitted
