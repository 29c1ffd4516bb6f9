"""The hub tier: a real JupyterHub (pinned, with configurable-http-proxy from npm) on this host,
the LocalProcessSpawner, and two OS users made for the test, each with a HOME of their own.

``scripts/hub-setup.sh`` (run by ``./dev setup hub``, which ``./dev test`` includes) installs
what an admin installs on a hub host, in a folder every user can read: JupyterHub and a user's
``pip install`` of this checkout into a venv of Debian's python3, the proxy, and the pinned CLI.
The tier needs root (it creates OS users and the hub spawns servers as them); without it the
tests skip and say why, and in CI (root) a missing set-up fails them.

Each user's server gets that user's own fake API key and the scripted API's URL from the
spawner's environment, as an admin would pass each user's key (docs/hub.md). The users' homes
are made 0755 on purpose: what keeps one user out of the other's conversations must then be
byre's and the CLI's own file modes, not the home folder's.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.waiting import poll

from byre_jupyter.scripted import ScriptedAPI

HUB_ROOT = Path(os.environ.get("BYRE_HUB_ROOT", "/opt/byre-hub"))
USERS = ("byrehub-ann", "byrehub-bob")
#: The idle culler of the user servers' kernels (jupyter_server's own, as hubs configure it).
CULL_IDLE = 6


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the hub tier creates OS users and spawns servers as them: it needs root"
    for tool in ("useradd", "userdel", "runuser"):
        if shutil.which(tool) is None:
            return f"the hub tier needs {tool} (Debian's passwd/util-linux)"
    missing = [p for p in ("venv/bin/jupyterhub", "chp/node_modules/.bin/configurable-http-proxy",
                           "bin/claude") if not (HUB_ROOT / p).exists()]  # fmt: skip
    if missing:
        return f"{HUB_ROOT} lacks {', '.join(missing)}: run ./dev setup hub"
    return None


@dataclass
class User:
    name: str
    uid: int
    home: Path
    token: str = ""

    def run_as(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """A command run as this OS user (what the other user could do on the host)."""
        return subprocess.run(
            ["runuser", "-u", self.name, "--", *argv], capture_output=True, text=True, check=False
        )


@dataclass
class Hub:
    url: str
    api_token: str
    api: ScriptedAPI
    users: dict[str, User]
    process: subprocess.Popen[bytes]
    log: Path
    started: list[str] = field(default_factory=list)

    def request(self, method: str, path: str, token: str | None = None, **kw: Any) -> Any:
        import requests

        headers = {"Authorization": f"token {token or self.api_token}"}
        r = requests.request(method, self.url + path, headers=headers, timeout=30, **kw)
        if r.status_code >= 400:
            raise AssertionError(f"{method} {path}: {r.status_code} {r.text[:500]}")
        return r.json() if r.content else None

    def server_ready(self, name: str) -> bool:
        model = self.request("GET", f"/hub/api/users/{name}")
        server = model.get("servers", {}).get("", {})
        return bool(server.get("ready"))

    def start_server(self, user: User) -> None:
        self.request("POST", f"/hub/api/users/{user.name}/server")
        poll(lambda: self.server_ready(user.name), 90, f"{user.name}'s server to be ready",
             interval=0.25, detail=self.tail)  # fmt: skip
        self.started.append(user.name)

    def stop_server(self, user: User) -> None:
        self.request("DELETE", f"/hub/api/users/{user.name}/server")
        poll(lambda: not self.server_ready(user.name), 60, f"{user.name}'s server to stop",
             interval=0.25, detail=self.tail)  # fmt: skip

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def _make_user(name: str) -> User:
    subprocess.run(["userdel", "-r", name], capture_output=True, check=False)
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True, capture_output=True)
    entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    home.chmod(0o755)  # readable on purpose: see the module docstring
    return User(name, entry.pw_uid, home)


def _drop_user(user: User) -> None:
    subprocess.run(["pkill", "-KILL", "-u", user.name], capture_output=True, check=False)
    subprocess.run(["userdel", "-r", user.name], capture_output=True, check=False)


CONFIG = """
import json
c = get_config()  # noqa
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{state}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{state}/cookie_secret"
c.JupyterHub.pid_file = "{state}/jupyterhub.pid"
c.ConfigurableHTTPProxy.command = ["{root}/chp/node_modules/.bin/configurable-http-proxy"]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = "{state}/proxy.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = set({users!r})
c.JupyterHub.services = [{{"name": "byre-tests", "api_token": "{api_token}"}}]
c.JupyterHub.load_roles = [{{
    "name": "byre-tests",
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "list:users"],
    "services": ["byre-tests"],
}}]
c.JupyterHub.cleanup_servers = True
c.Spawner.cmd = ["{root}/venv/bin/jupyterhub-singleuser"]
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90
# jupyter_server's own idle culler, as hubs configure it for their users' kernels.
c.Spawner.args = [
    "--MappingKernelManager.cull_idle_timeout={cull}",
    "--MappingKernelManager.cull_interval=1",
]
api_url = "{api_url}"
def environment(key):
    return lambda spawner: {{
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "key-of-" + spawner.user.name,
        "BYRE_CLAUDE_PATH": "{root}/bin/claude",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }}[key]
c.Spawner.environment = {{k: environment(k) for k in (
    "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "BYRE_CLAUDE_PATH",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "CLAUDE_CODE_MAX_RETRIES",
)}}
"""


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"hub tier: {reason}")
        pytest.skip(reason)
    state = tmp_path_factory.mktemp("hub")
    state.chmod(0o700)
    api = ScriptedAPI()
    api.start()
    users = {name: _make_user(name) for name in USERS}
    api_token = secrets.token_hex(16)
    port = free_port()
    config = state / "jupyterhub_config.py"
    config.write_text(
        CONFIG.format(
            port=port,
            hub_port=free_port(),
            proxy_api_port=free_port(),
            state=state,
            root=HUB_ROOT,
            users=tuple(users),
            api_token=api_token,
            api_url=api.url,
            cull=CULL_IDLE,
        )
    )
    log = state / "hub.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY"))}
    env["PATH"] = f"{HUB_ROOT}/venv/bin:{env.get('PATH', '/usr/bin:/bin')}"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(HUB_ROOT / "venv/bin/jupyterhub"), "-f", str(config)],
            cwd=state,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    hub = Hub(f"http://127.0.0.1:{port}", api_token, api, users, process, log)

    def up() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"jupyterhub exited ({process.returncode}):\n{hub.tail()}")
        try:
            hub.request("GET", "/hub/api/")
        except Exception:  # not listening yet: look again
            return False
        return True

    try:
        poll(up, 60, "JupyterHub to answer through its proxy", interval=0.2, detail=hub.tail)
        for user in users.values():
            made = hub.request("POST", f"/hub/api/users/{user.name}/tokens",
                               json={"note": "byre hub tier", "expires_in": 3600})  # fmt: skip
            user.token = made["token"]
        yield hub
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for user in users.values():
            _drop_user(user)
        api.release()
        api.stop()
        if sys.exc_info()[0] is not None:
            print(hub.tail(), file=sys.stderr)


def user_clis(user: User, cli: Path = HUB_ROOT / "bin/claude") -> list[dict[str, Any]]:
    """The CLI processes running as ``user``: pid, uids, and environment (read as root)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "exe") != str(cli):
                continue
            status = (entry / "status").read_text()
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or a kernel thread
            continue
        uids = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
        if int(uids[0]) != user.uid and int(uids[1]) != user.uid:
            continue
        env = parse_environ(environ)
        found.append({"pid": int(entry.name), "uids": [int(u) for u in uids], "env": env})
    return found


def parse_environ(raw: bytes) -> dict[str, str]:
    """A ``/proc/PID/environ``'s variables."""
    items = raw.decode(errors="replace").split("\0")
    return dict(item.split("=", 1) for item in items if "=" in item)


def dumps(value: Any) -> str:
    return json.dumps(value, indent=1, default=str)[:3000]
