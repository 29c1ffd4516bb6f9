"""Deterministic stream-json generator: CLI stdout as the real CLI 2.1.328 shapes it.

The line shapes follow ``docs/protocol.md``: ``system/init`` and
``system/status`` at the start of a turn, then per API message ``stream_event`` lines
(``message_start``, ``content_block_start``/``_delta``/``_stop``, ``message_delta``,
``message_stop``) carrying ``session_id``, ``parent_tool_use_id``, ``uuid`` and
``api_message_id``; **one** ``assistant`` line per content block, sent before that block's
``content_block_stop`` (§2); ``system/thinking_tokens`` lines between thinking deltas; a
``user`` line with the ``tool_result`` of each tool call, with ``tool_use_result`` and
``tool_result_meta`` (§3); a PNG read by the Read tool comes back **twice** on one line, as an
image block and as ``tool_use_result.file.base64`` (§4); and a ``result`` at the end.

Everything comes from a seeded :class:`random.Random`, so the same arguments give the same
bytes. Files are written under ``bench/out/`` (gitignored) and reused when present.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "OUT",
    "SESSION",
    "big_line_file",
    "png",
    "stream_file",
    "stream_lines",
    "text_turn_file",
]

OUT = Path(__file__).resolve().parent / "out"
SESSION = "0b1e5c1a-5e55-4d0e-9b6a-bench0000001"
MODEL = "claude-opus-5-5"
GEN_VERSION = 2  # bump when the shapes change, so cached files are regenerated

_WORDS_TEXT = (
    "the a of to and in is that for it with as on be this by are was from at or an have "
    "data frame column value plot model kernel cell notebook output function returns list "
    "index error result token stream session widget figure array mean median sum count "
    "`df.groupby()` **note** _maybe_ → é ü 数据 ✓ `np.float64` 0.25 1,024 42% (see below)"
)
_WORDS = _WORDS_TEXT.split()


def _dumps(obj: Any) -> bytes:
    # The CLI writes compact JSON with non-ASCII kept as UTF-8.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def png(width: int, height: int, rng: random.Random) -> bytes:
    """A valid RGB PNG of noisy pixels (so it barely compresses), made with zlib/struct."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    row_len = width * 3
    raw = b"".join(b"\x00" + rng.randbytes(row_len) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 1))
        + chunk(b"IEND", b"")
    )


class _Ids:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.n = 0

    def uuid(self) -> str:
        self.n += 1
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _chunks(rng: random.Random, count: int) -> list[str]:
    """``count`` text pieces of 1-4 words each, like model token chunks."""
    out = []
    for i in range(count):
        words = rng.choices(_WORDS, k=rng.randint(1, 4))
        piece = " ".join(words) + " "
        if i % 17 == 16:
            piece += "\n\n"
        out.append(piece)
    return out


class _Writer:
    """Builds the lines of one turn; :meth:`lines` yields them as bytes (no newline)."""

    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng = rng
        self.ids = _Ids(rng)
        self.session = session
        self.msg = 0
        self.tool = 0

    def base(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, **fields, "session_id": self.session, "uuid": self.ids.uuid()}

    def event(self, event: dict[str, Any], api_message_id: str) -> bytes:
        return _dumps(
            {
                "type": "stream_event",
                "event": event,
                "session_id": self.session,
                "parent_tool_use_id": None,
                "uuid": self.ids.uuid(),
                "api_message_id": api_message_id,
            }
        )

    def assistant(self, message_id: str, block: dict[str, Any], usage: dict[str, Any]) -> bytes:
        return _dumps(
            {
                "type": "assistant",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [block],
                    "stop_reason": None,
                    "usage": usage,
                    "context_management": None,
                },
                "parent_tool_use_id": None,
                "session_id": self.session,
                "uuid": self.ids.uuid(),
                "timestamp": "2026-05-09T07:35:25.000Z",
                "request_id": f"req_fake_{self.msg:06d}",
            }
        )

    def init(self) -> bytes:
        return _dumps(
            {
                "type": "system",
                "subtype": "init",
                "cwd": "/work/notebooks",
                "session_id": self.session,
                "tools": ["Task", "Bash", "Edit", "Read", "Write", "mcp__byre__python_exec"],
                "mcp_servers": [{"name": "byre", "status": "connected", "source": "sdk"}],
                "model": MODEL,
                "permissionMode": "default",
                "capabilities": ["interrupt_receipt_v1", "interrupt_cancel_queued_v1"],
                "claude_code_version": "2.1.328",
                "uuid": self.ids.uuid(),
            }
        )

    def status(self) -> bytes:
        return _dumps(self.base("system", subtype="status", status="requesting"))

    def message(
        self, *, thinking: int, text: int, tool: str | None, input_pieces: int = 4
    ) -> Iterator[bytes]:
        """One API message: optional thinking block, a text block, an optional tool_use."""
        self.msg += 1
        mid = f"msg_{self.msg:08d}"
        usage = {
            "input_tokens": 1200 + self.msg,
            "output_tokens": 1,
            "cache_read_input_tokens": 30000,
        }
        start: dict[str, Any] = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "usage": usage,
        }
        yield self.event({"type": "message_start", "message": start}, mid)
        index = 0
        if thinking:
            yield self.event(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
                mid,
            )
            pieces = _chunks(self.rng, thinking)
            for i, piece in enumerate(pieces):
                delta = {"type": "thinking_delta", "thinking": piece}
                yield self.event(
                    {"type": "content_block_delta", "index": index, "delta": delta}, mid
                )
                if i % 10 == 9:
                    yield _dumps(
                        self.base(
                            "system",
                            subtype="thinking_tokens",
                            estimated_tokens=i * 3,
                            estimated_tokens_delta=30,
                        )
                    )
            delta = {"type": "signature_delta", "signature": ""}
            yield self.event({"type": "content_block_delta", "index": index, "delta": delta}, mid)
            block: dict[str, Any] = {
                "type": "thinking",
                "thinking": "".join(pieces),
                "signature": "c2ln" * 16,
            }
            yield self.assistant(mid, block, usage)
            yield self.event({"type": "content_block_stop", "index": index}, mid)
            index += 1
        if text:
            yield self.event(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
                mid,
            )
            pieces = _chunks(self.rng, text)
            for piece in pieces:
                delta = {"type": "text_delta", "text": piece}
                yield self.event(
                    {"type": "content_block_delta", "index": index, "delta": delta}, mid
                )
            yield self.assistant(mid, {"type": "text", "text": "".join(pieces)}, usage)
            yield self.event({"type": "content_block_stop", "index": index}, mid)
            index += 1
        if tool:
            self.tool += 1
            tid = f"toolu_{self.tool:08d}"
            tool_input = (
                {"file_path": f"/work/notebooks/fig_{self.tool}.png"}
                if tool == "Read"
                else {
                    "command": f"python -c 'print({self.tool})' | head -n 40",
                    "description": "Run a quick check",
                }
            )
            yield self.event(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": tid, "name": tool, "input": {}},
                },
                mid,
            )
            encoded = json.dumps(tool_input)
            step = max(1, len(encoded) // input_pieces + 1)
            for k in range(0, len(encoded), step):
                delta = {"type": "input_json_delta", "partial_json": encoded[k : k + step]}
                yield self.event(
                    {"type": "content_block_delta", "index": index, "delta": delta}, mid
                )
            block = {
                "type": "tool_use",
                "id": tid,
                "name": tool,
                "input": tool_input,
            }
            yield self.assistant(mid, block, usage)
            yield self.event({"type": "content_block_stop", "index": index}, mid)
        stop = "tool_use" if tool else "end_turn"
        yield self.event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 40 + text + thinking},
            },
            mid,
        )
        yield self.event({"type": "message_stop"}, mid)

    def tool_result_text(self, lines: int) -> bytes:
        tid = f"toolu_{self.tool:08d}"
        out = "\n".join(
            f"line {i}: " + " ".join(self.rng.choices(_WORDS, k=6)) for i in range(lines)
        )
        return _dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tid,
                            "type": "tool_result",
                            "content": out,
                            "is_error": False,
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": self.session,
                "uuid": self.ids.uuid(),
                "timestamp": "2026-05-09T07:35:26.000Z",
                "tool_use_result": {
                    "stdout": out,
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                    "noOutputExpected": False,
                },
                "tool_result_meta": [
                    {
                        "id": tid,
                        "permission_decision": {
                            "decision": "accept",
                            "source": "config",
                            "reason_type": "mode",
                        },
                    }
                ],
            }
        )

    def tool_result_image(self, data_b64: str, width: int, height: int, size: int) -> bytes:
        tid = f"toolu_{self.tool:08d}"
        return _dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tid,
                            "type": "tool_result",
                            "content": [
                                {
                                    "type": "image",
                                    "source": {
                                        "type": "base64",
                                        "data": data_b64,
                                        "media_type": "image/png",
                                    },
                                }
                            ],
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": self.session,
                "uuid": self.ids.uuid(),
                "timestamp": "2026-05-09T07:35:26.000Z",
                "tool_use_result": {
                    "type": "image",
                    "file": {
                        "base64": data_b64,
                        "type": "image/png",
                        "originalSize": size,
                        "dimensions": {
                            "originalWidth": width,
                            "originalHeight": height,
                            "displayWidth": width,
                            "displayHeight": height,
                        },
                    },
                },
                "tool_result_meta": [
                    {
                        "id": tid,
                        "permission_decision": {
                            "decision": "accept",
                            "source": "config",
                            "reason_type": "mode",
                        },
                    }
                ],
            }
        )

    def result(self, text: str, num_turns: int) -> bytes:
        return _dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": text,
                "stop_reason": "end_turn",
                "terminal_reason": "completed",
                "session_id": self.session,
                "num_turns": num_turns,
                "duration_ms": 1234,
                "duration_api_ms": 1100,
                "total_cost_usd": 0.0123,
                "usage": {
                    "input_tokens": 1200,
                    "output_tokens": 345,
                    "cache_read_input_tokens": 30000,
                },
                "modelUsage": {MODEL: {"inputTokens": 1200, "outputTokens": 345}},
                "permission_denials": [],
                "api_error_status": None,
                "uuid": self.ids.uuid(),
            }
        )


def stream_lines(n_lines: int, seed: int = 0, session: str = SESSION) -> Iterator[bytes]:
    """At least ``n_lines`` lines of one long agentic turn (tool loop), ending in a result.

    Each round is one API message (thinking 24 deltas, text 60 deltas, a tool call) and its
    tool result; every 8th tool is a Read of a PNG (64x64 to 160x160 noise, 16-100 KB of
    base64, twice on its line), the others Bash output.
    """
    rng = random.Random(seed)
    w = _Writer(rng, session)
    count = 0

    def emit(line: bytes) -> bytes:
        nonlocal count
        count += 1
        return line

    yield emit(w.init())
    yield emit(w.status())
    rounds = 0
    while count + 47 < n_lines:  # the final message and the result are 47 lines
        rounds += 1
        tool = "Read" if rounds % 8 == 0 else "Bash"
        for line in w.message(thinking=24, text=60, tool=tool):
            yield emit(line)
        if tool == "Read":
            side = rng.choice((64, 96, 128, 160))
            data = png(side, side, rng)
            yield emit(w.tool_result_image(base64.b64encode(data).decode(), side, side, len(data)))
        else:
            yield emit(w.tool_result_text(rng.randint(3, 30)))
        yield emit(w.status())
    final = _chunks(rng, 40)
    for line in w.message(thinking=0, text=40, tool=None):
        yield emit(line)
    yield emit(w.result("".join(final), rounds + 1))


def _cached(name: str, build: Any) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            build(f)
        tmp.rename(path)
    return path


def stream_file(n_lines: int, seed: int = 0) -> Path:
    """The :func:`stream_lines` stream as a JSONL file (cached); returns its path."""

    def build(f: Any) -> None:
        for line in stream_lines(n_lines, seed):
            f.write(line + b"\n")

    return _cached(f"stream-v{GEN_VERSION}-{n_lines}-s{seed}.jsonl", build)


def text_turn_file(
    n_deltas: int, *, prose_words: int = 0, token_prefix: str = "w", session: str = SESSION
) -> Path:
    """A plain text turn: ``n_deltas`` text deltas, the assistant line, a result.

    With ``prose_words`` > 0 each delta is that many words of markdown-ish prose (code spans,
    emphasis, punctuation, non-ASCII; a paragraph break every 40 deltas). Otherwise deltas are
    numbered tokens ``"<prefix>00042 "``, so a receiver can tell which delta a rendered text
    already includes.
    """

    def build(f: Any) -> None:
        rng = random.Random(1)
        w = _Writer(rng, session)
        w.msg += 1
        mid = f"msg_{w.msg:08d}"
        usage = {"input_tokens": 10, "output_tokens": 1}
        start: dict[str, Any] = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "usage": usage,
        }
        lines = [w.init(), w.status(), w.event({"type": "message_start", "message": start}, mid)]
        lines.append(
            w.event(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                mid,
            )
        )
        if prose_words:
            pieces = []
            for i in range(n_deltas):
                piece = " ".join(rng.choices(_WORDS, k=prose_words)) + " "
                pieces.append(piece + "\n\n" if i % 40 == 39 else piece)
        else:
            pieces = [f"{token_prefix}{i:05d} " for i in range(n_deltas)]
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece}
            lines.append(w.event({"type": "content_block_delta", "index": 0, "delta": delta}, mid))
        text = "".join(pieces)
        lines.append(w.assistant(mid, {"type": "text", "text": text}, usage))
        lines.append(w.event({"type": "content_block_stop", "index": 0}, mid))
        lines.append(
            w.event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": n_deltas},
                },
                mid,
            )
        )
        lines.append(w.event({"type": "message_stop"}, mid))
        lines.append(w.result(text, 1))
        for line in lines:
            f.write(line + b"\n")

    kind = f"prose{prose_words}" if prose_words else f"tok-{token_prefix}"
    return _cached(f"text-v{GEN_VERSION}-{n_deltas}-{kind}.jsonl", build)


def big_line_file(mib: int) -> Path:
    """A turn whose tool result carries one PNG-like base64 payload twice (image block and
    ``tool_use_result.file.base64``, as the CLI sends it), padded so the line is exactly
    ``mib`` MiB (without its newline); then a short result."""

    def build(f: Any) -> None:
        rng = random.Random(mib)
        w = _Writer(rng, SESSION)
        w.tool = 1
        target = mib * 1024 * 1024
        # Everything but the two payload copies (uuids and the size field have fixed widths).
        overhead = len(w.tool_result_image("", 4000, 3000, 10 ** (len(str(target)) - 1)))
        b64_len = (target - overhead) // 2
        b64_len -= b64_len % 4
        raw_len = b64_len * 3 // 4
        payload = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(raw_len - 8)).decode()
        line = w.tool_result_image(payload, 4000, 3000, raw_len)
        pad = target - len(line)
        assert 0 <= pad < 16, pad
        # Pad inside the JSON (trailing spaces are valid JSON) to hit the size exactly.
        line = line[:-1] + b" " * pad + b"}"
        assert len(line) == target
        f.write(w.init() + b"\n")
        f.write(line + b"\n")
        f.write(w.result("done", 2) + b"\n")

    return _cached(f"bigline-v{GEN_VERSION}-{mib}MiB.jsonl", build)


if __name__ == "__main__":  # pragma: no cover - manual inspection
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    p = stream_file(n)
    with open(p, "rb") as f:
        print(p, p.stat().st_size, sum(1 for _ in f))
