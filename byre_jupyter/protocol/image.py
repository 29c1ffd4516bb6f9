"""An image and its media type, decided once, where its bytes enter, then carried everywhere.

Images reach byre from many places: the user attaches one (``-i``, ``--with``), Claude's
content blocks carry them, our kernel tools return them (a matplotlib figure, a PIL image, a
cell's output read from the notebook), the CLI's own tools return them. Each place used to
decode base64 and sniff magic bytes on its own, and two of them disagreed with the view about
what an image was. :class:`Image` is the one value: the bytes and the media type, decided here,
and the forms the other floors need (an Anthropic content block, an MCP content item, base64
for a mimebundle).

The rule (docs/security.md, "No output loads anything by itself"): **the bytes decide, the
declared type never does.** A declared type (a content block's ``media_type``, an MCP
``mimeType``, a notebook output's key) is a claim made by whoever sent the image: a tool, a
model, a notebook someone shared. Only PNG, JPEG, GIF and WebP are images here, each recognised
by its magic bytes. A type the bytes bear out is the type the declaration would have given; a
type they do not bear out is a lie or a mistake, and trusting it either renders the bytes as
something they are not (``image/svg+xml`` or ``text/html`` run script in a browser) or sends
the API an image it refuses. So bytes of none of the four are no Image at all, whatever they
were declared to be, and the constructor refuses any other media type, so no path can make an
SVG or HTML one.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IMAGE_TYPES", "Image", "decode_base64", "sniff_image_type"]

#: The only media types an :class:`Image` can have: raster formats that run no script.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def sniff_image_type(data: bytes) -> str | None:
    """The media type of PNG/JPEG/GIF/WebP bytes, or None for anything else."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def decode_base64(text: str) -> bytes | None:
    """The bytes of base64 ``text`` (line breaks allowed, as nbformat and ipykernel write it),
    or None when it is not base64."""
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return None


@dataclass(frozen=True)
class Image:
    """An image: its bytes and their media type, one of :data:`IMAGE_TYPES`. Made by
    :meth:`sniffed` or :meth:`from_base64` where the bytes enter (the module docstring has the
    rule); everything after (the request, the tool result, the view, the saved output, the
    turn's result) takes the type from here and never sniffs again."""

    data: bytes = field(repr=False)
    media_type: str

    def __post_init__(self) -> None:
        if self.media_type not in IMAGE_TYPES:
            raise ValueError(f"not an image type byre shows: {self.media_type!r:.60}")

    @classmethod
    def sniffed(cls, data: bytes) -> Image | None:
        """``data`` as an Image, or None if it is no PNG, JPEG, GIF or WebP."""
        media_type = sniff_image_type(data)
        return cls(data, media_type) if media_type is not None else None

    @classmethod
    def from_base64(cls, text: str) -> Image | None:
        """The image base64 ``text`` holds, or None when it is no base64 or no image. Whatever
        type came declared beside the text plays no part (the module docstring says why)."""
        data = decode_base64(text)
        return cls.sniffed(data) if data is not None else None

    @property
    def size(self) -> int:
        """Its size in bytes."""
        return len(self.data)

    @property
    def base64(self) -> str:
        """Its bytes as base64 text, as a mimebundle and both wire formats carry them."""
        return base64.b64encode(self.data).decode("ascii")

    def content_block(self) -> dict[str, Any]:
        """The Anthropic content block (a user turn's image)."""
        source = {"type": "base64", "media_type": self.media_type, "data": self.base64}
        return {"type": "image", "source": source}

    def mcp_content(self) -> dict[str, Any]:
        """The MCP content item (a ``tools/call`` result's image)."""
        return {"type": "image", "data": self.base64, "mimeType": self.media_type}
