"""Capturing what Claude's code prints and displays, without touching the user's cell output.

While a run is active, ``sys.stdout``, ``sys.stderr`` and ``shell.display_pub`` are replaced by
routers. A router sends output to the run's :class:`Capture` only when the writer runs in the
run's context (a :class:`~contextvars.ContextVar` set by the run's task; tasks the code creates
inherit it). Anything else on the kernel loop that prints or displays while the code awaits (the
``%%claude`` cell's own UI, another task) goes to the original stream or publisher as before.
This is what :class:`IPython.utils.capture.capture_output` does, minus its global capture.

A capture may also pass each output on as it comes, as an nbformat output (``on_output``):
``run_cells`` (``notebook_run.py``) streams them to the cell's own output area.
"""

from __future__ import annotations

import contextvars
import logging
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO

from ..protocol import Image
from .bounded import BoundedText, ToolLimits

__all__ = ["Capture", "Output", "displayed_image"]

log = logging.getLogger(__name__)

Output = dict[str, Any]
"""One nbformat output (``stream``, ``display_data``, ``execute_result``, ``clear_output``);
a display's data as it was published (images may be bytes)."""

_ACTIVE: contextvars.ContextVar[Capture | None] = contextvars.ContextVar(
    "byre_kernel_capture", default=None
)


def displayed_image(value: object) -> Image | None:
    """The image of a mimebundle value (raw bytes, or base64 text as ipykernel sends it), with
    the type its bytes bear out, whatever key it was published under; None for no image."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Image.sniffed(bytes(value))
    if isinstance(value, str):
        return Image.from_base64(value)
    return None


class Capture:
    """Outputs of one run: bounded stdout, stderr and displayed text, and the first images."""

    def __init__(
        self, limits: ToolLimits, on_output: Callable[[Output], None] | None = None
    ) -> None:
        self.limits = limits
        self.on_output = on_output
        self.stdout = BoundedText(limits.max_output_chars)
        self.stderr = BoundedText(limits.max_output_chars)
        self.displayed = BoundedText(limits.max_output_chars)
        self.images: list[Image] = []
        self.notes: list[str] = []
        self.images_left_out = 0

    def add_image(self, image: Image) -> bool:
        """Keep an image if the limits allow; a left-out one is counted or noted."""
        if image.size > self.limits.max_image_bytes:
            self.notes.append(
                f"an image of {image.size} bytes was left out (limit {self.limits.max_image_bytes})"
            )
            return False
        if len(self.images) >= self.limits.max_images:
            self.images_left_out += 1
            return False
        self.images.append(image)
        return True

    def emit(self, output: Output) -> None:
        """Pass ``output`` on to ``on_output``; its failing never fails the code that wrote."""
        if self.on_output is None:
            return
        try:
            self.on_output(output)
        except Exception:
            log.warning("byre: an output could not be passed on", exc_info=True)

    def add_bundle(self, data: Mapping[str, Any]) -> None:
        for mime in ("image/png", "image/jpeg"):
            image = displayed_image(data.get(mime))
            if image is not None:
                if self.add_image(image):
                    self.displayed.write(f"[displayed image #{len(self.images)}]\n")
                return
        text = data.get("text/markdown") or data.get("text/plain")
        if isinstance(text, str):
            self.displayed.write(text if text.endswith("\n") else text + "\n")
        else:
            self.displayed.write(f"[displayed {', '.join(sorted(data)) or 'nothing'}]\n")

    def clear_displays(self, wait: bool = False) -> None:
        self.emit({"output_type": "clear_output", "wait": wait})
        self.displayed = BoundedText(self.limits.max_output_chars)
        self.images.clear()
        self.images_left_out = 0

    def active(self) -> bool:
        return _ACTIVE.get() is self

    @contextmanager
    def installed(self, shell: Any) -> Iterator[Capture]:
        """Route stdout, stderr and displays of the current context (and its tasks) here."""
        token = _ACTIVE.set(self)
        saved_out, saved_err = sys.stdout, sys.stderr
        saved_pub = shell.display_pub
        out, err = _Stream(saved_out, self, "stdout"), _Stream(saved_err, self, "stderr")
        pub = _Publisher(saved_pub, self)
        sys.stdout, sys.stderr = out, err
        shell.display_pub = pub
        try:
            yield self
        finally:
            _restore(sys, "stdout", out, saved_out)
            _restore(sys, "stderr", err, saved_err)
            _restore(shell, "display_pub", pub, saved_pub)
            _ACTIVE.reset(token)


def _restore(owner: object, name: str, ours: object, saved: object) -> None:
    if getattr(owner, name) is ours:
        setattr(owner, name, saved)
    else:  # someone replaced it during the run; theirs wins, ours is unwound when theirs is
        log.warning("byre: %s was replaced while Claude's code ran; not restoring it", name)


class _Stream:
    """``sys.stdout``/``sys.stderr`` during a run: the run's writes are captured."""

    def __init__(self, inner: TextIO, capture: Capture, name: str) -> None:
        self._inner = inner
        self._capture = capture
        self._name = name

    def _sink(self) -> BoundedText | None:
        if _ACTIVE.get() is self._capture:
            return self._capture.stdout if self._name == "stdout" else self._capture.stderr
        return None

    def write(self, text: str) -> int:
        sink = self._sink()
        if sink is None:
            return self._inner.write(text)
        self._capture.emit({"output_type": "stream", "name": self._name, "text": str(text)})
        return sink.write(str(text))

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._sink() is None:
            self._inner.flush()

    def isatty(self) -> bool:
        return False if self._sink() is not None else self._inner.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Publisher:
    """``shell.display_pub`` during a run: the run's ``display()`` calls are captured."""

    def __init__(self, inner: Any, capture: Capture) -> None:
        self._inner = inner
        self._capture = capture

    def publish(self, data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> None:
        if _ACTIVE.get() is self._capture and isinstance(data, Mapping):
            self._capture.emit(
                {"output_type": "display_data", "data": dict(data), "metadata": metadata or {}}
            )
            self._capture.add_bundle(data)
            return
        self._inner.publish(data, metadata, *args, **kwargs)

    def clear_output(self, wait: bool = False) -> None:
        if _ACTIVE.get() is self._capture:
            self._capture.clear_displays(wait)
            return
        self._inner.clear_output(wait)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
