"""The pure protocol layer: NDJSON framing, typed messages, and message builders.

Imports nothing from asyncio, IPython, ipywidgets or traitlets
(``tests/unit/protocol/test_protocol.py`` checks), so it can be reused by any host and tested
without an event loop.
"""

from .control import (
    EFFORT_LEVELS,
    PERMISSION_MODES,
    PermissionMode,
    cancel_request,
    control_request,
    effort_option,
    effort_set_by,
    error_response,
    model_label,
    model_option,
    success_response,
    user_message,
)
from .framing import DEFAULT_MAX_LINE_BYTES, LineSplitter, encode_line
from .image import IMAGE_TYPES, Image, decode_base64, sniff_image_type
from .messages import *  # noqa: F403
from .messages import __all__ as _messages_all

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "EFFORT_LEVELS",
    "IMAGE_TYPES",
    "LineSplitter",
    "PERMISSION_MODES",
    "Image",
    "PermissionMode",
    "cancel_request",
    "control_request",
    "effort_option",
    "effort_set_by",
    "encode_line",
    "error_response",
    "decode_base64",
    "model_label",
    "model_option",
    "sniff_image_type",
    "success_response",
    "user_message",
    *_messages_all,
]
