"""Turn what a user names in ``%%claude -i ...`` into image bytes.

Accepted: a file path; or the name of a variable holding PNG/JPEG/GIF/WebP bytes, a PIL image, a
matplotlib figure, or an ``IPython.display.Image``. Anything else is a
:class:`~IPython.core.error.UsageError` that says what was expected: nothing is sent then.

A file is measured before it is read: only regular files are opened (a FIFO or ``/dev/zero``
would block or never end), one over the limit is refused by its size, and the read itself is
bounded, so a file that grows after the check still cannot fill the kernel's memory.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Mapping
from typing import Any

from IPython.core.error import UsageError

from ..protocol import Image

__all__ = ["resolve_image"]

_MAX_IMAGE_BYTES = 20 * 1024 * 1024
_EXPECTED = (
    "a PNG/JPEG/GIF/WebP file, or a variable holding image bytes, a PIL image, "
    "a matplotlib figure or an IPython.display.Image"
)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def _too_big(what: str, size: int) -> UsageError:
    return UsageError(f"-i {what}: image is {_size(size)}; the limit is {_size(_MAX_IMAGE_BYTES)}")


def _check(data: bytes, what: str) -> Image:
    if len(data) > _MAX_IMAGE_BYTES:
        raise _too_big(what, len(data))
    image = Image.sniffed(data)
    if image is None:
        raise UsageError(f"-i {what}: not a PNG, JPEG, GIF or WebP image")
    return image


def _read_file(path: str, what: str) -> Image:
    """A file's image bytes, measured first (see the module docstring)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"-i {what}: not a regular file; expected {_EXPECTED}")
        if info.st_size > _MAX_IMAGE_BYTES:
            raise _too_big(what, info.st_size)
        # O_NONBLOCK: if a FIFO was swapped in since the stat, opening it does not wait for a
        # writer; the fstat below then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb", closefd=True) as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UsageError(f"-i {what}: not a regular file; expected {_EXPECTED}")
            data = f.read(_MAX_IMAGE_BYTES + 1)
    except OSError as e:  # unreadable (permissions), or gone since the stat
        raise UsageError(f"-i {what}: cannot read the file: {e.strerror or e}") from None
    return _check(data, what)


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


def resolve_image(spec: str, namespace: Mapping[str, Any]) -> Image:
    """The image one ``-i`` argument names."""
    spec = spec.strip()
    if not spec:
        raise UsageError("-i needs a file path or a variable name")
    try:
        value = _lookup(spec, namespace)
    except (KeyError, AttributeError):
        path = os.path.expanduser(spec)
        if os.path.lexists(path):
            return _read_file(path, spec)
        raise UsageError(f"-i {spec}: no such file or variable; expected {_EXPECTED}") from None
    try:
        return _from_object(value, spec)
    except UsageError:
        raise
    except Exception as e:  # e.g. a broken figure's savefig: a short error, not a traceback
        raise UsageError(
            f"-i {spec}: could not be turned into an image ({type(e).__name__}: {e})"
        ) from None


def _from_object(value: Any, what: str) -> Image:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _check(bytes(value), what)
    if isinstance(value, (str, os.PathLike)) and os.path.lexists(os.fspath(value)):
        return _read_file(os.fspath(value), what)
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
