"""Small plain-text formatters shared by the static bundle, the live widget and the terminal.

Everything here returns *plain* text (not escaped); callers escape for their medium. Pure.
"""

from __future__ import annotations

import re
import textwrap

from byre_jupyter.session.accounting import ContextFill, format_cost, short_tokens
from byre_jupyter.ui.blocks import ImageView, ToolCardView
from byre_jupyter.ui.reveal import reveal
from byre_jupyter.ui.toolinfo import input_lines, tool_info
from byre_jupyter.ui.viewmodel import TurnView

__all__ = [
    "card_input_note",
    "card_input_text",
    "card_result_text",
    "card_title",
    "footer_parts",
    "format_duration",
    "format_tokens",
    "image_caption",
    "image_numbers",
    "prompt_preview",
    "truncate",
]

#: Longest tool output / input kept in a static bundle or terminal block (characters).
MAX_OUTPUT_CHARS = 20_000


def format_duration(seconds: float) -> str:
    """``0.4 s``, ``12.3 s``, ``2 min 05 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s"


def format_tokens(count: int) -> str:
    """``950``, ``12,345``."""
    return f"{count:,}"


def context_meter(fill: ContextFill) -> str:
    """``13.4k / 200k`` (used / window), or ``13.4k`` while the window is unknown; "" before
    the first answer."""
    if not fill.used:
        return ""
    window = f" / {short_tokens(fill.window)}" if fill.window else ""
    return f"{short_tokens(fill.used)}{window}"


def context_bar(fill: ContextFill) -> dict[str, str]:
    """The header's meter (class ``byre-context``): its text and its hover title."""
    percent = fill.percent
    title = (
        f"Context window: {fill.used:,} of {fill.window:,} tokens used ({percent:.0f}%)"
        if fill.window and percent is not None
        else f"Context: {fill.used:,} tokens (the window is known after the first answer)"
    )
    return {"context": context_meter(fill), "context_title": title if fill.used else ""}


def truncate(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """Cut ``text`` at ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters)"


def prompt_preview(prompt: str, max_lines: int = 3, max_chars: int = 300) -> str:
    """The prompt shown briefly: a few lines, ellipsised."""
    text = prompt.strip()
    lines = text.splitlines()
    short = "\n".join(lines[:max_lines])
    if len(short) > max_chars:
        short = short[: max_chars - 1].rstrip()
    if short != text:
        short += " …"
    return short


def image_numbers(view: TurnView) -> dict[str, int]:
    """Block id → 1-based image number, in display order (attached images first)."""
    return {image.id: n for n, image in enumerate(view.images(), start=1)}


def card_title(card: ToolCardView, numbers: dict[str, int] | None = None) -> str:
    """``Bash · ls -la · 1.2 s`` plus state marks (running, error, images N below)."""
    parts = [card.label or "tool"]
    if card.summary:
        parts.append(card.summary)
    if card.elapsed_s is not None:
        parts.append(format_duration(card.elapsed_s))
    if card.denied:
        parts.append("denied")
    elif card.is_error:
        parts.append("error")
    elif not card.has_result:
        if card.frozen:
            parts.append("no result")
        elif card.awaiting_approval:
            parts.append("waiting for approval")
        elif card.task_status:
            parts.append(card.task_status)
        else:
            parts.append("running")
    if numbers:
        refs = [numbers[i.id] for i in card.images if i.id in numbers]
        if refs:
            word = "image" if len(refs) == 1 else "images"
            parts.append(f"{word} {', '.join(map(str, refs))} below")
    return " · ".join(parts)


def image_caption(image: ImageView, number: int) -> str:
    """``<image 2: tool Read>``: the text/plain of an image output."""
    return f"<image {number}: {image.origin or 'image'}>"


def footer_parts(view: TurnView) -> list[str]:
    """model · duration · tokens in/out · cost, then interrupted/error marks. A turn that
    failed before any model answered (no login, no CLI) shows neither a model nor a cost."""
    parts: list[str] = []
    reached_model = not view.is_error or bool(view.tokens_in or view.tokens_out)
    if view.local_command is not None and not (view.tokens_in or view.tokens_out):
        # /context, /clear...: the CLI answered without a model; /compact's summary did call
        # one (its cost is real) though its result reports no tokens.
        reached_model = bool(view.cost_usd)
    if view.model and reached_model:
        parts.append(view.model)
    parts.append(format_duration(view.elapsed_s))
    if view.tokens_in or view.tokens_out:
        parts.append(
            f"{format_tokens(view.tokens_in)} in / {format_tokens(view.tokens_out)} out tokens"
        )
    if view.cost_usd is not None and reached_model:
        parts.append(format_cost(view.cost_usd))
    if meter := context_meter(view.context):
        parts.append(f"context {meter}")
    if view.interrupted:
        parts.append("interrupted")
    if view.is_error:
        parts.append("error")
    return parts


def card_input_text(card: ToolCardView) -> str:
    """The input worth showing in a card body: a diff, ``$ command``, code, or pretty JSON.

    Empty when the one-line summary already says everything (``Read`` of a path). Hidden
    characters (bidi overrides, zero-width, ``\\r``...) show as ``⟨U+202E⟩`` markers, so the
    saved record of a tool call reads as what ran (ui/reveal.py). Empty too while its
    approval card waits: that card shows the whole input, once (ui/approval_card.py).
    """
    if card.awaiting_approval:
        return ""
    return reveal(_card_input(card))


def card_input_note(card: ToolCardView) -> str:
    """What the card says when its saved input is not all of what ran: redaction replaced
    values in it (in place, never a line: byre_jupyter/redact.py), and a reader should know."""
    if not card.redacted or card.awaiting_approval:
        return ""
    if card.redacted == 1:
        return "1 value in this input was redacted."
    return f"{card.redacted} values in this input were redacted."


def _card_input(card: ToolCardView) -> str:
    if card.diff:
        return card.diff
    info = tool_info(card.name)
    body = card.input.get(info.body_key) if info.body_key else None
    if isinstance(body, str):
        return f"{info.body_prefix}{body}"
    values = list(card.input.values())
    if not values or (len(values) == 1 and values[0] == card.summary):
        return ""
    # key: value lines, as the approval card lists them: no raw JSON for a person to parse
    return input_lines(card.input)


_TOOLS_USED = re.compile(r"<tools-used-before-summary>.*?</tools-used-before-summary>\s*", re.S)
_HAND_BACK = re.compile(r"^\s*\[Subagent hand-back\](?:[^\n]*?The report follows:\n|\s*)")
_AGENT_TAIL = re.compile(r"\n\s*agentId:.*\Z", re.S)
_USAGE = re.compile(r"<usage>.*?</usage>", re.S)


def card_result_text(card: ToolCardView) -> str:
    """What a card shows of its tool's result. A subagent's hand-back is the CLI's frame
    (``<tools-used-before-summary>``, "[Subagent hand-back] ...", ``agentId: ...``,
    ``<usage>``) around the subagent's report: only the report is shown, as "Answered: ...".
    A denied call shows none: the CLI's result then only repeats the denial, which the
    decision's notice says (app/approvals.py)."""
    if card.denied:
        return ""
    text = card.result_text or ""
    if not tool_info(card.name).subagent or card.is_error:
        return text
    report = _TOOLS_USED.sub("", text)
    report = _USAGE.sub("", report)
    report = _HAND_BACK.sub("", report, count=1)
    report = _AGENT_TAIL.sub("", report)
    report = textwrap.dedent(report).strip()
    return f"Answered: {report}" if report else text
