"""Block views: the mutable, versioned pieces a turn is drawn from.

Each block has a stable ``id``, a ``version`` bumped on every change (so renderers redraw only
what moved) and a ``frozen`` flag once it is complete. Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from byre_jupyter.protocol import Image
from byre_jupyter.ui.toolinfo import tool_label

__all__ = [
    "BlockView",
    "ImageView",
    "NoticeView",
    "RetryInfo",
    "Status",
    "TextView",
    "ThinkingView",
    "ToolCardView",
]

Status = Literal[
    "starting", "requesting", "streaming", "tool", "retrying", "done", "error", "interrupted"
]


# --- block views ----------------------------------------------------------------------------


@dataclass(eq=False, kw_only=True)
class BlockView:
    """One visible block. ``version`` grows on every change; ``frozen`` once it is complete."""

    kind: ClassVar[str] = "block"
    id: str
    version: int = 0
    frozen: bool = False


class GrowingText:
    """A ``str`` attribute that streamed deltas extend: :meth:`extend` keeps the piece, and the
    pieces are joined when the text is next read. ``view.text += delta`` copied the whole
    text at every delta, quadratic in the answer's length (kernel CPU, bench/RESULTS.md 3)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}_pieces"

    def __get__(self, view: object | None, owner: type | None = None) -> str:
        if view is None:
            return ""  # the dataclass field's default
        pieces: list[str] = view.__dict__[self._slot]
        if len(pieces) > 1:
            pieces[:] = ["".join(pieces)]
        return pieces[0]

    def __set__(self, view: object, text: str) -> None:
        view.__dict__[self._slot] = [text]

    def extend(self, view: object, piece: str) -> None:
        view.__dict__[self._slot].append(piece)


_TEXT = GrowingText()


@dataclass(eq=False, kw_only=True)
class _StreamedText(BlockView):
    """A block whose text streams in deltas."""

    text: GrowingText = _TEXT

    def extend(self, piece: str) -> None:
        """``text += piece``, without copying ``text``."""
        _TEXT.extend(self, piece)


@dataclass(eq=False, kw_only=True)
class TextView(_StreamedText):
    """Assistant markdown; grows while streaming, replaced by the ``assistant`` line."""

    kind: ClassVar[str] = "text"


@dataclass(eq=False, kw_only=True)
class ThinkingView(_StreamedText):
    """Extended-thinking text (``thinking_delta``); empty when redacted."""

    kind: ClassVar[str] = "thinking"


@dataclass(eq=False, kw_only=True)
class ImageView(BlockView):
    """An image: ``image`` is the bytes with the media type decided where they entered
    (``protocol.Image``); None when they are no PNG, JPEG, GIF or WebP, which are never shown
    as an image, only as their ``size``. Renderers take it from here and never sniff again.

    ``origin`` says where it came from (``"attached"`` or ``"tool Read"``) for captions.
    """

    kind: ClassVar[str] = "image"
    image: Image | None = field(repr=False)
    size: int
    origin: str = ""
    frozen: bool = True

    @property
    def media_type(self) -> str | None:
        """The image's media type; None for bytes that are no image."""
        return self.image.media_type if self.image is not None else None


@dataclass(eq=False, kw_only=True)
class NoticeView(BlockView):
    """A one-line note: ``kind`` is retry, error, interrupted, permission or info."""

    kind: ClassVar[str] = "notice"
    notice_kind: str
    text: str


@dataclass(eq=False, kw_only=True)
class ToolCardView(BlockView):
    """A tool call, from ``content_block_start`` to its ``tool_result``.

    ``children`` holds subagent work (lines whose ``parent_tool_use_id`` is this card).
    ``elapsed_s`` is measured with the view's clock from start to result.
    """

    kind: ClassVar[str] = "tool"
    name: str
    tool_use_id: str
    input: Mapping[str, Any] = field(default_factory=dict)
    #: How many values of ``input`` were replaced by ``[redacted]`` (the card says so).
    redacted: int = 0
    summary: str = ""
    diff: str | None = None
    result_text: str | None = None
    is_error: bool = False
    images: list[ImageView] = field(default_factory=list)
    started_at: float | None = None
    elapsed_s: float | None = None
    task_id: str | None = None
    task_status: str | None = None
    task_note: str | None = None
    #: Its approval card waits for the user (the tool has not started).
    awaiting_approval: bool = False
    #: The user denied it on its approval card (whose notice says so, with the reason).
    denied: bool = False
    children: list[BlockView] = field(default_factory=list)

    @property
    def label(self) -> str:
        return tool_label(self.name)

    @property
    def has_result(self) -> bool:
        return self.result_text is not None


@dataclass(frozen=True, slots=True)
class RetryInfo:
    """The latest ``system/api_retry`` (§11)."""

    attempt: int
    max_retries: int
    error_status: int | None
    error: str
    delay_s: float
