"""``%%claude`` cells in a real JupyterLab, driven from headless Chromium.

The real ``claude`` CLI runs each turn against the scripted Messages API on 127.0.0.1
(``byre_jupyter.scripted``). What is checked is what a user sees and what a saved file holds:
the live widget (streaming text, Stop, the model menu) while a turn runs, its replacement by a
static bundle when the turn ends, the kernel's ■ and saving. Two figures for the team's notes
(iopub messages per turn, delta → DOM latency) are printed and merged into
``tests/artifacts/browser_figures.json``; they are measured, never asserted.

Browser tests are sync functions (see conftest.py). Every wait is bounded; no fixed sleeps.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import statistics
import threading
import time
from collections import Counter
from typing import Any

import pytest
from support.kernel import LOAD
from support.rig import tiny_png

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, ScriptedRequest, Text, ToolUse
from byre_jupyter.scripted import server as scripted_server

from .harness import ARTIFACTS, LabPage, new_notebook, wait_until

pytestmark = pytest.mark.cli

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
STATIC_MIMES = {"text/markdown", "text/html", "text/plain"}
GRACE_S = 3.0  # Claude.interrupt_grace default: Stop/■ → turn over, before the CLI is killed
FIGURES = ARTIFACTS / "browser_figures.json"
# The button's accessible name includes its Font Awesome glyph, so no exact role+name match.
STOP_BUTTON = 'button.widget-button:has-text("Stop")'


# --------------------------------------------------------------------------------------------
# helpers


def open_claude_notebook(
    lab: LabPage, env: dict[str, str], *cells: str, folder: str | None = None
) -> str:
    """Open a notebook whose cell 0 loads byre_jupyter (run here) followed by ``cells``."""
    path = f"{folder}/claude.ipynb" if folder else None
    path = lab.open_notebook(new_notebook(LOAD, *cells), path=path, kernel_env=env)
    lab.run_cell(0, timeout=60)
    out = lab.output_text(0)
    assert "Error" not in out and "Traceback" not in out, out
    return path


def run_ok(lab: LabPage, i: int, timeout: float) -> bool:
    """Run cell ``i`` and wait; True when it ended without an error."""
    lab.run_cell(i, wait=False)
    return lab.wait_for_cell(i, timeout)


def words(text: str, prefix: str) -> list[str]:
    """The complete ``<prefix>NNNN`` words of ``text``, in order."""
    return re.findall(rf"\b{prefix}\d{{4}}\b", text)


def numbered(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{n:04d}" for n in range(1, count + 1)]


def user_texts(req: ScriptedRequest) -> str:
    """All text the user role sent in ``req`` (the whole conversation history)."""
    parts: list[str] = []
    for m in req.user_messages:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [str(b.get("text", "")) for b in content if isinstance(b, dict)]
    return "\n".join(parts)


def assert_static_only(lab: LabPage, i: int, *, interrupted: bool = False) -> list[dict[str, Any]]:
    """Cell ``i`` ended: no widget in its outputs (model or DOM), static bundle first. After ■
    (``interrupted``) the last output is the one-line CellInterrupted error, and only that."""
    outputs = lab.output_json(i)
    assert outputs, "the cell has no output"
    assert WIDGET_MIME not in json.dumps(outputs), outputs
    if interrupted:
        assert outputs[-1]["output_type"] == "error", outputs
        assert outputs[-1]["ename"] == "CellInterrupted", outputs[-1]
        assert len(outputs[-1]["traceback"]) == 1, outputs[-1]
        outputs = outputs[:-1]
    assert all(o["output_type"] != "error" for o in outputs), outputs
    assert set(outputs[0].get("data", {})) >= STATIC_MIMES, outputs[0]
    assert outputs[0]["metadata"]["byre"]["session_id"], outputs[0]["metadata"]
    out = lab.output_locator(i)
    assert out.locator(".jupyter-widgets").count() == 0, out.inner_html()[:2000]
    assert out.locator(STOP_BUTTON).count() == 0
    return outputs


def assert_clean_end(text: str) -> None:
    for bad in ("Traceback", "CancelledError", "KeyboardInterrupt", "Error displaying widget"):
        assert bad not in text, text


def merge_figures(**figures: Any) -> None:
    """Merge ``figures`` into tests/artifacts/browser_figures.json (read, update, write)."""
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = json.loads(FIGURES.read_text())
    except (OSError, ValueError):
        data = {}
    data.update(figures)
    FIGURES.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


# --------------------------------------------------------------------------------------------
# 1. streaming


GROW_WORDS = numbered("w", 250)
GROW_ANSWER = " ".join(GROW_WORDS)  # 1499 characters


def test_text_grows_live_then_static(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("GROW", Reply(Text(GROW_ANSWER, chunk=4, delay=0.01)))
    open_claude_notebook(lab, claude_env, "%%claude\nGROW: count for me")
    lab.clear_iopub()
    lab.watch_output(1)
    lab.run_cell(1, wait=False)

    lab.wait_for_output_text(1, "w0060", timeout=60)
    out = lab.output_locator(1)
    live_stop = out.locator(STOP_BUTTON).count()
    live_model = out.get_by_label("Model", exact=True).count()
    lab.screenshot("claude-grow-mid.png")
    assert lab.cell_running(1), "the turn ended before the mid-turn checks"
    assert live_stop == 1 and live_model == 1, out.inner_html()[:2000]

    assert lab.wait_for_cell(1, timeout=60)
    lab.screenshot("claude-grow-end.png")
    final = lab.output_text(1)
    assert words(final, "w") == GROW_WORDS, final
    assert "interrupted" not in final
    assert_clean_end(final)
    assert_static_only(lab, 1)

    states = lab.output_states(1)
    seen = [(words(s["text"], "w"), s["text"]) for s in states]
    growing = [w for w, _ in seen if w]
    for w in growing:
        assert w == GROW_WORDS[: len(w)], w  # every state is a prefix of the answer
    lengths = [len(w) for w in growing]
    assert lengths == sorted(lengths), lengths  # never shrinks
    partial = {n for n in lengths if 0 < n < len(GROW_WORDS)}
    assert len(partial) >= 5, lengths
    live_text = [t for w, t in seen if 0 < len(w) < len(GROW_WORDS)]
    assert any("Stop" in t.splitlines() for t in live_text), live_text[:3]
    assert states and words(states[-1]["text"], "w") == GROW_WORDS

    counts = lab.iopub_counts(cell=1)
    comm_methods = Counter(
        m["comm_method"] for m in lab.iopub_messages(cell=1) if m["msg_type"] == "comm_msg"
    )
    total_bytes = sum(m["size"] for m in lab.iopub_messages(cell=1))
    figure = {
        "answer_chars": len(GROW_ANSWER),
        "deltas": -(-len(GROW_ANSWER) // 4),
        "by_type": dict(sorted(counts.items())),
        "comm_msg_by_method": dict(sorted((str(k), v) for k, v in comm_methods.items())),
        "total": sum(counts.values()),
        "bytes": total_bytes,
        "distinct_dom_states": len(states),
        "partial_text_states": len(partial),
    }
    print("\niopub per turn (1500 chars, chunk 4, delay 0.01):", json.dumps(figure))
    merge_figures(iopub_per_turn=figure)


# --------------------------------------------------------------------------------------------
# 2. Stop


STOP_WORDS = numbered("s", 4000)


def test_stop_button_ends_turn_early_history_kept(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("LONGSTORY", Reply(Text(" ".join(STOP_WORDS), chunk=6, delay=0.01)))  # ≥ 40 s
    api.on("AFTERSTOP", Reply(Text("second answer after the stop")))
    open_claude_notebook(
        lab, claude_env, "%%claude\nLONGSTORY: tell it all", "%%claude\nAFTERSTOP: go on"
    )
    lab.run_cell(1, wait=False)
    first = api.wait_for_request("LONGSTORY", timeout=60)
    lab.wait_for_output_text(1, "s0020", timeout=60)

    t0 = time.monotonic()
    lab.click_in_output(1, selector=STOP_BUTTON)
    assert lab.wait_for_cell(1, timeout=GRACE_S + 20)
    print(f"\nStop → cell done: {time.monotonic() - t0:.2f} s")  # a figure; bench/ has goals
    api.wait_for_disconnect(first.index, timeout=10)  # the CLI dropped the stream

    final = lab.output_text(1)
    got = words(final, "s")
    assert 20 <= len(got) < len(STOP_WORDS) // 2, final[-500:]
    assert got == STOP_WORDS[: len(got)], final[-500:]
    assert "interrupted" in final, final[-500:]
    assert_clean_end(final)
    outputs = assert_static_only(lab, 1)
    assert outputs[0]["metadata"]["byre"]["interrupted"] is True

    # The same session goes on, with the first exchange in its history.
    assert run_ok(lab, 2, timeout=60)
    assert "second answer after the stop" in lab.output_text(2)
    second = api.wait_for_request("AFTERSTOP", timeout=10)
    assert "LONGSTORY" in user_texts(second)
    assert "s0001" in second.assistant_text  # the partial answer stayed in history
    assert_static_only(lab, 2)


# --------------------------------------------------------------------------------------------
# 3. model menu


def test_model_change_mid_turn_reaches_next_request(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("MODELTURN", Hang(then=Reply(Text("first turn done"))))
    api.on("NEXTTURN", Reply(Text("second turn done")))
    open_claude_notebook(lab, claude_env, "%%claude\nMODELTURN one", "%%claude\nNEXTTURN two")
    lab.run_cell(1, wait=False)
    first = api.wait_for_request("MODELTURN", timeout=60)  # the turn now waits on the API
    menu = lab.output_locator(1).get_by_label("Model", exact=True)
    menu.wait_for(timeout=30_000)
    options = menu.locator("option").all_inner_texts()
    assert "sonnet" in options, options
    assert first.model and "sonnet" not in first.model, first.model

    lab.select_in_output(1, "Model", "sonnet")
    assert lab.cell_running(1)
    # The kernel handled the change while the cell still awaits: its status line says so.
    wait_until(
        lambda: "sonnet from the next request" in lab.output_text(1),
        20,
        "the kernel to take the model change",
    )
    api.release()
    assert lab.wait_for_cell(1, timeout=60)
    assert "first turn done" in lab.output_text(1)
    assert_static_only(lab, 1)

    assert run_ok(lab, 2, timeout=60)
    assert "second turn done" in lab.output_text(2)
    second = api.wait_for_request("NEXTTURN", timeout=10)
    assert second.model and "sonnet" in second.model, second.model
    assert second.model != first.model
    assert "MODELTURN" in user_texts(second)
    meta = lab.output_json(2)[0]["metadata"]["byre"]
    assert "sonnet" in (meta["model"] or ""), meta


# --------------------------------------------------------------------------------------------
# 4. kernel ■


INT_WORDS = numbered("k", 4000)


def test_toolbar_interrupt_mid_stream(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    api.on("INTERRUPTME", Reply(Text(" ".join(INT_WORDS), chunk=6, delay=0.01)))  # ≥ 40 s
    api.on("CONTINUE", Reply(Text("continued after the interrupt")))
    open_claude_notebook(
        lab,
        claude_env,
        "%%claude\nINTERRUPTME: a long one",
        'print("alive", 6 * 7)',
        "%%claude\nCONTINUE please",
    )
    lab.run_cell(1, wait=False)
    first = api.wait_for_request("INTERRUPTME", timeout=60)
    lab.wait_for_output_text(1, "k0020", timeout=60)

    t0 = time.monotonic()
    lab.interrupt_kernel(via="toolbar")
    ok = lab.wait_for_cell(1, timeout=GRACE_S + 20)
    elapsed = time.monotonic() - t0
    final = lab.output_text(1)
    # ■ ends the turn, then the cell as an interrupted cell (so Run All stops there).
    assert not ok, final[-800:]
    api.wait_for_disconnect(first.index, timeout=10)
    assert "interrupted" in final, final[-500:]
    assert_clean_end(final)
    got = words(final, "k")
    assert 0 < len(got) < len(INT_WORDS) // 2 and got == INT_WORDS[: len(got)]
    assert_static_only(lab, 1, interrupted=True)

    lab.run_cell(2, timeout=30)
    assert "alive 42" in lab.output_text(2)  # same kernel, still alive
    assert run_ok(lab, 3, timeout=60)
    assert "continued after the interrupt" in lab.output_text(3)
    second = api.wait_for_request("CONTINUE", timeout=10)
    assert "INTERRUPTME" in user_texts(second)
    print(f"\n■ mid-stream → cell done: {elapsed:.2f} s")


@pytest.mark.parametrize("live", [True, False], ids=["widgets", "static"])
def test_toolbar_interrupt_while_api_silent(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], live: bool
) -> None:
    """■ while the model has sent nothing. With ``live=False`` no widget timer ticks either,
    so the kernel's loop is fully quiet: only the signal wakeup fd makes ■ land at once."""
    api.on("SILENT", Hang())
    api.on("AFTERSILENCE", Reply(Text("back after the silence")))
    setup = f"%config Claude.live = {live}"
    open_claude_notebook(
        lab, claude_env, setup, "%%claude\nSILENT: say nothing", "%%claude\nAFTERSILENCE"
    )
    lab.run_cell(1, timeout=30)
    lab.run_cell(2, wait=False)
    first = api.wait_for_request("SILENT", timeout=60)
    if live:
        lab.output_locator(2).locator(STOP_BUTTON).wait_for(timeout=30_000)
    else:
        lab.wait_for_output_text(2, "SILENT", timeout=30)
    assert lab.cell_running(2)

    t0 = time.monotonic()
    lab.interrupt_kernel(via="toolbar")
    ok = lab.wait_for_cell(2, timeout=GRACE_S + 20)
    elapsed = time.monotonic() - t0
    final = lab.output_text(2)
    assert not ok, final  # ended as an interrupted cell: one short line, no traceback
    api.wait_for_disconnect(first.index, timeout=10)
    assert "interrupted" in final, final
    assert_clean_end(final)
    assert_static_only(lab, 2, interrupted=True)

    assert run_ok(lab, 3, timeout=60)
    assert "back after the silence" in lab.output_text(3)
    second = api.wait_for_request("AFTERSILENCE", timeout=10)
    assert "SILENT" in user_texts(second)
    print(f"\n■ during a silent API (live={live}) → cell done: {elapsed:.2f} s")


# --------------------------------------------------------------------------------------------
# 5. save


def _last_tool(req: ScriptedRequest) -> str | None:
    results = req.last_tool_results
    return results[-1]["tool_name"] if results else None


def test_saved_file_holds_only_static_outputs(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = f"save-{secrets.token_hex(4)}"
    api.on(
        "TOOLTIME",
        Reply(Text("Let me check."), ToolUse("Bash", {"command": "echo hi", "description": "hi"})),
    )
    png_name = "picture.png"
    open_claude_notebook(lab, claude_env, "%%claude\nTOOLTIME: run and look", folder=folder)
    png = lab.server.root_dir / folder / png_name  # the kernel's (and the CLI's) cwd
    png.write_bytes(tiny_png(48, 32, (30, 120, 200)))
    api.on(lambda r: _last_tool(r) == "Bash", Reply(ToolUse("Read", {"file_path": str(png)})))
    api.on(lambda r: _last_tool(r) == "Read", Reply(Text("All done: SAVEDFINAL")))

    assert run_ok(lab, 1, timeout=90)
    final = lab.output_text(1)
    assert "SAVEDFINAL" in final and "echo hi" in final, final
    assert_clean_end(final)
    live_outputs = assert_static_only(lab, 1)
    assert lab.output_locator(1).locator("img").count() >= 1
    reads = [r for r in api.requests if _last_tool(r) == "Read"]
    assert reads and reads[-1].last_tool_results[-1]["has_image"], reads

    saved = lab.save()
    raw = json.dumps(saved)
    assert WIDGET_MIME not in raw
    assert "widgets" not in saved.metadata, list(saved.metadata)
    assert len(saved.cells[1].outputs) == len(live_outputs), live_outputs
    # The record and its image, nothing else (a stale mark goes into the record itself).
    outputs = saved.cells[1].outputs
    assert [o.output_type for o in outputs] == ["display_data", "display_data"], outputs
    bundle, image = outputs
    assert set(bundle.data) >= STATIC_MIMES and "image/png" not in bundle.data
    assert bundle.metadata["byre"]["session_id"]
    assert "echo hi" in bundle.data["text/markdown"] and "SAVEDFINAL" in bundle.data["text/html"]
    every = [o for c in saved.cells for o in c.get("outputs", [])]
    pngs = [o for o in every if "image/png" in o.get("data", {})]
    assert len(pngs) == 1, pngs
    b64 = image.data["image/png"].replace("\n", "")
    assert base64.b64decode(b64)[:8] == b"\x89PNG\r\n\x1a\n"
    assert raw.count(b64[:64]) == 1, "the image is stored more than once"
    assert "data:image" not in bundle.data["text/html"]

    lab.reopen_notebook()
    text = lab.wait_for_output_text(1, "SAVEDFINAL", timeout=30)
    assert_clean_end(text)
    assert "model not found" not in text
    assert lab.output_locator(1).locator("img").count() >= 1
    assert lab.output_locator(1).locator(".jupyter-widgets").count() == 0
    lab.screenshot("claude-saved-reopened.png")


# --------------------------------------------------------------------------------------------
# 6. latency figure


def test_figure_delta_to_dom_latency(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Measured, not asserted: server writes a delta → the browser's DOM shows its text."""
    marks = [f"MARK42x{k:02d}" for k in range(1, 11)]
    parts: list[str] = []
    for k, mark in enumerate(marks):
        parts += [f"f{k:02d}{n:02d}" for n in range(30)] + [mark]
    answer = " ".join(parts)
    sent: list[tuple[float, str]] = []  # (epoch s when written, delta text)
    lock = threading.Lock()
    original = scripted_server._Handler._event

    def timed_event(self: Any, payload: dict[str, Any]) -> None:
        original(self, payload)
        delta = payload.get("delta") or {}
        if payload.get("type") == "content_block_delta" and delta.get("type") == "text_delta":
            with lock:
                sent.append((time.time(), str(delta.get("text", ""))))

    monkeypatch.setattr(scripted_server._Handler, "_event", timed_event)
    api.on("LATENCY", Reply(Text(answer, chunk=4, delay=0.01)))
    open_claude_notebook(lab, claude_env, "%%claude\nLATENCY: mark the time")
    lab.watch_output(1)
    lab.run_cell(1, wait=False)
    assert lab.wait_for_cell(1, timeout=90)
    states = lab.output_states(1)
    offset_ms = lab.wall_clock_offset_ms()

    with lock:
        stream = list(sent)
    assert "".join(t for _, t in stream) == answer
    latencies: dict[str, float] = {}
    for mark in marks:
        end = answer.index(mark) + len(mark)
        written, total = None, 0
        for t, piece in stream:
            total += len(piece)
            if total >= end:
                written = t
                break
        shown = next((s["t"] for s in states if mark in s["text"]), None)
        assert written is not None and shown is not None, mark
        latencies[mark] = round(offset_ms + shown - written * 1000, 1)
    values = sorted(latencies.values())
    figure = {
        "p50_ms": round(statistics.median(values), 1),
        "max_ms": max(values),
        "min_ms": min(values),
        "marks": len(values),
        "per_mark_ms": latencies,
        "how": "server wall time of the SSE write completing the mark -> first DOM mutation "
        "showing it (MutationObserver, performance.now() + page wall-clock offset)",
    }
    print("\ndelta → DOM latency:", json.dumps(figure))
    merge_figures(delta_to_dom_latency=figure)
