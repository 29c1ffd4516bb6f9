#!/usr/bin/env python3
"""A stand-in for the ``claude`` CLI: speaks just enough stream-json to replay a script.

For what the real CLI cannot be made to do on demand (a 64 MiB line, garbage on stdout, invalid
UTF-8, a stall) and for throughput benchmarks. Real behaviour is tested against the real CLI.

Reads NDJSON on stdin. Answers ``initialize`` (with a small ``models`` list), ``interrupt``
(ends the running replay with an ``error_during_execution`` result), ``set_model``; every other
control request gets an error. For each user message it replays ``$STANDIN_SCRIPT`` (JSONL; one
script per turn if the file holds several blocks separated by a line ``---``). Script items:

* any JSON object: written as one line (``session_id`` filled in);
* ``{"__raw__": "text"}``: the text written as-is (plus newline); ``{"__bytes_hex__": "ff00"}``;
* ``{"__big_text__": N}``: an assistant text line of about N bytes;
* ``{"__stall__": true}``: stop writing and reading (until killed);
* ``{"__exit__": code}``: exit now;
* ``{"__deltas__": N, "text": "tok "}``: N stream_event text deltas then the assistant line.
A turn's script without a ``result`` gets one appended.

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

OUT = sys.stdout.buffer
SESSION = "standin-session"
for arg in sys.argv:
    if arg.startswith("--session-id=") or arg.startswith("--resume="):
        SESSION = arg.split("=", 1)[1]

interrupted = threading.Event()
stalled = threading.Event()
lock = threading.Lock()


def write(obj: object) -> None:
    data = (json.dumps(obj) + "\n").encode() if not isinstance(obj, bytes) else obj
    with lock:
        OUT.write(data)
        OUT.flush()


def load_turns() -> list[list[dict]]:
    path = os.environ.get("STANDIN_SCRIPT")
    if not path:
        return [
            [
                {
                    "type": "assistant",
                    "message": {
                        "id": "m1",
                        "model": "standin",
                        "role": "assistant",
                        "content": [{"type": "text", "text": "standin reply"}],
                    },
                }
            ]
        ]
    turns: list[list[dict]] = [[]]
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line == "---":
                turns.append([])
            elif line:
                turns[-1].append(json.loads(line))
    return turns


def result(text: str, subtype: str = "success", is_error: bool = False) -> dict:
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "result": text,
        "session_id": SESSION,
        "num_turns": 1,
        "duration_ms": 1,
        "total_cost_usd": 0.0,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def replay(items: list[dict]) -> None:
    interrupted.clear()
    write(
        {
            "type": "system",
            "subtype": "init",
            "session_id": SESSION,
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
            write(result(None, "error_during_execution", True))  # type: ignore[arg-type]
            return
        if "__raw__" in item:
            write(item["__raw__"].encode() + b"\n")
        elif "__bytes_hex__" in item:
            write(bytes.fromhex(item["__bytes_hex__"]) + b"\n")
        elif "__big_text__" in item:
            text = "x" * int(item["__big_text__"])
            write(
                {
                    "type": "assistant",
                    "session_id": SESSION,
                    "parent_tool_use_id": None,
                    "message": {
                        "id": "big",
                        "model": "standin",
                        "role": "assistant",
                        "content": [{"type": "text", "text": text}],
                    },
                }
            )
        elif "__stall__" in item:
            stalled.set()  # stop writing here, and stop answering on the main thread
            write({"type": "system", "subtype": "status", "status": "stalled"})
            time.sleep(3600)
        elif "__exit__" in item:
            os._exit(int(item["__exit__"]))
        elif "__deltas__" in item:
            tok = item.get("text", "tok ")
            msg_id = item.get("id", "msg_standin")
            write(
                {
                    "type": "stream_event",
                    "session_id": SESSION,
                    "parent_tool_use_id": None,
                    "event": {
                        "type": "message_start",
                        "message": {"id": msg_id, "model": "standin"},
                    },
                }
            )
            for _ in range(int(item["__deltas__"])):
                if interrupted.is_set():
                    break
                write(
                    {
                        "type": "stream_event",
                        "session_id": SESSION,
                        "parent_tool_use_id": None,
                        "event": {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": tok},
                        },
                    }
                )
                if item.get("delay"):
                    time.sleep(float(item["delay"]))
            text = tok * int(item["__deltas__"])
            write(
                {
                    "type": "assistant",
                    "session_id": SESSION,
                    "parent_tool_use_id": None,
                    "message": {
                        "id": msg_id,
                        "model": "standin",
                        "role": "assistant",
                        "content": [{"type": "text", "text": text}],
                    },
                }
            )
        else:
            item = dict(item)
            item.setdefault("session_id", SESSION)
            if item.get("type") == "result":
                ended = True
            write(item)
    if interrupted.is_set():
        write(result(None, "error_during_execution", True))  # type: ignore[arg-type]
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
            rid = msg.get("request_id")
            sub = req.get("subtype")
            if sub == "initialize":
                body = {
                    "models": [
                        {"value": "default", "displayName": "Default"},
                        {"value": "sonnet", "displayName": "Sonnet"},
                    ],
                    "account": {"email": "person@example.com"},
                    "pid": os.getpid(),
                }
                write(
                    {
                        "type": "control_response",
                        "response": {"subtype": "success", "request_id": rid, "response": body},
                    }
                )
            elif sub == "interrupt":
                interrupted.set()
                write(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "success",
                            "request_id": rid,
                            "response": {"still_queued": []},
                        },
                    }
                )
            elif sub == "set_model":
                write(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "success",
                            "request_id": rid,
                            "response": {"model": req.get("model")},
                        },
                    }
                )
            else:
                write(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "error",
                            "request_id": rid,
                            "error": f"unsupported: {sub}",
                        },
                    }
                )
        elif msg.get("type") == "user":
            if worker is not None:
                worker.join()
            items = turns[min(turn_index, len(turns) - 1)]
            turn_index += 1
            if os.environ.get("STANDIN_SCRIPT"):
                with open(state, "w") as f:
                    f.write(str(turn_index))
            worker = threading.Thread(target=replay, args=(items,), daemon=True)
            worker.start()
    if worker is not None:
        worker.join()


if __name__ == "__main__":
    main()
