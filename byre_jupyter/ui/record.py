"""The static mimebundles that replace the live widget when a turn ends.

:func:`static_outputs` returns the outputs to show in the cell with ``update_display`` /
``display``: first the whole exchange as ``text/markdown`` + ``text/html`` + ``text/plain``
(with ``byre`` metadata), then one output per image, so each image is stored exactly once
and the saved notebook reads on GitHub, nbviewer and nbconvert without a kernel
(docs/kernel.md, section 4: the static replacement).

Size: the images of one turn share a byte budget (``TurnView.image_budget``, or the
``image_budget`` keyword); an image that does not fit is downscaled when Pillow happens to be
importable (it is not a dependency), otherwise replaced by a note with its type and size.

Safety: the HTML structure is ours; every string from the model, a tool or the wire is escaped
(or, for model markdown, rendered by :func:`render_markdown`) at the leaf. A final
:func:`nh3.clean` pass with our own small allow-list (which keeps ``style`` attributes but no
``<style>``/``<script>`` tags, ``on*`` attributes or ``javascript:`` URLs) is a second fence.
The ``text/markdown`` is inert by construction (:func:`inert_markdown`, :func:`inert_line`,
:func:`code_fence`; docs/security.md, "Markdown we publish"). A stale answer
(``TurnView.stale``) has its mark above it in every type, the answer dimmed in the HTML.
Pure module.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable, Mapping
from typing import Any

import nh3

from byre_jupyter.protocol import Image
from byre_jupyter.tools.bounded import clip
from byre_jupyter.tools.notebook import ANSWER_CHARS
from byre_jupyter.ui.format import (
    card_input_note,
    card_input_text,
    card_result_text,
    card_title,
    footer_parts,
    image_caption,
    image_numbers,
    prompt_preview,
    truncate,
)
from byre_jupyter.ui.highlight import CODE_STYLE_PROPERTIES
from byre_jupyter.ui.markdown import (
    MATH_IGNORE,
    MATH_PROCESS,
    code_fence,
    escape_text,
    inert_line,
    inert_markdown,
    normalize_newlines,
    open_verbatim,
    render_markdown,
)
from byre_jupyter.ui.style import ACCENT, TURN_STYLE
from byre_jupyter.ui.toolinfo import tool_info
from byre_jupyter.ui.viewmodel import (
    BlockView,
    ImageView,
    NoticeView,
    StaleMark,
    TextView,
    ThinkingView,
    ToolCardView,
    TurnView,
    UndoMark,
)

__all__ = [
    "Output",
    "block_html",
    "final_clean",
    "prompt_line",
    "stale_text",
    "static_outputs",
    "terminal_text",
    "turn_html",
    "turn_markdown",
    "waiting_bundle",
    "waiting_text",
]

#: One display output: (mimebundle, metadata).
Output = tuple[dict[str, str], dict[str, Any]]

_ACCENT = ACCENT
_STYLES = {
    "turn": TURN_STYLE,
    "prompt": "opacity:0.7;font-size:0.9em;white-space:pre-wrap",
    "dim": "opacity:0.7",
    "pre": "max-height:24em;overflow:auto;font-size:0.85em;margin:0.2em 0",
    "error": "color:#c0392b",
    "nest": f"margin-left:1em;padding-left:0.6em;border-left:1px solid {_ACCENT}",
    "footer": "opacity:0.6;font-size:0.85em;margin-top:0.3em",
    "notice": "opacity:0.8;font-size:0.9em;margin:0.2em 0",
}

# The whole-bundle allow-list: what render_markdown emits plus our own structure.
_TAGS = {
    "a", "b", "blockquote", "br", "code", "del", "details", "div", "em", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "li", "ol", "p", "pre", "s", "span", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ATTRS = {
    "*": {"style", "class"},
    "a": {"href", "title"},
    "span": {"title"},  # a hidden character's name (ui/reveal.py), shown on hover
    "td": {"align"},
    "th": {"align"},
    "ol": {"start"},
}
_STYLE_PROPERTIES = {
    "border-left", "color", "font-size", "margin", "margin-left", "margin-top", "max-height",
    "opacity", "overflow", "padding", "padding-left", "white-space", *CODE_STYLE_PROPERTIES,
}  # fmt: skip


def final_clean(fragment: str) -> str:
    """The record's last fence (its allow-list); the live view's pieces pass it too."""
    return nh3.clean(
        fragment,
        tags=_TAGS,
        attributes=_ATTRS,
        url_schemes={"http", "https", "mailto"},
        filter_style_properties=_STYLE_PROPERTIES,
        link_rel="noopener noreferrer",
    )


def _pre(text: str, *, error: bool = False) -> str:
    style = _STYLES["pre"] + (";" + _STYLES["error"] if error else "")
    return f'<pre style="{style}">{escape_text(truncate(text))}</pre>'


# --- HTML -----------------------------------------------------------------------------------


def _html_blocks(blocks: list[BlockView], numbers: dict[str, int]) -> list[str]:
    return [part for b in blocks for part in [_html_block(b, numbers)] if part]


@functools.singledispatch
def _html_block(block: BlockView, numbers: dict[str, int]) -> str:
    """One block as sanitized HTML: one function per block type (``.register``), ``""`` for a
    type this format does not show."""
    return ""


@_html_block.register
def _(block: TextView, numbers: dict[str, int]) -> str:
    if not block.text.strip():
        return ""
    return f'<div class="{MATH_PROCESS}">{render_markdown(block.text)}</div>'


@_html_block.register
def _(block: ThinkingView, numbers: dict[str, int]) -> str:
    if not block.text.strip():
        return ""
    return (
        f'<details><summary style="{_STYLES["dim"]}">Thinking</summary>'
        f'<div style="{_STYLES["dim"]}">{render_markdown(block.text)}</div></details>'
    )


@_html_block.register
def _(block: NoticeView, numbers: dict[str, int]) -> str:
    style = _STYLES["notice"]
    if block.notice_kind == "error":
        style += ";" + _STYLES["error"]
    if block.notice_kind == "plan":  # Claude's plan, as a plan: model Markdown, sanitized
        return (
            f'<div class="byre-plan-record" style="{_STYLES["notice"]}"><b>Claude\'s plan</b>'
            f"{render_markdown(block.text)}</div>"
        )
    if block.notice_kind == "question":  # one line per question and its answer
        style += ";white-space:pre-wrap"
    return f'<div style="{style}">{escape_text(_notice_text(block))}</div>'


@_html_block.register
def _(block: ImageView, numbers: dict[str, int]) -> str:
    return f"<div>(image {numbers.get(block.id, '?')} below)</div>"


@_html_block.register
def _html_card(card: ToolCardView, numbers: dict[str, int]) -> str:
    title = escape_text(card_title(card, numbers))
    if card.is_error:
        title = f'<span style="{_STYLES["error"]}">{title}</span>'
    body: list[str] = []
    shown_input = card_input_text(card)
    if shown_input:
        body.append(_pre(shown_input))
    if note := card_input_note(card):
        body.append(f'<div style="{_STYLES["dim"]}">{escape_text(note)}</div>')
    children = _html_blocks(card.children, numbers)
    if children:
        body.append(f'<div style="{_STYLES["nest"]}">{"".join(children)}</div>')
    result = card_result_text(card)
    if result and _answers_in_markdown(card):
        body.append(render_markdown(truncate(result)))
    elif result:
        body.append(_pre(result, error=card.is_error))
    return f"<details><summary>{title}</summary>{''.join(body)}</details>"


def _answers_in_markdown(card: ToolCardView) -> bool:
    """A subagent's report is Markdown, written by a model: the record shows it as the answer's
    own text is shown (as the live view does), not as code."""
    return tool_info(card.name).subagent and not card.is_error


def block_html(block: BlockView) -> str:
    """One block as the record's HTML shows it (the live view draws notices so)."""
    return final_clean(_html_block(block, {}))


def _notice_text(notice: NoticeView) -> str:
    marks = {
        "error": "Error: ",
        "retry": "Retry: ",
        "warning": "Warning: ",
        "permission": "Permission denied: ",
        "approved": "Approved: ",
        "applied": "Applied: ",
        "refused": "Not applied: ",
    }
    return marks.get(notice.notice_kind, "") + notice.text


def _prompt_line(view: TurnView, numbers: dict[str, int]) -> str:
    prompt = escape_text(prompt_preview(view.prompt))
    attached = "".join(f" (image {numbers[i.id]} below)" for i in view.attached_images)
    return (
        f'<div style="{_STYLES["prompt"]}"><b>{escape_text(view.session_name)}</b> ▸ '
        f"{prompt}{escape_text(attached)}</div>"
    )


def prompt_line(view: TurnView) -> str:
    """The record's first line ("session ▸ prompt"), sanitized: the live view shows it too,
    so the swap to the record keeps it where it was."""
    return final_clean(_prompt_line(view, image_numbers(view)))


def turn_html(view: TurnView) -> str:
    """The whole exchange as self-contained, sanitized HTML (no images embedded)."""
    numbers = image_numbers(view)
    parts = [
        f'<div class="byre-turn {MATH_IGNORE}" style="{_STYLES["turn"]}">',
        _prompt_line(view, numbers),
        *_html_blocks(view.blocks, numbers),
        f'<div style="{_STYLES["footer"]}">{escape_text(" · ".join(footer_parts(view)))}</div>',
        "</div>",
    ]
    return final_clean("".join(parts))


# --- the stale mark -------------------------------------------------------------------------

#: The class of the mark at the top of a stale answer; the frontend bridge adds its "Run again"
#: button to a mark that names the cell showing it (``data-byre-rerun``, docs/bridge.md).
STALE_CLASS = "byre-stale"
_STALE_STYLE = "color:var(--jp-warn-color0,#a15c00);font-size:0.9em;margin:0.2em 0"
#: The answer below the mark: dimmed, still readable and selectable.
_STALE_DIM = "opacity:0.55"


def stale_text(mark: StaleMark) -> str:
    """The mark in user terms: what happened, and how to update the answer without the bridge."""
    cell = f"cell [{mark.since}]" if mark.since is not None else "an earlier cell"
    return (
        f"⚠ Out of date: {cell} was run again after this answer. "
        "Run this cell again (Shift+Enter) to update it."
    )


def _stale_html(mark: StaleMark | None, record: str) -> str:
    """The sanitized ``record`` with the mark above it, dimmed; built outside nh3 from escaped
    parts, since the allow-list keeps no ``data-`` attribute (model HTML can never carry one)."""
    if mark is None:
        return record
    rerun = f' data-byre-rerun="{escape_text(mark.cell)}"' if mark.cell else ""
    return (
        f'<div class="{STALE_CLASS}" role="note"{rerun} style="{_STALE_STYLE}">'
        f"{escape_text(stale_text(mark))}</div>"
        f'<div class="byre-stale-answer" style="{_STALE_DIM}">{record}</div>'
    )


# --- the undo line --------------------------------------------------------------------------

#: The class of the line under a turn that changed cells; the frontend bridge adds its *Undo
#: this turn's edits* button to it (``data-byre-undo``, ``data-byre-session``, docs/bridge.md).
UNDO_CLASS = "byre-undo"
_UNDO_STYLE = "color:var(--jp-ui-font-color2,#616161);font-size:0.9em;margin:0.2em 0"


def undo_text(mark: UndoMark) -> str:
    """The line in user terms, with the command that works without the bridge's button."""
    session = "" if mark.session == "default" else f" -s {mark.session}"
    return (
        f"This turn changed notebook cells: %claude undo #{mark.turn}{session}, alone in a "
        "cell, takes its edits back."
    )


def _undo_html(mark: UndoMark | None) -> str:
    """Built from escaped parts outside nh3, like the stale mark: model HTML never carries a
    ``data-`` attribute, so the button's target is always the kernel's."""
    if mark is None:
        return ""
    return (
        f'<div class="{UNDO_CLASS}" role="note" data-byre-undo="{mark.turn}" '
        f'data-byre-session="{escape_text(mark.session)}" style="{_UNDO_STYLE}">'
        f"{escape_text(undo_text(mark))}</div>"
    )


# --- the waiting line -----------------------------------------------------------------------


def waiting_text(*, kept: bool) -> str:
    """The line a notebook saved during a turn holds in place of the answer. ``kept``: the
    kernel follows the cell for a page that goes away (docs/bridge.md, "Pending answers"), so
    the answer lands in it when the notebook is opened again."""
    line = "⏳ Claude was still answering when this notebook was saved."
    if kept:
        line += " If its kernel still runs, open the notebook again: the answer lands here."
    return line


def waiting_bundle(view: TurnView, *, kept: bool) -> dict[str, str]:
    """The live view's representations beside the widget: what a page without the kernel or
    the widget manager shows of a notebook saved while the turn ran (GitHub, nbviewer,
    ``nbconvert``), the prompt line and :func:`waiting_text`. The record replaces the whole
    output in its slot when the turn ends, so the line goes with it."""
    line = waiting_text(kept=kept)
    name, preview = view.session_name, prompt_preview(view.prompt)
    # No "(image n below)" for attached images: a saved live view has none below it.
    prompt = f"**{inert_line(name)}** ▸ {inert_line(preview)}"
    return {
        "text/plain": f"[{name}] ▸ {preview}\n\n{line}\n",
        "text/markdown": "\n".join(f"> {each}" for each in prompt.split("\n"))
        + f"\n\n*{inert_line(line)}*\n",
        "text/html": final_clean(
            f'<div class="byre-turn {MATH_IGNORE}" style="{_STYLES["turn"]}">'
            f'<div style="{_STYLES["prompt"]}"><b>{escape_text(name)}</b> ▸ '
            f"{escape_text(preview)}</div>"
            f'<div style="{_STYLES["notice"]}">{escape_text(line)}</div></div>'
        ),
    }


# --- markdown -------------------------------------------------------------------------------


#: How model Markdown goes into the Markdown of a turn: inert for what we publish as
#: ``text/markdown`` (:func:`inert_markdown`), as written for a source that
#: :func:`render_markdown` turns into sanitized HTML (the streaming draft, ``ui/draft.py``).
Prose = Callable[[str], str]


def _as_written(text: str) -> str:
    """Model Markdown as it is, a fence it left open closed: what follows is not code."""
    text = normalize_newlines(text)
    still_open = open_verbatim(text)
    return f"{text}\n{still_open.opener}" if still_open else text


def _trimmed(text: str) -> str:
    """Model text without its blank first and last lines; the first line keeps its indent
    (four spaces make it code, not a fence: not ``strip()``)."""
    return text.lstrip("\n").rstrip()


def _md_blocks(blocks: list[BlockView], numbers: dict[str, int], prose: Prose) -> list[str]:
    return [part for b in blocks for part in [_md_block(b, numbers, prose)] if part]


@functools.singledispatch
def _md_block(block: BlockView, numbers: dict[str, int], prose: Prose) -> str:
    """One block as Markdown (model text through ``prose``); ``""`` for a type not shown."""
    return ""


@_md_block.register
def _(block: TextView, numbers: dict[str, int], prose: Prose) -> str:
    return prose(_trimmed(block.text))


@_md_block.register
def _(block: ThinkingView, numbers: dict[str, int], prose: Prose) -> str:
    if not block.text.strip():
        return ""
    thinking = prose(_trimmed(block.text))
    return "\n".join(["> *Thinking*", ">", *(f"> {line}" for line in thinking.split("\n"))])


@_md_block.register
def _(block: NoticeView, numbers: dict[str, int], prose: Prose) -> str:
    if block.notice_kind == "plan":
        return f"*Claude's plan:*\n\n{prose(_trimmed(block.text))}"
    if block.notice_kind == "question":
        first, *rest = _notice_text(block).split("\n")
        return "\n".join([f"*{inert_line(first)}*", "", *(f"- {inert_line(r)}" for r in rest)])
    return f"*{inert_line(_notice_text(block))}*"


@_md_block.register
def _(block: ImageView, numbers: dict[str, int], prose: Prose) -> str:
    return f"(image {numbers.get(block.id, '?')} below)"


@_md_block.register
def _md_card(card: ToolCardView, numbers: dict[str, int], prose: Prose) -> str:
    parts = [f"**{inert_line(card_title(card, numbers))}**"]
    shown_input = card_input_text(card)
    if shown_input:
        info = "diff" if card.diff else ("bash" if card.name == "Bash" else "")
        parts.append(code_fence(truncate(shown_input), info))
    if note := card_input_note(card):
        parts.append(f"*{inert_line(note)}*")
    children = _md_blocks(card.children, numbers, prose)
    if children:
        nested = "\n\n".join(children)
        parts.append("\n".join(f"> {line}" if line else ">" for line in nested.split("\n")))
    result = card_result_text(card)
    if result and _answers_in_markdown(card):
        quoted = prose(truncate(result))
        parts.append("\n".join(f"> {line}" if line else ">" for line in quoted.split("\n")))
    elif result:
        parts.append(code_fence(truncate(result)))
    return "\n\n".join(parts)


def turn_markdown(view: TurnView, *, inert: bool = True) -> str:
    """The whole exchange as Markdown. ``inert`` (what we publish): nothing in it is live in
    any renderer; else model text stays as written, for :func:`render_markdown` only."""
    prose: Prose = inert_markdown if inert else _as_written
    numbers = image_numbers(view)
    attached = "".join(f" (image {numbers[i.id]} below)" for i in view.attached_images)
    prompt = "\n".join(
        f"> {line}"
        for line in (
            f"**{inert_line(view.session_name)}** ▸ "
            f"{inert_line(prompt_preview(view.prompt))}{attached}"
        ).split("\n")
    )
    parts = [
        prompt,
        *_md_blocks(view.blocks, numbers, prose),
        f"*{inert_line(' · '.join(footer_parts(view)))}*",
    ]
    return "\n\n".join(parts) + "\n"


# --- plain text -----------------------------------------------------------------------------


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.split("\n"))


def _text_blocks(blocks: list[BlockView], numbers: dict[str, int], max_lines: int) -> list[str]:
    return [part for b in blocks for part in [_text_block(b, numbers, max_lines)] if part]


@functools.singledispatch
def _text_block(block: BlockView, numbers: dict[str, int], max_lines: int) -> str:
    """One block as plain text; ``""`` for a type this format does not show (images are
    listed below the text)."""
    return ""


@_text_block.register
def _(block: TextView, numbers: dict[str, int], max_lines: int) -> str:
    return block.text.strip()


@_text_block.register
def _(block: ThinkingView, numbers: dict[str, int], max_lines: int) -> str:
    text = block.text.strip()
    return _indent(_head(text, max_lines), "  ┆ ") if text else ""


@_text_block.register
def _(block: NoticeView, numbers: dict[str, int], max_lines: int) -> str:
    return f"! {_notice_text(block)}"


@_text_block.register
def _(block: ToolCardView, numbers: dict[str, int], max_lines: int) -> str:
    lines = [f"● {card_title(block, numbers)}"]
    children = _text_blocks(block.children, numbers, max_lines)
    if children:
        lines.append(_indent("\n".join(children), "  │ "))
    if block.result_text and not block.denied:  # a denial's notice says it (card_result_text)
        result = _indent(_head(block.result_text.rstrip(), max_lines), "    ")
        lines.append("  ⎿ " + result[4:])
    return "\n".join(lines)


def _head(text: str, max_lines: int) -> str:
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text
    return "\n".join([*lines[:max_lines], f"… ({len(lines) - max_lines} more lines)"])


def terminal_text(view: TurnView, *, max_lines: int = 20) -> str:
    """The exchange as plain text (``text/plain`` and non-kernel use)."""
    numbers = image_numbers(view)
    header = f"[{view.session_name}] ▸ {prompt_preview(view.prompt)}"
    attached = [f"  (image {numbers[i.id]} below)" for i in view.attached_images]
    parts = [
        "\n".join([header, *attached]),
        *_text_blocks(view.blocks, numbers, max_lines),
        "— " + " · ".join(footer_parts(view)),
    ]
    return "\n\n".join(parts) + "\n"


# --- bundle ---------------------------------------------------------------------------------

#: Below these, a downscaled copy is not worth saving: the image is replaced by a note.
_MIN_DOWNSCALED = 4096
_MIN_SIDE = 16
#: Larger images are not decoded to be downscaled: a few compressed MB can declare a picture
#: that takes gigabytes once decoded (Pillow only refuses above ~179 million pixels).
_MAX_DECODE_PIXELS = 40_000_000


def _image_output(image: ImageView, number: int, left: int, budget: int) -> tuple[Output, int]:
    """The image's output and the bytes it takes of ``left``: whole, downscaled, or a note.

    ``budget`` is the turn's whole image budget, for the note.
    """
    caption = image_caption(image, number)
    picture = image.image  # its type decided where the image entered the view
    if picture is None:
        size = f"{image.size:,} bytes"
        return ({"text/plain": f"{caption[:-1]}, unsupported image data, {size}>"}, {}), 0
    if picture.size > left:
        smaller = _downscale(picture, left)
        if smaller is None:
            note = (
                f"{caption[:-1]}: {picture.media_type}, {_megabytes(picture.size)}, not saved "
                f"in the notebook: over the {_megabytes(budget)} of images a turn may save "
                "(Claude.max_saved_images_mb)>"
            )
            return ({"text/plain": note}, {}), 0
        picture, note = smaller
        caption = f"{caption[:-1]}, {note}>"
    return ({picture.media_type: picture.base64, "text/plain": caption}, {}), picture.size


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MB"


def _downscale(picture: Image, budget: int) -> tuple[Image, str] | None:
    """``(image, note)``: a smaller copy that fits ``budget``; None without Pillow."""
    if budget < _MIN_DOWNSCALED:
        return None
    try:
        from PIL import Image as Pil
    except ImportError:
        return None
    try:
        with Pil.open(io.BytesIO(picture.data)) as original:
            width, height = original.size  # from the header, before anything is decoded
            if width * height > _MAX_DECODE_PIXELS:
                return None
            original.load()
            # JPEG stays JPEG; anything else (a GIF's first frame too) becomes PNG.
            out_format, out_mime = (
                ("JPEG", "image/jpeg")
                if picture.media_type == "image/jpeg"
                else ("PNG", "image/png")
            )
            keep = ("RGB", "L") if out_format == "JPEG" else ("1", "L", "LA", "P", "RGB", "RGBA")
            if original.mode in keep:
                image = original.copy()
            else:
                image = original.convert("RGB" if out_format == "JPEG" else "RGBA")
    except (OSError, ValueError, Pil.DecompressionBombError):
        return None
    scale = math.sqrt(budget / picture.size) * 0.9
    for _ in range(8):
        size = (max(1, int(width * scale)), max(1, int(height * scale)))
        if min(size) < _MIN_SIDE:
            return None
        buffer = io.BytesIO()
        image.resize(size, Pil.Resampling.LANCZOS).save(buffer, format=out_format)
        if buffer.tell() <= budget:
            note = (
                f"downscaled from {width}x{height} ({_megabytes(picture.size)}) to "
                f"{size[0]}x{size[1]} to fit the turn's image budget"
            )
            # Encoded here, as ``out_format``: the type is the one Pillow wrote.
            return Image(buffer.getvalue(), out_mime), note
        scale *= 0.7
    return None


def _metadata(view: TurnView, extra: Mapping[str, Any]) -> dict[str, Any]:
    usage: dict[str, Any] = dict(view.usage) or {
        "input_tokens": view.tokens_in,
        "output_tokens": view.tokens_out,
    }
    return {
        "byre": {
            "session_id": view.session_id,
            "session_name": view.session_name,
            "model": view.model,
            "message_uuids": list(view.message_uuids),
            "result_uuid": view.result_uuid,
            "interrupted": view.interrupted,
            "is_error": view.is_error,
            "cost_usd": view.cost_usd,
            # Only when true: a model's record stays as it was.
            **({"scripted": True} if view.scripted else {}),
            "duration_s": view.duration_s,
            "usage": usage,
            # What a later read of the notebook returns of this turn (tools/notebook.py).
            "answer": clip(
                "\n\n".join(str(b.text) for b in view.blocks if isinstance(b, TextView)),
                ANSWER_CHARS,
            ),
            **extra,
        }
    }


def static_outputs(
    view: TurnView, *, image_budget: int | None = None, extra: Mapping[str, Any] | None = None
) -> list[Output]:
    """The exchange bundle (markdown + html + plain, with ``byre`` metadata), then images.

    Images hold at most ``image_budget`` bytes together (default: ``view.image_budget``).
    ``extra`` joins the ``byre`` metadata (the portable record: ``app.portable``).
    """
    mark = view.stale
    above = stale_text(mark) if mark is not None else None
    below = undo_text(view.undo) if view.undo is not None else None
    first: Output = (
        {
            # A stale answer: the mark first in every type, so nbconvert and GitHub show it too.
            "text/markdown": (f"*{inert_line(above)}*\n\n" if above else "")
            + turn_markdown(view)
            + (f"\n\n*{inert_line(below)}*" if below else ""),
            "text/html": _stale_html(mark, turn_html(view)) + _undo_html(view.undo),
            "text/plain": (f"{above}\n\n" if above else "")
            + terminal_text(view)
            + (f"\n\n{below}" if below else ""),
        },
        _metadata(view, extra or {}),
    )
    budget = view.image_budget if image_budget is None else image_budget
    left = budget
    images: list[Output] = []
    for n, image in enumerate(view.images(), start=1):
        output, used = _image_output(image, n, left, budget)
        images.append(output)
        left -= used
    return [first, *images]
