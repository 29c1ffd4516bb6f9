"""What the CLI tells us, in the turn's view and its saved record: a compaction (manual or
automatic) with its before -> after figures, a local command's answer without a zero-cost
footer, rate limits with the reset time in local time, a model fallback, the context meter.
Message shapes as CLI 2.1.328 writes them against the scripted API."""

from __future__ import annotations

import time
from typing import Any

import pytest

from byre_jupyter.protocol.messages import parse_message
from byre_jupyter.session import ContextFill, ContextGauge
from byre_jupyter.ui.blocks import NoticeView
from byre_jupyter.ui.format import context_meter, footer_parts, short_tokens
from byre_jupyter.ui.record import terminal_text, turn_markdown
from byre_jupyter.ui.viewmodel import TurnView


def boundary(trigger: str, pre: int, post: int) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "compact_metadata": {"trigger": trigger, "pre_tokens": pre, "post_tokens": post},
    }


def local_result(command: str, text: str, cost: float) -> dict[str, Any]:
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 0,
        "result": text,
        "local_command": command,
        "total_cost_usd": cost,
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "modelUsage": {},
    }


def notices(view: TurnView) -> list[str]:
    return [b.text for b in view.blocks if isinstance(b, NoticeView)]


@pytest.mark.parametrize(
    ("count", "text"),
    [(950, "950"), (13_400, "13.4k"), (48_150, "48.1k"), (200_000, "200k"), (1_000_000, "1M")],
)
def test_short_token_figures(count: int, text: str) -> None:
    assert short_tokens(count) == text


def test_manual_compaction_says_what_it_did_in_the_view_and_the_record() -> None:
    view = TurnView("s", "/compact")
    view.apply(parse_message(boundary("manual", 48_200, 3_100)))
    view.apply(parse_message(local_result("compact", "", 0.388)))
    assert notices(view) == ["compacted: 48.2k → 3.1k tokens"]
    assert "compacted: 48.2k → 3.1k tokens" in turn_markdown(view)
    assert "compacted: 48.2k → 3.1k tokens" in terminal_text(view)


def test_automatic_compaction_is_marked_as_such() -> None:
    view = TurnView("s", "go on")
    view.apply(parse_message(boundary("auto", 990_101, 2_597)))
    (text,) = notices(view)
    assert text.startswith("compacted automatically (the context window was nearly full): 990.1k")


def test_a_command_that_calls_no_model_has_no_cost_in_its_footer() -> None:
    view = TurnView("s", "/context")
    view.apply(parse_message(local_result("context", "## Context Usage", 0.0)))
    assert not any("$" in part or "tokens" in part for part in footer_parts(view))


def test_a_local_command_with_nothing_to_show_says_it_ran() -> None:
    view = TurnView("s", "/clear")
    view.apply(parse_message(local_result("clear", "", 0.0)))
    assert notices(view) == ["/clear ran."]


def test_a_rate_limit_names_the_reset_time_in_local_time() -> None:
    resets = 1_765_119_600
    view = TurnView("s", "p")
    view.apply(
        parse_message(
            {
                "type": "rate_limit_event",
                "rate_limit_info": {
                    "status": "rejected",
                    "resetsAt": resets,
                    "rateLimitType": "five_hour",
                },
            }
        )
    )
    (text,) = notices(view)
    assert time.strftime("%H:%M", time.localtime(resets)) in text
    assert "five_hour" in text and "rate limit" in text.lower()


def test_an_allowed_rate_limit_state_is_no_notice() -> None:
    view = TurnView("s", "p")
    view.apply(
        parse_message({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}})
    )
    assert notices(view) == []


def test_a_fallback_names_the_model_used() -> None:
    view = TurnView("s", "p")
    view.apply(
        parse_message(
            {
                "type": "system",
                "subtype": "model_fallback",
                "trigger": "overloaded",
                "original_model": "claude-opus-5-5",
                "fallback_model": "claude-sonnet-5-5",
            }
        )
    )
    (text,) = notices(view)
    assert "claude-sonnet-5-5" in text and "claude-opus-5-5" in text
    assert view.model == "claude-sonnet-5-5"


def test_model_text_in_a_notice_is_escaped_in_the_record() -> None:
    view = TurnView("s", "p")
    view.apply(
        parse_message(
            {
                "type": "system",
                "subtype": "model_fallback",
                "fallback_model": "<img src=x onerror=alert(1)>",
            }
        )
    )
    assert "<img" not in turn_markdown(view)


def test_the_meter_reads_the_last_top_level_message_and_the_results_window() -> None:
    gauge = ContextGauge()
    usage = {"input_tokens": 400, "cache_read_input_tokens": 13_000, "output_tokens": 1}
    lines: list[dict[str, Any]] = [
        {
            "type": "assistant",
            "parent_tool_use_id": "toolu_sub",  # a subagent's own context: not ours
            "message": {"id": "m0", "model": "m", "content": [], "usage": {"input_tokens": 9}},
        },
        {
            "type": "assistant",
            "parent_tool_use_id": None,
            "message": {"id": "m1", "model": "m", "content": [], "usage": usage},
        },
        {
            "type": "assistant",  # /context's answer: no usage at all
            "parent_tool_use_id": None,
            "message": {"id": "m2", "model": "<synthetic>", "content": [], "usage": {}},
        },
    ]
    for line in lines:
        gauge.feed(parse_message(line))
    assert gauge.fill == ContextFill(13_401, None)
    result = local_result("x", "", 0.0) | {"modelUsage": {"m": {"contextWindow": 200_000}}}
    assert gauge.feed(parse_message(result))
    assert context_meter(gauge.fill) == "13.4k / 200k"
    gauge.feed(parse_message(boundary("manual", 13_401, 2_000)))
    assert context_meter(gauge.fill) == "2k / 200k"


def test_the_record_keeps_the_meter_in_its_footer() -> None:
    view = TurnView("s", "p")
    view.set_context(ContextFill(13_400, 200_000))
    view.finish()
    assert "context 13.4k / 200k" in turn_markdown(view)


def task(subtype: str, **fields: Any) -> dict[str, Any]:
    return {"type": "system", "subtype": subtype, "task_id": "t1", **fields}


def test_running_tasks_are_listed_until_they_end() -> None:
    view = TurnView("s", "p")
    view.apply(parse_message(task("task_started", description="Train the model", tool_use_id="x")))
    assert view.tasks == {"t1": "Train the model"}
    view.apply(parse_message(task("task_progress", description="epoch 3")))
    assert view.tasks == {"t1": "Train the model"}
    view.apply(parse_message(task("task_notification", status="completed", summary="done")))
    assert view.tasks == {}
