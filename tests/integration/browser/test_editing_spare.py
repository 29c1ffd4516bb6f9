"""Typing into an earlier %%claude cell that ran starts the spare CLI its re-run will adopt
(docs/bridge.md, "editing"): the bridge tells the kernel once, at the first keystroke, and the
kernel's fork spare moves from where re-running the newest cell branches to where re-running
the edited one does; the re-run then sees the history before that cell. JupyterLab, real CLI,
scripted API; the spares are read from the CLI processes' own command lines. Adoption itself
is held by tests/integration/kernel/test_spare_kernel.py."""

from __future__ import annotations

import json
from pathlib import Path

import psutil

from byre_jupyter.scripted import ScriptedAPI

from .harness import LabPage, wait_until
from .test_rerun_marks import three_turns


def fork_points(lab: LabPage) -> set[str]:
    """The ``--resume-session-at`` of each forked CLI under the server: the spares' points
    (a session's own CLI, resumed by a branch, has one too; none here before the re-run)."""
    points = set()
    for proc in lab.server.descendants():
        try:
            args = proc.cmdline()
        except psutil.Error:  # gone meanwhile
            continue
        if "--fork-session" in args:
            at = "--resume-session-at="
            points.update(a.removeprefix(at) for a in args if a.startswith(at))
    return points


def editing_events(lab: LabPage) -> list[dict[str, object]]:
    """The page's ``editing`` events (a turn's ``turn.opened`` is an event too, and no edit)."""
    return [
        m
        for m in lab.sent_comm_messages()
        if m.get("type") == "event" and m.get("name") == "editing"
    ]


def test_typing_into_an_earlier_cell_moves_the_fork_spare_to_its_branch_point(
    lab: LabPage, api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> None:
    three_turns(lab, api, cli_path, tmp_path)
    wait_until(lambda: len(fork_points(lab)) == 1, 90, "the newest cell's fork spare")
    (newest,) = fork_points(lab)
    assert editing_events(lab) == []  # running cells is no edit

    editor = lab.cell_locator(2).locator(".cm-content")
    editor.click()
    lab.page.keyboard.press("Control+End")
    editor.press_sequentially("_NEW", delay=20)  # keys, one by one: one event for them all

    def moved() -> bool:
        return fork_points(lab) not in (set(), {newest})

    wait_until(moved, 90, "the fork spare at the edited cell's branch point")
    assert len(fork_points(lab)) == 1  # the newest cell's fork gave way (at most 2 spares)
    lab.set_source(2, "%%claude\nPROMPT_B_NEW")  # more typing

    n = len(api.requests)
    lab.run_cell(2, timeout=120)
    seen = json.dumps(api.wait_for_request("PROMPT_B_NEW", timeout=60, after=n).body["messages"])
    assert "PROMPT_A" in seen and "PROMPT_B_OLD" not in seen and "PROMPT_C" not in seen
    events = editing_events(lab)
    assert [e["name"] for e in events] == ["editing"], events  # once for all that typing
