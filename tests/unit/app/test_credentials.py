"""Credential files ask first (app/credentials.py): which paths and calls the hook asks for,
and that it answers "ask" in every permission mode but bypassPermissions. End to end, with the
real CLI: tests/integration/kernel/test_credential_files_kernel.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from byre_jupyter.app.credentials import credential_paths, credentials_hook, is_credential_path


@pytest.mark.parametrize(
    "path",
    [
        ".env", "/work/project/.env", ".env.local", ".ENV.production", "prod.env", ".envrc",
        "server.pem", "tls/server.key", "cert.p12", "store.jks", "putty.ppk",
        "/home/u/.ssh/id_rsa", "~/.ssh/id_ed25519", "~/.ssh/deploy_key", "id_ecdsa",
        "~/.aws/credentials", "~/.kube/config", "kubeconfig-prod.yaml", "~/.netrc",
        "~/.npmrc", "~/.pypirc", "~/.pgpass", "~/.git-credentials", "~/.docker/config.json",
        "~/.config/gh/hosts.yml", "client_secret_1234.apps.json", "credentials.json",
        "C:\\Users\\me\\.aws\\credentials", ".env*", "*.pem",
    ],
)  # fmt: skip
def test_credential_paths(path: str) -> None:
    assert is_credential_path(path)


@pytest.mark.parametrize(
    "path",
    [
        ".env.example", ".env.sample", ".env.template", "README.md", "env.py", ".environment",
        "id_utils.py", "~/.ssh/id_rsa.pub", "~/.ssh/known_hosts", "~/.ssh/config",
        "~/.aws/config", "config", "keys.py", "analysis.ipynb", "", "/",
    ],
)  # fmt: skip
def test_ordinary_paths(path: str) -> None:
    assert not is_credential_path(path)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("Read", {"file_path": "/work/.env"}),
        ("Edit", {"file_path": ".env", "old_string": "A", "new_string": "B"}),
        ("MultiEdit", {"file_path": "id_rsa", "edits": []}),
        ("Grep", {"pattern": "KEY", "path": ".env"}),
        ("Grep", {"pattern": "KEY", "glob": ".env*"}),
        ("Grep", {"pattern": "BEGIN", "path": ".", "glob": "*.pem"}),
        ("Bash", {"command": "cat .env"}),
        ("Bash", {"command": "grep KEY .env | head"}),
        ("Bash", {"command": "source .env && python run.py"}),
        ("Bash", {"command": ". ./.env"}),
        ("Bash", {"command": "python app.py < .env"}),
        ("Bash", {"command": 'cat "$HOME/.netrc"'}),
        ("Bash", {"command": "export $(cat .env | xargs)"}),
        ("Bash", {"command": "docker run --env-file=.env image"}),
        ("Bash", {"command": "cat ~/.aws/credentials"}),
        ("Bash", {"command": "head -c 100 ~/.ssh/id_ed25519"}),
    ],
)
def test_calls_that_read_a_credential_file(tool: str, args: dict[str, Any]) -> None:
    assert credential_paths(tool, args)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("Read", {"file_path": "/work/notes.md"}),
        ("Glob", {"pattern": ".env*"}),  # names, not contents
        ("Write", {"file_path": ".env", "content": "X=1"}),  # nothing of the file comes back
        ("Grep", {"pattern": "env", "path": "src"}),
        ("Bash", {"command": "echo env; ls -la"}),
        ("Bash", {"command": "cat .env.example"}),
        ("Bash", {"command": "pip install python-dotenv"}),
        ("Bash", {"command": 42}),
        ("WebFetch", {"url": "https://example.com/.env"}),
    ],
)
def test_calls_that_do_not(tool: str, args: dict[str, Any]) -> None:
    assert not credential_paths(tool, args)


def decide(mode: str, tool: str, args: Any) -> Any:
    hook = credentials_hook()
    return asyncio.run(hook({"permission_mode": mode, "tool_name": tool, "tool_input": args}))


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "dontAsk", None])
def test_the_hook_asks_in_every_mode_but_bypass(mode: str | None) -> None:
    out = decide(mode or "", "Read", {"file_path": "/work/.env"})
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "ask"
    assert ".env" in specific["permissionDecisionReason"]


def test_the_hook_leaves_bypass_and_other_calls_alone() -> None:
    assert decide("bypassPermissions", "Read", {"file_path": ".env"}) == {}
    assert decide("default", "Read", {"file_path": "notes.md"}) == {}
    assert decide("default", "Read", "not a mapping") == {}
    assert decide("default", None, {"file_path": ".env"}) == {}


@pytest.mark.parametrize("guard_notebook", [True, False])
def test_every_session_is_launched_with_the_hook(shell: Any, guard_notebook: bool) -> None:
    from byre_jupyter import magics

    ext = magics.extension()
    assert ext is not None
    ext.config.guard_notebook = guard_notebook
    hooks = ext._settings("default")["hooks"]["PreToolUse"]
    asked = [asyncio.run(h({"tool_name": "Bash", "tool_input": {"command": "cat .env"}}))
             for h in hooks]  # fmt: skip
    assert [a["hookSpecificOutput"]["permissionDecision"] for a in asked if a] == ["ask"]
    assert len(hooks) == 1 + guard_notebook
