"""The approval card: Claude asks to run a tool, the user answers in the cell.

What is approved must be what is seen, so the card shows what ui/describe_call.py says the
call will do (:class:`~byre_jupyter.ui.describe_call.ToolRequest`: our title, the *whole*
command, code, file content or diff, every other input key), and:

* Free text from the model about its own call (Bash's ``description``) is never the title: it
  is shown as a quoted claim, "Claude says: “…”".
* Every piece of model text goes through :mod:`byre_jupyter.ui.reveal`, so bidi overrides,
  zero-width characters and fake line breaks show as ``⟨U+202E⟩`` markers, and is escaped at
  the leaf.

:class:`ApprovalCard` (on the frame every card shares, ui/card_frame.py) shows that with
*Allow once*, *Always allow (session)* and *Deny* (with an optional reason) and resolves its
future with the answer, the session's one decision type (an ``Allow`` or a ``Deny``). Next to
the buttons it says, in words, what *Always allow* covers (the exact command, a prefix rule
the user picks, the file, the tool: ui/toolinfo.py's table, docs/security.md "What the
allowances cover"); the ``Allow`` carries that allowance. The body sits in a box of bounded
height that scrolls, headed by its size, so a 20,000-character command is all there.
"""

from __future__ import annotations

from typing import Any, Literal

from byre_jupyter.session.permissions import Allow, Allowance, Decision, Deny
from byre_jupyter.ui.card_frame import CardFrame
from byre_jupyter.ui.describe_call import (
    BodyKind,
    ToolRequest,
    counted,
    describe_request,
    describe_tool_request,
    line_count,
)
from byre_jupyter.ui.highlight import highlight_body
from byre_jupyter.ui.markdown import escape_text
from byre_jupyter.ui.reveal import reveal_html
from byre_jupyter.ui.toolinfo import (
    allowance_choices,
    allowance_text,
    allowance_words,
    shows_rule,
)

# ToolRequest and the describers are ui/describe_call.py's; named here too because the card
# is where callers meet them.
__all__ = [
    "ALWAYS_LABEL",
    "ApprovalCard",
    "ToolRequest",
    "describe_request",
    "describe_tool_request",
]

Choice = Literal["allow", "always", "deny"]
ALWAYS_LABEL = "Always allow (session)"
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
    parts = [label, counted(lines, "line"), counted(len(text), "character")]
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


class ApprovalCard(CardFrame):
    """A live card with the three answers; ``await card.decision`` to get one."""

    def _build(self) -> list[Any]:
        W, own = self._W, self._own
        tool_name, tool_input = self.tool_name, self.tool_input
        self.request = describe_request(tool_name, tool_input)
        self.title, self.detail = self.request.title, self.request.detail

        header = self.html(header_html(self.request))
        body = self.html(body_html(self.request))
        self.allow = self.button("Allow once", "check", "success")
        self.always = self.button(ALWAYS_LABEL, "check-double")
        self.deny = self.button("Deny", "times", "danger")
        # A row of its own under the buttons, the card's whole width: squeezed beside them
        # (14em) an 88-character reason scrolled out of view. A one-line Text, not a Textarea:
        # its value syncs on blur before the Deny click, which the browser tests of a typed
        # reason hold it to (tests/integration/browser/test_approvals.py).
        self.reason = self.text_box("reason (optional, sent to Claude)")
        for button, choice in ((self.allow, "allow"), (self.always, "always"), (self.deny, "deny")):
            button.on_click(lambda _b, c=choice: self._clicked(c))
        buttons = self.row((self.allow, self.always, self.deny, self.reason), centred=False)
        #: What "Always allow" may keep, the narrowest first; the menu picks one when there
        #: is a choice (a command: exactly it, or a prefix rule of its first words).
        self.choices = allowance_choices(tool_name, tool_input)
        self.scope = self.html(scope_html(self.choices))
        scope_row: tuple[Any, ...] = (self.scope,)
        self.scope_menu: Any = None
        if len(self.choices) > 1:
            self.scope_menu = self.control(
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
            scope_row = (self.row((self.scope, self.scope_menu)),)
        return [header, body, buttons, *scope_row]

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
        self.settle(self.answer(choice, str(self.reason.value or "")))
