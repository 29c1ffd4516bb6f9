"""The differential test: every output we publish, read by every renderer users meet, holds
nothing that runs script or loads anything (docs/security.md, "Markdown we publish").

Hostile Markdown (tests/support/hostile_markdown.py: images, raw HTML, and the cases where
renderers and a guessing escaper disagree about what is code) goes in as model text, thinking,
a Bash command (the tool card's title and input), tool output, a subagent's text and a
notice. Out come the saved record and the streaming draft at every stage. Each ``text/html``
is audited as it is; each ``text/markdown`` is first rendered by marked with JupyterLab's
options and plain GFM, markdown-it as VS Code and nbviewer set it up, markdown-it's CommonMark
preset, commonmark.js (tests/js/render.mjs, from npm) and nbconvert's mistune, all passing raw
HTML through as they do for a trusted output. Starts node: ``slow``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from support import wire as fx
from support.hostile_markdown import corpus, corpus_text, loaders

from byre_jupyter.ui.draft import Draft
from byre_jupyter.ui.record import static_outputs
from byre_jupyter.ui.viewmodel import TurnView

from .test_no_remote_loads import _hostile_turn

pytestmark = pytest.mark.slow

BASE = "http://attacker.invalid:8765"
CORPUS = corpus(BASE)
JS = Path(__file__).resolve().parents[2] / "js"


def _node_renderers(documents: list[str]) -> list[dict[str, str]]:
    node = shutil.which("node")
    if node is None or not (JS / "node_modules" / "marked").is_dir():
        pytest.fail("the Node renderers are not installed: npm ci --prefix tests/js")
    done = subprocess.run(
        [node, str(JS / "render.mjs")],
        input=json.dumps(documents),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rendered: list[dict[str, str]] = json.loads(done.stdout)
    return rendered


def _item_turn(name: str, text: str) -> list[fx.Wire]:
    """One corpus item in every place model or tool text reaches the record."""
    b = fx.Builder(name)
    m1, m2 = f"msg_{name}_1", f"msg_{name}_2"
    return [
        b.init(),
        b.status(),
        b.message_start(m1),
        b.assistant(m1, {"type": "thinking", "thinking": text, "signature": "s"}),
        b.assistant(m1, {"type": "text", "text": text}),
        b.assistant(
            m1, {"type": "tool_use", "id": "t_bash", "name": "Bash", "input": {"command": text}}
        ),
        b.message_stop(m1),
        b.tool_result("t_bash", text),
        b.system("permission_denied", tool_name="Bash", message=text),
        *b.final_answer(m2, text),
        b.result(text, num_turns=2),
    ]


def _published(wires: list[fx.Wire], prompt: str, every: int = 1) -> Iterator[dict[str, str]]:
    """Every bundle a turn publishes: the draft after each ``every`` messages (and the last),
    then the record."""
    clock = fx.FakeClock()
    view = TurnView("loads", prompt, (), clock=clock)
    draft = Draft(view)
    messages = fx.parse_all(wires)
    for n, msg in enumerate(messages, start=1):
        clock.advance(0.1)
        view.apply(msg)
        if n % every and n != len(messages):
            continue
        yield draft.refresh()
    for data, _meta in static_outputs(view):
        yield data


def _outputs() -> dict[str, list[dict[str, str]]]:
    outputs = {
        name: list(_published(_item_turn(name, text), text, every=2))
        for name, text in CORPUS.items()
    }
    # The whole corpus streamed (7 characters a message): about 200 stages of the draft, its
    # parts cut inside and outside fences.
    outputs["whole corpus"] = list(_published(_hostile_turn(), corpus_text(BASE), every=6))
    return outputs


def test_no_renderer_finds_anything_live_in_what_we_publish() -> None:
    outputs = _outputs()
    bundles = [bundle for published in outputs.values() for bundle in published]
    markdown = sorted({b["text/markdown"] for b in bundles if "text/markdown" in b})
    rendered = dict(zip(markdown, _node_renderers(markdown), strict=True))
    found: list[tuple[str, str, list[str]]] = []
    for name, bundles in outputs.items():
        for bundle in bundles:
            if "text/html" in bundle and loaders(bundle["text/html"]):
                found.append((name, "text/html", loaders(bundle["text/html"])))
            if "text/markdown" not in bundle:
                continue
            source = bundle["text/markdown"]
            html = {**rendered[source], "mistune (nbconvert)": markdown2html_mistune(source)}
            for renderer, out in html.items():
                if loaders(out):
                    found.append((name, renderer, loaders(out)))
    assert markdown, "the record publishes text/markdown: it must be checked"
    assert found == [], "\n".join(f"{n} [{r}]: {f[:3]}" for n, r, f in found[:40])


def test_the_renderers_are_live_on_raw_html() -> None:
    """The auditor and every renderer see raw HTML for what it is: the test above can fail."""
    (html,) = _node_renderers([CORPUS["script-fence-tilde"]])
    assert set(html) == {
        "marked-lab",
        "marked-gfm",
        "markdown-it",
        "markdown-it-commonmark",
        "commonmark",
    }
    # marked closes the fence on "```~"; the CommonMark renderers keep it as code.
    assert loaders(html["marked-lab"]) and loaders(html["marked-gfm"])
    assert not loaders(html["commonmark"])
    (live,) = _node_renderers([f'<img src="{BASE}/x" onerror="window.__pwned=1">'])
    assert all(loaders(out) for out in live.values()), live
