"""LiveView without a frontend: ipywidgets runs comm-less, so we check the model's traits (as
the frontend would draw them: tests/support/screen.py), its messages and the registry."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter
from typing import Any, cast

import pytest
from ipywidgets.widgets import widget as widget_module
from support import wire as fx
from support.screen import Screen

from byre_jupyter.protocol import EFFORT_LEVELS, PERMISSION_MODES
from byre_jupyter.protocol.messages import parse_message
from byre_jupyter.session import ContextFill
from byre_jupyter.ui.blocks import TextView, ToolCardView
from byre_jupyter.ui.coalesce import LoopLike
from byre_jupyter.ui.live import PERMISSION_HELP, LiveView, _shared_prefix, _utf16
from byre_jupyter.ui.markdown import render_markdown
from byre_jupyter.ui.record import prompt_line, turn_html
from byre_jupyter.ui.viewmodel import TurnView

MODELS = ["opus", "sonnet", "haiku"]


def click(live: LiveView, event: str, value: str | None = None) -> None:
    """What live.js sends for a click or a menu choice (a comm ``custom`` message)."""
    content: dict[str, Any] = {"event": event}
    if value is not None:
        content["value"] = value
    live.model._handle_custom_msg(content, [])


class Harness:
    def __init__(self, loop: fx.ManualLoop | None = None, **kwargs: Any) -> None:
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
            **kwargs,
        )
        self.screen = Screen(self.live)

    def _stop(self) -> None:
        self.stops += 1

    def feed(self, wires: list[fx.Wire], step: float = 0.001) -> None:
        for msg in fx.parse_all(wires):
            self.live.update(self.view.apply(msg))
            self.loop.advance(step)

    @property
    def status(self) -> str:
        return str(self.live.model.bar["status"])


def test_streaming_sends_only_the_growing_block_at_most_12_5_times_a_second() -> None:
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
    h.loop.advance(0.1)
    first, _card, growing = h.view.blocks
    assert isinstance(growing, TextView)
    sent_before = len(h.screen.sent)
    pieces = [f"tok{i:04d} " for i in range(1000)]
    for piece in pieces:  # 1000 deltas over 1 s of loop time
        h.live.update(h.view.apply(parse_message(b.text_delta("msg_live_2", 0, piece))))
        h.loop.advance(0.001)
    h.loop.advance(0.1)
    during = Counter(p["id"] for p in h.screen.sent[sent_before:])
    assert set(during) == {growing.id}, "only the growing block may be pushed"
    assert 10 <= during[growing.id] <= 14
    assert h.screen.text(growing.id) == render_markdown("".join(pieces), growing=True)
    assert h.screen.pieces[growing.id]["growing"]

    h.live.update(
        h.view.apply(parse_message(b.assistant("msg_live_2", {"type": "text", "text": "Final."})))
    )
    h.view.finish()
    h.live.finish()
    assert h.screen.text(growing.id) == render_markdown("Final.")
    assert not h.screen.pieces[growing.id]["growing"]
    assert h.screen.text(first.id) == render_markdown("Before the tool.")


def test_blocks_map_to_pieces_with_nesting_and_images_in_their_card() -> None:
    h = Harness()
    h.feed(fx.subagent()[:-1] + fx.mcp_image()[:-1] + fx.thinking_then_text())
    h.live.finish()
    agent = h.view.blocks[0]
    assert isinstance(agent, ToolCardView)
    shown = h.screen.pieces[agent.id]
    assert shown["kind"] == "details" and shown["title"].startswith("Agent · List files")
    sub_bash = agent.children[0]
    assert h.screen.pieces[sub_bash.id]["parent"] == agent.id
    assert h.screen.pieces[sub_bash.id]["slot"] == "kids"
    card = h.view.card(fx.MCP_TOOL)
    assert card is not None
    (image,) = h.screen.kids(card.id, "images")  # inside the card, so inside the frame
    assert image["kind"] == "image" and image["type"] == "image/png"
    assert __import__("base64").b64decode(image["data"]) == fx.PNG2
    thinking = [p for p in h.screen.pieces.values() if p.get("title") == "Thinking"]
    assert len(thinking) == 1 and thinking[0]["kind"] == "details"
    assert "executed 10 chars; out: 42" in h.screen.html()


def test_a_subagents_answer_is_shown_as_markdown_not_as_code() -> None:
    h = Harness()
    h.feed(fx.subagent())
    agent = h.view.blocks[0]
    assert isinstance(agent, ToolCardView)
    # The scripted API's subagents answer in Markdown ("*(scripted ...)*").
    agent.result_text = "*(scripted answer)* with `a.py`"
    agent.version += 1
    h.live.update([agent])
    h.loop.advance(0.1)
    after = h.screen.pieces[agent.id]["after"]
    assert after.startswith("<p>Answered: <em>(scripted answer)</em>") and "<pre" not in after
    assert "<code>a.py</code>" in after


def test_stop_calls_on_stop_through_the_loop() -> None:
    h = Harness()
    click(h.live, "stop")
    assert h.stops == 0  # the click only scheduled it
    h.loop.run_ready()
    assert h.stops == 1
    assert h.screen.bar["stopping"]
    click(h.live, "stop")
    h.loop.run_ready()
    assert h.stops == 1


def test_a_stop_from_another_thread_runs_on_the_loop_thread() -> None:
    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        stopped = asyncio.Event()
        ran_on: list[int] = []

        def on_stop() -> None:
            ran_on.append(threading.get_ident())
            stopped.set()

        view = TurnView("s", "p")
        live = LiveView(view, models=MODELS, on_stop=on_stop, on_model=print, loop=loop)
        clicker = threading.Thread(target=click, args=(live, "stop"))
        clicker.start()
        clicker.join(timeout=5)
        await asyncio.wait_for(stopped.wait(), timeout=5)
        live.close()
        return ran_on[0], threading.get_ident()

    ran_on, loop_thread = asyncio.run(main())
    assert ran_on == loop_thread


def test_model_menu() -> None:
    h = Harness()
    assert h.screen.bar["models"] == MODELS and h.screen.bar["model"] == "opus"
    h.feed([fx.Builder().init(model="claude-opus-5-5")])  # the CLI reports the resolved model
    h.loop.advance(0.1)
    bar = h.screen.bar
    assert bar["model"] == "claude-opus-5-5" and "claude-opus-5-5" in bar["models"]
    assert h.models == []  # programmatic changes never call on_model
    h.live.set_models(["opus", "sonnet"], "sonnet")
    assert h.screen.bar["models"] == ["opus", "sonnet"] and h.screen.bar["model"] == "sonnet"
    assert h.models == []
    click(h.live, "model", "opus")  # the user picks a model
    assert h.models == []
    h.loop.run_ready()
    assert h.models == ["opus"]
    click(h.live, "model", "<img src=x>")  # not an option: ignored
    h.loop.run_ready()
    assert h.models == ["opus"]


def test_a_model_chosen_mid_turn_stays_chosen_until_the_next_request() -> None:
    h = Harness()
    b = fx.Builder()
    h.feed([b.init(model="claude-opus-5-5")])
    click(h.live, "model", "sonnet")  # the user picks a model mid-turn
    h.loop.run_ready()
    assert h.models == ["sonnet"]
    h.feed([b.status()])  # more of the same request: the view still says opus
    h.loop.advance(3.0)  # header ticks
    assert h.screen.bar["model"] == "sonnet"
    assert "sonnet from the next request" in h.status
    h.feed([b.init(model="claude-sonnet-5-5")])  # the next request runs on the new model
    h.loop.advance(1.0)
    assert h.screen.bar["model"] == "sonnet"  # still the user's word for it
    assert "next request" not in h.status


def test_the_permission_menu_explains_every_mode_and_calls_back_on_the_loop() -> None:
    chosen: list[str] = []
    h = Harness(permission_mode="default", on_permission_mode=chosen.append)
    assert h.screen.bar["modes"][: len(PERMISSION_MODES)] == list(PERMISSION_MODES)
    help_ = h.live.model.head["help"]
    for mode in PERMISSION_MODES:  # "dontAsk" and "auto" too: each says what it does
        assert help_[mode].startswith(f"{mode}: ") and len(help_[mode]) > len(mode) + 20
    assert help_ == PERMISSION_HELP
    click(h.live, "mode", "plan")
    assert chosen == []
    h.loop.run_ready()
    assert chosen == ["plan"]
    h.live.set_permission_mode("default")  # e.g. a refused switch: no callback
    assert h.screen.bar["mode"] == "default" and chosen == ["plan"]


def test_the_effort_menu_offers_the_clis_levels_and_calls_back_on_the_loop() -> None:
    chosen: list[str] = []
    h = Harness(effort="high", on_effort=chosen.append)
    assert h.screen.bar["efforts"] == ["default", *EFFORT_LEVELS]
    assert h.screen.bar["effort"] == "high"
    click(h.live, "effort", "max")
    assert chosen == []
    h.loop.run_ready()
    assert chosen == ["max"] and h.screen.bar["effort"] == "max"
    click(h.live, "effort", "<b>turbo</b>")  # not an option: ignored
    h.loop.run_ready()
    assert chosen == ["max"]
    h.live.set_effort(None)  # e.g. a refused switch: shown, no callback
    assert h.screen.bar["effort"] == "default" and chosen == ["max"]
    assert Harness().screen.bar["efforts"] is None  # no callback: no menu


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
    assert "unflushed" in h.screen.text(h.view.blocks[0].id)
    assert h.screen.bar["disabled"] and h.screen.bar["done"]
    assert "done" in h.status and "$0.0123" in h.status
    assert not [t for t in h.loop.timers if not t.cancelled]  # no tick left behind


def test_header_ticks_while_waiting() -> None:
    h = Harness()
    h.feed([fx.Builder().status()])
    before = h.status
    h.loop.advance(2.0)  # a long tool call: no messages, but elapsed time moves
    assert h.status != before
    h.view.finish()
    h.live.finish()
    assert "✓" in h.status


def test_retry_shows_in_header() -> None:
    h = Harness()
    h.feed(fx.api_retries(1))
    assert "retry 1/2 (server_error 500)" in h.status


def test_the_view_starts_with_the_records_prompt_line() -> None:
    h = Harness()
    head = h.live.model.head
    assert head["prompt"] == prompt_line(h.view)
    assert head["prompt"] in turn_html(h.view)  # the record's own first line
    assert head["frame"] == "jp-RenderedHTMLCommon"  # the record's output class


def live_widgets() -> dict[str, object]:
    """Every open widget: ``_instances`` since ipywidgets 8.1, ``Widget._active_widgets`` in 8.0."""
    if hasattr(widget_module, "_instances"):
        return widget_module._instances  # type: ignore[no-any-return]
    return widget_module.Widget._active_widgets  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("finish_first", [True, False])
def test_one_model_per_view_and_close_leaves_no_widgets_behind(finish_first: bool) -> None:
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
    # The view's model and the box that holds the approval cards, with the layout they
    # share: the ipywidgets view made about 32 models a turn.
    assert len(live_widgets()) - before == 3
    h.live.close()
    assert len(live_widgets()) == before
    assert h.live.widget.comm is None
    h.live.update(h.view.blocks)  # late updates after close are ignored
    h.loop.advance(1.0)
    assert len(live_widgets()) == before


def test_each_finished_markdown_block_is_sent_once_and_only_the_last_one_again() -> None:
    h = Harness()
    b = fx.Builder()
    h.live.update(h.view.apply(parse_message(b.message_start("m"))))
    h.live.update(h.view.apply(parse_message(b.block_start("m", 0, {"type": "text", "text": ""}))))
    filler = "word " * 40
    text = (
        f"First paragraph. {filler}\n\n```python\nx = 1\n\ny = 2\n{filler}\n```\n\n"
        f"Third **bold**. {filler}\n\nFour"
    )
    for i in range(0, len(text), 13):
        h.live.update(h.view.apply(parse_message(b.text_delta("m", 0, text[i : i + 13]))))
        h.loop.advance(0.06)
    h.loop.advance(0.1)
    text_id = h.view.blocks[0].id
    done = [p for p in h.screen.sent if p.get("parent") == text_id]
    # Finished: the paragraph, the whole code block (never split at its inner blank line),
    # the bold paragraph, each sent once; growing: the tail.
    assert len(done) == 3 and len({p["id"] for p in done}) == 3, done
    assert "First paragraph." in done[0]["html"]
    code = re.sub(r"<[^>]+>", "", done[1]["html"])  # highlighted: tokens are spans
    assert "x = 1" in code and "y = 2" in code
    assert "<strong>bold</strong>" in done[2]["html"]
    assert h.screen.pieces[text_id]["html"] == render_markdown("Four", growing=True)
    assert h.screen.text(text_id) == render_markdown(text, growing=True).replace(
        "<pre ", '<div class="byre-code"><span class="byre-copy">Copy</span><pre '
    ).replace("</pre>", "</pre></div>")
    sent = len(h.screen.sent)
    h.live.update(h.view.apply(parse_message(b.text_delta("m", 0, " more"))))
    h.loop.advance(0.1)
    assert [p["id"] for p in h.screen.sent[sent:]] == [text_id]  # finished ones not resent


CODE_ANSWER = "Try this:\n\n```python\nprint('hi')\n```\n\nand this:\n\n```\nls -l\n```\n"


def test_live_code_blocks_have_a_copy_button_and_the_record_has_none() -> None:
    from byre_jupyter.ui import static_outputs

    h = Harness()
    b = fx.Builder("code")
    h.feed([b.init(), b.status(), *b.final_answer("msg_code", CODE_ANSWER), b.result(CODE_ANSWER)])
    h.live.finish()
    html = h.screen.html()
    assert html.count('<span class="byre-copy">Copy</span>') == 2, html
    # each button sits with its own code box, which is the record's box unchanged
    assert html.count('<div class="byre-code">') == html.count("<pre ") == 2
    record = json.dumps([data for data, _ in static_outputs(h.view)])
    assert "print" in record and "byre-copy" not in record and "byre-code" not in record
    h.live.close()


def test_a_waiting_card_makes_the_status_stand_out() -> None:
    import ipywidgets as W

    h = Harness()
    card = W.VBox()
    h.live.show_approval(card)
    assert h.screen.bar["waiting"] and "waiting for your approval" in h.status
    assert h.live.widget.children[-1] is card
    h.live.hide_approval(card)
    assert not h.screen.bar["waiting"] and "waiting for your approval" not in h.status
    h.live.close()


def test_a_view_that_missed_changes_gets_everything_on_sync() -> None:
    h = Harness()
    h.feed(fx.subagent()[:-1] + fx.thinking_then_text())
    late = Screen(h.live)  # a second view, opened late: it asks live.js's "sync"
    click(h.live, "sync")
    h.loop.run_ready()
    assert late.pieces.keys() == {k for k in h.screen.pieces}
    assert late.html() == h.screen.html()


def test_the_growing_blocks_changes_count_as_javascript_does() -> None:
    """Offsets in UTF-16 units: with a character outside the BMP before the change, offsets in
    code points would cut the frontend's string in the wrong place (tests/support/screen.py
    slices as JavaScript does)."""
    h = Harness()
    b = fx.Builder()
    h.live.update(h.view.apply(parse_message(b.message_start("m"))))
    h.live.update(h.view.apply(parse_message(b.block_start("m", 0, {"type": "text", "text": ""}))))
    text = "Emoji \U0001f600 and \U0001d518\U0001d52b then **bold** words " * 6
    for i in range(0, len(text), 5):
        h.live.update(h.view.apply(parse_message(b.text_delta("m", 0, text[i : i + 5]))))
        h.loop.advance(0.09)
    text_id = h.view.blocks[0].id
    assert any("keep" in p for p in h.screen.sent)  # sent as changes, not whole
    assert h.screen.text(text_id) == render_markdown(text, growing=True)


def _stream_thought(steps: int) -> tuple[Harness, str, int]:
    """A thought of ``steps`` short paragraphs streamed in 4-character deltas: the harness,
    the thought and the bytes of every piece sent."""
    h = Harness()
    b = fx.Builder()
    h.live.update(h.view.apply(parse_message(b.message_start("m"))))
    start = b.block_start("m", 0, {"type": "thinking", "thinking": ""})
    h.live.update(h.view.apply(parse_message(start)))
    thought = "".join(f"Step {i}: the frame has **{i} rows** to check.\n\n" for i in range(steps))
    for i in range(0, len(thought), 4):
        h.live.update(h.view.apply(parse_message(b.thinking_delta("m", 0, thought[i : i + 4]))))
        h.loop.advance(0.004)
    h.loop.advance(0.1)
    return h, thought, sum(len(json.dumps(p)) for p in h.screen.sent)


def test_a_long_thought_streams_as_text_does_not_resent_whole() -> None:
    """Thinking streams like the answer: its card once (the title), its text as finished
    blocks plus the growing one, so the bytes grow with the thought, not with its square (sent
    whole at each flush, 600 paragraphs cost 184x their HTML; now 3.0x at any length)."""
    h, thought, sent = _stream_thought(300)
    block_id = h.view.blocks[0].id
    shown = h.screen.text(f"{block_id}/t")
    assert shown == render_markdown(thought, growing=True), shown[-200:]
    assert h.screen.pieces[block_id]["title"] == "Thinking…"
    assert sent < 4 * len(render_markdown(thought)), (sent, len(render_markdown(thought)))
    _, _, twice = _stream_thought(600)
    assert twice < 2.2 * sent, (sent, twice)  # linear in the thought


def test_the_shared_prefix_is_found_wherever_the_change_is() -> None:
    """The growing HTML's diff: the windows tried near the end must not hide an earlier
    change, and a non-ASCII text is counted in UTF-16 units."""
    base = "".join(f"<span>{i}</span>" for i in range(5_000))
    for at in (0, 1, 63, 64, 65, 1_000, len(base) - 2_000, len(base) - 64, len(base) - 1):
        changed = base[:at] + "X" + base[at + 1 :]
        assert _shared_prefix(base, changed) == at, at
        assert _shared_prefix(base, changed + "more") == at, at
    assert _shared_prefix(base, base + "grown") == len(base)
    assert _shared_prefix(base + "grown", base) == len(base)
    assert _shared_prefix("", base) == 0
    assert _utf16("abc") == 3 and _utf16("a😀") == 3


def test_the_context_meter_is_in_the_header_and_follows_the_gauge() -> None:
    h = Harness()
    assert h.screen.bar["context"] == ""  # nothing to show before the first answer
    h.view.set_context(ContextFill(13_400, 200_000))
    h.live.update([])
    h.loop.advance(0.2)
    assert h.screen.bar["context"] == "13.4k / 200k"
    assert "13,400 of 200,000 tokens" in h.screen.bar["context_title"]


def test_each_running_task_has_a_stop_that_names_it() -> None:
    stopped: list[str] = []
    h = Harness(on_stop_task=stopped.append)
    h.feed(
        [
            {
                "type": "system",
                "subtype": "task_started",
                "task_id": "t1",
                "description": "Print five lines slowly",
            }
        ]
    )
    h.loop.advance(0.2)
    assert h.screen.bar["tasks"] == [["t1", "Print five lines slowly"]]
    click(h.live, "stop_task", "t1")
    click(h.live, "stop_task", "not-a-running-task")  # a forged id is not passed on
    h.loop.advance(0.01)
    assert stopped == ["t1"]
