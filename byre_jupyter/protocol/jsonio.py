"""The one place that decides which JSON parser reads the CLI's stream.

``orjson`` (the optional ``fast`` extra) when it is installed, else the standard library. At
stream rates decoding is the largest single cost of a line (bench/RESULTS.md, benchmark 1), and
``json.loads`` of bytes also pays for its Python-level encoding detection on every call.

Both paths accept the same lines: orjson is stricter than the standard library (it refuses
``NaN``/``Infinity`` and lone surrogate escapes such as ``"\\ud800"``, which a Node program
writes for a string cut inside a surrogate pair), so a reader gives a line :data:`loads` refused
to :func:`loads_refused` (the standard library); only a line both refuse is an error. (Not one
wrapper doing both: an extra Python call per line is measurable at stream rates.) One difference
remains: orjson reads an integer beyond 64 bits as a float, the value the CLI (a JavaScript
program) held anyway.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["BACKEND", "choose", "loads", "loads_refused"]


def choose(use_orjson: bool = True) -> tuple[str, Callable[[bytes | str], Any]]:
    """``(name, loads)``: orjson's if wanted and installed, else the standard library's."""
    if use_orjson:
        try:
            import orjson
        except ImportError:
            pass
        else:
            return "orjson", orjson.loads
    return "json", json.loads


#: Which parser :data:`loads` is (``"orjson"`` or ``"json"``), and the parser itself: decodes one
#: line of the CLI's stdout (bytes, without its newline), raises ``ValueError`` if it cannot.
#: Readers look it up when they start, not at import, so a test can swap it.
BACKEND, loads = choose()


def loads_refused(data: bytes | str) -> Any:
    """Decode a line :data:`loads` refused: the standard library, which accepts a little more
    (see above). Raises ``ValueError`` (``JSONDecodeError``, ``UnicodeDecodeError``) if that
    fails too: the line is not JSON."""
    return json.loads(data)
