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
an optional reason) and resolves an asyncio future with the answer, the session's one decision
type (an ``Allow`` or a ``Deny``). Next to the buttons it says, in words, what *Always allow*
covers (the exact command, a prefix rule the user picks, the file, the tool: ui/toolinfo.py's
table, docs/security.md "What the allowances cover"); the ``Allow`` carries that allowance. The
body sits in a box of bounded height that scrolls, headed by its size, so a 20,000-character
command is all there. Button callbacks may run on another thread, so they only hand the click
to the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from byre_jupyter.session.permissions import Allow, Allowance, Decision, Deny
from byre_jupyter.ui.edit_card import review_text
from byre_jupyter.ui.highlight import highlight_body
from byre_jupyter.ui.markdown import escape_text
from byre_jupyter.ui.reveal import count_hidden, count_lookalikes, reveal, reveal_html
from byre_jupyter.ui.toolinfo import (
    ApprovalKind,
    allowance_choices,
    allowance_text,
    allowance_words,
    input_lines,
    shows_rule,
    tool_diff,
    tool_info,
    tool_label,
    value_text,
)

__all__ = [
    "ALWAYS_LABEL",
    "ApprovalCard",
    "ToolRequest",
    "describe_request",
    "describe_tool_request",
]

Choice = Literal["allow", "always", "deny"]
ALWAYS_LABEL = "Always allow (session)"
BodyKind = Literal["command", "code", "cell", "content", "diff", "prompt", "input"]

#: Input keys holding the model's own words about its call: shown only as a quoted claim.
CLAIM_KEYS = ("description",)

_BODY_LABELS: dict[BodyKind, str] = {
    "command": "Command",
    "code": "Code",
    "cell": "Cell source",
    "content": "File content",
    "diff": "Changes",
    "prompt": "Prompt",
    "input": "Input",
}
#: The language a body is highlighted as (ui/highlight.py); the others are shown plain.
_BODY_LANGUAGES: dict[BodyKind, str] = {
    "command": "bash",
    "code": "python",
    "cell": "python",
    "diff": "diff",
}
# Above this the box surely scrolls; the size line then says so.
_SCROLL_HINT_LINES = 18
_SCROLL_HINT_CHARS = 1_500


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

    @property
    def lookalike_count(self) -> int:
        """Letters passing for Latin ones: another script's (a Cyrillic i in github.com, a
        Lisu I), a Latin one drawn like another (a dotless i, a small capital), a stray mark."""
        return sum(count_lookalikes(t) for t in (self.heading, self.claim, self.body, self.extra))


# --- describing a request -------------------------------------------------------------------

_SUMMARY_CHARS = 160


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def line_count(text: str) -> int:
    """Lines as an editor counts them: a final newline does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _claim(tool_input: Mapping[str, Any]) -> str:
    return "\n".join(value_text(tool_input[k]) for k in CLAIM_KEYS if k in tool_input)


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
#: One describer per ``ToolInfo.approval`` kind (ui/toolinfo.py says which tool has which).
_DESCRIBERS: dict[ApprovalKind, Describer] = {}


def _describes(kind: ApprovalKind) -> Callable[[Describer], Describer]:
    def register(fn: Describer) -> Describer:
        _DESCRIBERS[kind] = fn
        return fn

    return register


def _text(tool_input: Mapping[str, Any], key: str) -> str:
    value = tool_input.get(key)
    return value if isinstance(value, str) else ""


@_describes("bash")
def _bash(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    where = " in the background" if tool_input.get("run_in_background") is True else ""
    return _string_body(name, tool_input, f"Run a shell command{where}", "command", "command")


@_describes("python")
def _python(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    return _string_body(name, tool_input, "Run Python in your kernel", "code", "code")


@_describes("write")
def _write(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    content = tool_input.get("content")
    size = ""
    if isinstance(content, str):
        size = f"({_count(line_count(content), 'line')})" if content else "(empty file)"
    heading = _heading("Write", _text(tool_input, "file_path"), size)
    return _string_body(name, tool_input, heading, "content", "content", ("file_path",))


@_describes("edit")
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


@_describes("multi_edit")
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


@_describes("notebook_edit")
def _notebook_edit(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    heading = _heading("Edit notebook", _text(tool_input, "notebook_path"))
    return _string_body(name, tool_input, heading, "new_source", "code", ("notebook_path",))


@_describes("notebook_edits")
def _notebook_edits(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """One review card per edit_notebook batch: every touched cell's diff, whole."""
    review = review_text(tool_input)
    if review is None:
        return _generic(name, tool_input, "Edit the notebook")
    heading, body = review
    return ToolRequest(name, heading, kind="diff", body=body)


#: A cell's first line in its card's title is clipped here (the body holds it whole).
_FIRST_LINE_CHARS = 60


@_describes("run_cell")
def _run_cell(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """One cell run_cells runs: named as the user sees it, by its place and its first line
    ("Run cell 4: `df = load(...)`"); the source whole below."""
    position = tool_input.get("position")
    where = f"cell {position}" if type(position) is int else "a cell"
    source = _text(tool_input, "code")
    lines = [line for line in source.strip().split("\n") if line.strip()]
    first = lines[0].strip() if lines else ""
    if len(first) > _FIRST_LINE_CHARS or len(lines) > 1:
        first = first[:_FIRST_LINE_CHARS].rstrip() + "…"
    heading = f"Run {where}" + (f": `{first}`" if first else "")
    return _string_body(name, tool_input, heading, "code", "cell", ("position", "cell"))


@_describes("agent")
def _agent(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    return _string_body(name, tool_input, "Start a subagent", "prompt", "prompt")


@_describes("titled")
def _titled(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """A tool whose title may name one input value; all of its input is listed below."""
    info = tool_info(name)
    named = _text(tool_input, info.named) if info.named else ""
    return _generic(name, tool_input, _heading(info.action, named, info.after))


@_describes("generic")
def _any(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    return _generic(name, tool_input, f"Use {tool_label(name)}")


def describe_request(tool_name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """What the tool call will do, in full (pure)."""
    return _DESCRIBERS[tool_info(tool_name).approval](tool_name, tool_input)


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
# A command in the scope words is clipped here: the body above holds it whole.
_RULE_CHARS = 100


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
        parts.append(_warning(f"⚠ This request holds {what}, shown as ⟨U+…⟩ markers."))
    lookalikes = request.lookalike_count
    if lookalikes:
        what = (
            "a letter that passes for another one"
            if lookalikes == 1
            else f"{lookalikes:,} letters that pass for other ones"
        )
        what += " (another script's letter, a small capital, a dotless i or an added mark)"
        parts.append(_warning(f"⚠ This request holds {what}, shown as ⟨U+…⟩ markers."))
    return "".join(parts)


def _warning(text: str) -> str:
    return (
        '<div class="byre-approval-hidden" style="color:#c0392b;font-size:0.9em;line-height:1.4">'
        f"{escape_text(text)}</div>"
    )


def scope_html(choices: tuple[Allowance, ...]) -> str:
    """What *Always allow* covers, in words, beside the buttons (the one choice, or the
    words before the menu of choices)."""
    lead = f"<b>{ALWAYS_LABEL}</b> covers"
    if len(choices) > 1:
        return f'<div class="byre-approval-scope" style="{_DIM};{_WRAP}">{lead}:</div>'
    (only,) = choices
    # The exact input is the body above, and a whole tool's rule is its name, which the words
    # say already: either again would be noise.
    rule = f" ({allowance_text(only, _RULE_CHARS)})" if shows_rule(only) else ""
    words = escape_text(f"{allowance_words(only)}{rule}")
    return (
        f'<div class="byre-approval-scope" style="{_DIM};{_WRAP}">{lead} {words}, until the '
        "conversation ends.</div>"
    )


def body_html(request: ToolRequest) -> str:
    """The whole body in a scrolling box headed by its size, then the other input."""
    parts: list[str] = []
    if request.body:
        size = escape_text(_size_line(_BODY_LABELS[request.kind], request.body))
        parts.append(f'<div class="byre-approval-size" style="{_DIM}">{size}</div>')
        code = highlight_body(request.body, _BODY_LANGUAGES.get(request.kind))
        parts.append(f'<pre class="byre-approval-body" style="{_PRE}">{code}</pre>')
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
        self.decision: asyncio.Future[Decision] = loop.create_future()

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
        self.always = make_button(ALWAYS_LABEL, "", "check-double")
        self.deny = make_button("Deny", "danger", "times")
        self.reason = own(
            # A row of its own under the buttons, the card's whole width: squeezed beside them
            # (14em) an 88-character reason scrolled out of view. A one-line Text, not a
            # Textarea: its value syncs on blur before the Deny click, which the browser tests
            # of a typed reason hold it to (tests/integration/browser/test_approvals.py).
            W.Text(
                placeholder="reason (optional, sent to Claude)",
                # Synced on blur, i.e. before the click that blurs it reaches the kernel: a
                # per-key sync could still sit in the browser's buffer when Deny arrives.
                continuous_update=False,
                layout=own(W.Layout(width="auto", flex="1 1 100%", min_width="12em")),
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
        #: What "Always allow" may keep, the narrowest first; the menu picks one when there
        #: is a choice (a command: exactly it, or a prefix rule of its first words).
        self.choices = allowance_choices(tool_name, tool_input)
        self.scope = own(W.HTML(scope_html(self.choices), layout=full_width()))
        scope_row: tuple[Any, ...] = (self.scope,)
        self.scope_menu: Any = None
        if len(self.choices) > 1:
            self.scope_menu = own(
                W.Dropdown(
                    options=[
                        (
                            f"{allowance_words(c)} ({allowance_text(c, _RULE_CHARS)})"
                            if shows_rule(c)
                            else allowance_words(c),
                            n,
                        )
                        for n, c in enumerate(self.choices)
                    ],
                    value=0,
                    layout=own(W.Layout(width="auto", max_width="100%")),
                )
            )
            self.scope.layout = own(W.Layout(width="auto", margin="2px 0.4em 2px 0"))
            scope_row = (
                own(
                    W.HBox(
                        (self.scope, self.scope_menu),
                        layout=own(W.Layout(flex_flow="row wrap", align_items="center")),
                    )
                ),
            )
        self.widget = own(
            W.VBox(
                (header, body, buttons, *scope_row),
                layout=own(W.Layout(border="1px solid #d4a017", padding="0.3em", margin="0.3em 0")),
            )
        )
        # The live view makes it an alertdialog named by its title, and shows it when it waits.
        self.widget.add_class("byre-approval-card")

    def answer(self, choice: Choice, reason: str = "") -> Decision:
        """The decision a click on ``choice`` stands for (``always``: with the allowance the
        scope menu shows)."""
        if choice == "deny":
            return Deny(reason)
        if choice == "allow":
            return Allow()
        picked = self.scope_menu.value if self.scope_menu is not None else 0
        return Allow(remember=self.choices[picked if 0 <= picked < len(self.choices) else 0])

    def _clicked(self, choice: Choice) -> None:  # any thread
        decision = self.answer(choice, str(self.reason.value or ""))
        self._loop.call_soon_threadsafe(self._resolve, decision)

    def _resolve(self, decision: Decision) -> None:
        if not self.decision.done():
            self.decision.set_result(decision)
        for button in (self.allow, self.always, self.deny):
            button.disabled = True
        self.reason.disabled = True
        if self.scope_menu is not None:
            self.scope_menu.disabled = True

    def reject(self, reason: str) -> None:
        """Stop/■ or the turn ended: answer deny without a click."""
        self._resolve(Deny(reason))
