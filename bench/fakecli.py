#!/usr/bin/env python3
"""A fast stand-in ``claude`` for the benchmarks: replays recorded stream-json files.

Stdlib only and independent of the package, so it starts fast (run with ``python -S``) and
spends almost no CPU: every file of the plan is read into memory at start (before the
``initialize`` answer), then written with ``os.write`` in line-aligned chunks of about 1 MiB, so
the reader in the benchmark process is what limits throughput.

Protocol, enough for ``byre_jupyter.Session`` and for claude-agent-sdk's ``ClaudeSDKClient``:

* NDJSON on stdin. ``control_request`` ``initialize`` gets a success response at once (a small
  ``models`` list); ``interrupt`` stops the running replay (the rest of the turn's file is
  skipped and an ``error_during_execution`` result written); ``set_model`` succeeds; every other
  request gets an error response. A ``user`` message starts the next turn of the plan.
* ``$BENCH_PLAN`` (JSON): ``{"turns": [{"file": PATH, "pace": 0}, ...]}``. Turn *k* replays the
  *k*-th entry; once the list is used up the last entry repeats. ``pace`` > 0 writes that many
  lines per second (line by line, on schedule), 0 writes as fast as the pipe takes it.
* Every argv flag is ignored. stdin EOF: finish the running turn, exit 0.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

_CHUNK = 1 << 20
_lock = threading.Lock()
_interrupted = threading.Event()


def _write(data: bytes | memoryview) -> None:
    view = memoryview(data)
    with _lock:
        while view:
            n = os.write(1, view)
            view = view[n:]


def _send(obj: object) -> None:
    _write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")


def _aborted_result(session: str) -> dict[str, object]:
    return {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "result": None,
        "terminal_reason": "aborted_streaming",
        "session_id": session,
        "num_turns": 1,
        "duration_ms": 1,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _load(path: str) -> tuple[bytes, list[tuple[int, int]]]:
    """The file's bytes and line-aligned (start, end) spans of about ``_CHUNK`` bytes."""
    with open(path, "rb") as f:
        data = f.read()
    spans, start = [], 0
    while start < len(data):
        nl = data.find(b"\n", min(start + _CHUNK, len(data)) - 1)
        end = len(data) if nl < 0 else nl + 1
        spans.append((start, end))
        start = end
    return data, spans


def _replay_fast(data: bytes, spans: list[tuple[int, int]]) -> bool:
    """Write preloaded line-aligned chunks (no copies); False if interrupted."""
    view = memoryview(data)
    for start, end in spans:
        if _interrupted.is_set():
            return False
        _write(view[start:end])
    return True


def _replay_paced(data: bytes, pace: float) -> bool:
    start = time.monotonic()
    for i, line in enumerate(data.splitlines(keepends=True)):
        if _interrupted.is_set():
            return False
        due = start + i / pace
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        _write(line)
    return True


def _replay(
    turn: dict[str, Any], loaded: tuple[bytes, list[tuple[int, int]]], session: str
) -> None:
    _interrupted.clear()
    pace = float(turn.get("pace") or 0)
    done = _replay_paced(loaded[0], pace) if pace > 0 else _replay_fast(*loaded)
    if not done:
        _send(_aborted_result(session))


def main() -> None:
    plan = json.loads(os.environ.get("BENCH_PLAN", '{"turns": []}'))
    turns = plan["turns"]
    session = plan.get("session", "0b1e5c1a-5e55-4d0e-9b6a-bench0000001")
    # Preload every file now, so no turn pays for disk reads or line splitting.
    loaded = {t["file"]: _load(t["file"]) for t in turns}
    index = 0
    worker: threading.Thread | None = None
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        kind = msg.get("type")
        if kind == "control_request":
            rid = msg.get("request_id")
            sub = (msg.get("request") or {}).get("subtype")
            body: dict[str, object] | None = None
            if sub == "initialize":
                body = {
                    "models": [
                        {"value": "default", "displayName": "Default"},
                        {"value": "sonnet", "displayName": "Sonnet"},
                    ],
                    "pid": os.getpid(),
                }
            elif sub == "interrupt":
                _interrupted.set()
                body = {"still_queued": []}
            elif sub == "set_model":
                body = {"model": (msg.get("request") or {}).get("model")}
            if body is not None:
                response = {"subtype": "success", "request_id": rid, "response": body}
            else:
                response = {"subtype": "error", "request_id": rid, "error": f"unsupported: {sub}"}
            _send({"type": "control_response", "response": response})
        elif kind == "user" and turns:
            if worker is not None:
                worker.join()
            turn = turns[min(index, len(turns) - 1)]
            index += 1
            worker = threading.Thread(
                target=_replay, args=(turn, loaded[turn["file"]], session), daemon=True
            )
            worker.start()
    if worker is not None:
        worker.join()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        os._exit(0)
