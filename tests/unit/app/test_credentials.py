"""Credential files ask first (app/credentials.py): which paths and calls the hook asks for,
and that it answers "ask" in every permission mode, bypassPermissions too. End to end, with the
real CLI: tests/integration/kernel/test_credential_files_kernel.py."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from byre_jupyter.app.credentials import (
    CLASSES,
    credential_class,
    credential_paths,
    credentials_hook,
    is_credential_path,
)


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


#: One path of each class of the table (app/credentials.py, CLASSES), and backups of them.
BY_CLASS = {
    "environment variables, keys": [".env.production", "deploy/app.env", ".envrc"],
    "a private key": ["server.pem", "~/.ssh/id_ed25519_sk", "/home/u/.ssh/deploy_key"],
    "a tool's login": ["~/.netrc", "~/.docker/config.json", "kubeconfig-prod.yaml"],
    "a cloud or data platform's token": [
        "~/.kaggle/kaggle.json", "/home/u/.databrickscfg", "~/.cache/huggingface/token",
        "~/.huggingface/token", "app/.streamlit/secrets.toml",
        "~/.config/gcloud/application_default_credentials.json",
    ],
    "Claude's login": ["~/.claude/.credentials.json", "/root/.claude/.credentials.json"],
    "a Jupyter token or kernel key": [
        "~/.local/share/jupyter/runtime/jpserver-4242.json",
        "/run/user/1000/jupyter/kernel-5f1c2d3e-aaaa-bbbb-cccc-0123456789ab.json",
        "nbserver-17.json", "jupyter_cookie_secret",
    ],
    "a process's environment, command line or open files": [
        "/proc/self/environ", "/proc/1/environ", "/proc/thread-self/environ",
        "/proc/12/task/13/environ", "/proc/self/cmdline", "/proc/77/fd/3", "/dev/fd/9",
    ],
}  # fmt: skip
BACKUPS = [".env~", ".env.bak", ".env.swp", "#.env#", "id_rsa.bak", ".netrc.orig", "kaggle.json~"]


@pytest.mark.parametrize(
    ("holds", "path"), [(holds, path) for holds, paths in BY_CLASS.items() for path in paths]
)
def test_each_class_of_the_table(holds: str, path: str) -> None:
    found = credential_class(path, "/nonexistent")
    assert found is not None and found.holds == holds


def test_the_table_has_one_row_per_class() -> None:
    assert sorted(k.holds for k in CLASSES) == sorted(BY_CLASS)


@pytest.mark.parametrize("path", BACKUPS)
def test_a_backup_or_editor_copy_is_one_too(path: str) -> None:
    assert is_credential_path(("~/.kaggle/" if "kaggle" in path else "") + path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working folder with a .env and names that lead to it (or to other secrets)."""
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "notes.txt").symlink_to(".env")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "link").symlink_to(tmp_path)  # a folder link: sub/link/.env
    (tmp_path / "chain").symlink_to("notes.txt")  # a link to a link
    (tmp_path / "readme.txt").write_text("hello\n")
    return tmp_path


@pytest.mark.parametrize(
    "path",
    ["notes.txt", "chain", "./sub/../notes.txt", "sub/link/notes.txt", "{cwd}/notes.txt"],
)
def test_a_name_that_leads_to_a_credential_file_is_one(project: Path, path: str) -> None:
    assert is_credential_path(path.format(cwd=project), str(project))
    assert not is_credential_path("readme.txt", str(project))


def test_dotdot_is_resolved(project: Path) -> None:
    assert is_credential_path("sub/../.env", str(project))
    # ".." past the credential's folder: the file reached is not one
    assert not is_credential_path("~/.ssh/../readme.txt", str(project))


def test_proc_self_and_fd_paths_are_resolved(project: Path) -> None:
    # /proc/self is a symlink to /proc/<pid>; a file descriptor's link names the file it holds
    assert is_credential_path(f"/proc/{os.getpid()}/environ")
    with open(project / ".env") as held:
        assert is_credential_path(f"/proc/self/fd/{held.fileno()}")
        assert is_credential_path(f"/dev/fd/{held.fileno()}")
    assert is_credential_path(f"/proc/self/root{project}/notes.txt")
    assert is_credential_path("/proc/self/cwd/notes.txt", str(project)) == (
        Path("/proc/self/cwd").resolve() == project
    )


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("Read", {"file_path": "notes.txt"}),
        ("Edit", {"file_path": "chain", "old_string": "A", "new_string": "B"}),
        ("Grep", {"pattern": "KEY", "path": "notes.txt"}),
        ("Bash", {"command": "cat notes.txt"}),
        ("Bash", {"command": "head -n 3 sub/link/chain | wc"}),
        ("Read", {"file_path": "/proc/self/environ"}),
        ("Bash", {"command": "tr '\\0' '\\n' < /proc/1/environ"}),
        ("Grep", {"pattern": "BEGIN", "path": "~/.ssh"}),
        ("Grep", {"pattern": "token", "path": "/home/u/.claude"}),
        ("Grep", {"pattern": "KEY", "path": "/proc/self"}),
        ("Grep", {"pattern": "aws_secret", "path": "~/.aws/"}),
        ("Bash", {"command": "cat /proc/$$/environ"}),
        ("Bash", {"command": "strings /proc/${PPID}/environ"}),
        ("Read", {"file_path": "~/.claude/.credentials.json"}),
        ("Bash", {"command": "cat ~/.kaggle/kaggle.json"}),
        ("Read", {"file_path": ".env~"}),
    ],
)
def test_calls_through_a_link_or_of_the_new_classes(
    project: Path, tool: str, args: dict[str, Any]
) -> None:
    assert credential_paths(tool, args, str(project))


def test_the_hook_resolves_in_the_cli_folder_and_says_what_the_file_holds(project: Path) -> None:
    hook = credentials_hook()
    call = {"tool_name": "Read", "tool_input": {"file_path": "notes.txt"}}
    out = asyncio.run(hook({**call, "permission_mode": "acceptEdits", "cwd": str(project)}))
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "ask"
    assert "notes.txt" in specific["permissionDecisionReason"]
    assert "environment variables" in specific["permissionDecisionReason"]
    elsewhere = asyncio.run(hook({**call, "permission_mode": "default", "cwd": "/nonexistent"}))
    assert elsewhere == {}


@pytest.mark.parametrize(
    "path",
    [
        ".env.example", ".env.sample", ".env.template", "README.md", "env.py", ".environment",
        "id_utils.py", "~/.ssh/id_rsa.pub", "~/.ssh/known_hosts", "~/.ssh/config",
        "~/.aws/config", "config", "keys.py", "analysis.ipynb", "", "/", "kernel.json",
        "kaggle.json", "token", "secrets.toml", "/proc/self/status", "environ", "notes.bak",
        "backup~", "env.bak",
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
        ("Grep", {"pattern": "x", "path": "/home/u/projects"}),
        ("Grep", {"pattern": "x", "path": "/proc"}),
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


@pytest.mark.parametrize(
    "mode", ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", None]
)
def test_the_hook_asks_in_every_mode(mode: str | None) -> None:
    out = decide(mode or "", "Read", {"file_path": "/work/.env"})
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "ask"
    assert ".env" in specific["permissionDecisionReason"]


def test_the_hook_leaves_other_calls_alone() -> None:
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
