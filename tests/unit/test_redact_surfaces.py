"""Secrets in the CLI's own tool calls never reach a surface: the view model (and so the live
view, the Markdown draft, the saved record, the terminal text), transcripts and the portable
record. A Bash ``cat .env`` and a Read of it, a subagent's Bash, a command carrying a token and a
secret the kernel knows by value, as the CLI 2.1.328 sends them (tests/support/wire.py)."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any, cast

import ipywidgets as W
from support import wire as fx
from support.screen import Screen

from byre_jupyter.app.portable import pack
from byre_jupyter.redact import Secrets
from byre_jupyter.session.transcript import TranscriptWriter
from byre_jupyter.ui.coalesce import LoopLike
from byre_jupyter.ui.live import LiveView
from byre_jupyter.ui.record import static_outputs, terminal_text
from byre_jupyter.ui.viewmodel import TurnView

# Built at run time so no credential-shaped literal sits in the repository.
ANT = "sk-ant-api03-" + "Qw3" * 30
PROJ = "sk-proj-" + "a1B2" * 10
DB_PASSWORD = "tr0ub4dor-and-3"
URL_PASSWORD = "pg-url-pass-77"
KNOWN = "kernel-knows-this-1"  # no shape, no name beside it: only known by value
TOKEN = "abcdefghijklmnopqrstuvwxyz012345"
ENV_FILE = (
    f"ANTHROPIC_API_KEY={ANT}\nOPENAI_API_KEY={PROJ}\nDB_PASSWORD={DB_PASSWORD}\n"
    f"DATABASE_URL=postgres://app:{URL_PASSWORD}@db.internal:5432/app\nMISC={KNOWN}\n"
)
SECRETS = (ANT, PROJ, DB_PASSWORD, URL_PASSWORD, KNOWN, TOKEN)


def turn() -> list[fx.Wire]:
    b = fx.Builder("env")
    m1, m2, m3, sub = "msg_env_1", "msg_env_2", "msg_env_3", "msg_env_sub"
    curl = f"curl -H 'Authorization: Bearer {TOKEN}' https://api.example.com"
    return [
        b.init(),
        b.message_start(m1),
        *b.streamed_tool(m1, 0, "t_cat", "Bash", {"command": "cat .env"}),
        *b.streamed_tool(m1, 1, "t_read", "Read", {"file_path": "/work/.env"}),
        *b.streamed_tool(m1, 2, "t_curl", "Bash", {"command": curl, "description": KNOWN}),
        b.message_stop(m1),
        b.tool_result("t_cat", ENV_FILE, tool_use_result={"stdout": ENV_FILE, "stderr": ""}),
        b.tool_result(
            "t_read",
            [{"type": "text", "text": ENV_FILE}],
            tool_use_result={"type": "text", "file": {"content": ENV_FILE}},
        ),
        b.tool_result("t_curl", "HTTP/1.1 200 OK"),
        b.message_start(m2),
        *b.streamed_tool(m2, 0, "t_agent", "Agent", {"prompt": "look at the config"}),
        b.message_stop(m2),
        b.system("task_notification", task_id="k1", tool_use_id="t_agent", summary=f"found {ANT}"),
        b.assistant(
            sub,
            {"type": "tool_use", "id": "t_sub", "name": "Bash", "input": {"command": "env"}},
            parent="t_agent",
        ),
        b.tool_result("t_sub", ENV_FILE, parent="t_agent"),
        b.tool_result("t_agent", f"It holds {ANT} and postgres://app:{URL_PASSWORD}@db/app."),
        *b.final_answer(m3, "Done."),
        b.result("Done.", num_turns=3),
    ]


def assert_clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret[:12]}... in {where}"


def fed_view() -> TurnView:
    view = TurnView("s", "read the config", secrets=lambda: {KNOWN})
    for msg in fx.parse_all(turn()):
        view.apply(msg)
    view.finish()
    return view


def test_tool_inputs_and_results_enter_the_view_model_redacted() -> None:
    view = fed_view()
    cards = [b for b in view.walk() if b.kind == "tool"]
    assert len(cards) == 5  # the four calls and the subagent's Bash
    assert_clean(repr(list(view.walk())), "the view model")
    cat = view.card("t_cat")
    assert cat is not None and cat.result_text is not None
    assert "ANTHROPIC_API_KEY=[redacted]" in cat.result_text  # redacted, not dropped
    assert "postgres://app:[redacted]@db.internal" in cat.result_text
    curl = view.card("t_curl")
    assert curl is not None and "Bearer [redacted]" in curl.summary


def test_the_saved_record_and_the_terminal_text_hold_no_secret() -> None:
    view = fed_view()
    outputs = static_outputs(view)
    bundle = outputs[0]["data"] if "data" in outputs[0] else outputs[0]
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert mime in json.dumps(bundle)
    assert_clean(json.dumps(outputs), "the static record")
    assert_clean(terminal_text(view, max_lines=200), "the terminal text")


def test_the_live_view_holds_no_secret() -> None:
    view = TurnView("s", "read the config", secrets=lambda: {KNOWN})
    live = LiveView(view, models=["opus"], on_stop=lambda: None, on_model=print,
                    loop=cast(LoopLike, fx.ManualLoop()))  # fmt: skip
    screen = Screen(live)  # every change the frontend got, not only the last
    for msg in fx.parse_all(turn()):
        live.update(view.apply(msg))
    live.update(view.finish())
    live.finish()

    def states(widget: W.Widget) -> list[Any]:
        found = [widget.get_state()]
        for child in getattr(widget, "children", ()):
            found += states(child)
        return found

    assert screen.sent and "read the config" in repr(states(live.widget))
    assert_clean(repr([states(live.widget), screen.sent]), "the live widgets")
    live.close()


def test_known_values_default_to_the_environments_secrets(monkeypatch: Any) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", KNOWN)
    view = TurnView("s", "p")
    for msg in fx.parse_all(turn()):
        view.apply(msg)
    assert_clean(repr(list(view.walk())), "the view model")


def test_the_transcript_holds_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, Secrets.of({"MY_SERVICE_TOKEN": KNOWN}))
    for wire in turn():
        writer.write("recv", wire)
    writer.close()
    text = path.read_text()
    assert "[redacted]" in text and "cat .env" in text
    assert_clean(text, "the transcript")


def test_the_portable_record_holds_no_secret(tmp_path: Path) -> None:
    sid = "0b6f1b9e-3f7c-4c1e-9a53-6d2b8a4f0e11"
    session = tmp_path / f"{sid}.jsonl"
    # The CLI's session file keeps each line as it sent it, tool results and all.
    session.write_text("".join(json.dumps({**w, "uuid": f"u{i}"}) + "\n"
                               for i, w in enumerate(turn())))  # fmt: skip
    record = pack(session, sid, 2**24, secrets={KNOWN})
    text = gzip.decompress(base64.b64decode(record["data"])).decode()
    assert "cat .env" in text
    assert_clean(text, "the portable record")


# A reader of the shared notebook sees the code that ran. The PEM-comment trick once
# hid the network call from the saved card of a python (and a Bash) call.
HIDDEN_CALL = (
    "# -----BEGIN PRIVATE KEY-----\n"
    "import urllib.request\n"
    'urllib.request.urlopen("http://127.0.0.1:9/count")\n'
    "# -----END PRIVATE KEY-----\n"
    f"key = '{ANT}'; print(len(key))\n"
    f"DB_PASSWORD = '{DB_PASSWORD}'"
)


def hidden_call_view() -> TurnView:
    b = fx.Builder("hid")
    wires = [
        b.init(),
        b.message_start("msg_hid_1"),
        *b.streamed_tool("msg_hid_1", 0, "t_py", "mcp__byre__python", {"code": HIDDEN_CALL}),
        *b.streamed_tool("msg_hid_1", 1, "t_sh", "Bash", {"command": "ls"}),
        b.message_stop("msg_hid_1"),
        b.tool_result("t_py", "[stdout]\n99"),
        b.tool_result("t_sh", "a.txt"),
        *b.final_answer("msg_hid_2", "Done."),
        b.result("Done.", num_turns=2),
    ]
    view = TurnView("s", "run it", secrets=lambda: set())
    for msg in fx.parse_all(wires):
        view.apply(msg)
    view.finish()
    return view


def test_the_saved_card_shows_every_line_of_the_code_and_says_what_it_hid() -> None:
    view = hidden_call_view()
    outputs = json.dumps(static_outputs(view))
    live = repr(list(view.walk()))
    assert ANT not in outputs and DB_PASSWORD not in outputs and ANT not in live
    for line in HIDDEN_CALL.splitlines()[:4]:  # the hidden lines, whole
        assert json.dumps(line)[1:-1] in outputs, line
    assert "print(len(key))" in outputs  # the rest of the line after the secret
    assert "2 values in this input were redacted" in outputs
    ls = view.card("t_sh")
    assert ls is not None and ls.redacted == 0  # nothing hidden: no note
    assert outputs.count("in this input were redacted") == 2  # html and markdown, once each
