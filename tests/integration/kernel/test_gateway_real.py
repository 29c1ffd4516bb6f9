"""byre_jupyter through a real Jupyter Kernel Gateway (``jupyter kernelgateway``), driven over
its REST and websocket API as JupyterLab with ``--gateway-url`` drives it (docs/gateway.md).

The gateway gives its kernels only ``PATH``, ``KERNEL_*`` and the names in
``KG_ENV_PROCESS_WHITELIST``. Without the allow-list the first ``%%claude`` cell must say what
to allow-list; with it, a turn answers through the real CLI and the scripted API, and deleting
the kernel (what the gateway does on shutdown) leaves no CLI behind. ``PYTHONPATH`` is
allow-listed in both only so that the kernel imports this checkout.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from support.kernel import kernel_env as make_kernel_env
from support.processes import cli_children
from support.waiting import poll
from tornado.websocket import websocket_connect

from byre_jupyter.scripted import Reply, ScriptedAPI, Text

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

# The `servers` extra (./dev setup); the version tiers install only `test`.
pytest.importorskip("kernel_gateway", reason="jupyter_kernel_gateway is not installed")

ROOT = Path(__file__).resolve().parents[3]
TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Gateway:
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = cwd / "gateway.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kernel_gateway", f"--port={self.port}", "--ip=127.0.0.1"],
                env=env,
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        poll(self._up, TIMEOUT, f"the gateway on port {self.port} ({self.log})")

    def _up(self) -> bool:
        assert self.proc.poll() is None, self.log.read_text()
        try:
            with urllib.request.urlopen(f"{self.url}/api", timeout=2):
                return True
        except OSError:
            return False

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        with urllib.request.urlopen(req, timeout=TIMEOUT) as response:
            text = response.read()
        return json.loads(text) if text else None

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_kernel(gateway: Gateway) -> Any:
    """As JupyterLab's gateway client starts one: with an ``env`` of ``KERNEL_*`` names (the
    gateway restricts a kernel's environment only when the request carries ``env``)."""
    env = {"KERNEL_USERNAME": "someone", "KERNEL_WORKING_DIR": str(gateway.log.parent)}
    return gateway.request("POST", "/api/kernels", {"name": "python3", "env": env})


def run_cells(gateway: Gateway, kernel_id: str, cells: list[str]) -> list[str]:
    """Execute cells in order over the kernel's websocket; returns each cell's output text."""

    async def go() -> list[str]:
        ws_url = gateway.url.replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels"
        conn = await websocket_connect(ws_url)
        texts = []
        try:
            for code in cells:
                msg_id = uuid.uuid4().hex
                header = {
                    "msg_id": msg_id,
                    "msg_type": "execute_request",
                    "username": "test",
                    "session": uuid.uuid4().hex,
                    "version": "5.3",
                    "date": "",
                }
                content = {"code": code, "silent": False, "store_history": True}
                request = {"header": header, "parent_header": {}, "metadata": {}}
                await conn.write_message(
                    json.dumps({**request, "content": content, "channel": "shell"})
                )
                parts: list[str] = []
                replied = idle = False
                while not (replied and idle):
                    raw = await asyncio.wait_for(conn.read_message(), TIMEOUT)
                    assert raw is not None, "the gateway closed the websocket"
                    msg = json.loads(raw)
                    if msg.get("parent_header", {}).get("msg_id") != msg_id:
                        continue
                    kind, body = msg["header"]["msg_type"], msg["content"]
                    if kind == "execute_reply":
                        replied = True
                    elif kind == "status" and body["execution_state"] == "idle":
                        idle = True
                    elif kind == "stream":
                        parts.append(body["text"])
                    elif kind in ("display_data", "execute_result", "update_display_data"):
                        parts.append(body["data"].get("text/plain", ""))
                    elif kind == "error":
                        parts.append(f"{body['ename']}: {body['evalue']}")
                texts.append("\n".join(parts))
        finally:
            conn.close()
        return texts

    return asyncio.run(go())


@pytest.fixture
def gateway_env(api: ScriptedAPI, cli_path: str, tmp_path: Path) -> dict[str, str]:
    """The gateway's own environment: everything a kernel would need, if allow-listed."""
    env = make_kernel_env(api.url, cli_path, tmp_path)
    env["PYTHONPATH"] = str(ROOT)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return env


@pytest.fixture
def start_gateway(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], Gateway]]:
    started: list[Gateway] = []

    def start(env: dict[str, str]) -> Gateway:
        gateway = Gateway(env, tmp_path)
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        gateway.close()


def test_without_the_allow_list_the_first_cell_says_what_to_allow_list(
    start_gateway: Callable[[dict[str, str]], Gateway], gateway_env: dict[str, str]
) -> None:
    gateway = start_gateway({**gateway_env, "KG_ENV_PROCESS_WHITELIST": "PYTHONPATH"})
    kernel = start_kernel(gateway)
    out = run_cells(gateway, kernel["id"], ["%load_ext byre_jupyter", "%%claude\nhello"])
    assert "KG_ENV_PROCESS_WHITELIST" in out[1], out
    assert "HOME" in out[1], out


def test_with_the_allow_list_a_turn_answers_and_deleting_the_kernel_leaves_no_cli(
    start_gateway: Callable[[dict[str, str]], Gateway],
    gateway_env: dict[str, str],
    api: ScriptedAPI,
    cli_path: str,
) -> None:
    api.on("through the gateway", Reply(Text("answered via GATEWAY_OK")))
    # docs/gateway.md's table, plus what the offline rig sets (its API, no retries, state dir).
    documented = {
        "HOME",
        "ANTHROPIC_API_KEY",
        "BYRE_CLAUDE_PATH",
        "ANTHROPIC_BASE_URL",
        "IS_SANDBOX",
    }
    rig = {"PYTHONPATH", "TMPDIR", "BYRE_STATE_DIR", *(n for n in gateway_env if "CLAUDE" in n)}
    allow = ",".join(sorted(documented | rig | {"DISABLE_AUTOUPDATER"}))
    gateway = start_gateway({**gateway_env, "KG_ENV_PROCESS_WHITELIST": allow})
    kernel = start_kernel(gateway)
    out = run_cells(
        gateway,
        kernel["id"],
        ["%load_ext byre_jupyter", "%%claude\nanswer through the gateway"],
    )
    assert "GATEWAY_OK" in out[1], out

    def clis() -> list[psutil.Process]:
        return cli_children(gateway.proc.pid)

    assert clis(), "no CLI under the gateway's kernel"
    gateway.request("DELETE", f"/api/kernels/{kernel['id']}")
    started = time.monotonic()
    poll(lambda: not clis(), 10, "the CLI to end after the kernel was deleted")
    print(f"[gateway figure] CLI gone {time.monotonic() - started:.3f} s after DELETE")
