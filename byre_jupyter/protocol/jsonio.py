"""The one place that decides which JSON parser reads the CLI's stream.

``orjson`` (the optional ``fast`` extra) when it is installed, else the standard library. At
stream rates decoding is the largest single cost of a line (bench/RESULTS.md, benchmark 1), and
``json.loads`` of bytes also pays for its Python-level encoding detection on every call.

Both paths accept the same lines: orjson is stricter than the standard library (it refuses
``NaN``/``Infinity`` and lone surrogate escapes such as ``"\\ud800"``, which a Node program
writes for a string cut inside a surrogate pair), so a line it refuses is decoded again by the
standard library, and only a line both refuse is an error. One difference remains: orjson reads
an integer beyond 64 bits as a float, the value the CLI (a JavaScript program) held anyway.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["BACKEND", "choose", "loads"]


def _stdlib_loads(data: bytes | str) -> Any:
    """Decode one JSON document; raises ``ValueError`` if it is not JSON."""
    return json.loads(data)


def choose(use_orjson: bool = True) -> tuple[str, Callable[[bytes | str], Any]]:
    """``(name, loads)`` of the parser to use: orjson if wanted and installed, else the stdlib."""
    if not use_orjson:
        return "json", _stdlib_loads
    try:
        import orjson
    except ImportError:
        return "json", _stdlib_loads
    fast_loads = orjson.loads

    def loads(data: bytes | str) -> Any:
        """Decode one JSON document; raises ``ValueError`` if it is not JSON."""
        try:
            return fast_loads(data)
        except ValueError:  # orjson.JSONDecodeError: maybe a line only the stdlib accepts
            return json.loads(data)

    return "orjson", loads


#: Which parser :data:`loads` is (``"orjson"`` or ``"json"``), and the parser itself: decodes one
#: line of the CLI's stdout (bytes, without its newline). Readers look ``loads`` up when they
#: start, not at import, so a test can swap it.
BACKEND, loads = choose()
