"""Spare CLIs (``Claude.speculate``, app/spare.py) in a real kernel with the real CLI and the
scripted API: a re-run of the newest cell adopts the process forked before it, a new session
the fresh one; neither ever sends a request or leaves a session file before it is used; a
killed spare, a changed setting or the trait turned off leave the cell working as without
spares. What the model saw is read from the API requests. Latency: bench/spare.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from support.frontend import hello_of
from support.kernel import LOAD, KernelDriver
from support.processes import cli_children

from byre_jupyter.bridge import TARGET
from byre_jupyter.scripted import Reply, ScriptedAPI, ScriptedRequest, Text

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

STATE = """
import json, byre_jupyter.magics as m
_e = m._EXTENSION
print(json.dumps({
    "spares": [
        {"fresh": want.conversation is None, "at": want.at, "pid": s.pid, "id": s.session_id,
         "ready": bool(s.running and s.server_info)}
        for want, s in _e.spares.kept()
    ],
    "started": _e.spares.started, "adopted": _e.spares.adopted,
    "pids": {e.name: e.session.pid for e in _e.conversations},
    "conversations": sorted({n.conversation for e in _e.conversations for n in e.tree.turns
                             if n.conversation}),
}))
"""


def state(kernel: KernelDriver) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(kernel.run(STATE).texts().strip().splitlines()[-1])
    return found


def ask_run(kernel: KernelDriver, api: ScriptedAPI, cell: str, source: str) -> ScriptedRequest:
    """Run ``%%claude`` ``source`` as cell ``cell``; the API request of its last line."""
    n = len(api.requests)
    run = kernel.run(f"%%claude {source}", cell_id=cell)
    assert run.reply is not None and run.reply["status"] == "ok", run.texts()
    return api.wait_for_request(source.splitlines()[-1], timeout=60, after=n)


def ask(kernel: KernelDriver, api: ScriptedAPI, cell: str, source: str) -> str:
    """The history the API saw (as in test_branching_kernel.py)."""
    return json.dumps(ask_run(kernel, api, cell, source).body["messages"])


def answer_each(api: ScriptedAPI, *prompts: str) -> None:
    for prompt in prompts:
        api.on(prompt, Reply(Text(f"answer to {prompt}")))


def ready_spares(kernel: KernelDriver, count: int) -> dict[str, Any]:
    """The state once ``count`` spares have answered initialize."""
    box: dict[str, Any] = {}

    def ready() -> bool:
        box.update(state(kernel))
        return len(box["spares"]) == count and all(s["ready"] for s in box["spares"])

    kernel.wait(ready, timeout=90)
    return box


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def session_files(home: Path) -> set[str]:
    return {p.stem for p in (home / ".claude" / "projects").rglob("*.jsonl")}


def test_rerun_and_new_session_adopt_spares_that_never_reach_the_api(
    kernel: KernelDriver, api: ScriptedAPI, tmp_path: Path
) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_B_OLD", "PROMPT_B_NEW", "PROMPT_OTHER")
    ask(kernel, api, "cell-a", "\nPROMPT_A")
    ask(kernel, api, "cell-b", "\nPROMPT_B_OLD")
    before = ready_spares(kernel, 2)
    fork = next(s for s in before["spares"] if not s["fresh"])
    fresh = next(s for s in before["spares"] if s["fresh"])
    requests = len(api.requests)
    # Started and idle: no request, no session file (the CLI writes one at the first message).
    assert session_files(tmp_path / "home") == set(before["conversations"])
    assert len(api.requests) == requests

    seen = ask(kernel, api, "cell-b", "\nPROMPT_B_NEW")
    assert "PROMPT_A" in seen and "answer to PROMPT_A" in seen and "PROMPT_B_OLD" not in seen
    after = state(kernel)
    assert after["pids"]["default"] == fork["pid"]  # the re-run launched no CLI of its own
    assert after["adopted"] == 1

    request = ask_run(kernel, api, "cell-o", "-s other\nPROMPT_OTHER")
    assert json.dumps(request.body["messages"]).count("PROMPT") == 1  # its own conversation
    after = state(kernel)
    assert after["pids"]["other"] == fresh["pid"] and after["adopted"] == 2
    assert after["pids"]["default"] == fork["pid"]  # the new session did not touch default

    # The newest turn was the first of "other": re-running it starts afresh, so one spare (a
    # fresh one) serves both; default's fork spare is closed. Still nothing of it anywhere.
    idle = ready_spares(kernel, 1)
    assert not {s["id"] for s in idle["spares"]} & session_files(tmp_path / "home")
    assert session_files(tmp_path / "home") == set(idle["conversations"])
    listed = kernel.run("%claude sessions").texts()
    assert "other" in listed and not any(s["id"] in listed for s in idle["spares"])


def open_bridge(kernel: KernelDriver) -> str:
    """Open the ``byre.bridge`` comm as the labextension does (its hello rides along)."""
    comm_id = "bridge-editing-test"
    hello = hello_of("work/analysis.ipynb")
    send_shell(kernel, "comm_open", {"comm_id": comm_id, "target_name": TARGET, "data": hello})
    return comm_id


def send_shell(kernel: KernelDriver, msg_type: str, content: dict[str, Any]) -> None:
    client = kernel.kc
    client.shell_channel.send(client.session.msg(msg_type, content))


def test_editing_an_earlier_cell_starts_the_spare_its_rerun_adopts(
    kernel: KernelDriver, api: ScriptedAPI, tmp_path: Path
) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_B_OLD", "PROMPT_C", "PROMPT_B_NEW")
    ask(kernel, api, "cell-a", "\nPROMPT_A")
    ask(kernel, api, "cell-b", "\nPROMPT_B_OLD")
    ask(kernel, api, "cell-c", "\nPROMPT_C")
    newest = next(s for s in ready_spares(kernel, 2)["spares"] if not s["fresh"])
    requests = len(api.requests)
    comm_id = open_bridge(kernel)
    event = {"type": "event", "name": "editing", "cell": "cell-b"}
    send_shell(kernel, "comm_msg", {"comm_id": comm_id, "data": event})

    box: dict[str, Any] = {}

    def edited_fork_ready() -> bool:
        box.update(ready_spares(kernel, 2))
        return any(not s["fresh"] and s["at"] != newest["at"] for s in box["spares"])

    kernel.wait(edited_fork_ready, timeout=90)
    fork = next(s for s in box["spares"] if not s["fresh"])  # the newest cell's fork is gone
    assert fork["pid"] != newest["pid"] and len(box["spares"]) == 2
    # Started and idle: no request, no session file, before its cell runs.
    assert len(api.requests) == requests
    assert session_files(tmp_path / "home") == set(box["conversations"])

    seen = ask(kernel, api, "cell-b", "\nPROMPT_B_NEW")
    assert "PROMPT_A" in seen and "answer to PROMPT_A" in seen
    assert "PROMPT_B_OLD" not in seen and "PROMPT_C" not in seen
    after = state(kernel)
    assert after["pids"]["default"] == fork["pid"] and after["adopted"] == 1


def test_a_killed_spare_leaves_the_rerun_working_cold(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_B_OLD", "PROMPT_B_NEW")
    ask(kernel, api, "cell-a", "\nPROMPT_A")
    ask(kernel, api, "cell-b", "\nPROMPT_B_OLD")
    fork = next(s for s in ready_spares(kernel, 2)["spares"] if not s["fresh"])
    psutil.Process(fork["pid"]).kill()
    # Once the kernel has seen it exit (it may not have reaped it a moment after the kill).
    kernel.wait(lambda: not any(s["ready"] for s in state(kernel)["spares"] if not s["fresh"]))

    seen = ask(kernel, api, "cell-b", "\nPROMPT_B_NEW")
    assert "PROMPT_A" in seen and "PROMPT_B_OLD" not in seen
    after = state(kernel)
    assert after["adopted"] == 0 and after["pids"]["default"] != fork["pid"]


@pytest.mark.kernel_env(OLD_SECRET="hunter2")
def test_a_changed_model_or_environment_is_honoured_and_speculate_off_starts_no_spare(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_B_OLD", "PROMPT_B_NEW", "PROMPT_OTHER", "PROMPT_C")
    ask(kernel, api, "cell-a", "\nPROMPT_A")
    ask(kernel, api, "cell-b", "\nPROMPT_B_OLD")
    fork = next(s for s in ready_spares(kernel, 2)["spares"] if not s["fresh"])
    assert "Error" not in kernel.run("%config Claude.model = 'claude-haiku-4-5'").texts()
    # The spares launched with the old model are closed, not adopted.
    kernel.wait(lambda: gone(fork["pid"]), timeout=30)
    request = ask_run(kernel, api, "cell-b", "\nPROMPT_B_NEW")
    assert request.body["model"] == "claude-haiku-4-5"
    assert state(kernel)["adopted"] == 0

    # A new key and a deleted variable in os.environ (no trait changed): the fresh spare,
    # started with the old environment, is not adopted; the new conversation bills the new key.
    fresh = next(s for s in ready_spares(kernel, 2)["spares"] if s["fresh"])
    assert b"OLD_SECRET=" in Path(f"/proc/{fresh['pid']}/environ").read_bytes()
    kernel.run(
        "import os; os.environ['ANTHROPIC_API_KEY'] = 'sk-new'; del os.environ['OLD_SECRET']"
    )
    request = ask_run(kernel, api, "cell-o", "-s other\nPROMPT_OTHER")
    assert request.headers["x-api-key"] == "sk-new"
    after = state(kernel)
    assert after["adopted"] == 0 and after["pids"]["other"] != fresh["pid"]
    assert b"OLD_SECRET=" not in Path(f"/proc/{after['pids']['other']}/environ").read_bytes()

    assert "Error" not in kernel.run("%config Claude.speculate = False").texts()
    kernel.wait(lambda: state(kernel)["spares"] == [], timeout=30)
    started = state(kernel)["started"]
    ask(kernel, api, "cell-c", "\nPROMPT_C")
    after = state(kernel)
    assert after["spares"] == [] and after["started"] == started


def test_run_all_first_cell_waits_for_the_prewarm_in_progress(
    kernels: Callable[..., KernelDriver],
    api: ScriptedAPI,
    cli_path: str,
    tmp_path: Path,
    workdir: Path,
) -> None:
    """The first cell sent right behind ``%load_ext`` (Run All) is answered by the CLI the
    prewarm is starting: no second CLI (spares off here, so every CLI is the session's)."""
    api.default = Reply(Text("first answer"))
    kernel = kernels(load=False)
    try:
        kernel.run("get_ipython().config.Claude.speculate = False")
        load = kernel.submit(LOAD)
        first = kernel.submit("%%claude\nPROMPT_FIRST", cell_id="cell-1")
        kernel.wait(lambda: first.reply is not None and load.reply is not None, timeout=120)
        assert first.reply is not None and first.reply["status"] == "ok"
        assert "first answer" in first.texts()
        check = (
            kernel.run(
                "import byre_jupyter.magics as m; s = m._EXTENSION.conversations.peek('default'); "
                "print(s is m._EXTENSION._warm, s.restarts)"
            )
            .texts()
            .split()
        )
        assert check == ["True", "0"]
        assert len(cli_children(kernel.kernel_pid())) == 1
    finally:
        kernel.close()


def test_three_kernels_on_a_host_bound_to_two_spares_keep_two(
    kernels: Any, api: ScriptedAPI, tmp_path: Path
) -> None:
    """``Claude.host_spares = 2`` for every kernel of the host: three kernels, each wanting two
    spares after its turn, keep two spare CLIs between them (app/hostspares.py)."""
    answer_each(api, "PROMPT_K0", "PROMPT_K1", "PROMPT_K2")
    started = [kernels(BYRE_HOST_SPARES_DIR=str(tmp_path / "slots")) for _ in range(3)]
    for n, kernel in enumerate(started):
        out = kernel.run("%config Claude.host_spares = 2\n%config Claude.spare_min_free_mb = 0")
        assert "Error" not in out.texts(), out.texts()
        ask(kernel, api, f"cell-{n}", f"\nPROMPT_K{n}")
    settle = "import byre_jupyter.magics as m\nawait m._EXTENSION.spares.settled()"
    for kernel in started:
        assert "Error" not in kernel.run(settle).texts()
    states = [state(kernel) for kernel in started]
    running = [s for st in states for s in st["spares"] if s["pid"] and not gone(s["pid"])]
    assert len(running) == 2, json.dumps(states)
    assert sum(st["started"] for st in states) == 2, json.dumps(states)
    assert len({s["pid"] for s in running}) == 2
