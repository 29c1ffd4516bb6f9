"""In-cell permission prompts of ``%%claude`` in a real JupyterLab, driven from headless Chromium.

The real ``claude`` CLI runs in permission mode "default", so every Bash call reaches the
kernel as ``can_use_tool``; Claude's in-kernel ``mcp__byre__python`` tool asks under the default
``Claude.python_tool = "ask"``. Either way an approval card appears in the running cell's live
widget ("Claude asks: ..." in our own words, the model's description only as a quoted claim,
the whole command in a ``<pre>``, Allow once / Always allow (session) / Deny and a reason
box). These tests click it the way a user does and check what the click caused: the file the
command makes, the variable the code sets, the tool_result the scripted API receives next, and
the decision kept in the static output that replaces the widget.

Browser tests are sync functions (see conftest.py). Every wait is bounded; no fixed sleeps.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, ScriptedRequest, Text, ToolUse

from .conftest import BOTH_FRONTENDS
from .harness import ARTIFACTS, HarnessError, LabPage, new_notebook, wait_until

pytestmark = pytest.mark.cli

LOAD = "%load_ext byre_jupyter"  # permission mode stays "default": the CLI asks
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
GRACE_S = 3.0  # Claude.interrupt_grace default
ASKS = "Claude asks:"
# Button accessible names include their Font Awesome glyph: match on text, not exact role+name.
ALLOW = 'button.widget-button:has-text("Allow once")'
ALWAYS = 'button.widget-button:has-text("Always allow (session)")'
DENY = 'button.widget-button:has-text("Deny")'
STOP = 'button.widget-button:has-text("Stop")'
REASON = 'input[placeholder="reason (optional, sent to Claude)"]'
MODE_LABEL = "Permissions"  # the menu's visible label


# --------------------------------------------------------------------------------------------
# helpers


def open_notebook(lab: LabPage, env: dict[str, str], *cells: str, name: str = "approvals") -> Path:
    """Open ``<name>-<random>/<name>.ipynb`` (cell 0 loads byre_jupyter and is run here, then
    ``cells``); returns the notebook's folder on disk, the kernel's and the CLI's cwd."""
    folder = f"{name}-{secrets.token_hex(4)}"
    lab.open_notebook(new_notebook(LOAD, *cells), path=f"{folder}/{name}.ipynb", kernel_env=env)
    lab.run_cell(0, timeout=60)
    out = lab.output_text(0)
    assert "Error" not in out and "Traceback" not in out, out
    return lab.server.root_dir / folder


def bash(command: str, description: str) -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": description})


def tool_result_for(api: ScriptedAPI, tool: str, timeout: float = 30.0) -> dict[str, Any]:
    """The first tool_result of ``tool`` the API received (the request after the tool ran)."""
    req = api.wait_for_request(lambda r: _last_tool(r) == tool, timeout=timeout)
    return dict(req.last_tool_results[-1])


def _last_tool(req: ScriptedRequest) -> str | None:
    results = req.last_tool_results
    return results[-1]["tool_name"] if results else None


def wait_for_card(lab: LabPage, i: int, timeout: float = 60.0) -> Any:
    """Wait until exactly one approval card is visible in cell ``i``; return its innermost box."""
    header = lab.output_locator(i).get_by_text(ASKS)
    try:
        header.first.wait_for(state="visible", timeout=timeout * 1000)
    except Exception as e:
        raise HarnessError(
            f"no approval card in cell {i} within {timeout:g}s; output: "
            f"{lab.output_text(i)[-1500:]!r}"
        ) from e
    assert header.count() == 1, lab.output_text(i)
    # The card is the VBox holding the header, the <pre> and the button row.
    box = (
        lab.output_locator(i)
        .locator(".widget-vbox")
        .filter(has=lab.page.get_by_text(ASKS))
        .filter(has=lab.page.locator(ALLOW))
    )
    return box.last  # the innermost: outer boxes (the live view) contain it too


def static_data(lab: LabPage, i: int) -> dict[str, str]:
    """Cell ``i`` ended: its first output is the static bundle (no widget left anywhere)."""
    outputs = lab.output_json(i)
    assert outputs, "the cell has no output"
    assert WIDGET_MIME not in json.dumps(outputs), outputs
    assert all(o["output_type"] != "error" for o in outputs), outputs
    assert lab.output_locator(i).locator(".jupyter-widgets").count() == 0
    data = outputs[0].get("data", {})
    assert {"text/markdown", "text/html", "text/plain"} <= set(data), outputs[0]
    return {k: "".join(v) if isinstance(v, list) else str(v) for k, v in data.items()}


def assert_clean(text: str) -> None:
    for bad in ("Traceback", "CancelledError", "KeyboardInterrupt", "Error displaying widget"):
        assert bad not in text, text


def cards_seen(lab: LabPage, i: int, title: str) -> list[str]:
    """Recorded DOM states of cell ``i`` (since ``watch_output``) showing a card for ``title``."""
    needle = f"{ASKS} {title}"
    return [s["text"] for s in lab.output_states(i) if needle in s["text"]]


def claims_seen(lab: LabPage, i: int, claim: str) -> list[str]:
    """Recorded DOM states of cell ``i`` showing a card whose model description is ``claim``."""
    needle = f"Claude says: “{claim}”"
    return [s["text"] for s in lab.output_states(i) if needle in s["text"]]


# --------------------------------------------------------------------------------------------
# 1. Allow once


def test_allow_once_runs_the_command(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = open_notebook(lab, claude_env, "%%claude\nALLOWME: make the file")
    target = folder / "allowed.txt"
    command = f"touch {target} && echo made"
    api.on("ALLOWME", Reply(Text("Making it."), bash(command, "Create a file")), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("The file is there: ALLOWDONE")))

    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    assert "Claude asks: Run a shell command" in box.inner_text()
    assert "Claude says: “Create a file”" in box.inner_text()  # the model's words, quoted
    assert box.locator("pre").inner_text().strip() == command
    assert box.locator(ALWAYS).count() == 1 and box.locator(DENY).count() == 1
    assert box.locator(REASON).count() == 1
    lab.screenshot("approval-card-bash.png")
    assert not target.exists(), "the command ran before anyone clicked"
    assert lab.cell_running(1)

    box.locator(ALLOW).click()
    assert lab.wait_for_cell(1, timeout=60)
    assert target.exists()
    final = lab.output_text(1)
    assert "ALLOWDONE" in final and "Approved" in final, final
    assert_clean(final)
    data = static_data(lab, 1)
    md = data["text/markdown"]
    assert "Approved: Run a shell command: " in md and "(allowed once)" in md, md
    assert f"$ {command}" in md and "Bash" in md, md  # the command's card
    assert "Approved: Run a shell command" in data["text/html"]

    result = tool_result_for(api, "Bash")
    assert not result["is_error"] and "made" in result["text"], result


# --------------------------------------------------------------------------------------------
# 2. Deny with a reason


def test_deny_with_reason_reaches_the_model(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = open_notebook(lab, claude_env, "%%claude\nDENYME: make the file")
    target = folder / "denied.txt"
    command = f"touch {target} && echo made"
    api.on("DENYME", Reply(bash(command, "Create a file")), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("Understood: DENYDONE")))

    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    assert box.locator("pre").inner_text().strip() == command
    box.locator(REASON).fill("not today")
    box.locator(DENY).click()
    assert lab.wait_for_cell(1, timeout=60)

    assert not target.exists()
    result = tool_result_for(api, "Bash")
    assert result["is_error"] and "not today" in result["text"], result
    final = lab.output_text(1)
    assert "DENYDONE" in final and "Permission denied" in final, final
    assert_clean(final)
    md = static_data(lab, 1)["text/markdown"]
    denied = next(line for line in md.splitlines() if line.startswith("*Permission denied: Run"))
    assert "denied.txt" in denied and denied.endswith(": not today*"), md  # what, and why


@BOTH_FRONTENDS
def test_typed_reason_arrives_whole(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    """A reason typed key by key, then pasted into, then typed after the paste
    reaches Claude and the saved card whole, not as its first character."""
    folder = open_notebook(lab, claude_env, "%%claude\nTYPEDREASON: make the file")
    target = folder / "typed.txt"
    command = f"touch {target} && echo made"
    api.on("TYPEDREASON", Reply(bash(command, "Create a file")), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("Understood: TYPEDDONE")))

    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    field = box.locator(REASON)
    field.click()
    field.press_sequentially("not in this folder, ", delay=20)  # keys, one by one
    lab.page.keyboard.insert_text("use the scratch dir /tmp/x")  # as a paste inserts it
    # Leave the box (its value syncs) and come back: the second sync must arrive too.
    box.locator(".byre-approval-title").click()
    field.click()
    field.press("End")
    field.press_sequentially(" instead, thanks", delay=20)  # keys after the paste
    reason = "not in this folder, use the scratch dir /tmp/x instead, thanks"
    assert len(reason) >= 40 and field.input_value() == reason
    box.screenshot(path=str(ARTIFACTS / "approval-card-long-reason.png"))
    box.locator(DENY).click()
    assert lab.wait_for_cell(1, timeout=60)

    assert not target.exists()
    result = tool_result_for(api, "Bash")
    assert result["is_error"] and reason in result["text"], result
    md = static_data(lab, 1)["text/markdown"]
    denied = next(line for line in md.splitlines() if line.startswith("*Permission denied: Run"))
    assert "typed.txt" in denied and denied.endswith(f": {reason}*"), md  # what, and the reason


# A thread in the kernel that, once `go` exists, writes `started` and then holds the GIL for a
# few seconds in one C call (sum over a range checks no eval breaker): the kernel reads no
# message meanwhile, as a kernel on a loaded machine lags.
HOG = """import os as _os, threading as _th, time as _time
def _hog(go, started):
    while not _os.path.exists(go):
        _time.sleep(0.01)
    open(started, "w").close()
    sum(range(400_000_000))
_th.Thread(target=_hog, args=({go!r}, {started!r}), daemon=True).start()
"""


@BOTH_FRONTENDS
def test_typed_reason_arrives_whole_when_the_kernel_lags(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """Under load: the box synced once (focus left it), the kernel is slow to take
    that update, the user types on and clicks Deny. ipywidgets holds a model's next update
    until the kernel acknowledged the last, but sends a click at once: the click overtook the
    rest of the reason, which arrived only after the card was answered."""
    go, started = tmp_path / "hog-go", tmp_path / "hog-started"
    folder = open_notebook(
        lab,
        claude_env,
        HOG.format(go=str(go), started=str(started)),
        "%%claude\nLAGREASON: make the file",
    )
    lab.run_cell(1, timeout=60)
    target = folder / "lagged.txt"
    api.on("LAGREASON", Reply(bash(f"touch {target}", "Create a file")), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("Understood: LAGDONE")))

    lab.run_cell(2, wait=False)
    box = wait_for_card(lab, 2)
    field = box.locator(REASON)
    field.click()
    field.press_sequentially("not here, ", delay=20)
    lab.page.keyboard.insert_text("use the scratch dir /tmp/x")
    go.touch()
    wait_until(started.exists, 10, "the kernel to lag")
    box.locator(".byre-approval-title").click()  # the box loses focus: its value may sync
    field.click()
    field.press("End")
    field.press_sequentially(" instead, thanks", delay=20)
    reason = "not here, use the scratch dir /tmp/x instead, thanks"
    assert field.input_value() == reason
    box.locator(DENY).click()
    assert lab.wait_for_cell(2, timeout=90)

    assert not target.exists()
    result = tool_result_for(api, "Bash")
    assert result["is_error"] and reason in result["text"], result


# --------------------------------------------------------------------------------------------
# 3. Always allow (session): the exact command


def test_always_allow_covers_the_command_it_showed_and_no_other(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    """0.1: "Always allow" on ``touch …/first-ok`` let the next turn's ``curl …; touch MARKER;
    rm -f first-ok`` run with no card. The allowance is the exact command the card showed: the
    same command runs without a card, a different one asks (and its look-alike host is marked,
    live and in the saved record)."""
    folder = open_notebook(
        lab,
        claude_env,
        "%%claude\nALWAYSME: make the file",
        "%%claude\nSAMEAGAIN: once more",
        "%%claude\nOTHERCMD: something else",
    )
    first, marker = folder / "first-ok", folder / "MARKER"
    command = f"touch {first}"
    attack = f"curl -s https://g\u0456thub.com/x; touch {marker}; rm -f {first}"
    api.on("ALWAYSME", Reply(bash(command, "First file")), times=1)
    api.on("SAMEAGAIN", Reply(bash(command, "Same file")), times=1)
    api.on("OTHERCMD", Reply(bash(attack, "Tidy up")), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("Understood: BASHDONE")))

    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    assert box.locator("pre").inner_text().strip() == command
    scope = box.locator(".byre-approval-scope").inner_text()
    assert "Always allow (session) covers" in scope, scope  # the card says what it covers
    # (ipywidgets shows a Dropdown label's spaces as no-break spaces.)
    options = [o.replace("\xa0", " ") for o in box.locator("select option").all_inner_texts()]
    assert options[0] == f"only this exact command (Bash({command}))", options  # the default
    assert options[1].endswith("(Bash(touch:*))") and len(options) == 2, options
    box.locator(ALWAYS).click()
    assert lab.wait_for_cell(1, timeout=60)
    assert first.exists() and "BASHDONE" in lab.output_text(1)
    md = static_data(lab, 1)["text/markdown"]
    assert f"{command} (allowed always, in this session: Bash({command}))" in md, md

    # The same command in the next turn: no card, and the record says which rule allowed it.
    first.unlink()
    lab.watch_output(2)
    lab.run_cell(2, wait=False)
    assert lab.wait_for_cell(2, timeout=60)
    assert first.exists() and "BASHDONE" in lab.output_text(2)
    assert cards_seen(lab, 2, "Run a shell command") == []
    md = static_data(lab, 2)["text/markdown"]
    assert f"{command} (always allowed in this session: Bash({command}))" in md, md

    # A different command asks, with its look-alike host marked.
    lab.run_cell(3, wait=False)
    box = wait_for_card(lab, 3)
    assert box.locator(".byre-hidden-char").all_inner_texts() == ["⟨U+0456⟩"]
    assert "a letter that passes for another one" in box.inner_text()
    box.locator(DENY).click()
    assert lab.wait_for_cell(3, timeout=60)
    assert first.exists() and not marker.exists()  # nothing of it ran
    assert "BASHDONE" in lab.output_text(3)
    data = static_data(lab, 3)
    for mime in ("text/markdown", "text/html", "text/plain"):
        assert "g⟨U+0456⟩thub.com" in data[mime] and "\u0456" not in data[mime], mime
    req = api.wait_for_request(
        lambda r: _last_tool(r) == "Bash" and bool(r.last_tool_results[-1]["is_error"]),
        timeout=5,
    )
    assert "denied" in req.last_tool_results[-1]["text"].lower(), req.last_tool_results


# --------------------------------------------------------------------------------------------
# 4. The in-kernel python tool


@pytest.mark.parametrize("choice", ["allow", "deny"])
def test_python_tool_asks_in_the_cell(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], choice: str
) -> None:
    var = f"{choice}ed_value"
    code = f"{var} = 41 + 1"
    folder = open_notebook(
        lab,
        claude_env,
        "%%claude\nPYTOOL: set a variable",
        f"print('{var}' in dir())\nprint(globals().get('{var}'))",
    )
    assert folder.is_dir()
    api.on("PYTOOL", Reply(ToolUse("mcp__byre__python", {"code": code})), times=1)
    api.on(lambda r: _last_tool(r) == "mcp__byre__python", Reply(Text("Python done: PYDONE")))

    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    assert "Run Python in your kernel" in box.inner_text()
    assert box.locator("pre").inner_text().strip() == code
    if choice == "allow":
        lab.screenshot("approval-card-python.png")
        box.locator(ALLOW).click()
    else:
        box.locator(DENY).click()
    assert lab.wait_for_cell(1, timeout=60)
    final = lab.output_text(1)
    assert "PYDONE" in final, final
    assert_clean(final)
    md = static_data(lab, 1)["text/markdown"]
    result = tool_result_for(api, "mcp__byre__python")

    lab.run_cell(2, timeout=30)
    shown = lab.output_text(2).split()
    if choice == "allow":
        assert shown == ["True", "42"], shown
        assert not result["is_error"], result
        assert "Approved: Run Python in your kernel: " in md and "(allowed once)" in md, md
    else:
        assert shown == ["False", "None"], shown
        assert result["is_error"] and "declined" in result["text"].lower(), result
        assert "Permission denied: Run Python in your kernel" in md, md


# --------------------------------------------------------------------------------------------
# 5. Stop while a card waits


@BOTH_FRONTENDS
def test_stop_rejects_a_pending_card(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = open_notebook(
        lab, claude_env, "%%claude\nSTOPCARD: make the file", "%%claude\nAFTERCARD: still there?"
    )
    target = folder / "stopped.txt"
    command = f"touch {target} && echo made"
    api.on("STOPCARD", Reply(bash(command, "Create a file")), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("should not be needed")))
    api.on("AFTERCARD", Reply(Text("yes, still here: AFTERDONE")))

    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    assert box.locator("pre").inner_text().strip() == command

    lab.click_in_output(1, selector=STOP)
    # Ends well before the grace kill would have ended it (a bounded wait, not a timing).
    assert lab.wait_for_cell(1, timeout=GRACE_S + 5)
    assert not target.exists()
    final = lab.output_text(1)
    assert "interrupted" in final.lower(), final
    assert_clean(final)
    outputs = lab.output_json(1)
    assert outputs[0]["metadata"]["byre"]["interrupted"] is True, outputs[0]["metadata"]
    md = static_data(lab, 1)["text/markdown"]
    assert "Stopped by the user" in md, md

    # The session goes on.
    lab.run_cell(2, wait=False)
    assert lab.wait_for_cell(2, timeout=60)
    assert "AFTERDONE" in lab.output_text(2)
    req = api.wait_for_request("AFTERCARD", timeout=5)
    assert "STOPCARD" in "\n".join(json.dumps(m) for m in req.user_messages)


# --------------------------------------------------------------------------------------------
# 6. The permission-mode menu


def switch_mode_mid_turn(lab: LabPage, mode: str) -> None:
    """Cell 1's turn waits on the API: choose ``mode`` in its header menu and wait until the
    kernel took the change and told the CLI (the cell says so: "Permission mode: …", or that
    the change was refused)."""
    menu = lab.output_locator(1).get_by_label(MODE_LABEL, exact=True)
    menu.wait_for(timeout=30_000)
    assert menu.input_value() == "default"
    options = menu.locator("option").all_inner_texts()
    assert mode in options, options
    lab.watch_output(1)  # from here on, every DOM state of the cell is recorded
    lab.select_in_output(1, MODE_LABEL, mode)
    wait_until(
        lambda: f"Permission mode: {mode}" in (text := lab.output_text(1)) or "refused" in text,
        20,
        "the kernel to take the mode change",
    )
    assert lab.cell_running(1)


def wait_done_without_card(lab: LabPage, i: int, timeout: float = 60.0) -> None:
    """Wait for cell ``i`` to finish; fail at once if an approval card shows up instead."""

    def check() -> bool:
        if ASKS in lab.output_text(i):
            raise AssertionError(f"an approval card appeared: {lab.output_text(i)[-600:]!r}")
        return not lab.cell_running(i)

    wait_until(check, timeout, f"cell {i} to finish")
    assert lab.wait_for_cell(i, timeout=5)


def script_write(api: ScriptedAPI, keyword: str, target: Path) -> None:
    write = ToolUse("Write", {"file_path": str(target), "content": "written without a card\n"})
    api.on(keyword, Hang(then=Reply(write)), times=1)
    api.on(lambda r: _last_tool(r) == "Write", Reply(Text("Written: EDITDONE")))


def test_mode_menu_accept_edits_mid_turn_skips_the_card(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = open_notebook(lab, claude_env, "%%claude\nEDITMODE: write the file")
    target = folder / "accepted.txt"
    script_write(api, "EDITMODE", target)

    lab.run_cell(1, wait=False)
    api.wait_for_request("EDITMODE", timeout=60)  # the turn now waits on the API
    switch_mode_mid_turn(lab, "acceptEdits")
    api.release()
    wait_done_without_card(lab, 1)

    assert target.read_text() == "written without a card\n"
    assert cards_seen(lab, 1, "Write") == []
    final = lab.output_text(1)
    assert "EDITDONE" in final and "Approved" not in final, final
    assert_clean(final)
    md = static_data(lab, 1)["text/markdown"]
    assert "Permission denied" not in md and "refused" not in md, md
    result = tool_result_for(api, "Write")
    assert not result["is_error"], result


def test_mode_menu_switch_is_confirmed_in_the_cell(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = open_notebook(lab, claude_env, "%%claude\nCONFIRMMODE: write the file")
    script_write(api, "CONFIRMMODE", folder / "confirmed.txt")
    lab.run_cell(1, wait=False)
    api.wait_for_request("CONFIRMMODE", timeout=60)
    switch_mode_mid_turn(lab, "acceptEdits")
    # The CLI answers set_permission_mode in well under 0.1 s (measured outside Lab).
    text = lab.wait_for_output_text(1, "Permission mode: acceptEdits", timeout=10)
    assert "refused" not in text, text


@pytest.mark.parametrize(
    "launch_flag",
    [
        pytest.param(False, id="default-launch"),
        pytest.param(True, id="allow-dangerously-skip-permissions"),
    ],
)
def test_mode_menu_bypass_mid_turn_skips_the_card(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], launch_flag: bool
) -> None:
    setup = (
        '%config Claude.extra_args = ["--allow-dangerously-skip-permissions"]'
        if launch_flag
        else "pass"
    )
    folder = open_notebook(lab, claude_env, "%%claude\nMODEMENU: make the file", setup)
    target = folder / "bypassed.txt"
    command = f"touch {target} && echo made"
    api.on("MODEMENU", Hang(then=Reply(bash(command, "Create a file"))), times=1)
    api.on(lambda r: _last_tool(r) == "Bash", Reply(Text("Made without asking: MODEDONE")))

    lab.run_cell(2, timeout=30)
    lab.run_cell(1, wait=False)
    api.wait_for_request("MODEMENU", timeout=60)
    switch_mode_mid_turn(lab, "bypassPermissions")
    api.release()
    wait_done_without_card(lab, 1)

    assert target.exists()
    assert cards_seen(lab, 1, "Run a shell command") == []
    final = lab.output_text(1)
    assert "MODEDONE" in final and "Approved" not in final, final
    assert_clean(final)
    md = static_data(lab, 1)["text/markdown"]
    assert "Permission denied" not in md and "refused" not in md, md
    result = tool_result_for(api, "Bash")
    assert not result["is_error"] and "made" in result["text"], result
