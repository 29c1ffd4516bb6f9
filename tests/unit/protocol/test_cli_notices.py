"""The CLI's messages about slash commands, compaction, rate limits, fallbacks and suggestions,
each typed once (shapes as CLI 2.1.328 writes them: docs/protocol.md and recorded
runs against the scripted API). Unknown or missing fields degrade, never raise."""

from __future__ import annotations

from typing import Any

import pytest

from byre_jupyter.protocol import (
    CompactBoundary,
    InitMessage,
    ModelFallback,
    PromptSuggestion,
    RateLimitEvent,
    ResultMessage,
    parse_context_usage,
    parse_message,
)


def test_init_carries_slash_commands_skills_and_agents() -> None:
    m = parse_message(
        {
            "type": "system",
            "subtype": "init",
            "slash_commands": ["greet", "compact", "context", 7],
            "skills": ["dataviz"],
            "agents": ["Explore"],
        }
    )
    assert isinstance(m, InitMessage)
    assert m.slash_commands == ("greet", "compact", "context")
    assert m.skills == ("dataviz",)
    assert m.agents == ("Explore",)


def test_compact_boundary_has_its_trigger_and_token_figures() -> None:
    m = parse_message(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "compact_metadata": {"trigger": "auto", "pre_tokens": 990101, "post_tokens": 2597},
            "logical_parent_uuid": "u-1",
        }
    )
    assert isinstance(m, CompactBoundary)
    assert (m.trigger, m.pre_tokens, m.post_tokens) == ("auto", 990101, 2597)
    bare = parse_message({"type": "system", "subtype": "compact_boundary", "compact_metadata": 3})
    assert isinstance(bare, CompactBoundary)
    assert (bare.trigger, bare.pre_tokens, bare.post_tokens) == ("", None, None)


def test_a_local_command_result_names_its_command_and_the_window() -> None:
    m = parse_message(
        {
            "type": "result",
            "subtype": "success",
            "result": "",
            "local_command": "compact",
            "num_turns": 0,
            "modelUsage": {"claude-opus-5-5": {"inputTokens": 3, "contextWindow": 1000000}},
        }
    )
    assert isinstance(m, ResultMessage)
    assert m.local_command == "compact"
    assert m.context_windows == {"claude-opus-5-5": 1000000}


@pytest.mark.parametrize(
    ("resets", "expected"), [(1765119600, 1765119600.0), (1765119600000, 1765119600.0)]
)
def test_rate_limit_event_reset_time_in_seconds(resets: int, expected: float) -> None:
    m = parse_message(
        {
            "type": "rate_limit_event",
            "rate_limit_info": {
                "status": "rejected",
                "resetsAt": resets,
                "rateLimitType": "five_hour",
            },
        }
    )
    assert isinstance(m, RateLimitEvent)
    assert (m.status, m.resets_at, m.limit_type) == ("rejected", expected, "five_hour")


def test_model_fallback_names_both_models() -> None:
    m = parse_message(
        {
            "type": "system",
            "subtype": "model_fallback",
            "trigger": "overloaded",
            "original_model": "claude-opus-5-5",
            "fallback_model": "claude-sonnet-5-5",
            "content": "Opus is overloaded; using Sonnet.",
        }
    )
    assert isinstance(m, ModelFallback)
    assert (m.original_model, m.fallback_model, m.trigger) == (
        "claude-opus-5-5",
        "claude-sonnet-5-5",
        "overloaded",
    )


def test_prompt_suggestion_text() -> None:
    m = parse_message({"type": "prompt_suggestion", "suggestion": "Plot it by month"})
    assert isinstance(m, PromptSuggestion)
    assert m.suggestion == "Plot it by month"


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "rate_limit_event", "rate_limit_info": "x"},
        {"type": "prompt_suggestion", "suggestion": ["no"]},
        {"type": "system", "subtype": "model_fallback", "fallback_model": 3},
    ],
)
def test_malformed_fields_degrade(raw: dict[str, Any]) -> None:
    parse_message(raw)  # no exception: the dict stays in raw


def test_context_usage_answer_is_typed() -> None:
    usage = parse_context_usage(
        {
            "categories": [
                {"name": "System prompt", "tokens": 1979, "kind": "used"},
                {"name": "Messages", "tokens": 38238, "kind": "used"},
                {"name": "Free space", "tokens": 919000, "kind": "free"},
                {"name": 3, "tokens": "x"},
            ],
            "totalTokens": 48000,
            "maxTokens": 1000000,
        }
    )
    assert (usage.total, usage.window) == (48000, 1000000)
    assert [(c.name, c.tokens, c.kind) for c in usage.categories] == [
        ("System prompt", 1979, "used"),
        ("Messages", 38238, "used"),
        ("Free space", 919000, "free"),
    ]
    assert parse_context_usage({}).categories == ()
