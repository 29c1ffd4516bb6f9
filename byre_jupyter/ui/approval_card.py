"""The approval card: Claude asks to run a tool, the user answers in the cell.

What is approved must be what is seen (a card that cut the command at 8,000
characters, titled itself with the model's own description and passed U+202E through let a
user approve something other than what they read), so:

* :func:`describe_request` (pure) says what the tool will do in a :class:`ToolRequest`: a
  title in our own words built from the tool's name and input ("Run a shell command",
  "Write /p/f.py (1,234 lines)"), and the *whole* command, code, file content or diff, never
  cut. Input keys it does not lay out itself are listed too, so nothing sent is left out.
* Free text from the model about its own call (Bash's ``description``) is never the title: it
  is shown as a quoted claim, "Claude says: “…”".
* Every piece of model text goes through :mod:`byre_jupyter.ui.reveal`, so bidi overrides,
  zero-width characters and fake line breaks show as ``⟨U+202E⟩`` markers, and is escaped at
  the leaf.

:class:`ApprovalCard` shows that with *Allow once*, *Always allow (session)* and *Deny* (with
an optional reason) and resolves an asyncio future with the answer. The body sits in a box of
bounded height that scrolls, headed by its size, so a 20,000-character command is all there.
Button callbacks may run on another thread, so they only hand the click to the loop.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from byre_jupyter.ui.markdown import escape_text
from byre_jupyter.ui.reveal import count_hidden, reveal, reveal_html
from byre_jupyter.ui.toolinfo import tool_diff, tool_label

__all__ = [
    "ApprovalCard",
    "ApprovalDecision",
    "ToolRequest",
    "describe_request",
    "describe_tool_request",
]

Choice = Literal["allow", "always", "deny"]
BodyKind = Literal["command", "code", "content", "diff", "prompt", "input"]

#: Input keys holding the model's own words about its call: shown only as a quoted claim.
CLAIM_KEYS = ("description",)

_BODY_LABELS: dict[BodyKind, str] = {
    "command": "Command",
    "code": "Code",
    "content": "File content",
    "diff": "Changes",
    "prompt": "Prompt",
    "input": "Input",
}
# Above this the box surely scrolls; the size line then says so.
_SCROLL_HINT_LINES = 18
_SCROLL_HINT_CHARS = 1_500


@dataclass(frozen=True)
class ApprovalDecision:
    choice: Choice
    reason: str = ""

    @property
    def allowed(self) -> bool:
        return self.choice != "deny"


@dataclass(frozen=True)
class ToolRequest:
    """What one tool call will do, laid out for a person. Model text is kept raw here;
    :attr:`title`, :attr:`detail` and the card reveal hidden characters when they show it."""

    tool_name: str
    #: The title before revealing: our words, plus the path/URL/name the call acts on.
    heading: str
    #: The model's own words about the call (its ``description``): only ever shown quoted.
    claim: str = ""
    kind: BodyKind = "input"
    #: Everything that will run, whole: the command, the code, the file content, the diff.
    body: str = ""
    #: The other input keys, one ``key: value`` each (multi-line values indented).
    extra: str = ""

    @property
    def title(self) -> str:
        """The title as plain text, hidden characters (newlines too) as ``⟨U+202E⟩`` markers."""
        return reveal(self.heading, one_line=True)

    @property
    def detail(self) -> str:
        """Body and other input as plain text, hidden characters as markers."""
        return reveal("\n".join(part for part in (self.body, self.extra) if part))

    @property
    def summary(self) -> str:
        """One line for the record of a decision: the title, and for a command or code its
        first line (clipped), so the saved notebook says what was allowed or denied."""
        if self.kind not in ("command", "code") or not self.body.strip():
            return self.title
        lines = self.body.strip().split("\n")
        first = lines[0] if len(lines[0]) <= _SUMMARY_CHARS else lines[0][:_SUMMARY_CHARS] + "…"
        more = f" (+{_count(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
        return f"{self.title}: {reveal(first, one_line=True)}{more}"

    @property
    def hidden_count(self) -> int:
        return count_hidden(self.heading, one_line=True) + sum(
            count_hidden(t) for t in (self.claim, self.body, self.extra)
        )


# --- describing a request -------------------------------------------------------------------

_SUMMARY_CHARS = 160

_KEY = re.compile(r"[A-Za-z_][\w.-]*")


def _key_text(key: object) -> str:
    text = str(key)
    return text if _KEY.fullmatch(text) else json.dumps(text, ensure_ascii=False)


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return repr(value)


def input_lines(tool_input: Mapping[str, Any], skip: tuple[str, ...] = ()) -> str:
    """Every key of ``tool_input`` but ``skip`` as ``key: value``, readable and complete.

    A multi-line value starts on the next line, indented, so no value can fake a key line.
    """
    out: list[str] = []
    for key, value in tool_input.items():
        if key in skip:
            continue
        text = _value_text(value)
        if "\n" in text:
            out.append(f"{_key_text(key)}:")
            out.extend(f"    {line}" for line in text.split("\n"))
        else:
            out.append(f"{_key_text(key)}: {text}")
    return "\n".join(out)


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def line_count(text: str) -> int:
    """Lines as an editor counts them: a final newline does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _claim(tool_input: Mapping[str, Any]) -> str:
    return "\n".join(_value_text(tool_input[k]) for k in CLAIM_KEYS if k in tool_input)


def _heading(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def _generic(tool_name: str, tool_input: Mapping[str, Any], heading: str) -> ToolRequest:
    return ToolRequest(
        tool_name,
        heading,
        claim=_claim(tool_input),
        kind="input",
        body=input_lines(tool_input, CLAIM_KEYS),
    )


def _string_body(
    tool_name: str,
    tool_input: Mapping[str, Any],
    heading: str,
    key: str,
    kind: BodyKind,
    consumed: tuple[str, ...] = (),
) -> ToolRequest:
    """The common shape: one key is the body, the rest is listed beneath it."""
    value = tool_input.get(key)
    if not isinstance(value, str):
        return _generic(tool_name, tool_input, heading)
    return ToolRequest(
        tool_name,
        heading,
        claim=_claim(tool_input),
        kind=kind,
        body=value,
        extra=input_lines(tool_input, (key, *consumed, *CLAIM_KEYS)),
    )


Describer = Callable[[str, Mapping[str, Any]], ToolRequest]
_DESCRIBERS: dict[str, Describer] = {}


def _describes(*names: str) -> Callable[[Describer], Describer]:
    def register(fn: Describer) -> Describer:
        for name in names:
            _DESCRIBERS[name] = fn
        return fn

    return register


def _text(tool_input: Mapping[str, Any], key: str) -> str:
    value = tool_input.get(key)
    return value if isinstance(value, str) else ""


@_describes("Bash")
def _bash(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    where = " in the background" if tool_input.get("run_in_background") is True else ""
    return _string_body(name, tool_input, f"Run a shell command{where}", "command", "command")


@_describes("mcp__byre__python")
def _python(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    return _string_body(name, tool_input, "Run Python in your kernel", "code", "code")


@_describes("Write")
def _write(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    content = tool_input.get("content")
    size = ""
    if isinstance(content, str):
        size = f"({_count(line_count(content), 'line')})" if content else "(empty file)"
    heading = _heading("Write", _text(tool_input, "file_path"), size)
    return _string_body(name, tool_input, heading, "content", "content", ("file_path",))


@_describes("Edit")
def _edit(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    every = "(every occurrence)" if tool_input.get("replace_all") is True else ""
    heading = _heading("Edit", _text(tool_input, "file_path"), every)
    diff = tool_diff(name, tool_input, context=None)
    if diff is None:
        return _generic(name, tool_input, heading)
    # replace_all is in the title when true; anything but a bool is listed as it came.
    flag = ("replace_all",) if isinstance(tool_input.get("replace_all"), bool) else ()
    consumed = ("file_path", "old_string", "new_string", *flag, *CLAIM_KEYS)
    return ToolRequest(
        name,
        heading,
        claim=_claim(tool_input),
        kind="diff",
        body=diff,
        extra=input_lines(tool_input, consumed),
    )


@_describes("MultiEdit")
def _multi_edit(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    path = _text(tool_input, "file_path")
    edits = tool_input.get("edits")
    valid = isinstance(edits, list) and all(
        isinstance(e, Mapping)
        and isinstance(e.get("old_string"), str)
        and isinstance(e.get("new_string"), str)
        for e in edits
    )
    if not isinstance(edits, list) or not valid:
        return _generic(name, tool_input, _heading("Edit", path))
    parts: list[str] = []
    for n, edit in enumerate(edits, start=1):
        every = " (every occurrence)" if edit.get("replace_all") is True else ""
        parts.append(f"Change {n} of {len(edits)}{every}:")
        parts.append(tool_diff("Edit", {**edit, "file_path": path}, context=None) or "")
        flag = ("replace_all",) if isinstance(edit.get("replace_all"), bool) else ()
        rest = input_lines(edit, ("old_string", "new_string", *flag))
        if rest:
            parts.append(rest)
    return ToolRequest(
        name,
        _heading("Edit", path, f"({_count(len(edits), 'change')})"),
        claim=_claim(tool_input),
        kind="diff",
        body="\n".join(parts),
        extra=input_lines(tool_input, ("file_path", "edits", *CLAIM_KEYS)),
    )


@_describes("NotebookEdit")
def _notebook_edit(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    heading = _heading("Edit notebook", _text(tool_input, "notebook_path"))
    return _string_body(name, tool_input, heading, "new_source", "code", ("notebook_path",))


@_describes("Agent", "Task")
def _agent(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    return _string_body(name, tool_input, "Start a subagent", "prompt", "prompt")


def _titled(action: str, key: str | None = None, after: str = "") -> Describer:
    """A tool whose title may name one input value; all of its input is listed below."""

    def describe(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
        named = _text(tool_input, key) if key else ""
        return _generic(name, tool_input, _heading(action, named, after))

    return describe


for _name, _describer in {
    "Read": _titled("Read", "file_path"),
    "Grep": _titled("Search file contents for", "pattern"),
    "Glob": _titled("List files matching", "pattern"),
    "WebFetch": _titled("Fetch", "url"),
    "WebSearch": _titled("Search the web for", "query"),
    "mcp__byre__variables": _titled("List the variables in your kernel"),
    "mcp__byre__inspect": _titled("Inspect", "name", "in your kernel"),
    "mcp__byre__history": _titled("Read your recent cells"),
}.items():
    _describes(_name)(_describer)


def describe_request(tool_name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """What the tool call will do, in full (pure)."""
    describe = _DESCRIBERS.get(tool_name)
    if describe is not None:
        return describe(tool_name, tool_input)
    return _generic(tool_name, tool_input, f"Use {tool_label(tool_name)}")


def describe_tool_request(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, str]:
    """``(title, detail)`` in plain text, hidden characters as markers: what the tool is about
    to do. The title is ours (never the model's description); the detail is complete."""
    request = describe_request(tool_name, tool_input)
    return request.title, request.detail


# --- the card -------------------------------------------------------------------------------

# The widget's own line-height is the 28 px of an input row; text here reads better tighter.
_WRAP = "overflow-wrap:anywhere;word-break:break-word;line-height:1.4"
_PRE = (
    "max-height:20em;overflow:auto;white-space:pre-wrap;" + _WRAP + ";font-size:0.85em;"
    "margin:0.2em 0;padding:0.3em;border:1px solid var(--jp-border-color2, #ccc)"
)
_DIM = "font-size:0.85em;opacity:0.75;line-height:1.4"


def _size_line(label: str, text: str) -> str:
    lines = line_count(text)
    parts = [label, _count(lines, "line"), _count(len(text), "character")]
    if lines > _SCROLL_HINT_LINES or len(text) > _SCROLL_HINT_CHARS:
        parts.append("scroll the box to see all of it")
    return " · ".join(parts)


def header_html(request: ToolRequest) -> str:
    """Our title; then the model's claim, quoted; then a warning if anything was hidden."""
    parts = [
        f'<div class="byre-approval-title" style="{_WRAP};max-height:8em;overflow:auto">'
        f"<b>Claude asks:</b> {reveal_html(request.heading, one_line=True)}</div>"
    ]
    if request.claim:
        parts.append(
            f'<div class="byre-approval-claim" style="{_DIM};{_WRAP};white-space:pre-wrap;'
            'max-height:6em;overflow:auto">Claude says: “<i>'
            f"{reveal_html(request.claim)}</i>”</div>"
        )
    hidden = request.hidden_count
    if hidden:
        what = (
            "an invisible or control character"
            if hidden == 1
            else (f"{hidden:,} invisible or control characters")
        )
        parts.append(
            '<div class="byre-approval-hidden" '
            'style="color:#c0392b;font-size:0.9em;line-height:1.4">'
            f"⚠ This request holds {what}, shown as ⟨U+…⟩ markers.</div>"
        )
    return "".join(parts)


def body_html(request: ToolRequest) -> str:
    """The whole body in a scrolling box headed by its size, then the other input."""
    parts: list[str] = []
    if request.body:
        size = escape_text(_size_line(_BODY_LABELS[request.kind], request.body))
        parts.append(f'<div class="byre-approval-size" style="{_DIM}">{size}</div>')
        parts.append(
            f'<pre class="byre-approval-body" style="{_PRE}">{reveal_html(request.body)}</pre>'
        )
    if request.extra:
        parts.append(f'<div style="{_DIM}">Other input</div>')
        parts.append(
            f'<pre class="byre-approval-extra" style="{_PRE}">{reveal_html(request.extra)}</pre>'
        )
    return "".join(parts)


class ApprovalCard:
    """A live card with the three answers; ``await card.decision`` to get one."""

    def __init__(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        *,
        loop: asyncio.AbstractEventLoop,
        own: Callable[[Any], Any] = lambda w: w,
    ) -> None:
        import ipywidgets as W

        self.request = describe_request(tool_name, tool_input)
        self.title, self.detail = self.request.title, self.request.detail
        self._loop = loop
        self.decision: asyncio.Future[ApprovalDecision] = loop.create_future()

        def full_width() -> Any:
            # 100% plus the widget's default 2 px side margins would overflow the card.
            return own(W.Layout(width="100%", margin="2px 0"))

        header = own(W.HTML(header_html(self.request), layout=full_width()))
        body = own(W.HTML(body_html(self.request), layout=full_width()))

        def make_button(description: str, style: str, icon: str) -> Any:
            return own(
                W.Button(
                    description=description,
                    button_style=style,
                    icon=icon,
                    layout=own(W.Layout(width="auto")),  # the default width cuts the labels
                )
            )

        self.allow = make_button("Allow once", "success", "check")
        self.always = make_button("Always allow (session)", "", "check-double")
        self.deny = make_button("Deny", "danger", "times")
        self.reason = own(
            W.Text(
                placeholder="reason (optional, sent to Claude)",
                # Synced on blur, i.e. before the click that blurs it reaches the kernel: a
                # per-key sync could still sit in the browser's buffer when Deny arrives.
                continuous_update=False,
                layout=own(W.Layout(width="auto", flex="1 1 14em", min_width="10em")),
            )
        )
        for button, choice in ((self.allow, "allow"), (self.always, "always"), (self.deny, "deny")):
            button.on_click(lambda _b, c=choice: self._clicked(c))
        # Wrap, so a narrow notebook shows every answer instead of cutting the row.
        buttons = own(
            W.HBox(
                (self.allow, self.always, self.deny, self.reason),
                layout=own(W.Layout(flex_flow="row wrap")),
            )
        )
        self.widget = own(
            W.VBox(
                (header, body, buttons),
                layout=own(W.Layout(border="1px solid #d4a017", padding="0.3em", margin="0.3em 0")),
            )
        )
        # The live view makes it an alertdialog named by its title, and shows it when it waits.
        self.widget.add_class("byre-approval-card")

    def _clicked(self, choice: Choice) -> None:  # any thread
        reason = str(self.reason.value or "")
        self._loop.call_soon_threadsafe(self._resolve, ApprovalDecision(choice, reason))

    def _resolve(self, decision: ApprovalDecision) -> None:
        if not self.decision.done():
            self.decision.set_result(decision)
        for button in (self.allow, self.always, self.deny):
            button.disabled = True
        self.reason.disabled = True

    def reject(self, reason: str) -> None:
        """Stop/■ or the turn ended: answer deny without a click."""
        self._resolve(ApprovalDecision("deny", reason))
