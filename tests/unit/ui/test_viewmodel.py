"""TurnView: the pure message → block mapping, driven by real CLI 2.1.328 shapes."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

from support import wire as fx

from byre_jupyter.protocol import Image
from byre_jupyter.protocol.messages import TokenUsage, parse_message
from byre_jupyter.session import TurnResult
from byre_jupyter.ui.blocks import ImageView, NoticeView, TextView, ThinkingView, ToolCardView
from byre_jupyter.ui.viewmodel import TurnView


def test_viewmodel_static_and_terminal_import_no_ipython_or_widgets() -> None:
    code = (
        "import sys, byre_jupyter.ui, byre_jupyter.ui.record, byre_jupyter.ui.terminal\n"
        "mods = ('IPython', 'ipywidgets', 'ipykernel', 'traitlets')\n"
        "bad = [m for m in mods if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_streamed_deltas_accumulate_to_the_final_text() -> None:
    wires = fx.plain_text()
    clock = fx.FakeClock()
    view = TurnView("s", "p", clock=clock)
    seen: list[str] = []
    for msg in fx.parse_all(wires):
        view.apply(msg)
        if msg.type == "assistant":
            break  # only deltas so far
        if view.blocks:
            block = view.blocks[0]
            assert isinstance(block, TextView)
            seen.append(block.text)
    assert seen[-1] == fx.PLAIN_TEXT
    assert all(b.startswith(a) for a, b in itertools.pairwise(seen))
    assert view.status == "streaming"


def test_assistant_line_replaces_streamed_text_and_freezes_it() -> None:
    b = fx.Builder()
    view = TurnView("s", "p", clock=fx.FakeClock())
    for wire in [
        b.message_start("m1"),
        b.block_start("m1", 0, {"type": "text", "text": ""}),
        b.text_delta("m1", 0, "Hel"),
        b.text_delta("m1", 0, "lo wrld"),
    ]:
        view.apply(parse_message(wire))
    block = view.blocks[0]
    assert isinstance(block, TextView) and block.text == "Hello wrld" and not block.frozen
    changed = view.apply(parse_message(b.assistant("m1", {"type": "text", "text": "Hello world"})))
    assert changed == [block]
    assert block.text == "Hello world" and block.frozen
    # A late delta for a frozen block is ignored and reports no change.
    assert view.apply(parse_message(b.text_delta("m1", 0, "!!"))) == []
    assert block.text == "Hello world"


def test_kth_assistant_line_of_a_message_is_block_index_k() -> None:
    view, _ = fx.run_turn(fx.thinking_then_text())
    thinking, text = view.blocks
    assert isinstance(thinking, ThinkingView) and thinking.text == fx.THINKING
    assert isinstance(text, TextView) and text.text == fx.THOUGHT_ANSWER
    assert len(view.blocks) == 2  # the assistant lines filled the streamed blocks, no duplicates


def test_assistant_lines_without_stream_events_create_blocks() -> None:
    wires = [w for w in fx.plain_text() if w["type"] != "stream_event"]
    view, _ = fx.run_turn(wires)
    assert [type(b) for b in view.blocks] == [TextView]
    assert view.blocks[0].text == fx.PLAIN_TEXT  # type: ignore[attr-defined]


def test_apply_returns_only_the_blocks_that_changed() -> None:
    view, changes = fx.run_turn(fx.bash_roundtrip())
    _, card, _ = view.blocks
    for msg, changed in zip(fx.parse_all(fx.bash_roundtrip()), changes, strict=True):
        if msg.type == "stream_event" and msg.raw["event"].get("delta", {}).get("type") == (
            "text_delta"
        ):
            assert len(changed) == 1 and isinstance(changed[0], TextView)
        if msg.type in ("system",) and msg.raw["subtype"] in ("init", "status"):
            assert changed == []
    assert all(len(c) <= 3 for c in changes[:-1])
    # The tool result changes exactly the card.
    index = next(i for i, w in enumerate(fx.bash_roundtrip()) if w.get("tool_use_result"))
    assert changes[index] == [card]


def test_bash_card_fields() -> None:
    clock = fx.FakeClock()
    view = TurnView("s", "p", clock=clock)
    msgs = fx.parse_all(fx.bash_roundtrip())
    card: ToolCardView | None = None
    for msg in msgs:
        if msg.type == "user":
            clock.advance(5.0)  # the command ran for 5 s
        view.apply(msg)
        if card is None and view.card(fx.BASH_TOOL) is not None:
            card = view.card(fx.BASH_TOOL)
            assert card is not None and card.name == "Bash" and card.input == {}
            assert view.status == "tool"
    assert card is not None
    assert card.summary == fx.BASH_COMMAND
    assert card.input["description"] == "Print five lines slowly"
    assert card.result_text == fx.BASH_OUTPUT and not card.is_error
    assert card.task_id == "b7o93xwce" and card.task_status == "completed"
    assert card.elapsed_s is not None and 5.0 <= card.elapsed_s < 5.5
    assert card.frozen
    assert view.status == "done"


def test_edit_card_has_a_unified_diff() -> None:
    view, _ = fx.run_turn(fx.edit_file())
    card = view.card(fx.EDIT_TOOL)
    assert card is not None and card.summary == "/work/nb/util.py"
    assert card.diff is not None
    assert "-    return x\n" in card.diff and "+    return x * 2\n" in card.diff
    assert card.diff.startswith("--- a//work/nb/util.py\n+++ b//work/nb/util.py\n")


def test_tool_summaries() -> None:
    from byre_jupyter.ui.toolinfo import summarize_tool_input, tool_label

    assert summarize_tool_input("Read", {"file_path": "/a/b.png"}) == "/a/b.png"
    assert summarize_tool_input("Agent", {"description": "List files", "prompt": "x"}) == (
        "List files"
    )
    code = "\n\nimport os\nprint(1)"
    assert summarize_tool_input("mcp__byre__python_exec", {"code": code}) == "import os …"
    assert summarize_tool_input("mcp__x__y", {"q": 1}) == '{"q":1}'
    assert summarize_tool_input("Bash", {"command": "x" * 300}).endswith("…")
    assert tool_label("mcp__byre__python_exec") == "byre.python_exec"
    # run_cells names the cells it runs, not its input's JSON.
    run = summarize_tool_input("mcp__byre__run_cells", {"cells": ["load", "plot-1"]})
    assert run == "load, plot-1"
    assert summarize_tool_input("mcp__byre__run_cells", {"cells": [1]}) == '{"cells":[1]}'


def test_read_png_result_image_is_decoded() -> None:
    view, _ = fx.run_turn(fx.read_png())
    card = view.card(fx.READ_TOOL)
    assert card is not None and card.summary == "/work/nb/red.png"
    assert len(card.images) == 1
    image = card.images[0]
    assert image.image == Image(fx.PNG, "image/png") and image.media_type == "image/png"
    assert image.origin == "tool Read"
    assert card.result_text == ""
    assert view.images() == [image]


def test_mcp_result_keeps_text_and_image_and_drops_the_image_source_note() -> None:
    view, _ = fx.run_turn(fx.mcp_image())
    card = view.card(fx.MCP_TOOL)
    assert card is not None
    assert card.label == "byre.python_exec"
    assert card.summary == "import matplotlib.pyplot as plt …"
    assert card.result_text == "executed 10 chars; out: 42"
    assert [i.image for i in card.images] == [Image(fx.PNG2, "image/png")]
    assert view.parent_id(card.images[0].id) == card.id


def test_the_image_source_note_goes_also_from_inside_a_text_block() -> None:
    view, _ = fx.run_turn(fx.mcp_image("[stdout]\nsum = 45\n\n[images] 1 attached", True))
    card = view.card(fx.MCP_TOOL)
    assert card is not None
    assert card.result_text == "[stdout]\nsum = 45\n\n[images] 1 attached\n"
    assert len(card.images) == 1


def test_the_authors_home_directory_is_written_as_a_tilde_in_tool_output() -> None:
    home = os.path.expanduser("~")
    text = f"wrote {home}/proj/a.py\ncwd {home}\n'{home}'\nnot {home}fs/x nor /opt{home}/x"
    view, _ = fx.run_turn(fx.mcp_image(text))
    card = view.card(fx.MCP_TOOL)
    assert card is not None
    assert card.result_text == f"wrote ~/proj/a.py\ncwd ~\n'~'\nnot {home}fs/x nor /opt{home}/x"


def test_the_authors_home_directory_is_written_as_a_tilde_in_a_tool_cards_input() -> None:
    """A plan file (plan mode writes ~/.claude/plans/NAME.md) or any file a tool names: the
    card's title and input are saved with the notebook too (the demo saved the author's home
    through the plan's Write card)."""
    home = os.path.expanduser("~")
    plan = f"{home}/.claude/plans/plan-a.md"
    b = fx.Builder()
    write = {"file_path": plan, "content": f"see {home}/data.csv"}
    view, _ = fx.run_turn(
        [b.init(), b.message_start("m1"), *b.streamed_tool("m1", 0, "t1", "Write", write)]
    )
    card = view.card("t1")
    assert card is not None
    assert home not in repr(card.input) and home not in card.summary, (card.input, card.summary)
    assert card.input["file_path"] == "~/.claude/plans/plan-a.md"
    assert not card.redacted  # a tilde is no hidden secret


def test_subagent_lines_nest_under_the_agent_card() -> None:
    view, _ = fx.run_turn(fx.subagent())
    assert [type(b) for b in view.blocks] == [ToolCardView, TextView]
    agent = view.blocks[0]
    assert isinstance(agent, ToolCardView) and agent.name == "Agent"
    assert agent.summary == "List files"
    sub_bash, sub_text = agent.children
    assert isinstance(sub_bash, ToolCardView) and sub_bash.summary == "ls"
    assert sub_bash.result_text == "a.py\nb.py\nc.py"
    assert isinstance(sub_text, TextView) and sub_text.text == fx.SUB_TEXT
    assert view.parent_id(sub_bash.id) == agent.id
    assert agent.task_status == "completed" and agent.task_note == fx.SUB_TEXT
    assert "[Subagent hand-back]" in (agent.result_text or "")
    # The subagent prompt (a user text line) is not content.
    assert not any(isinstance(b, TextView) and "SUBAGENT_TASK" in b.text for b in view.walk())
    # Only top-level assistant uuids are resume targets.
    assert len(view.message_uuids) == 2


def test_nesting_is_recursive_and_unknown_parents_go_to_top_level() -> None:
    b = fx.Builder()
    view = TurnView("s", "p", clock=fx.FakeClock())
    outer = b.assistant(
        "m1",
        {"type": "tool_use", "id": "t_outer", "name": "Agent", "input": {"description": "outer"}},
    )
    inner = b.assistant(
        "m2",
        {"type": "tool_use", "id": "t_inner", "name": "Agent", "input": {"description": "inner"}},
        parent="t_outer",
    )
    deep = b.assistant("m3", {"type": "text", "text": "deep"}, parent="t_inner")
    orphan = b.assistant("m4", {"type": "text", "text": "orphan"}, parent="t_nowhere")
    for wire in (outer, inner, deep, orphan):
        view.apply(parse_message(wire))
    outer_card, orphan_text = view.blocks
    assert isinstance(outer_card, ToolCardView)
    inner_card = outer_card.children[0]
    assert isinstance(inner_card, ToolCardView) and inner_card.summary == "inner"
    assert isinstance(inner_card.children[0], TextView)
    assert inner_card.children[0].text == "deep"
    assert isinstance(orphan_text, TextView) and orphan_text.text == "orphan"


def test_interrupt_mid_stream() -> None:
    view, _ = fx.run_turn(fx.interrupt_mid_stream())
    assert view.interrupted and view.status == "interrupted" and not view.is_error
    text, notice = view.blocks
    assert isinstance(text, TextView) and text.text == fx.PARTIAL
    assert isinstance(notice, NoticeView) and notice.notice_kind == "interrupted"
    # "[Request interrupted by user]" is not shown as content; the diagnostic is not an error.
    assert not any("Request interrupted" in getattr(b, "text", "") for b in view.walk())
    assert not any(isinstance(b, NoticeView) and b.notice_kind == "error" for b in view.blocks)


def test_apply_of_the_result_returns_what_finish_changed() -> None:
    wires = fx.interrupt_mid_stream()
    view, changes = fx.run_turn(wires)
    kinds = [type(b).__name__ for b in changes[-1]]
    assert kinds == ["NoticeView"]  # the text was frozen by the aborted assistant line
    assert changes[-1][0] is view.blocks[-1]


def test_aborted_assistant_alone_marks_the_turn_interrupted() -> None:
    wires = fx.interrupt_mid_stream()[:-1]  # no result: the process died
    view, _ = fx.run_turn(wires)
    assert view.interrupted
    view.finish(error="claude exited with code 143")
    assert view.status == "interrupted"
    kinds = [b.notice_kind for b in view.blocks if isinstance(b, NoticeView)]
    assert kinds == ["error", "interrupted"]


def test_api_error_result_shows_its_text_once_as_an_error_notice() -> None:
    view, _ = fx.run_turn(fx.api_error())
    assert view.is_error and view.status == "error" and not view.interrupted
    errors = [b for b in view.blocks if isinstance(b, NoticeView) and b.notice_kind == "error"]
    assert [e.text for e in errors] == [fx.API_ERROR_TEXT]
    assert not any(isinstance(b, TextView) for b in view.walk())  # the synthetic line is no answer
    assert view.model == fx.MODEL  # "<synthetic>" never becomes the model


def test_api_retries_update_header_and_one_notice() -> None:
    clock = fx.FakeClock()
    view = TurnView("s", "p", clock=clock)
    wires = fx.retry_then_success()
    retries = 0
    for msg in fx.parse_all(wires):
        view.apply(msg)
        if msg.type == "system" and msg.raw["subtype"] == "api_retry":
            retries += 1
            assert view.status == "retrying"
            assert view.retry is not None and view.retry.attempt == retries
            assert view.retry.max_retries == 2 and view.retry.error_status == 500
    notices = [b for b in view.blocks if isinstance(b, NoticeView)]
    assert len(notices) == 1 and "attempt 2/2" in notices[0].text
    assert view.retry is None and view.status == "done"


def test_header_tokens_cost_and_duration() -> None:
    b = fx.Builder()
    view = TurnView("s", "p", clock=fx.FakeClock())
    view.apply(parse_message(b.message_start("m1", input_tokens=1000)))
    assert view.tokens_in == 1000
    v = view.header_version
    view.apply(parse_message(b.message_delta("m1", "end_turn", 77)))
    assert view.tokens_out == 77 and view.header_version > v
    view.apply(parse_message(b.result("x", session_id="sid-9")))
    assert (view.tokens_in, view.tokens_out) == (1500, 42)
    assert view.cost_usd is None and view.duration_s == 1.585  # 0.01234 is a running total
    assert view.session_id == "sid-9" and view.result_uuid is not None


def test_the_header_shows_the_turns_own_cost_not_the_conversations_running_total() -> None:
    b = fx.Builder()
    view = TurnView("s", "p", clock=fx.FakeClock())
    result = parse_message(b.result("x", session_id="sid-9"))  # total_cost_usd 0.01234
    view.apply(result)
    version = view.header_version
    # The session's own figures for the turn, as it accounted them.
    view.settle(TurnResult("x", "sid-9", False, cost_usd=0.002, tokens=TokenUsage(7, 2, 1, 5)))
    assert view.cost_usd == 0.002 and (view.tokens_in, view.tokens_out) == (10, 5)
    assert view.header_version > version  # the footer shows it without help


def test_finish_freezes_everything_and_reports_it() -> None:
    wires = fx.bash_roundtrip()
    cut = next(i for i, w in enumerate(wires) if w.get("tool_use_result"))
    view, _ = fx.run_turn(wires[:cut])  # tool still running
    card = view.card(fx.BASH_TOOL)
    assert card is not None and not card.frozen
    changed = view.finish(interrupted=True)
    assert card in changed and card.frozen
    assert all(b.frozen for b in view.walk())
    assert view.status == "interrupted"
    assert view.finish() == []  # idempotent: nothing new, no repeated notice


def test_finished_blocks_do_not_change_on_late_deltas() -> None:
    view, _ = fx.run_turn(fx.plain_text())
    block = view.blocks[0]
    version = block.version
    assert view.apply(parse_message(fx.Builder().text_delta("msg_plain", 0, "late"))) == []
    assert block.version == version


def test_attached_images_and_unknown_types() -> None:
    view = TurnView("s", "p", [Image(fx.PNG, "image/png")], clock=fx.FakeClock())
    assert [i.image for i in view.images()] == [Image(fx.PNG, "image/png")]
    assert view.images()[0].origin == "attached"
    for raw in (
        {"type": "rate_limit_event", "x": 1},
        {"type": "brand_new_type"},
        {"type": "system", "subtype": "brand_new_subtype"},
    ):
        assert view.apply(parse_message(raw)) == []
    assert view.blocks == []


def test_permission_denied_is_a_notice() -> None:
    b = fx.Builder()
    view = TurnView("s", "p", clock=fx.FakeClock())
    changed = view.apply(
        parse_message(b.system("permission_denied", tool_name="Bash", message="needs approval"))
    )
    assert len(changed) == 1 and isinstance(changed[0], NoticeView)
    assert changed[0].notice_kind == "permission" and "needs approval" in changed[0].text


def test_versions_grow_on_every_change() -> None:
    b = fx.Builder()
    view = TurnView("s", "p", clock=fx.FakeClock())
    view.apply(parse_message(b.message_start("m")))
    view.apply(parse_message(b.block_start("m", 0, {"type": "text", "text": ""})))
    block = view.blocks[0]
    versions = [block.version]
    for piece in ("a", "b", "c"):
        view.apply(parse_message(b.text_delta("m", 0, piece)))
        versions.append(block.version)
    assert versions == sorted(set(versions))
    assert isinstance(block, TextView)
    assert not isinstance(block, ImageView)
