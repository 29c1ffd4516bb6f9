"""A ``.env`` in the working folder, with the real CLI in the default permission mode: Claude's
``Read(.env)``, ``cat .env`` and ``Read(notes.txt)`` with ``notes.txt -> .env`` ask first
(app/credentials.py), the user's Deny holds, and no secret of the file reaches iopub, the saved
notebook, the transcript or the portable record. Headless (nbclient, default settings) the reads
are denied; allowed there by the user's policy, the file reaches the model unchanged and every
surface we write holds it redacted."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipykernel
import nbformat
import pytest
from nbclient import NotebookClient
from support.kernel import KernelDriver, kernel_env

from byre_jupyter.app.doctor import IPYKERNEL_LIVE_WIDGETS
from byre_jupyter.scripted import Reply, ScriptedAPI, ScriptedRequest, Text, ToolUse

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

# Built at run time so no credential-shaped literal sits in the repository.
ANT = "sk-ant-api03-" + "Env7" * 20
DB_PASSWORD = "tr0ub4dor-env-3"
URL_PASSWORD = "pg-env-pass-77"
SECRETS = (ANT, DB_PASSWORD, URL_PASSWORD)
#: A harmless name in the working folder that is a symlink to .env.
LINK = "notes.txt"
ENV_FILE = (
    f"ANTHROPIC_API_KEY={ANT}\nDB_PASSWORD={DB_PASSWORD}\n"
    f"DATABASE_URL=postgres://app:{URL_PASSWORD}@db.internal:5432/app\n"
)


def assert_clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret[:10]}... in {where}"


class RecordingDriver(KernelDriver):
    """The test frontend, keeping every iopub message, and clicking widget buttons."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.iopub: list[str] = []
        self.buttons: dict[str, str] = {}  # comm id -> description
        self.clicked: set[str] = set()

    def _handle(self, msg: dict[str, Any]) -> None:
        self.iopub.append(json.dumps(msg["content"], default=str))
        content = msg["content"]
        if msg["msg_type"] == "comm_open":
            state = content.get("data", {}).get("state", {})
            if state.get("_model_name") == "ButtonModel":
                self.buttons[content["comm_id"]] = str(state.get("description"))
        super()._handle(msg)

    def click_new(self, description: str) -> None:
        """Click the first button labelled ``description`` not clicked yet, once it shows."""

        def fresh() -> list[str]:
            return [
                c for c, d in self.buttons.items() if d == description and c not in self.clicked
            ]

        self.wait(lambda: bool(fresh()), timeout=90)
        comm = fresh()[0]
        self.clicked.add(comm)
        content = {"comm_id": comm, "data": {"method": "custom", "content": {"event": "click"}}}
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", content))


def script_reads(api: ScriptedAPI, env_file: Path) -> None:
    def tools(r: ScriptedRequest) -> list[str]:
        return [t["tool_name"] for t in r.last_tool_results]

    # Rules are checked newest first: the last Read's result gets the closing answer.
    api.on(lambda r: tools(r) == ["Read"], Reply(Text("The reads are done.")))
    api.on("read the env", Reply(ToolUse("Read", {"file_path": str(env_file)})), times=1)
    api.on(lambda r: tools(r) == ["Read"], Reply(ToolUse("Bash", {"command": "cat .env"})), times=1)
    # The finding: a name that is a symlink to .env was read with no card.
    api.on(lambda r: tools(r) == ["Bash"], Reply(ToolUse("Read", {"file_path": LINK})))


def portable_text(outputs: list[dict[str, Any]]) -> str:
    records = [o["metadata"]["byre"]["portable"] for o in outputs
               if "portable" in o.get("metadata", {}).get("byre", {})]  # fmt: skip
    assert records, "no portable record saved"
    return gzip.decompress(base64.b64decode(records[-1]["data"])).decode()


def transcripts_text(folder: Path) -> str:
    files = sorted(folder.glob("*.jsonl"))
    assert files, "no transcript written"
    return "".join(f.read_text() for f in files)


SETUP = (
    "%load_ext byre_jupyter\n"
    "%config Claude.transcripts = {transcripts!r}\n"
    "%config Claude.portable = True"
)


@pytest.fixture
def setup(workdir: Path, tmp_path: Path) -> tuple[Path, str]:
    env_file = workdir / ".env"
    env_file.write_text(ENV_FILE)
    (workdir / LINK).symlink_to(".env")
    transcripts = tmp_path / "transcripts"
    return env_file, SETUP.format(transcripts=str(transcripts))


@pytest.fixture
def kernel(kernels: Callable[..., Any]) -> RecordingDriver:
    """The shared ``kernels``, with a frontend that records every iopub message
    (RecordingDriver); each test loads the extension itself with its own settings."""
    driver = kernels(load=False, driver=RecordingDriver)
    assert isinstance(driver, RecordingDriver)
    return driver


@pytest.mark.skipif(
    tuple(int(p) for p in ipykernel.__version__.split(".")[:2]) < IPYKERNEL_LIVE_WIDGETS,
    reason="before ipykernel 7.4 a widget click reaches the kernel only after the cell ends "
    "(README, Install), so the card's Deny cannot answer while the turn waits",
)
def test_reads_of_a_credential_file_ask_in_the_default_mode_and_deny_holds(
    kernel: RecordingDriver, api: ScriptedAPI, setup: tuple[Path, str], tmp_path: Path
) -> None:
    env_file, load = setup
    assert "Error" not in kernel.run(load).texts()
    script_reads(api, env_file)
    run = kernel.submit("%%claude\nplease read the env file", cell_id="cell-env")
    kernel.click_new("Deny")  # Read(.env): the approval card shows
    kernel.click_new("Deny")  # cat .env: a second card
    kernel.click_new("Deny")  # Read(notes.txt), notes.txt -> .env: a third
    kernel.wait(lambda: run.idle and run.reply is not None, timeout=120)
    assert "The reads are done." in run.texts()
    results = [t for r in api.requests for t in r.last_tool_results]
    assert [(t["tool_name"], t["is_error"]) for t in results] == [
        ("Read", True), ("Bash", True), ("Read", True)
    ]  # fmt: skip
    for request in api.requests:  # nothing of the file reached the model
        assert_clean(json.dumps(request.body), "a request to the API")
    assert_clean("\n".join(kernel.iopub), "iopub")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%%claude\n...")])
    nb.cells[0].outputs = [nbformat.from_dict(
        {k: v for k, v in o.items() if k != "display_id"}) for o in run.outputs]  # fmt: skip
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)
    assert_clean(saved.read_text(), "the saved notebook")
    assert_clean(transcripts_text(tmp_path / "transcripts"), "the transcript")
    assert_clean(portable_text(run.outputs), "the portable record")


def execute(cells: list[str], env: dict[str, str], cwd: Path, out: Path) -> Any:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    NotebookClient(nb, timeout=180, kernel_name="python3").execute(env=env, cwd=str(cwd))
    nbformat.write(nb, out)
    return nb


@pytest.mark.parametrize(
    ("policy", "mode"),
    # bypassPermissions is a standing allowance like any other: a credential file still asks
    # (the CLI honours a hook's "ask" in that mode), so headless it is denied.
    [("deny", "default"), ("allow", "default"), ("deny", "bypassPermissions")],
)
def test_headless_reads_are_denied_by_default_and_redacted_when_allowed(
    api: ScriptedAPI, cli_path: str, setup: tuple[Path, str], workdir: Path, tmp_path: Path,
    policy: str, mode: str,
) -> None:  # fmt: skip
    env_file, load = setup
    script_reads(api, env_file)
    config = load + ("\n%config Claude.headless_permission = 'allow'" if policy == "allow" else "")
    config += f"\n%config Claude.permission_mode = {mode!r}"
    saved = tmp_path / "headless.ipynb"
    env = kernel_env(api.url, cli_path, tmp_path)
    nb = execute([config, "%%claude\nplease read the env file"], env, workdir, saved)
    outputs = nb.cells[1].outputs
    assert "The reads are done." in json.dumps(outputs)
    results = [t for r in api.requests for t in r.last_tool_results]
    assert [t["tool_name"] for t in results] == ["Read", "Bash", "Read"]
    to_model = json.dumps([r.body for r in api.requests])
    if policy == "deny":
        assert all(t["is_error"] for t in results), results
        assert_clean(to_model, "a request to the API")
    else:
        # Redaction is ours: what the CLI's tools gave the model is unchanged.
        assert not any(t["is_error"] for t in results), results
        assert all(secret in to_model for secret in SECRETS)
        assert "[redacted]" in json.dumps(outputs)
    assert_clean(saved.read_text(), "the saved notebook")
    assert_clean(transcripts_text(tmp_path / "transcripts"), "the transcript")
    assert_clean(portable_text(outputs), "the portable record")
