"""The static bundle: golden files per scenario, plus targeted safety and storage checks.

Regenerate the golden files with ``BYRE_UPDATE_GOLDEN=1 pytest tests/unit/ui/test_static.py``.
"""

from __future__ import annotations

import base64
import json
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support import wire as fx

from byre_jupyter.protocol import Image
from byre_jupyter.ui.record import static_outputs, terminal_text
from byre_jupyter.ui.viewmodel import TurnView

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", sorted(fx.SCENARIOS))
def test_golden(name: str) -> None:
    attached = (Image(fx.PNG, "image/png"),) if name == "plain_text" else ()
    view, _ = fx.run_turn(fx.SCENARIOS[name](), attached=attached)
    outputs = [[data, meta] for data, meta in static_outputs(view)]
    path = GOLDEN / f"{name}.json"
    if os.environ.get("BYRE_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(outputs, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert path.exists(), f"missing {path}: run with BYRE_UPDATE_GOLDEN=1"
    assert outputs == json.loads(path.read_text()), f"{name}: static bundle changed"


class _Audit(HTMLParser):
    """Collects every tag and attribute of an HTML string as a browser would parse it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]


def _audit(html: str) -> _Audit:
    audit = _Audit()
    audit.feed(html)
    audit.close()
    return audit


def test_hostile_strings_stay_inert_in_html_and_markdown() -> None:
    view, _ = fx.run_turn(fx.hostile())
    (data, _meta), *images = static_outputs(view)
    html = data["text/html"]
    audit = _audit(html)
    assert not {"script", "style", "iframe", "object", "embed", "img"} & set(audit.tags)
    assert not [k for k, _ in audit.attrs if k.startswith("on")]
    assert not [v for _, v in audit.attrs if v.strip().lower().startswith("javascript:")]
    assert "<script" not in html.lower() and "<img" not in html.lower()
    # ...and the text is still visible, escaped, in the model answer, tool output, file name.
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 4
    assert '/tmp/"&gt;&lt;img src=x onerror=alert(1)&gt;.png' in html
    # The markdown fallback keeps raw HTML inert too (outside code, it is entity-escaped).
    md = data["text/markdown"]
    outside_code = md.split("```")[::2]
    assert not any("<script" in part or "<img" in part for part in outside_code)
    assert "](javascript:" not in md
    # The hostile media type never becomes a MIME key: the image is sniffed as a PNG.
    assert [sorted(d) for d, _ in images] == [["image/png", "text/plain"]]
    assert "<script" not in json.dumps(images)


def test_markdown_with_inline_html_renders_as_text() -> None:
    b = fx.Builder()
    wires = [*b.final_answer("m", f"A {fx.XSS} B"), b.result("x")]
    view, _ = fx.run_turn(wires)
    html = static_outputs(view)[0][0]["text/html"]
    assert "<p>A &lt;script&gt;alert(1)&lt;/script&gt; B</p>" in html


@pytest.mark.parametrize("name", ["read_png", "mcp_image", "plain_text"])
def test_each_image_is_stored_exactly_once(name: str) -> None:
    attached = (Image(fx.PNG2, "image/png"),) if name == "plain_text" else ()
    view, _ = fx.run_turn(fx.SCENARIOS[name](), attached=attached)
    outputs = static_outputs(view)
    blob = json.dumps(outputs)
    expected = [image.image.data for image in view.images() if image.image is not None]
    assert len(expected) == 1
    for data in expected:
        assert blob.count(base64.b64encode(data).decode()) == 1
    first, *rest = outputs
    assert "image/png" not in first[0]
    assert [base64.b64decode(d["image/png"]) for d, _ in rest] == expected
    assert "image 1 below" in first[0]["text/html"]
    assert rest[0][0]["text/plain"] in (
        "<image 1: tool Read>",
        "<image 1: tool byre.python_exec>",
        "<image 1: attached>",
    )


def test_metadata() -> None:
    view, _ = fx.run_turn(fx.bash_roundtrip())
    meta = static_outputs(view)[0][1]["byre"]
    assert meta["session_id"] == fx.SID and meta["session_name"] == "analysis"
    assert meta["model"] == fx.MODEL
    assert meta["message_uuids"] == view.message_uuids and len(meta["message_uuids"]) == 3
    assert meta["result_uuid"] == fx.bash_roundtrip()[-1]["uuid"]
    assert meta["interrupted"] is False and meta["is_error"] is False
    assert meta["cost_usd"] == 0.01234
    assert meta["usage"]["output_tokens"] == 42
    json.dumps(meta)  # JSON-ready

    view, _ = fx.run_turn(fx.interrupt_mid_stream())
    meta = static_outputs(view)[0][1]["byre"]
    assert meta["interrupted"] is True


def test_exchange_structure() -> None:
    view, _ = fx.run_turn(fx.subagent(), prompt="List the files\nin detail\nplease\nnow")
    data = static_outputs(view)[0][0]
    html = data["text/html"]
    assert "List the files\nin detail\nplease …" in html  # prompt shown briefly
    assert "<details><summary>Agent · List files · " in html
    # Children are nested inside the Agent card's <details>.
    agent_start = html.index("<details><summary>Agent")
    child = html.index("<details><summary>Bash · ls")
    assert agent_start < child < html.rindex("</details>")
    assert "claude-opus-5-5 · 1.6 s · 1,500 in / 42 out tokens · $0.0123" in html
    assert "1,500 in / 42 out tokens" in data["text/plain"]

    view, _ = fx.run_turn(fx.edit_file())
    html = static_outputs(view)[0][0]["text/html"]
    assert "+    return x * 2" in html and "-    return x" in html

    view, _ = fx.run_turn(fx.thinking_then_text())
    html = static_outputs(view)[0][0]["text/html"]
    assert "<summary" in html and "Thinking</summary>" in html and fx.THINKING in html


def test_footer_marks_interrupted_and_error() -> None:
    view, _ = fx.run_turn(fx.interrupt_mid_stream())
    assert static_outputs(view)[0][0]["text/html"].count("interrupted") >= 1
    assert "· interrupted" in terminal_text(view)
    view, _ = fx.run_turn(fx.api_error())
    html = static_outputs(view)[0][0]["text/html"]
    assert "· error</div>" in html and fx.API_ERROR_TEXT in html


def test_long_tool_output_is_truncated() -> None:
    b = fx.Builder()
    wires = [
        b.assistant(
            "m1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "yes"}}
        ),
        b.tool_result("t1", "y\n" * 50_000),
        b.result("done"),
    ]
    view, _ = fx.run_turn(wires)
    html = static_outputs(view)[0][0]["text/html"]
    assert len(html) < 30_000 and "more characters)" in html


def test_unfinished_view_still_renders() -> None:
    view = TurnView("s", "hello", clock=fx.FakeClock())
    data, meta = static_outputs(view)[0]
    assert "hello" in data["text/plain"] and meta["byre"]["result_uuid"] is None
