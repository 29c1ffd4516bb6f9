"""No output loads anything by itself: hostile model markdown in every surface.

Each corpus snippet (tests/support/hostile_markdown.py) tries to make an output fetch a URL
without a click: images inline, by reference, in tables, quotes, lists, link text, thinking and
tool output; protocol-relative, ``file:``, relative and ``data:`` URLs; raw ``<img>``, SVG,
``srcset``, CSS ``url()`` and the like. The rendered HTML (live widget and text/html) is parsed
and every tag and attribute checked; the text/markdown bundle is rendered by a CommonMark
renderer that passes raw HTML through (as JupyterLab does for trusted output) and checked the
same way. The browser test does the same in JupyterLab and nbconvert HTML, counting requests.
"""

from __future__ import annotations

import pathlib
import re

import mistune
import pytest
from support import wire as fx
from support.hostile_markdown import corpus, corpus_text, loaders

from byre_jupyter.ui import live, record
from byre_jupyter.ui.markdown import clean_html, inert_markdown, render_markdown, split_blocks
from byre_jupyter.ui.record import static_outputs, turn_html, turn_markdown

from .test_live import Harness

BASE = "http://attacker.invalid:8765"
CORPUS = corpus(BASE)
HOST = "attacker.invalid"

# A renderer that passes raw HTML through, like JupyterLab's marked for trusted outputs.
_permissive = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])


def _markdown_to_html(markdown: str) -> str:
    html = _permissive(markdown)
    assert isinstance(html, str)
    return html


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_rendered_html_has_nothing_that_loads(name: str) -> None:
    html = render_markdown(CORPUS[name])
    assert loaders(html) == [], html


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_markdown_fallback_renders_no_image(name: str) -> None:
    markdown = inert_markdown(CORPUS[name])
    html = _markdown_to_html(markdown)
    assert loaders(html) == [], (markdown, html)


@pytest.mark.slow  # ~360 renders of up to 8 KB and their audits: a fifth of the fast tier's CPU
def test_every_prefix_of_a_streamed_hostile_answer_renders_nothing_that_loads() -> None:
    # The live view renders the text as it grows, from cached finished blocks plus the growing
    # one (half-written tables and fences made tolerant): each stage must be as inert as the end.
    text = corpus_text(BASE)
    for end in range(0, len(text) + 1, 29):  # about 180 prefixes
        for growing in (True, False):
            html = render_markdown(text[:end], growing=growing)
            assert loaders(html) == [], (end, growing, html)


def test_the_records_fence_changes_nothing_in_a_growing_block() -> None:
    """The live view sends the block being written as render_markdown's nh3 pass left it,
    without the record's own fence (record.final_clean) on top: that is safe only while the
    fence would change nothing in it. Held over the hostile corpus's prefixes (a fence, table
    or paragraph half-written at every cut), with the live view's copy buttons as it adds
    them flush after flush (only past the last change)."""
    text = corpus_text(BASE)
    buttons = live._CopyButtons()
    for end in range(1, len(text) + 1, 7):  # about 1,200 prefixes
        *_, tail = split_blocks(text[:end]) or [""]
        html = buttons(render_markdown(tail, growing=True))
        assert record.final_clean(html) == html, (end, html)


def test_a_blocked_image_stays_visible_as_inert_text() -> None:
    html = render_markdown(CORPUS["inline"])
    assert "chart" in html and f"{BASE}/inline?k=sk-ant-api03-SECRET" in html
    assert "not loaded" in html
    # In the Markdown we publish it is text, its URL at most a bare link to click.
    md_html = _markdown_to_html(inert_markdown(CORPUS["inline"]))
    assert "<img" not in md_html and "![chart](" in md_html.replace("&#33;", "!").replace(
        "&#40;", "("
    )
    assert f"{BASE}/inline?k=sk-ant-api03-SECRET" in md_html
    # Code keeps its text exactly.
    code = render_markdown("`![x](http://h/y)`")
    assert "<code>![x](http://h/y)</code>" in code


def test_embedded_data_image_in_model_text_is_not_shown() -> None:
    for name in ("data-png", "data-svg"):
        assert "data:image" not in render_markdown(CORPUS[name]).split("not loaded")[0]
        assert "<img" not in _markdown_to_html(inert_markdown(CORPUS[name]))


def _hostile_turn() -> list[fx.Wire]:
    """The corpus as answer text, thinking, tool input/output, a subagent's text and a notice;
    plus a text block that leaves a fence open before one that starts with a fence."""
    text = corpus_text(BASE)
    b = fx.Builder("loads")
    m1, m2, m3 = "msg_loads_1", "msg_loads_2", "msg_loads_3"
    return [
        b.init(),
        b.status(),
        b.message_start(m1),
        b.assistant(m1, {"type": "thinking", "thinking": text, "signature": "s"}),
        b.assistant(m1, {"type": "text", "text": "before\n```\nan unclosed fence"}),
        b.assistant(m1, {"type": "text", "text": CORPUS["after-fence"]}),
        b.assistant(
            m1, {"type": "tool_use", "id": "t_agent", "name": "Task", "input": {"prompt": text}}
        ),
        b.assistant(
            "msg_sub",
            {"type": "text", "text": text},
            parent="t_agent",
        ),
        b.assistant(
            m1, {"type": "tool_use", "id": "t_bash", "name": "Bash", "input": {"command": text}}
        ),
        b.message_stop(m1),
        b.tool_result("t_bash", text),
        b.tool_result("t_agent", text),
        b.system("permission_denied", tool_name="Bash", message=CORPUS["inline"]),
        *b.final_answer(m2, text),
        *b.final_answer(m3, "after\n" + CORPUS["unclosed-fence"]),
        b.result(text, num_turns=3),
    ]


def test_static_bundle_loads_nothing() -> None:
    view, _ = fx.run_turn(_hostile_turn(), prompt=corpus_text(BASE))
    html = turn_html(view)
    assert loaders(html) == []
    assert "<img" not in html.lower() and HOST in html  # blocked, but visible
    md_html = _markdown_to_html(turn_markdown(view))
    assert loaders(md_html) == [], [line for line in md_html.splitlines() if "<img" in line]
    data = static_outputs(view)[0][0]
    assert data["text/html"] == html and data["text/markdown"] == turn_markdown(view)


def test_live_widget_loads_nothing() -> None:
    h = Harness()
    h.feed(_hostile_turn())
    h.live.finish()
    # The module's own stylesheet and code are ours: they load nothing either. The one URL
    # the module makes is a data: URL of an image whose type the kernel sniffed.
    here = pathlib.Path(live.__file__).parent
    css = (here / "live.css").read_text().lower()
    assert not any(w in css for w in ("url(", "@import", "image-set", "src", "\\"))
    js = (here / "live.js").read_text()
    for loader in ("fetch(", "import(", "XMLHttpRequest", "WebSocket", "EventSource"):
        assert loader not in js, loader
    assert not re.search(r"^\s*import\b", js, re.MULTILINE)  # no module of its own to load
    assert js.count(".src =") == 1 and "img.src = `data:${piece.type};base64," in js
    html = [p.get("html", "") + p.get("after", "") for p in h.screen.sent]
    html.append(h.live.model.head["prompt"])
    assert any(HOST in value for value in html)
    bad = [(value[:200], loaders(value)) for value in html if loaders(value)]
    assert bad == []
    h.live.close()


@pytest.mark.parametrize("name", sorted(n for n in CORPUS if n.startswith("raw-")))
def test_the_sanitizers_alone_strip_everything_that_loads(name: str) -> None:
    """The second fence: if a renderer ever let raw HTML through, nh3 still drops it."""
    raw = CORPUS[name] + f'<img src="{BASE}/x"><p style="background:url({BASE}/y)">p</p>'
    assert loaders(clean_html(raw)) == []
    assert loaders(record.final_clean(raw)) == []
