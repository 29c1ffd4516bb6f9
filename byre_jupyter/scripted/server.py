"""A scripted fake Anthropic Messages API on 127.0.0.1, for the real ``claude`` CLI to talk to.

Stdlib only (``http.server.ThreadingHTTPServer`` in a background thread), so it serves sync
tests, async tests and the standalone ``python -m byre_jupyter.scripted`` process alike.

Endpoints (the CLI appends ``?beta=true``; only the path part is matched):

* ``POST /v1/messages`` -- answered by the :class:`~byre_jupyter.scripted.script.Script`:
  an SSE stream (``message_start``, ``ping``, ``content_block_start/delta/stop`` per block,
  ``message_delta``, ``message_stop``) when ``stream`` is true, else one JSON message built
  from the same reply. The CLI sends non-streaming ``max_tokens: 1`` probes after
  ``set_model`` to an unknown model (measured with CLI 2.1.328).
* ``POST /v1/messages/count_tokens`` -- ``{"input_tokens": N}``, a rough count; the CLI calls
  it for ``get_context_usage`` (section 0).
* anything else -- 404 with an Anthropic error body.

SSE bodies use chunked transfer encoding, one chunk per event, written straight to the
socket so the CLI sees every delta as it is produced. Client disconnects are expected (an
interrupt drops the connection mid-stream, section 6) and are handled quietly.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import select
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from ..protocol.messages import SCRIPTED_MESSAGE_ID
from .script import (
    Action,
    Cut,
    Error,
    Hang,
    Malformed,
    Matcher,
    Reply,
    Responder,
    Rule,
    Script,
    ScriptedRequest,
    Slow,
    Text,
    Thinking,
    ToolUse,
    rough_token_count,
)

__all__ = ["ScriptedAPI"]

_DISCONNECT_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


class _ClientGone(Exception):
    """The client closed the connection, or the server is stopping."""


class _CutConnection(Exception):
    """A :class:`Cut` reply reached its delta budget; drop the connection now."""


class ScriptedAPI:
    """A fake Messages API server driven by a :class:`Script`.

    >>> api = ScriptedAPI()
    >>> api.on("hello", Reply(Text("Hi!")))  # doctest: +SKIP
    >>> with api: ...  # api.url is http://127.0.0.1:PORT  # doctest: +SKIP
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        port: int = 0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.script: Script = script if script is not None else Script()
        self._port = port
        self._log = log
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._cond = threading.Condition()
        self._requests: list[ScriptedRequest] = []
        self._disconnects: list[int] = []
        self._release_gen = 0
        self._msg_ids = itertools.count(1)
        self._tool_ids = itertools.count(1)
        self._req_ids = itertools.count(1)
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> ScriptedAPI:
        """Bind 127.0.0.1:port (0 picks a free port) and serve in a daemon thread."""
        if self._server is not None:
            raise RuntimeError("ScriptedAPI already started")
        self._stopping.clear()
        server = _Server(("127.0.0.1", self._port), _Handler)
        server.api = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"ScriptedAPI:{server.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake hanging handlers and close open connections. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        server.shutdown()
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedAPI:
        if self._server is None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("ScriptedAPI not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, the value for ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    # ---------------------------------------------------------------- script

    def on(
        self,
        match: Matcher,
        reply: Responder | list[Responder] | tuple[Responder, ...],
        *,
        times: int | None = None,
    ) -> Rule:
        """Add a rule (see :meth:`Script.on`); newer rules win."""
        return self.script.on(match, reply, times=times)

    @property
    def default(self) -> Responder:
        return self.script.default

    @default.setter
    def default(self, value: Responder) -> None:
        self.script.default = value

    # ---------------------------------------------------------------- recording

    @property
    def requests(self) -> list[ScriptedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._cond:
            return list(self._requests)

    def wait_for_request(
        self,
        pred: Callable[[ScriptedRequest], bool] | str | None = None,
        timeout: float = 10.0,
        *,
        after: int = 0,
    ) -> ScriptedRequest:
        """Block until a recorded request with ``index >= after`` matches; return the first one.

        ``pred`` may be a predicate, a keyword (looked up case-insensitively in
        ``last_user_text``) or None (any request). Raises :class:`TimeoutError`.
        """
        check: Callable[[ScriptedRequest], bool]
        if isinstance(pred, str):
            word = pred.lower()
            check = lambda r: word in r.last_user_text.lower()  # noqa: E731
        elif pred is None:
            check = lambda r: True  # noqa: E731
        else:
            check = pred
        deadline = time.monotonic() + timeout
        seen = after
        with self._cond:
            while True:
                for r in self._requests[seen:]:
                    if check(r):
                        return r
                seen = max(seen, len(self._requests))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"no matching request within {timeout} s "
                        f"({len(self._requests)} recorded: {self._requests[-3:]!r})"
                    )
                self._cond.wait(left)

    @property
    def disconnects(self) -> list[int]:
        """Indices of requests whose client went away before the response was complete.

        An interrupt makes the CLI drop its connection mid-stream (measured with CLI 2.1.328);
        this is how a test sees that from the server side.
        """
        with self._cond:
            return list(self._disconnects)

    def wait_for_disconnect(self, index: int | None = None, timeout: float = 10.0) -> int:
        """Block until the client of request ``index`` (None: any request) disconnects early."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i in self._disconnects:
                    if index is None or i == index:
                        return i
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no early disconnect of request {index} within {timeout} s")
                self._cond.wait(left)

    def release(self) -> None:
        """Let every handler currently waiting in a :class:`Hang` (or a held :class:`Cut`) go on."""
        with self._cond:
            self._release_gen += 1
            self._cond.notify_all()

    # ---------------------------------------------------------------- internals

    def _record(
        self, method: str, raw_path: str, headers: dict[str, str], body: Any
    ) -> ScriptedRequest:
        path, _, query = raw_path.partition("?")
        with self._cond:
            req = ScriptedRequest(
                index=len(self._requests),
                method=method,
                path=path,
                query=query,
                headers=headers,
                body=body if isinstance(body, dict) else {},
            )
            self._requests.append(req)
            self._cond.notify_all()
        if self._log is not None:
            self._log(repr(req))
        return req

    def _record_disconnect(self, index: int) -> None:
        with self._cond:
            if self._stopping.is_set():
                return  # our own shutdown, not the client's doing
            self._disconnects.append(index)
            self._cond.notify_all()

    def _wait_released(self, conn: socket.socket) -> None:
        """Wait for :meth:`release`; raise :class:`_ClientGone` on disconnect or stop."""
        with self._cond:
            gen = self._release_gen
        while True:
            with self._cond:
                if self._release_gen != gen:
                    return
                if self._stopping.is_set():
                    raise _ClientGone
                self._cond.wait(0.05)
            if _peer_closed(conn):
                raise _ClientGone

    def _sleep(self, seconds: float, conn: socket.socket) -> None:
        """Wait ``seconds``; raise :class:`_ClientGone` early on disconnect or stop."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self._stopping.wait(min(left, 0.05)):
                raise _ClientGone
            if _peer_closed(conn):
                raise _ClientGone

    def _next_msg_id(self) -> str:
        return f"{SCRIPTED_MESSAGE_ID}{next(self._msg_ids)}"

    def _next_tool_id(self) -> str:
        return f"toolu_scripted_{next(self._tool_ids)}"

    def _next_req_id(self) -> str:
        return f"req_scripted_{next(self._req_ids)}"


def _peer_closed(conn: socket.socket) -> bool:
    """True when the peer has closed its side (readable and recv peeks EOF)."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        if not readable:
            return False
        return conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    api: ScriptedAPI

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (*_DISCONNECT_ERRORS, _ClientGone, OSError)):
            return
        super().handle_error(request, client_address)


def _chunks(text: str, size: int) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


def _split_pieces(s: str, pieces: int) -> list[str]:
    n = max(1, min(pieces, len(s)))
    step = -(-len(s) // n) if s else 1
    return [s[i : i + step] for i in range(0, len(s), step)] or [""]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    server_version = "ScriptedAPI/1"

    # ------------------------------------------------------------ plumbing

    def setup(self) -> None:
        super().setup()
        with self.server.api._conns_lock:
            self.server.api._conns.add(self.connection)

    def finish(self) -> None:
        with self.server.api._conns_lock:
            self.server.api._conns.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet; ScriptedAPI(log=...) reports requests instead

    _req_index: int | None = None

    def handle_one_request(self) -> None:
        self._req_index = None
        try:
            super().handle_one_request()
        except (*_DISCONNECT_ERRORS, _ClientGone):
            self.close_connection = True
            if self._req_index is not None:
                self.server.api._record_disconnect(self._req_index)
        except _CutConnection:
            self.close_connection = True
            self._abort()

    def _abort(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", self.server.api._next_req_id())
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error_action(self, err: Error) -> None:
        extra: dict[str, str] = {}
        if err.retry_after is not None:
            ra = err.retry_after
            extra["retry-after"] = str(int(ra)) if float(ra).is_integer() else str(ra)
        self._send_json(err.status, err.body(), extra)

    # ------------------------------------------------------------ methods

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        api = self.server.api
        raw = self._read_body()
        body: Any = {}
        bad_json = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                bad_json = True
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = api._record(method, self.path, headers, body)
        self._req_index = req.index
        if method == "POST" and req.path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": rough_token_count(req.body)})
            return
        if method != "POST" or req.path != "/v1/messages":
            self._send_error_action(
                Error(
                    404, f"scripted API: no route {method} {req.path}", error_type="not_found_error"
                )
            )
            return
        if bad_json or not isinstance(body, dict):
            self._send_error_action(Error(400, "scripted API: body is not a JSON object"))
            return
        try:
            action = api.script.choose(req)
        except Exception as e:  # a user predicate or responder failed: tell the client and stderr
            traceback.print_exc()
            self._send_error_action(Error(500, f"scripted API: script raised {e!r}"))
            return
        self._serve(action, req)

    # ------------------------------------------------------------ actions

    def _serve(self, action: Action, req: ScriptedRequest) -> None:
        api = self.server.api
        if isinstance(action, Hang):
            api._wait_released(self.connection)
            if action.then is None:
                self.close_connection = True
                self._abort()
                return
            self._serve(action.then, req)
        elif isinstance(action, Slow):
            api._sleep(action.seconds, self.connection)
            self._serve(action.reply, req)
        elif isinstance(action, Error):
            self._send_error_action(action)
        elif isinstance(action, Malformed) and not req.stream:
            data = "\n".join(action.lines).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        elif isinstance(action, Malformed):
            self._start_sse()
            for line in action.lines:
                self._chunk((line + "\n").encode())
            self._chunk(b"\n")
            self._end_chunks()
        elif isinstance(action, Cut):
            if req.stream:
                self._stream(action.reply, req, cut_after=action.after_deltas, hold_cut=action.hold)
            else:
                data = json.dumps(self._message_json(action.reply, req)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                raise _CutConnection
        elif isinstance(action, Reply):
            if req.stream:
                self._stream(action, req, cut_after=None)
            else:
                self._send_json(200, self._message_json(action, req))
        else:  # pragma: no cover - Script._resolve guarantees an action
            raise TypeError(f"unknown action {action!r}")

    def _usage(self, reply: Reply, req: ScriptedRequest) -> dict[str, int]:
        usage = {
            "input_tokens": rough_token_count(req.body),
            "output_tokens": max(1, sum(len(_block_text(b)) for b in reply.blocks) // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        usage.update(reply.usage)
        return usage

    def _message_json(self, reply: Reply, req: ScriptedRequest) -> dict[str, Any]:
        api = self.server.api
        content: list[dict[str, Any]] = []
        for b in reply.blocks:
            if isinstance(b, Text):
                content.append({"type": "text", "text": b.text})
            elif isinstance(b, Thinking):
                content.append(
                    {"type": "thinking", "thinking": b.thinking, "signature": b.signature}
                )
            else:
                content.append(
                    {
                        "type": "tool_use",
                        "id": b.id or api._next_tool_id(),
                        "name": b.name,
                        "input": dict(b.input),
                    }
                )
        return {
            "id": api._next_msg_id(),
            "type": "message",
            "role": "assistant",
            "model": req.model or "claude-scripted",
            "content": content,
            "stop_reason": reply.effective_stop_reason,
            "stop_sequence": None,
            "usage": self._usage(reply, req),
        }

    # ------------------------------------------------------------ SSE

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", self.server.api._next_req_id())
        self.end_headers()
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _event(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False)
        self._chunk(f"event: {payload['type']}\ndata: {data}\n\n".encode())

    def _stream(
        self, reply: Reply, req: ScriptedRequest, cut_after: int | None, hold_cut: bool = False
    ) -> None:
        api = self.server.api
        usage = self._usage(reply, req)
        self._start_sse()
        self._event(
            {
                "type": "message_start",
                "message": {
                    "id": api._next_msg_id(),
                    "type": "message",
                    "role": "assistant",
                    "model": req.model or "claude-scripted",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage["input_tokens"],
                        "output_tokens": 1,
                        "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                        "cache_read_input_tokens": usage["cache_read_input_tokens"],
                    },
                },
            }
        )
        self._event({"type": "ping"})
        api._sleep(reply.delay_first, self.connection)
        deltas = 0

        def cut() -> None:
            if hold_cut:
                api._wait_released(self.connection)
            raise _CutConnection

        def delta(index: int, d: dict[str, Any], delay: float) -> None:
            nonlocal deltas
            if deltas and delay:
                api._sleep(delay, self.connection)
            if cut_after is not None and deltas >= cut_after:
                cut()
            self._event({"type": "content_block_delta", "index": index, "delta": d})
            deltas += 1

        for index, b in enumerate(reply.blocks):
            if isinstance(b, Text):
                self._event(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    }
                )
                for piece in _chunks(b.text, b.chunk):
                    delta(index, {"type": "text_delta", "text": piece}, b.delay)
            elif isinstance(b, Thinking):
                self._event(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    }
                )
                for piece in _chunks(b.thinking, b.chunk):
                    delta(index, {"type": "thinking_delta", "thinking": piece}, b.delay)
                delta(index, {"type": "signature_delta", "signature": b.signature}, 0.0)
            else:
                self._event(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": b.id or api._next_tool_id(),
                            "name": b.name,
                            "input": {},
                        },
                    }
                )
                for piece in _split_pieces(json.dumps(dict(b.input)), b.pieces):
                    delta(index, {"type": "input_json_delta", "partial_json": piece}, 0.0)
            self._event({"type": "content_block_stop", "index": index})
        if cut_after is not None:
            cut()  # fewer deltas than the budget: still cut before message_delta
        self._event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.effective_stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            }
        )
        self._event({"type": "message_stop"})
        self._end_chunks()


def _block_text(b: Text | Thinking | ToolUse) -> str:
    if isinstance(b, Text):
        return b.text
    if isinstance(b, Thinking):
        return b.thinking
    return json.dumps(dict(b.input))
