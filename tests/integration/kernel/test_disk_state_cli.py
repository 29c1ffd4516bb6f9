"""What is kept on disk, on real peers: a transcript on a full disk, the CLI's environment, its
stderr, two notebooks in one folder and ``-i`` on a 2 GiB file, with the real CLI (or the
stand-in where the real one cannot be made to misbehave) and real kernels.

A full disk is ``/dev/full``: the transcript's path is a symlink to it, so every write fails
with ENOSPC (``tests/unit/app/test_disk_state.py`` shows the writer really gets that error).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from support.kernel import KernelDriver
from support.rig import STANDIN, tiny_png

from byre_jupyter import CLIProcessError, Session
from byre_jupyter.scripted import Reply, ScriptedAPI, Text

TIMEOUT = 90.0
# Built at run time so no credential-shaped literal sits in the repository.
ANT_KEY = "sk-ant-api03-" + "Zk4" * 25
JUPYTER_CREDENTIALS = {
    "JUPYTER_TOKEN": "jupyter-token-" + "1" * 16,
    "JUPYTERHUB_API_TOKEN": "hub-token-" + "2" * 16,
    "JPY_API_TOKEN": "hub-token-" + "2" * 16,
}

MakeSession = Callable[..., Session]


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.decode().split("=", 1) for item in raw.split(b"\0") if b"=" in item)


def byre_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if str(w.message).startswith("byre_jupyter:")]


# -- engine: the real CLI through a Session ---------------------------------------------------


@pytest.mark.cli
async def test_transcript_on_a_full_disk_the_turn_and_the_next_one_go_on(
    api: ScriptedAPI, make_session: MakeSession, tmp_path: Path
) -> None:
    """Finding: disk full gave a raw OSError, a CLI left running, then exit code -9 on every
    later turn."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    (folder / "full.jsonl").symlink_to("/dev/full")
    api.on("FIRST", Reply(Text("first answer")))
    api.on("SECOND", Reply(Text("second answer")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = make_session(transcript=str(folder / "full.jsonl"))
        first = await asyncio.wait_for(session.query("FIRST"), TIMEOUT)
        pid = session.pid
        second = await asyncio.wait_for(session.query("SECOND"), TIMEOUT)
    assert not first.is_error and first.text == "first answer", first
    assert not second.is_error and second.text == "second answer", second
    assert session.pid == pid and session.restarts == 0  # one CLI, never restarted
    messages = byre_warnings(caught)
    assert len(messages) == 1 and "No space left" in messages[0], messages
    await session.close()
    assert pid is not None and not psutil.pid_exists(pid)


@pytest.mark.cli
async def test_the_cli_environment_has_no_jupyter_credentials(
    make_session: MakeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding: the CLI inherited the kernel's whole environment, Jupyter tokens included."""
    for name, value in JUPYTER_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ANTHROPIC_BYRE_PROBE", "from-the-kernel")
    monkeypatch.setenv("OTHER_SERVICE_PROBE", "kept-unless-dropped")
    plain = make_session()
    await asyncio.wait_for(plain.start(), TIMEOUT)
    assert plain.pid is not None
    env = environ_of(plain.pid)
    assert not set(JUPYTER_CREDENTIALS) & set(env), sorted(env)
    assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1")
    assert env["ANTHROPIC_BYRE_PROBE"] == "from-the-kernel"
    assert env["OTHER_SERVICE_PROBE"] == "kept-unless-dropped"
    assert env["PATH"] and env["HOME"]
    tuned = make_session(
        env={"JUPYTERHUB_API_TOKEN": JUPYTER_CREDENTIALS["JUPYTERHUB_API_TOKEN"]},
        env_drop=["OTHER_SERVICE_*"],
    )
    await asyncio.wait_for(tuned.start(), TIMEOUT)
    assert tuned.pid is not None
    env = environ_of(tuned.pid)
    assert env["JUPYTERHUB_API_TOKEN"] == JUPYTER_CREDENTIALS["JUPYTERHUB_API_TOKEN"]
    assert "JUPYTER_TOKEN" not in env and "OTHER_SERVICE_PROBE" not in env


@pytest.fixture
def noisy_standin(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A stand-in CLI that writes a key to stderr, answers initialize, then exits mid-turn;
    and the environment it needs (the key travels under a name that is not secret-looking,
    so only its shape can give it away)."""
    wrapper = tmp_path / "noisy-claude"
    wrapper.write_text(
        "#!/bin/sh\n"
        'echo "fatal: request failed, x-api-key: $STANDIN_NOISE" >&2\n'
        'echo "retry with $STANDIN_NOISE" >&2\n'
        f'exec {sys.executable} {STANDIN} "$@"\n'
    )
    wrapper.chmod(0o755)
    script = tmp_path / "exit.jsonl"
    script.write_text(json.dumps({"__exit__": 3}) + "\n")
    return str(wrapper), {"STANDIN_NOISE": ANT_KEY, "STANDIN_SCRIPT": str(script)}


@pytest.mark.slow  # the stand-in CLI
async def test_cli_stderr_with_a_key_is_redacted_in_the_error(
    noisy_standin: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    """Finding: CLI stderr was shown verbatim (a key in it lands in the notebook)."""
    cli, env = noisy_standin
    async with Session(cli_path=cli, cwd=str(tmp_path), env=env) as session:
        result = await asyncio.wait_for(session.query("hello"), TIMEOUT)
    assert isinstance(result.error, CLIProcessError), result
    text = str(result.error)
    assert "fatal: request failed" in text and "[redacted]" in text, text  # the tail is shown
    assert ANT_KEY not in text and ANT_KEY not in result.error.stderr_tail
    assert ANT_KEY not in (result.error_message or "")


# -- kernels ----------------------------------------------------------------------------------


def answer(run: object) -> str:
    return run.texts()  # type: ignore[attr-defined,no-any-return]


@pytest.mark.kernel
@pytest.mark.cli
def test_kernel_transcript_on_a_full_disk_warns_once_and_every_cell_answers(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI, tmp_path: Path
) -> None:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    # The session's transcript is named default-<creation time>.jsonl: every name the next
    # ten minutes can produce is a symlink to /dev/full (the warning below proves one was hit).
    now = time.time()
    for second in range(-5, 600):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now + second))
        (folder / f"default-{stamp}.jsonl").symlink_to("/dev/full")
    kernel = kernels()
    kernel.run(f"%config Claude.transcripts = {str(folder)!r}")
    api.on("FIRST", Reply(Text("first answer")))
    api.on("SECOND", Reply(Text("second answer")))
    first = kernel.run("%%claude\nFIRST")
    second = kernel.run("%%claude\nSECOND")
    assert first.reply is not None and first.reply["status"] == "ok", answer(first)
    assert second.reply is not None and second.reply["status"] == "ok", answer(second)
    assert "first answer" in answer(first) and "second answer" in answer(second)
    both = answer(first) + answer(second)
    assert both.count("could not be written") == 1, both
    assert "Traceback" not in both and "exit code" not in both


@pytest.mark.kernel
def test_kernel_cell_shows_no_key_from_cli_stderr(
    kernels: Callable[..., KernelDriver], noisy_standin: tuple[str, dict[str, str]]
) -> None:
    cli, env = noisy_standin
    kernel = kernels(**env)
    kernel.run(f"%config Claude.cli_path = {cli!r}")
    run = kernel.run("%%claude\nhello")
    shown = json.dumps(run.outputs)
    assert "fatal: request failed" in shown, shown  # the stderr tail is displayed ...
    assert ANT_KEY not in shown  # ... without the key


@pytest.mark.kernel
@pytest.mark.cli
def test_two_notebooks_in_one_folder_resume_their_own_conversations(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI, workdir: Path
) -> None:
    """Finding: notebook A's `%claude resume` continued notebook B's conversation."""
    api.default = Reply(Text("noted"))
    a_path, b_path = str(workdir / "a.ipynb"), str(workdir / "b.ipynb")
    first_a = kernels(JPY_SESSION_NAME=a_path)
    first_a.run("%%claude\nNOTEBOOK_A_APPLE")
    first_a.close()
    first_b = kernels(JPY_SESSION_NAME=b_path)
    first_b.run("%%claude\nNOTEBOOK_B_BANANA")
    first_b.close()
    again_a = kernels(JPY_SESSION_NAME=a_path)
    assert "resumes conversation" in again_a.run("%claude resume").texts()
    again_a.run("%%claude\nwhich fruit?")
    sent = json.dumps(api.requests[-1].body["messages"])
    assert "NOTEBOOK_A_APPLE" in sent and "NOTEBOOK_B_BANANA" not in sent


@pytest.mark.kernel
def test_kernel_dash_i_refuses_a_2_gib_file_by_size_and_never_reads_it(
    kernels: Callable[..., KernelDriver], workdir: Path
) -> None:
    """Finding: -i read a 2 GiB sparse file whole before checking its size (2.2 GiB RSS)."""
    huge = workdir / "huge.png"
    with open(huge, "wb") as f:
        f.write(tiny_png())
        f.truncate(2 << 30)  # sparse: no real disk
    kernel = kernels()
    run = kernel.run("%%claude -i huge.png\nwhat is this?")
    assert "UsageError" in run.texts() and re.search(r"2\.0 GiB|2048 MiB", run.texts())
    peak = peak_rss_mib(kernel.kernel_pid())
    assert peak < 512, f"kernel peak RSS {peak} MiB"


def peak_rss_mib(pid: int) -> int:
    """The process's peak resident set (VmHWM): a read that was freed again still shows."""
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) >> 10
