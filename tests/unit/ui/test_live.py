"""LiveView without a frontend: ipywidgets runs comm-less, so we check traits and the registry."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any, cast

import ipywidgets as W
import pytest
from ipywidgets.widgets import widget as widget_module
from support import wire as fx

from byre_jupyter.protocol.messages import parse_message
from byre_jupyter.ui import live as live_module
from byre_jupyter.ui.blocks import TextView, ToolCardView
from byre_jupyter.ui.coalesce import LoopLike
from byre_jupyter.ui.live import LiveView
from byre_jupyter.ui.markdown import render_markdown
from byre_jupyter.ui.style import RENDERED_CLASS
from byre_jupyter.ui.viewmodel import TurnView

MODELS = ["opus", "sonnet", "haiku"]


def rendered(markdown: str) -> str:
    """Live text as the static record shows it: in Jupyter's rendered-HTML class."""
    return f'<div class="{RENDERED_CLASS}">{render_markdown(markdown)}</div>'


def descendants(root: W.Widget) -> Iterator[W.Widget]:
    yield root
    for child in getattr(root, "children", ()):
        yield from descendants(child)


class Harness:
    def __init__(self, loop: fx.ManualLoop | None = None) -> None:
        self.loop = loop or fx.ManualLoop()
        self.clock = self.loop.time
        self.view = TurnView("analysis", "Say hello", clock=self.clock)
        self.stops = 0
        self.models: list[str] = []
        self.live = LiveView(
            self.view,
            models=MODELS,
            on_stop=self._stop,
            on_model=self.models.append,
            loop=cast(LoopLike, self.loop),
        )

    def _stop(self) -> None:
        self.stops += 1

    def feed(self, wires: list[fx.Wire], step: float = 0.001) -> None:
        for msg in fx.parse_all(wires):
            self.live.update(self.view.apply(msg))
            self.loop.advance(step)

    def find(self, kind: type[W.Widget]) -> list[Any]:
        return [w for w in descendants(self.live.widget) if isinstance(w, kind)]


def test_streaming_updates_only_the_growing_blocks_widget_at_20_hz() -> None:
    h = Harness()
    b = fx.Builder()
    m1 = "msg_live_1"
    h.feed(
        [
            b.status(),
            b.message_start(m1),
            *b.streamed_text(m1, 0, ["Before ", "the tool."]),
            *b.streamed_tool(m1, 1, "t1", "Bash", {"command": "ls"}),
        ]
    )
    h.feed(
        [
            b.tool_result("t1", "a\nb"),
            b.status(),
            b.message_start("msg_live_2"),
            b.block_start("msg_live_2", 0, {"type": "text", "text": ""}),
        ]
    )
    h.loop.advance(0.1)  # the new block's widget exists before we start watching
    first, _card, growing = h.view.blocks
    assert isinstance(growing, TextView)
    header_status = h.live._status  # the header's status line may tick; it is not a block

    changes: Counter[int] = Counter()
    for w in descendants(h.live.widget):
        if w is not header_status:
            for trait in ("value", "titles", "children"):
                if w.has_trait(trait):
                    w.observe(lambda c, w=w: changes.update([id(w)]), names=trait)

    pieces = [f"tok{i:04d} " for i in range(1000)]
    for piece in pieces:  # 1000 deltas over 1 s of loop time
        h.live.update(h.view.apply(parse_message(b.text_delta("msg_live_2", 0, piece))))
        h.loop.advance(0.001)
    h.loop.advance(0.1)

    growing_box = h.live.widget_for(growing.id)
    assert isinstance(growing_box, W.VBox)
    growing_widget = growing_box.children[-1]  # the paragraph still growing
    assert isinstance(growing_widget, W.HTML)
    assert set(changes) == {id(growing_widget)}, "only the growing block may be pushed"
    assert 10 <= changes[id(growing_widget)] <= 21
    assert growing_widget.value == rendered("".join(pieces))

    h.live.update(
        h.view.apply(parse_message(b.assistant("msg_live_2", {"type": "text", "text": "Final."})))
    )
    h.view.finish()
    h.live.finish()
    assert growing_widget.value == rendered("Final.")
    first_box = h.live.widget_for(first.id)
    assert isinstance(first_box, W.VBox)
    first_widget = first_box.children[-1]
    assert isinstance(first_widget, W.HTML) and first_widget.value == rendered("Before the tool.")


def test_blocks_map_to_widgets_with_nesting_and_images() -> None:
    h = Harness()
    h.feed(fx.subagent()[:-1] + fx.mcp_image()[:-1] + fx.thinking_then_text())
    h.live.finish()
    agent = h.view.blocks[0]
    assert isinstance(agent, ToolCardView)
    agent_widget = h.live.widget_for(agent.id)
    assert agent_widget is not None
    accordions = [w for w in descendants(agent_widget) if isinstance(w, W.Accordion)]
    assert accordions[0].titles[0].startswith("Agent · List files")
    assert accordions[0].selected_index is None  # collapsed
    sub_bash = agent.children[0]
    sub_widget = h.live.widget_for(sub_bash.id)
    assert sub_widget is not None and sub_widget in list(descendants(agent_widget))
    images = h.find(W.Image)
    assert [i.value for i in images] == [fx.PNG2] and images[0].format == "png"
    card = h.view.card(fx.MCP_TOOL)
    assert card is not None
    card_widget = h.live.widget_for(card.id)
    assert card_widget is not None and images[0] in list(descendants(card_widget))
    thinking = [a for a in h.find(W.Accordion) if a.titles == ("Thinking",)]
    assert len(thinking) == 1
    html = [w.value for w in h.find(W.HTML)]
    assert any("executed 10 chars; out: 42" in v for v in html)


def test_stop_button_calls_on_stop_through_the_loop() -> None:
    h = Harness()
    (button,) = h.find(W.Button)
    button.click()
    assert h.stops == 0  # the click only scheduled it
    h.loop.run_ready()
    assert h.stops == 1
    assert button.disabled and button.description == "Stopping…"
    button.click()
    h.loop.run_ready()
    assert h.stops == 1


def test_stop_click_from_another_thread_runs_on_the_loop_thread() -> None:
    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        stopped = asyncio.Event()
        ran_on: list[int] = []

        def on_stop() -> None:
            ran_on.append(threading.get_ident())
            stopped.set()

        view = TurnView("s", "p")
        live = LiveView(view, models=MODELS, on_stop=on_stop, on_model=print, loop=loop)
        (button,) = [w for w in descendants(live.widget) if isinstance(w, W.Button)]
        clicker = threading.Thread(target=button.click)
        clicker.start()
        clicker.join(timeout=5)
        await asyncio.wait_for(stopped.wait(), timeout=5)
        live.close()
        return ran_on[0], threading.get_ident()

    ran_on, loop_thread = asyncio.run(main())
    assert ran_on == loop_thread


def test_model_dropdown() -> None:
    h = Harness()
    (dropdown,) = h.find(W.Dropdown)
    assert list(dropdown.options) == MODELS and dropdown.value == "opus"
    h.feed([fx.Builder().init(model="claude-opus-5-5")])  # the CLI reports the resolved model
    assert dropdown.value == "claude-opus-5-5" and "claude-opus-5-5" in dropdown.options
    assert h.models == []  # programmatic changes never call on_model
    h.live.set_models(["opus", "sonnet"], "sonnet")
    assert list(dropdown.options) == ["opus", "sonnet"] and dropdown.value == "sonnet"
    assert h.models == []
    dropdown.value = "opus"  # the user picks a model
    assert h.models == []
    h.loop.run_ready()
    assert h.models == ["opus"]


def test_a_model_chosen_mid_turn_stays_chosen_until_the_next_request() -> None:
    h = Harness()
    (dropdown,) = h.find(W.Dropdown)
    b = fx.Builder()
    h.feed([b.init(model="claude-opus-5-5")])
    dropdown.value = "sonnet"  # the user picks a model mid-turn
    h.loop.run_ready()
    assert h.models == ["sonnet"]
    h.feed([b.status()])  # more of the same request: the view still says opus
    h.loop.advance(3.0)  # header ticks
    assert dropdown.value == "sonnet"
    assert "sonnet from the next request" in h.live._status.value
    h.feed([b.init(model="claude-sonnet-5-5")])  # the next request runs on the new model
    h.loop.advance(1.0)
    assert dropdown.value == "sonnet"  # still the user's word for it
    assert "next request" not in h.live._status.value


def test_finish_flushes_and_disables_controls() -> None:
    h = Harness()
    b = fx.Builder()
    h.live.update(h.view.apply(parse_message(b.message_start("m"))))
    h.live.update(h.view.apply(parse_message(b.block_start("m", 0, {"type": "text", "text": ""}))))
    h.live.update(h.view.apply(parse_message(b.text_delta("m", 0, "unflushed"))))
    result = parse_message(b.result("unflushed"))
    fx.settle(h.view, result)
    h.live.update(h.view.finish(result))  # type: ignore[arg-type]
    h.live.finish()  # no loop step in between: finish must push the last state itself
    box = h.live.widget_for(h.view.blocks[0].id)
    assert isinstance(box, W.VBox)
    widget = box.children[-1]
    assert isinstance(widget, W.HTML) and "unflushed" in widget.value
    (button,) = h.find(W.Button)
    (dropdown,) = h.find(W.Dropdown)
    assert button.disabled and dropdown.disabled
    assert "done" in h.live._status.value and "$0.0123" in h.live._status.value
    assert not [t for t in h.loop.timers if not t.cancelled]  # no tick left behind


def test_header_ticks_while_waiting() -> None:
    h = Harness()
    h.feed([fx.Builder().status()])
    before = h.live._status.value
    h.loop.advance(2.0)  # a long tool call: no messages, but elapsed time moves
    assert h.live._status.value != before
    h.view.finish()
    h.live.finish()
    assert "✓" in h.live._status.value


def test_retry_shows_in_header() -> None:
    h = Harness()
    h.feed(fx.api_retries(1))
    assert "retry 1/2 (server_error 500)" in h.live._status.value


def live_widgets() -> dict[str, object]:
    """Every open widget: ``_instances`` since ipywidgets 8.1, ``Widget._active_widgets`` in 8.0."""
    if hasattr(widget_module, "_instances"):
        return widget_module._instances  # type: ignore[no-any-return]
    return widget_module.Widget._active_widgets  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("finish_first", [True, False])
def test_close_leaves_no_widgets_behind(finish_first: bool) -> None:
    before = len(live_widgets())
    h = Harness()
    h.feed(
        fx.subagent()[:-1]
        + fx.mcp_image()[:-1]
        + fx.thinking_then_text()[:-1]
        + fx.api_retries(1)
        + fx.read_png()[:-1]
        + fx.interrupt_mid_stream()
    )
    if finish_first:
        h.live.finish()
    assert len(live_widgets()) > before + 20
    h.live.close()
    assert len(live_widgets()) == before
    assert h.live.widget.comm is None
    h.live.update(h.view.blocks)  # late updates after close are ignored
    h.loop.advance(1.0)
    assert len(live_widgets()) == before


def test_finished_paragraphs_freeze_and_only_the_last_one_is_resent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The freeze threshold at a tenth of its size, the text too: the same states in a tenth of
    # the pushes, each re-rendering a tenth of the text (at 8000 chars this test took 30-90 s,
    # mostly re-highlighting the open code block at every push).
    monkeypatch.setattr(live_module, "_FREEZE_CHARS", 800)
    h = Harness()
    b = fx.Builder()
    h.live.update(h.view.apply(parse_message(b.message_start("m"))))
    h.live.update(h.view.apply(parse_message(b.block_start("m", 0, {"type": "text", "text": ""}))))
    filler = "word " * 200  # paragraphs freeze once the growing part passes ~800 chars
    text = (
        f"First paragraph. {filler}\n\n```python\nx = 1\n\ny = 2\n{filler}\n```\n\n"
        f"Third **bold**. {filler}\n\nFour"
    )
    # Pushes shorter than the 18 characters between the first paragraph's break and the one
    # inside the code block, so the first paragraph can freeze alone whatever the alignment.
    for i in range(0, len(text), 13):
        h.live.update(h.view.apply(parse_message(b.text_delta("m", 0, text[i : i + 13]))))
        h.loop.advance(0.06)
    box = h.live.widget_for(h.view.blocks[0].id)
    assert isinstance(box, W.VBox)
    values = [c.value for c in box.children]
    # Frozen: the paragraph, the whole code block (never split at its inner blank line), the
    # bold paragraph; growing: the tail.
    assert len(values) == 4, values
    assert "First paragraph." in values[0]
    code = re.sub(r"<[^>]+>", "", values[1])  # highlighted: tokens are spans
    assert "x = 1" in code and "y = 2" in code
    assert "<strong>bold</strong>" in values[2]
    assert values[3] == rendered("Four")
    tail_pushes = Counter[str]()
    for child in box.children:
        child.observe(lambda c, w=child: tail_pushes.update([w.model_id]), names="value")
    h.live.update(h.view.apply(parse_message(b.text_delta("m", 0, " more"))))
    h.loop.advance(0.1)
    assert set(tail_pushes) == {box.children[-1].model_id}  # frozen pieces are not resent


CODE_ANSWER = "Try this:\n\n```python\nprint('hi')\n```\n\nand this:\n\n```\nls -l\n```\n"


def test_live_code_blocks_have_a_copy_button_and_the_record_has_none() -> None:
    from byre_jupyter.ui import static_outputs

    h = Harness()
    b = fx.Builder("code")
    h.feed([b.init(), b.status(), *b.final_answer("msg_code", CODE_ANSWER), b.result(CODE_ANSWER)])
    h.live.finish()
    html = "".join(w.value for w in h.find(W.HTML))
    assert html.count('class="byre-copy" role="button"') == 2, html
    # each button sits with its own code box, which is the record's box unchanged
    assert html.count('<div class="byre-code">') == html.count("<pre ") == 2
    record = json.dumps([data for data, _ in static_outputs(h.view)])
    assert "print" in record and "byre-copy" not in record and "byre-code" not in record
    h.live.close()


def test_a_waiting_card_makes_the_status_stand_out() -> None:
    h = Harness()
    card = W.VBox()
    h.live.show_approval(card)
    status = next(w.value for w in h.find(W.HTML) if 'role="status"' in w.value)
    assert 'class="byre-status byre-waiting"' in status and "waiting for your approval" in status
    h.live.hide_approval(card)
    status = next(w.value for w in h.find(W.HTML) if 'role="status"' in w.value)
    assert "byre-waiting" not in status and "waiting for your approval" not in status
    h.live.close()
