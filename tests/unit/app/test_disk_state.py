"""What byre_jupyter keeps on disk, and what it hands the CLI ("Nothing on disk is lost,
shared or left open"; "The CLI gets what it needs"; "-i checks the size before reading").

No CLI here: the resume index written by several real processes at once, a damaged index, two
notebooks in one folder, file modes under a permissive umask, a transcript on a full disk
(``/dev/full``), the CLI's environment and error text, and ``-i`` on huge and endless files.
"""

from __future__ import annotations

import base64
import builtins
import json
import os
import posix
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from support.rig import tiny_png

from byre_jupyter.app.config import Claude
from byre_jupyter.app.extension import ClaudeExtension
from byre_jupyter.app.inputs import resolve_image
from byre_jupyter.errors import CLIProcessError, ControlError
from byre_jupyter.protocol import Image
from byre_jupyter.redact import Secrets
from byre_jupyter.session.transcript import TranscriptWriter
from byre_jupyter.transport import LaunchSpec, build_env

# Built at run time so no credential-shaped literal sits in the repository.
ANT_KEY = "sk-ant-api03-" + "Qx7" * 25


@pytest.fixture
def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ClaudeExtension]:
    """A ClaudeExtension on an in-process shell, its index under tmp_path/state."""
    monkeypatch.setenv("BYRE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    extension = ClaudeExtension(InteractiveShell.instance())
    extension.config.cwd = str(work)
    yield extension


def remember(ext: ClaudeExtension, name: str, session_id: str) -> None:
    ext.remember(SimpleNamespace(name=name), SimpleNamespace(session_id=session_id))  # type: ignore[arg-type]


def recording(opened: list[str | None]) -> Any:
    """A stand-in for ClaudeExtension._new_session that records which conversation it resumes."""

    def new_session(name: str, **options: Any) -> Any:
        opened.append(options.get("resume"))
        return SimpleNamespace(name=name, closed=True)

    return new_session


# -- the resume index -----------------------------------------------------------------------

WRITER = """
import sys
from types import SimpleNamespace
from IPython.core.interactiveshell import InteractiveShell
from byre_jupyter.app.extension import ClaudeExtension

ext = ClaudeExtension(InteractiveShell.instance())
ext.config.cwd = sys.argv[2]
me = sys.argv[1]
for k in range(int(sys.argv[3])):
    ext.remember(SimpleNamespace(name=f"w{me}_{k}"), SimpleNamespace(session_id=f"id-{me}-{k}"))
"""
READER = """
import json, sys
from pathlib import Path
path, stop = Path(sys.argv[1]), Path(sys.argv[2])
reads = corrupt = 0
while not stop.exists():
    try:
        text = path.read_text()
    except FileNotFoundError:
        continue
    reads += 1
    try:
        assert isinstance(json.loads(text), dict)
    except (ValueError, AssertionError):
        corrupt += 1
print(json.dumps({"reads": reads, "corrupt": corrupt}))
"""


@pytest.mark.slow  # three interpreters racing for ~10 s
def test_index_keeps_every_entry_of_concurrent_writers_and_readers_never_see_half_a_file(
    tmp_path: Path,
) -> None:
    """Finding: two processes x 300 writes kept 140 of 600 entries; readers saw corrupt JSON."""
    state = tmp_path / "state"
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "BYRE_STATE_DIR": str(state)}
    env.pop("JPY_SESSION_NAME", None)
    stop = tmp_path / "stop"
    index = state / "sessions.json"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(index), str(stop)],
        env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(i), str(work), "300"],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    try:
        for writer in writers:
            _, err = writer.communicate(timeout=240)
            assert writer.returncode == 0, err
    finally:
        stop.touch()
        out, _ = reader.communicate(timeout=60)
    counts = json.loads(out)
    entries = json.loads(index.read_text())
    expected = {f"{work}::w{i}_{k}": f"id-{i}-{k}" for i in range(3) for k in range(300)}
    assert {k: entries.get(k) for k in expected} == expected, (
        f"kept {sum(entries.get(k) == v for k, v in expected.items())} of 900; reader: {counts}"
    )
    assert counts["reads"] > 20, counts  # the reader really read while they wrote
    assert counts["corrupt"] == 0, counts
    assert not [p.name for p in state.iterdir() if p.name.endswith(".tmp")]


def test_damaged_index_is_backed_up_with_a_warning_and_readable_entries_are_kept(
    ext: ClaudeExtension, tmp_path: Path
) -> None:
    """Finding: a corrupt read was taken as {} and the next write dropped every entry."""
    index = tmp_path / "state" / "sessions.json"
    index.parent.mkdir()
    garbage = '{\n "/old/folder::default": "id-old",\n "/other::x": "id-x",\n "/cut::y": "id-'
    index.write_text(garbage)
    with pytest.warns(UserWarning, match="damaged") as caught:
        remember(ext, "default", "id-new")
    assert len(caught) == 1
    backups = [p for p in index.parent.iterdir() if p.name.startswith("sessions.json.corrupt-")]
    assert len(backups) == 1 and backups[0].read_text() == garbage
    entries = json.loads(index.read_text())
    assert entries == {
        "/old/folder::default": "id-old",
        "/other::x": "id-x",
        f"{ext.cwd()}::default": "id-new",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # recovered: no further warning
        remember(ext, "other", "id-other")
    assert len(json.loads(index.read_text())) == 4


def test_a_damaged_index_read_by_resume_is_recovered_not_ignored(
    ext: ClaudeExtension, tmp_path: Path
) -> None:
    index = tmp_path / "state" / "sessions.json"
    index.parent.mkdir()
    index.write_text(f'{{"{ext.cwd()}::default": "id-kept", "trunc')
    with pytest.warns(UserWarning, match="damaged"):
        assert ext.remembered() == {f"{ext.cwd()}::default": "id-kept"}
    assert json.loads(index.read_text()) == {f"{ext.cwd()}::default": "id-kept"}


def test_two_notebooks_in_one_folder_keep_their_own_conversations(
    ext: ClaudeExtension, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding: keyed by folder + session name, notebook A's resume continued notebook B's."""
    opened: list[str | None] = []
    monkeypatch.setattr(ext, "_new_session", recording(opened))
    folder = ext.cwd()
    monkeypatch.setenv("JPY_SESSION_NAME", f"{folder}/a.ipynb")
    remember(ext, "default", "conversation-of-a")
    monkeypatch.setenv("JPY_SESSION_NAME", f"{folder}/b.ipynb")
    remember(ext, "default", "conversation-of-b")
    monkeypatch.setenv("JPY_SESSION_NAME", f"{folder}/a.ipynb")
    ext.resume("default", None)
    assert opened == ["conversation-of-a"]
    monkeypatch.setenv("JPY_SESSION_NAME", f"{folder}/c.ipynb")  # a notebook with none
    with pytest.raises(UsageError):
        ext.resume("default", None)


def test_entries_written_by_folder_are_still_found(
    ext: ClaudeExtension, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.1 keyed by folder; a notebook without its own entry still resumes that one."""
    index = tmp_path / "state" / "sessions.json"
    index.parent.mkdir()
    index.write_text(json.dumps({f"{ext.cwd()}::default": "id-from-0.1"}))
    opened: list[str | None] = []
    monkeypatch.setattr(ext, "_new_session", recording(opened))
    monkeypatch.setenv("JPY_SESSION_NAME", f"{ext.cwd()}/a.ipynb")
    ext.resume("default", None)
    assert opened == ["id-from-0.1"]


def test_a_read_only_state_folder_warns_once_and_does_not_break_turns(
    ext: ClaudeExtension, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    ext.config.state_dir = str(blocker)
    with pytest.warns(UserWarning, match="cannot use") as caught:
        remember(ext, "default", "id-1")
        remember(ext, "default", "id-2")
    assert len(caught) == 1


# -- modes ----------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_transcript_index_and_lock_are_0600_in_0700_folders_even_with_umask_022(
    ext: ClaudeExtension, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding: transcripts and sessions.json were 0644 (the CLI's own history files are 0600)."""
    state = tmp_path / "fresh" / "state"
    ext.config.state_dir = str(state)
    old = os.umask(0o022)
    try:
        remember(ext, "default", "id-1")
        transcripts = tmp_path / "tr" / "nested"
        writer = TranscriptWriter(transcripts / "default.jsonl")
        writer.write("send", {"type": "user", "message": "hi"})
        writer.close()
    finally:
        os.umask(old)
    assert mode(state / "sessions.json") == 0o600
    assert mode(state / "sessions.json.lock") == 0o600
    assert mode(transcripts / "default.jsonl") == 0o600
    for folder in (tmp_path / "fresh", state, tmp_path / "tr", transcripts):
        assert mode(folder) == 0o700, folder


# -- transcripts ----------------------------------------------------------------------------


def test_transcript_on_a_full_disk_warns_once_and_never_raises(tmp_path: Path) -> None:
    """Finding: a failing transcript write raised out of the turn (a raw OSError traceback)."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    (folder / "default.jsonl").symlink_to("/dev/full")
    with pytest.warns(UserWarning, match="transcript") as caught:
        writer = TranscriptWriter(folder / "default.jsonl")
        for i in range(5):
            writer.write("recv", {"type": "assistant", "n": i})
        writer.close()
    assert len(caught) == 1
    assert "No space left" in str(caught[0].message)
    assert mode(Path("/dev/full")) == 0o666  # a file we did not create keeps its mode


def test_transcript_lines_are_redacted_and_stay_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_secret = "plain-looking-value-" + "9" * 12
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, Secrets.of({"MY_SERVICE_TOKEN": env_secret, "HOME": "/root"}))
    writer.write(
        "recv",
        {"type": "control_response", "response": {"response": {
            "account": {"email": "person@example.com"}}}},
    )  # fmt: skip
    writer.write(
        "recv",
        {"type": "user", "content": [
            {"type": "tool_result", "content": f'echo {ANT_KEY}; quote " {env_secret}'},
            {"api_key": "abcdefgh-not-shaped", "input_tokens": 12, "apiKeySource": "none"},
            {"text": "mail person@example.com, home /root"},
        ]},
    )  # fmt: skip
    writer.close()
    text = path.read_text()
    assert ANT_KEY not in text and env_secret not in text and "abcdefgh-not-shaped" not in text
    assert "person@example.com" not in text
    lines = [json.loads(line) for line in text.splitlines()]  # every line still parses
    content = lines[1]["msg"]["content"]
    assert content[1]["input_tokens"] == 12 and content[1]["apiKeySource"] == "none"
    assert "/root" in content[2]["text"]
    assert lines[0]["msg"]["response"]["response"]["account"]["email"] == "[redacted]"


def test_transcript_keeps_image_payloads_verbatim(tmp_path: Path) -> None:
    """Base64 pixels are not text to redact (and scanning megabytes of them blocked the loop)."""
    data = base64.b64encode(os.urandom(600_000)).decode()
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, Secrets())
    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    writer.write("recv", {"type": "user", "content": [block, {"type": "text", "text": ANT_KEY}]})
    writer.close()
    content = json.loads(path.read_text())["msg"]["content"]
    assert content[0]["source"]["data"] == data
    assert content[1]["text"] == "[redacted]"


# -- the CLI's environment and error text ---------------------------------------------------

JUPYTER_CREDENTIALS = {
    "JUPYTER_TOKEN": "jt-" + "1" * 20,
    "JUPYTERHUB_API_TOKEN": "hub-" + "2" * 20,
    "JPY_API_TOKEN": "hub-" + "2" * 20,
    "JUPYTERHUB_COOKIE_OPTIONS": "{}",
    "JUPYTERHUB_SSL_KEYFILE": "/etc/hub/key.pem",
    "JUPYTER_GATEWAY_AUTH_TOKEN": "gw-" + "3" * 20,
    "JPY_COOKIE_SECRET": "c" * 64,
    "CONFIGPROXY_AUTH_TOKEN": "p" * 32,
}
NEEDED = {
    "PATH": "/usr/bin", "HOME": "/home/u", "ANTHROPIC_API_KEY": ANT_KEY,
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "CLAUDE_CONFIG_DIR": "/home/u/.claude",
    "JPY_SESSION_NAME": "/home/u/a.ipynb", "JUPYTERHUB_USER": "u", "AWS_REGION": "eu-west-1",
}  # fmt: skip


def test_build_env_drops_jupyter_credentials_and_keeps_what_the_cli_needs() -> None:
    env = build_env(LaunchSpec(cli_path="c"), base={**JUPYTER_CREDENTIALS, **NEEDED})
    assert not set(JUPYTER_CREDENTIALS) & set(env)
    assert {k: env.get(k) for k in NEEDED} == NEEDED


def test_build_env_drops_more_by_glob_and_an_explicit_entry_always_wins() -> None:
    spec = LaunchSpec(
        cli_path="c", env_drop=["OPENAI_*"], env={"JUPYTER_TOKEN": "passed-on-purpose"}
    )
    env = build_env(spec, base={**JUPYTER_CREDENTIALS, **NEEDED, "OPENAI_API_KEY": "o" * 30})
    assert "OPENAI_API_KEY" not in env
    assert env["JUPYTER_TOKEN"] == "passed-on-purpose"
    assert env["ANTHROPIC_API_KEY"] == ANT_KEY


def test_the_env_drop_help_lists_every_default() -> None:
    from byre_jupyter.transport.launch import DEFAULT_ENV_DROP

    help_text = Claude.class_traits()["env_drop"].help
    assert all(name in help_text for name in DEFAULT_ENV_DROP)


def test_cli_error_text_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding: CLI stderr was shown verbatim (a key in it landed in the notebook)."""
    monkeypatch.setenv("SOME_SERVICE_PASSWORD", "hunter2-but-longer")
    tail = f"Error: bad key {ANT_KEY}\nAuthorization: Bearer {'t' * 30}\nhunter2-but-longer"
    error = CLIProcessError(f"died holding {ANT_KEY}", 1, tail)
    for text in (str(error), error.stderr_tail):
        assert ANT_KEY not in text and "t" * 30 not in text and "hunter2-but-longer" not in text
    assert "[redacted]" in str(error) and "exit code 1" in str(error)
    control = ControlError("initialize", f"rejected {ANT_KEY}")
    assert ANT_KEY not in str(control) and ANT_KEY not in control.error


# -- -i -------------------------------------------------------------------------------------


@pytest.fixture
def no_open(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records, and refuses, every attempt to open a path with "huge" or "fifo" in it."""
    attempts: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def guard(path: Any) -> None:
        if isinstance(path, (str, os.PathLike)) and any(
            w in os.fspath(path) for w in ("huge", "fifo")
        ):
            attempts.append(os.fspath(path))
            raise AssertionError(f"opened {path}")

    def fake_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        guard(file)
        return real_open(file, *args, **kwargs)

    def fake_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        guard(path)
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)
    return attempts


def test_dash_i_refuses_a_huge_file_by_its_size_without_reading_it(
    tmp_path: Path, no_open: list[str]
) -> None:
    """Finding: -i read a whole 2 GiB sparse file before checking its size (2.2 GiB RSS)."""
    huge = tmp_path / "huge.png"
    fd = posix.open(str(huge), os.O_WRONLY | os.O_CREAT, 0o600)  # os.open is guarded here
    os.write(fd, tiny_png())
    os.ftruncate(fd, 2 << 30)  # sparse: no real disk
    os.close(fd)
    with pytest.raises(UsageError, match=r"2\.0 GiB; the limit is 20\.0 MiB"):
        resolve_image(str(huge), {})
    with pytest.raises(UsageError, match=r"2\.0 GiB"):
        resolve_image("path", {"path": str(huge)})
    assert no_open == []


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_dash_i_refuses_files_that_never_end_without_opening_them(
    tmp_path: Path, no_open: list[str], kind: str
) -> None:
    if kind == "fifo":
        target = str(tmp_path / "fifo")
        os.mkfifo(target)
    else:
        target = kind
    started = time.monotonic()  # only to report, never asserted
    with pytest.raises(UsageError, match="not a regular file"):
        resolve_image(target, {})
    assert no_open == [], f"opened after {time.monotonic() - started:.1f} s"


def test_dash_i_reads_at_most_the_limit_even_if_the_file_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size is checked before reading, and the read itself is bounded: a file that grows
    between the check and the read still cannot exceed the limit."""
    from byre_jupyter.app import inputs

    path = tmp_path / "grows.png"
    path.write_bytes(tiny_png())
    monkeypatch.setattr(inputs, "_MAX_IMAGE_BYTES", 1000)
    real_stat = os.stat

    def stat_then_grow(p: Any, *a: Any, **k: Any) -> os.stat_result:
        result = real_stat(p, *a, **k)
        if os.fspath(p) == str(path):
            with builtins.open(path, "ab") as f:
                f.write(b"\0" * 5000)
        return result

    monkeypatch.setattr(os, "stat", stat_then_grow)
    with pytest.raises(UsageError, match="limit"):
        resolve_image(str(path), {})


def test_dash_i_still_reads_a_normal_image(tmp_path: Path) -> None:
    path = tmp_path / "dot.png"
    path.write_bytes(tiny_png())
    assert resolve_image(str(path), {}) == Image(tiny_png(), "image/png")
