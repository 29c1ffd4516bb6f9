"""What a multi-user hub host must guarantee, tried through a real JupyterHub and its proxy, as
two OS users (conftest.py): each user's CLI runs as that user, with that user's HOME and key;
neither can read the other's conversations or byre's state; no hub or server token reaches the
CLI; stopping a server, and culling an idle kernel that keeps spare CLIs, leaves no CLI behind.
"""

from __future__ import annotations

import json
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.waiting import poll

from byre_jupyter.scripted import Reply, Text

from .conftest import CULL_IDLE, Hub, User, dumps, parse_environ, user_clis

pytestmark = [pytest.mark.hub, pytest.mark.kernel, pytest.mark.cli]

#: Variables the hub and the single-user server hold that must never reach a CLI.
HUB_SECRETS = ("JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN", "JUPYTER_TOKEN", "JUPYTERHUB_COOKIE_SECRET",
               "JPY_COOKIE_SECRET", "CONFIGPROXY_AUTH_TOKEN")  # fmt: skip


def secret_shaped(name: str) -> bool:
    """A hub or server variable that carries a credential (the rest, URLs and the user's
    name, may pass)."""
    return name.startswith(("JUPYTERHUB_", "JPY_")) and any(
        word in name for word in ("TOKEN", "SECRET", "COOKIE", "KEY")
    )


def server_env(user: User) -> dict[str, str]:
    """The environment of ``user``'s single-user server (what the hub gave it)."""
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or entry.stat().st_uid != user.uid:
                continue
            if b"jupyterhub-singleuser" not in (entry / "cmdline").read_bytes():
                continue
            raw = (entry / "environ").read_bytes()
        except OSError:
            continue
        return parse_environ(raw)
    raise AssertionError(f"no single-user server of {user.name} is running")


class Kernel:
    """A kernel of a user's server, driven as that user through the hub's proxy (the REST API
    and the kernel's websocket, as JupyterLab drives it)."""

    def __init__(self, hub: Hub, user: User) -> None:
        import websocket

        self.hub, self.user = hub, user
        base = f"/user/{user.name}/api"
        self.id = hub.request("POST", f"{base}/kernels", token=user.token, json={})["id"]
        ws_url = hub.url.replace("http", "ws", 1) + f"{base}/kernels/{self.id}/channels"
        self.ws = websocket.create_connection(
            ws_url, header=[f"Authorization: token {user.token}"], timeout=120
        )
        self.session = uuid.uuid4().hex

    def execute(self, code: str) -> list[dict[str, Any]]:
        """Run ``code``; the iopub messages of that request until the kernel is idle again."""
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": "execute_request", "session": self.session,
                  "username": self.user.name, "version": "5.3", "date": ""}  # fmt: skip
        self.ws.send(json.dumps({
            "header": header, "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
        }))  # fmt: skip
        seen: list[dict[str, Any]] = []
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id or msg["channel"] != "iopub":
                continue
            seen.append(msg)
            content = msg["content"]
            if msg["msg_type"] == "status" and content.get("execution_state") == "idle":
                return seen

    def close(self) -> None:
        self.ws.close()


def texts(messages: list[dict[str, Any]]) -> str:
    """Everything the messages show as text: streams, errors, and each output's text forms."""
    out = []
    for msg in messages:
        content = msg["content"]
        if msg["msg_type"] == "stream":
            out.append(content["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(content["traceback"]))
        for value in content.get("data", {}).values():
            out.append(value if isinstance(value, str) else json.dumps(value))
    return "\n".join(out)


def errors(messages: list[dict[str, Any]]) -> list[str]:
    return [texts([m]) for m in messages if m["msg_type"] == "error"]


def readable_by(other: User, path: Path) -> bool:
    """Whether ``other`` can list (a folder) or read (a file) ``path`` on this host."""
    argv = ("ls", str(path)) if path.is_dir() else ("head", "-c", "1", str(path))
    return other.run_as(*argv).returncode == 0


def private_paths(user: User) -> list[Path]:
    """What a user's conversations leave on disk: the CLI's projects folder and its session
    files, and byre's state folder and its files."""
    roots = [user.home / ".claude" / "projects", user.home / ".byre_jupyter"]
    found = [p for p in roots if p.exists()]
    for root in found[:]:
        found += [p for p in root.rglob("*") if p.is_file()]
    return found


SETTLED = "import byre_jupyter.magics as m\nawait m._EXTENSION.spares.settled()"


def test_two_users_on_one_hub_are_kept_apart(hub: Hub) -> None:
    ann, bob = hub.users["byrehub-ann"], hub.users["byrehub-bob"]
    hub.api.default = Reply(Text("Answer from the scripted model."))
    kernels = {}
    for user in (ann, bob):
        hub.start_server(user)
        kernels[user.name] = kernel = Kernel(hub, user)
        loaded = kernel.execute("%load_ext byre_jupyter")
        assert not errors(loaded), errors(loaded)
        turn = kernel.execute(f"%%claude\nHello from {user.name}")
        assert not errors(turn), errors(turn)
        assert "Answer from the scripted model." in texts(turn), dumps(turn)

    # Each user's CLI: that user's uid, HOME and key, and no hub or server token.
    for user in (ann, bob):
        clis = poll(lambda u=user: user_clis(u), 30, f"{user.name}'s CLI process")
        for cli in clis:
            assert cli["uids"][:2] == [user.uid, user.uid], cli["uids"]
            env = cli["env"]
            assert env.get("HOME") == str(user.home), env.get("HOME")
            assert env.get("ANTHROPIC_API_KEY") == f"key-of-{user.name}"
            leaked = [k for k in env if k in HUB_SECRETS or secret_shaped(k)]
            assert not leaked, f"{user.name}'s CLI has {leaked} in its environment"
            server_secrets = {
                v for k, v in server_env(user).items() if secret_shaped(k) and len(v) >= 16
            }
            assert server_secrets, "the user's server holds no hub token to check against"
            assert not server_secrets & set(env.values()), "a hub token's value reached the CLI"
    keys = {r.headers.get("x-api-key") for r in hub.api.requests if r.path.endswith("/messages")}
    assert {"key-of-byrehub-ann", "key-of-byrehub-bob"} <= keys, keys

    # On a hub server the host keeps two idle spares, for both users together (hostspares.py):
    # each user's working CLI plus two spares between them.
    for user in (ann, bob):
        assert not errors(kernels[user.name].execute(SETTLED))
    counts = {user.name: len(user_clis(user)) for user in (ann, bob)}
    assert sum(counts.values()) == 2 + 2 and min(counts.values()) >= 1, counts

    # What each conversation left on disk is private to its user.
    for user, other in ((ann, bob), (bob, ann)):
        paths = private_paths(user)
        assert any(p.suffix == ".jsonl" for p in paths), f"no session file of {user.name}"
        exposed = [str(p) for p in paths if readable_by(other, p)]
        modes = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in paths}
        assert not exposed, f"{other.name} can read {user.name}'s {exposed} (modes: {modes})"

    # Stopping a user's server takes that user's CLIs with it (and frees her spares' slots).
    kernels[ann.name].close()
    hub.stop_server(ann)
    poll(lambda: not user_clis(ann), 30, "no CLI of ann's after her server stopped",
         interval=0.1, detail=lambda: dumps(user_clis(ann)))  # fmt: skip

    # Bob's next turn leaves his idle kernel with spare CLIs; the server's culler still culls
    # it, and the spares go with it.
    turn = kernels[bob.name].execute("%%claude\nOnce more")
    assert not errors(turn), errors(turn)
    assert not errors(kernels[bob.name].execute(SETTLED))
    assert len(user_clis(bob)) >= 2, "bob's kernel keeps no spare"
    kernels[bob.name].close()
    base = f"/user/{bob.name}/api/kernels"
    poll(lambda: not hub.request("GET", base, token=bob.token), 10 * CULL_IDLE,
         "bob's idle kernel to be culled", interval=0.25)  # fmt: skip
    poll(lambda: not user_clis(bob), 30, "no CLI of bob's after his kernel was culled",
         interval=0.1, detail=lambda: dumps(user_clis(bob)))  # fmt: skip
    hub.stop_server(bob)
