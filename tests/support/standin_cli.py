#!/usr/bin/env python3
"""The stand-in for the ``claude`` CLI: speaks just enough stream-json to replay a script.

The one stand-in, with two ends. As a process (``python -S standin_cli.py``: stdlib only, so it
starts fast) it plays what the real CLI cannot be made to do on demand (a 64 MiB line, garbage
on stdout, invalid UTF-8, a stall) and replays recorded answers for the benchmarks (bench/).
In process, ``support/memory_cli.py`` speaks the same protocol over a ``MemoryTransport`` for
the fast tier, with the control answers and the lines built here. Real behaviour is tested
against the real CLI.

Reads NDJSON on stdin. Answers the host's control requests as :func:`control_answer` says
(``initialize`` with a small ``models`` list, ``interrupt``, which ends the running replay with
an ``error_during_execution`` result, ``set_model``, ``apply_flag_settings``,
``set_permission_mode``); every other control request gets an error. For each user message it
plays the next turn, either

* of ``$STANDIN_SCRIPT`` (JSONL; one script per turn if the file holds several blocks separated
  by a line ``---``). Script items:

  * any JSON object: written as one line (``session_id`` filled in);
  * ``{"__raw__": "text"}``: the text written as-is (plus newline); ``{"__bytes_hex__": "ff00"}``;
  * ``{"__big_text__": N}``: an assistant text line of about N bytes;
  * ``{"__stall__": true}``: stop writing and reading (until killed);
  * ``{"__exit__": code}``: exit now;
  * ``{"__deltas__": N, "text": "tok "}``: N stream_event text deltas then the assistant line.

  A turn's script without a ``result`` gets one appended; or
* of ``$STANDIN_PLAN`` (JSON, the benchmarks'): ``{"turns": [{"file": PATH, "pace": 0}, ...]}``,
  recorded stream-json files written as they are. Every file is read into memory at start
  (before the ``initialize`` answer), so no turn pays for disk reads; ``pace`` > 0 writes that
  many lines per second, 0 writes line-aligned chunks of about 1 MiB as fast as the pipe takes
  them, so the reader is what limits throughput.

Once the turns are used up the last one repeats. stdin EOF: finish the running turn, exit 0.

``STANDIN_STUBBORN=PATH`` makes it a CLI that will not go quietly: it ignores SIGTERM, starts a
``sleep`` child in its process group (as a Bash tool would) and writes "its-pid child-pid" to
PATH.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

OUT = sys.stdout.buffer
SESSION = "standin-session"
MODELS = [{"value": "default"}, {"value": "sonnet"}]
_CHUNK = 1 << 20

interrupted = threading.Event()
stalled = threading.Event()
lock = threading.Lock()


# -- the protocol, shared with the in-process end (support/memory_cli.py) ---------------------


def control_answer(request: Mapping[str, Any], pid: int | None = None) -> dict[str, Any]:
    """The ``response`` of a ``control_response`` to ``request`` (without its ``request_id``),
    as the real CLI 2.1.328 answers (docs/protocol.md)."""
    subtype = request.get("subtype")
    body: dict[str, Any] | None = None
    if subtype == "initialize":
        body = {"models": MODELS, "account": {"email": "person@example.com"}}
        if pid is not None:
            body["pid"] = pid
    elif subtype == "interrupt":
        body = {"still_queued": []}
    elif subtype == "set_model":
        body = {"model": request.get("model") or "default"}
    elif subtype == "apply_flag_settings":
        body = {}
    elif subtype == "set_permission_mode":
        body = {"mode": request.get("mode")}
    if body is None:
        return {"subtype": "error", "error": f"unsupported: {subtype}"}
    return {"subtype": "success", "response": body}


def result(
    text: str | None,
    subtype: str = "success",
    *,
    is_error: bool = False,
    cost: float = 0.0,
    **more: Any,
) -> dict[str, Any]:
    """A turn's ``result`` line (``session_id`` is the writer's to fill in)."""
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "result": text,
        "num_turns": 1,
        "duration_ms": 1,
        "total_cost_usd": cost,
        "usage": {"input_tokens": 1, "output_tokens": 1},
        **more,
    }


def aborted() -> dict[str, Any]:
    """The result of an interrupted turn, as the real CLI's."""
    return result(None, "error_during_execution", is_error=True)


def assistant(
    text: str, *, msg_id: str = "msg_1", uuid: str | None = None, model: str = "fake"
) -> dict[str, Any]:
    """An assistant line with one text block."""
    line: dict[str, Any] = {
        "type": "assistant",
        "parent_tool_use_id": None,
        "message": {
            "id": msg_id,
            "model": model,
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        },
    }
    if uuid:
        line["uuid"] = uuid
    return line


def text_delta(text: str) -> dict[str, Any]:
    """A stream_event line with one text delta."""
    return {
        "type": "stream_event",
        "parent_tool_use_id": None,
        "event": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": text},
        },
    }


# -- the process ------------------------------------------------------------------------------


def write(obj: object) -> None:
    if isinstance(obj, (bytes, memoryview)):
        data = obj
    else:
        line = dict(obj)  # type: ignore[call-overload]
        if line.get("type") != "control_response":
            line.setdefault("session_id", SESSION)
        data = (json.dumps(line) + "\n").encode()
    view = memoryview(data)
    with lock:
        while view:
            n = os.write(1, view)
            view = view[n:]


def load_turns() -> list[Any]:
    """The turns to play: a list of items (a script) or a dict (a recorded file) each."""
    plan = os.environ.get("STANDIN_PLAN")
    if plan:
        global SESSION
        SESSION = json.loads(plan).get("session", "0b1e5c1a-5e55-4d0e-9b6a-bench0000001")
        return [{**t, "data": _load(t["file"])} for t in json.loads(plan)["turns"]]
    path = os.environ.get("STANDIN_SCRIPT")
    if not path:
        return [[assistant("standin reply", msg_id="m1", model="standin")]]
    turns: list[Any] = [[]]
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line == "---":
                turns.append([])
            elif line:
                turns[-1].append(json.loads(line))
    return turns


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


def replay_file(turn: Mapping[str, Any]) -> None:
    """A recorded turn, its own lines only; an interrupt skips the rest for an aborted result."""
    interrupted.clear()
    data, spans = turn["data"]
    pace = float(turn.get("pace") or 0)
    if pace > 0:
        start = time.monotonic()
        for i, line in enumerate(data.splitlines(keepends=True)):
            if interrupted.is_set():
                break
            due = start + i / pace
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            write(line)
    else:
        view = memoryview(data)  # the preloaded chunks, written without copies
        for begin, end in spans:
            if interrupted.is_set():
                break
            write(view[begin:end])
    if interrupted.is_set():
        write({**aborted(), "terminal_reason": "aborted_streaming"})


def replay(items: list[dict[str, Any]]) -> None:
    interrupted.clear()
    write(
        {
            "type": "system",
            "subtype": "init",
            "model": "standin",
            "tools": [],
            "mcp_servers": [],
            "capabilities": ["interrupt_receipt_v1"],
        }
    )
    text = ""
    ended = False
    for item in items:
        if interrupted.is_set():
            write(aborted())
            return
        if "__raw__" in item:
            write(item["__raw__"].encode() + b"\n")
        elif "__bytes_hex__" in item:
            write(bytes.fromhex(item["__bytes_hex__"]) + b"\n")
        elif "__big_text__" in item:
            text = "x" * int(item["__big_text__"])
            write(assistant(text, msg_id="big", model="standin"))
        elif "__stall__" in item:
            stalled.set()  # stop writing here, and stop answering on the main thread
            write({"type": "system", "subtype": "status", "status": "stalled"})
            time.sleep(3600)
        elif "__exit__" in item:
            os._exit(int(item["__exit__"]))
        elif "__deltas__" in item:
            tok = item.get("text", "tok ")
            msg_id = item.get("id", "msg_standin")
            start = {"type": "message_start", "message": {"id": msg_id, "model": "standin"}}
            write({"type": "stream_event", "parent_tool_use_id": None, "event": start})
            for _ in range(int(item["__deltas__"])):
                if interrupted.is_set():
                    break
                write(text_delta(tok))
                if item.get("delay"):
                    time.sleep(float(item["delay"]))
            text = tok * int(item["__deltas__"])
            write(assistant(text, msg_id=msg_id, model="standin"))
        else:
            if item.get("type") == "result":
                ended = True
            write(item)
    if interrupted.is_set():
        write(aborted())
    elif not ended:
        write(result(text or "standin reply"))


def be_stubborn(path: str) -> None:
    import signal
    import subprocess

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
    with open(path + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    os.replace(path + ".tmp", path)


def main() -> None:
    global SESSION
    for arg in sys.argv:
        if arg.startswith("--session-id=") or arg.startswith("--resume="):
            SESSION = arg.split("=", 1)[1]
    if os.environ.get("STANDIN_STUBBORN"):
        be_stubborn(os.environ["STANDIN_STUBBORN"])
    turns = load_turns()
    # The turn counter outlives the process, so a restarted stand-in goes on with the script.
    state = os.environ.get("STANDIN_SCRIPT", "") + ".state"
    turn_index = 0
    if os.path.exists(state):
        with open(state) as f:
            turn_index = int(f.read())
    worker: threading.Thread | None = None
    for raw in sys.stdin.buffer:
        if stalled.is_set():
            time.sleep(3600)
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        if msg.get("type") == "control_request":
            req = msg.get("request", {})
            if req.get("subtype") == "interrupt":
                interrupted.set()
            answer = {"request_id": msg.get("request_id"), **control_answer(req, os.getpid())}
            write({"type": "control_response", "response": answer})
        elif msg.get("type") == "user" and turns:
            if worker is not None:
                worker.join()
            turn = turns[min(turn_index, len(turns) - 1)]
            turn_index += 1
            if os.environ.get("STANDIN_SCRIPT"):
                with open(state, "w") as f:
                    f.write(str(turn_index))
            play = replay_file if isinstance(turn, dict) else replay
            worker = threading.Thread(target=play, args=(turn,), daemon=True)
            worker.start()
    if worker is not None:
        worker.join()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        os._exit(0)
