"""Turn what a user names in ``%%claude -i ...`` into image bytes.

Accepted: a file path; or the name of a variable holding PNG/JPEG/GIF/WebP bytes, a PIL image, a
matplotlib figure, or an ``IPython.display.Image``. Anything else is a
:class:`~IPython.core.error.UsageError` that says what was expected: nothing is sent then.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from typing import Any

from IPython.core.error import UsageError

from ..protocol import sniff_image_type

__all__ = ["resolve_image"]

_MAX_IMAGE_BYTES = 20 * 1024 * 1024
_EXPECTED = (
    "a PNG/JPEG/GIF/WebP file, or a variable holding image bytes, a PIL image, "
    "a matplotlib figure or an IPython.display.Image"
)


def _check(data: bytes, what: str) -> tuple[str, bytes]:
    media_type = sniff_image_type(data)
    if media_type is None:
        raise UsageError(f"-i {what}: not a PNG, JPEG, GIF or WebP image")
    if len(data) > _MAX_IMAGE_BYTES:
        raise UsageError(f"-i {what}: image is {len(data) >> 20} MiB; the limit is 20 MiB")
    return media_type, data


def _lookup(name: str, namespace: Mapping[str, Any]) -> Any:
    head, *rest = name.split(".")
    if not head.isidentifier() or head not in namespace:
        raise KeyError(name)
    value = namespace[head]
    for attr in rest:
        if not attr.isidentifier() or attr.startswith("_"):
            raise KeyError(name)
        try:
            value = getattr(value, attr)
        except AttributeError:
            raise
        except Exception as e:  # a property of the user's object raised: still bad input
            raise UsageError(f"-i {name}: reading it raised {type(e).__name__}: {e}") from None
    return value


def resolve_image(spec: str, namespace: Mapping[str, Any]) -> tuple[str, bytes]:
    """``(media_type, data)`` for one ``-i`` argument."""
    spec = spec.strip()
    if not spec:
        raise UsageError("-i needs a file path or a variable name")
    try:
        value = _lookup(spec, namespace)
    except (KeyError, AttributeError):
        path = os.path.expanduser(spec)
        if os.path.isfile(path):
            try:
                with open(path, "rb") as f:
                    return _check(f.read(), spec)
            except OSError as e:  # unreadable (permissions), or gone since the check
                raise UsageError(f"-i {spec}: cannot read the file: {e.strerror or e}") from None
        raise UsageError(f"-i {spec}: no such file or variable; expected {_EXPECTED}") from None
    try:
        return _from_object(value, spec)
    except UsageError:
        raise
    except Exception as e:  # e.g. a broken figure's savefig: a short error, not a traceback
        raise UsageError(
            f"-i {spec}: could not be turned into an image ({type(e).__name__}: {e})"
        ) from None


def _from_object(value: Any, what: str) -> tuple[str, bytes]:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _check(bytes(value), what)
    if isinstance(value, (str, os.PathLike)) and os.path.isfile(os.fspath(value)):
        with open(os.fspath(value), "rb") as f:
            return _check(f.read(), what)
    kind = type(value)
    module = kind.__module__ or ""
    if module.startswith("PIL.") and hasattr(value, "save"):
        buffer = io.BytesIO()
        image = (
            value
            if getattr(value, "mode", "RGB") in ("RGB", "RGBA", "L", "LA", "P")
            else value.convert("RGB")
        )
        image.save(buffer, format="PNG")
        return _check(buffer.getvalue(), what)
    if module.startswith("matplotlib.") and hasattr(value, "savefig"):
        buffer = io.BytesIO()
        value.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        return _check(buffer.getvalue(), what)
    if kind.__name__ == "Image" and module.startswith("IPython."):
        data = getattr(value, "data", None)
        if isinstance(data, bytes):
            return _check(data, what)
        raise UsageError(f"-i {what}: this IPython Image holds no embedded bytes (a URL?)")
    raise UsageError(f"-i {what}: a {kind.__name__} is not an image; expected {_EXPECTED}")
