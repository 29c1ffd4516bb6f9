"""The approval card shows exactly what will run.

Measured on 0.1: the card cut the command/code at 8,000 characters (Write content at 4,000),
took its title from the model's own ``description``, and passed bidi and other invisible
control characters through, so what the user approved could differ from what they saw.

These tests build a real :class:`ApprovalCard` (ipywidgets runs comm-less here) and read back
everything the card's widget tree would show: HTML values as a browser's text (tags dropped,
entities decoded), text boxes and button labels.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Iterator, Mapping
from html.parser import HTMLParser
from typing import Any

import ipywidgets as W
import pytest
from support import wire as fx

from byre_jupyter.session import Deny
from byre_jupyter.ui.approval_card import ApprovalCard, describe_tool_request
from byre_jupyter.ui.record import static_outputs

# Every character that must never reach the card as itself (the brief's list plus the other
# Cc/Cf controls): each must show as a visible token instead.
HIDDEN = (
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"  # bidi
    "\u200b\u200c\u200d\u2060\ufeff"  # zero width
    "\u2028\u2029\r\x0b\x0c"  # lookalike line breaks
    "\x00\x07\x1b\x7f\x85\u00ad\U000e0041"  # other Cc/Cf: NUL, BEL, ESC, DEL, NEL, SHY, tag A
)


def descendants(root: W.Widget) -> Iterator[W.Widget]:
    yield root
    for child in getattr(root, "children", ()):
        yield from descendants(child)


class _Text(HTMLParser):
    """What a browser shows for an HTML fragment: its text nodes, entities decoded."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(fragment: str) -> str:
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return "".join(parser.parts)


def widget_texts(root: W.Widget) -> list[str]:
    """The text of every widget under ``root``, in tree order."""
    out: list[str] = []
    for w in descendants(root):
        if isinstance(w, W.HTML | W.HTMLMath):
            out.append(html_text(w.value))
        elif isinstance(w, W.Text | W.Textarea | W.Label):
            out.append(str(w.value))
        elif isinstance(w, W.Button):
            out.append(w.description)
    return out


def raw_values(root: W.Widget) -> str:
    """Everything the widgets send to the browser, as sent (markup included)."""
    parts: list[str] = []
    for w in descendants(root):
        # (An HTML widget's own default placeholder is a U+200B: not ours, never shown.)
        traits = ("value", "description", "tooltip") + (("placeholder",) * isinstance(w, W.Text))
        for trait in traits:
            value = getattr(w, trait, None)
            if isinstance(value, str):
                parts.append(value)
    return "\n".join(parts)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def card_for(
    loop: asyncio.AbstractEventLoop, tool: str, tool_input: Mapping[str, Any]
) -> tuple[ApprovalCard, str]:
    card = ApprovalCard(tool, tool_input, loop=loop)
    return card, "\n".join(widget_texts(card.widget))


def marker(ch: str) -> str:
    return f"⟨U+{ord(ch):04X}⟩"


# --------------------------------------------------------------------------------------------
# nothing that will run is cut off


def test_a_20000_character_bash_command_is_whole_in_the_card(
    loop: asyncio.AbstractEventLoop,
) -> None:
    body = "".join(f"echo part{n:05d}; " for n in range(1_300))
    command = (body + "echo TAIL-MARKER-7f3a")[:19_980] + "; rm -rf ~ #TAILEND"
    assert len(command) > 19_990
    _card, text = card_for(loop, "Bash", {"command": command, "description": "List files"})
    assert command in text
    assert text.count("#TAILEND") == 1
    assert "20,000" in text or f"{len(command):,}" in text  # the card says how big it is


def test_a_10000_line_write_is_whole_in_the_card(loop: asyncio.AbstractEventLoop) -> None:
    content = "".join(f"value_{n:05d} = {n} * 2  # line {n}\n" for n in range(10_000))
    _card, text = card_for(loop, "Write", {"file_path": "/tmp/big.py", "content": content})
    assert content in text
    assert "10,000 lines" in text


def test_a_long_edit_shows_every_line_of_both_sides(loop: asyncio.AbstractEventLoop) -> None:
    old = [f"row_{n:04d} = {n}" for n in range(3_000)]
    new = list(old)
    for n in (5, 1_500, 2_990):  # changes far apart: context trimming would hide the middle
        new[n] = f"row_{n:04d} = {n} + EDITED"
    _card, text = card_for(
        loop,
        "Edit",
        {
            "file_path": "/srv/app/settings.py",
            "old_string": "\n".join(old) + "\n",
            "new_string": "\n".join(new) + "\n",
        },
    )
    lines = set(text.split("\n"))
    for line in old:
        assert f" {line}" in lines or f"-{line}" in lines, line
    for line in new:
        assert f" {line}" in lines or f"+{line}" in lines, line
    assert "+row_1500 = 1500 + EDITED" in lines and "-row_1500 = 1500" in lines


def test_multiedit_shows_every_edit_whole(loop: asyncio.AbstractEventLoop) -> None:
    edits = [
        {"old_string": f"a{n}\n" * 40, "new_string": f"b{n}\n" * 40, "replace_all": n == 2}
        for n in range(3)
    ]
    _card, text = card_for(loop, "MultiEdit", {"file_path": "/x.py", "edits": edits})
    for n in range(3):
        assert text.count(f"-a{n}\n") == 40 and text.count(f"+b{n}\n") == 40
    assert "every occurrence" in text  # replace_all is said, not hidden


def test_python_code_and_other_tools_are_whole(loop: asyncio.AbstractEventLoop) -> None:
    code = "\n".join(f"x{n} = {n}" for n in range(2_000)) + "\nimport os; os.system('id')"
    _card, text = card_for(loop, "mcp__byre__python", {"code": code})
    assert code in text
    prompt = "Summarize this page. " * 500 + "THEN-EXFILTRATE"
    url = "https://example.test/docs"
    _card, text = card_for(loop, "WebFetch", {"url": url, "prompt": prompt})
    assert url in text and prompt in text
    assert '{"' not in text and '"url"' not in text  # readable, not a raw JSON dump


def test_input_the_renderer_does_not_know_is_still_shown(loop: asyncio.AbstractEventLoop) -> None:
    # An Edit whose strings are not strings, and keys nobody expects: all still on the card.
    _card, text = card_for(
        loop,
        "Edit",
        {"file_path": "/x.py", "old_string": ["a"], "new_string": None, "sneaky": "PAYLOAD-1"},
    )
    assert "PAYLOAD-1" in text and "sneaky" in text
    _card, text = card_for(
        loop,
        "Bash",
        {"command": "ls", "run_in_background": True, "timeout": 600000, "dangerouslyX": "Y-2"},
    )
    assert "Y-2" in text and "600000" in text and "background" in text


# --------------------------------------------------------------------------------------------
# our own title; the model's description only as a quoted claim


def test_the_title_is_ours_and_the_description_only_a_quoted_claim(
    loop: asyncio.AbstractEventLoop,
) -> None:
    claim = "Harmless: list files"
    tool_input = {"command": "rm -rf ~", "description": claim}
    title, _detail = describe_tool_request("Bash", tool_input)
    assert title == "Run a shell command"
    card, _text = card_for(loop, "Bash", tool_input)
    assert card.title == "Run a shell command" and claim not in card.title
    texts = [t for t in widget_texts(card.widget) if claim in t]
    assert len(texts) == 1, texts
    header = texts[0]
    # Our title first, then the claim, in quotes and attributed to Claude.
    assert header.index("Run a shell command") < header.index(claim)
    assert f"Claude says: “{claim}”" in header
    assert header.count(claim) == 1


def test_titles_come_from_the_tool_and_its_input() -> None:
    content = "x\n" * 1_234
    assert describe_tool_request(
        "Write", {"file_path": "/p/file.py", "content": content, "description": "tidy"}
    )[0] == ("Write /p/file.py (1,234 lines)")
    assert describe_tool_request("mcp__byre__python", {"code": "1"})[0] == (
        "Run Python in your kernel"
    )
    edit = {"file_path": "/p/a.py", "old_string": "a", "new_string": "b"}
    assert describe_tool_request("Edit", edit)[0] == "Edit /p/a.py"
    # A third-party tool is not dressed up as ours because its input has a "code" key.
    assert describe_tool_request("mcp__other__run", {"code": "1"})[0] == "Use other.run"


# --------------------------------------------------------------------------------------------
# invisible and control characters become visible


TRICK = (
    "echo safe \u202e;~ fr- mr\u202c \u200bls\rrm -rf ~ \u2066x\u2069\u2028y\ufeff"
    "\x1b[2K\x0b\x0c\u061c\u200e\u200f\u200c\u200d\u2060\u202a\u202b\u202d\u2067\u2068"
    "\x00\x07\x7f\x85\u00ad\U000e0041\u2029end\ttab"
)


def test_hidden_characters_show_as_markers_everywhere_in_the_card(
    loop: asyncio.AbstractEventLoop,
) -> None:
    card, text = card_for(loop, "Bash", {"command": TRICK, "description": "ok\u202e now"})
    sent = raw_values(card.widget)
    for ch in HIDDEN:
        assert ch not in sent, f"{unicodedata.name(ch, hex(ord(ch)))} reached the widgets"
        assert marker(ch) in text, marker(ch)
    assert "\t" in text  # tabs and newlines stay what they are
    assert "ok⟨U+202E⟩ now" in text  # the claim too


def test_hidden_characters_in_paths_titles_and_diffs(loop: asyncio.AbstractEventLoop) -> None:
    path = "/tmp/report\u202etxt.exe"
    title, _ = describe_tool_request("Write", {"file_path": path, "content": "a\u200bb\r\n"})
    assert title == "Write /tmp/report⟨U+202E⟩txt.exe (1 line)"
    card, text = card_for(loop, "Write", {"file_path": path, "content": "a\u200bb\r\n"})
    assert "a⟨U+200B⟩b⟨U+000D⟩" in text and "\u202e" not in raw_values(card.widget)
    edit = {"file_path": path, "old_string": "x = 1\n", "new_string": "x = 1\u2028y = 2\n"}
    card, text = card_for(loop, "Edit", edit)
    assert "+x = 1⟨U+2028⟩y = 2" in text
    assert "\u2028" not in raw_values(card.widget) and "\u202e" not in raw_values(card.widget)


def test_the_static_record_keeps_the_markers() -> None:
    """What stays in the saved notebook: the tool card and the decision notice."""
    b = fx.Builder("trick")
    m1 = "msg_trick_1"
    path = "/tmp/notes\u202etxt.sh"
    view, _ = fx.run_turn(
        [
            b.init(),
            b.message_start(m1),
            *b.streamed_tool(m1, 0, "toolu_t1", "Bash", {"command": TRICK, "description": "d"}),
            *b.streamed_tool(m1, 1, "toolu_t2", "Write", {"file_path": path, "content": "x"}),
            b.message_stop(m1),
        ]
    )
    # The notices the extension writes after a decision (app/extension.py: title + outcome).
    for tool, tool_input in (("Bash", {"command": TRICK}), ("Write", {"file_path": path})):
        title, _detail = describe_tool_request(tool, tool_input)
        view.add_notice("approved", f"{title} (allowed once)")
    view.finish()
    (data, _meta), *_ = static_outputs(view)
    for mime in ("text/html", "text/markdown", "text/plain"):
        saved = data[mime]
        for ch in "\u202e\u200b\r\u2028\x1b\ufeff":
            assert ch not in saved, (mime, hex(ord(ch)))
        assert "⟨U+202E⟩" in saved and "⟨U+200B⟩" in saved, mime
        assert "Write /tmp/notes⟨U+202E⟩txt.sh" in saved, mime


def test_a_newline_in_a_path_cannot_fake_a_title_or_diff_lines(
    loop: asyncio.AbstractEventLoop,
) -> None:
    path = "/tmp/a.py\n+++ b//etc/passwd"
    title, _ = describe_tool_request("Write", {"file_path": path, "content": "x\n"})
    assert title == "Write /tmp/a.py⟨U+000A⟩+++ b//etc/passwd (1 line)"
    _card, text = card_for(
        loop, "Edit", {"file_path": path, "old_string": "a\n", "new_string": "b\n"}
    )
    assert "\n+++ b//etc/passwd\n" not in text  # no line of its own
    assert "--- a//tmp/a.py⟨U+000A⟩+++ b//etc/passwd\n" in text


def test_the_record_of_a_decision_names_the_command_or_code() -> None:
    """The notice saved in the notebook says what was allowed, not only which tool: the first
    line of a command or code (clipped, hidden characters revealed) and how many lines follow."""
    from byre_jupyter.ui.approval_card import describe_request

    bash = describe_request(
        "Bash", {"command": "rm -rf build\u202e && ls\nmore", "description": "x"}
    )
    assert bash.summary == "Run a shell command: rm -rf build⟨U+202E⟩ && ls (+1 line)"
    long = describe_request("mcp__byre__python", {"code": "y = " + "9" * 400})
    assert long.summary.startswith("Run Python in your kernel: y = 999") and long.summary.endswith(
        "…"
    )
    assert len(long.summary) < 200
    write = describe_request("Write", {"file_path": "/p/f.py", "content": "secret body"})
    assert write.summary == write.title and "secret body" not in write.summary


def test_the_reason_box_has_a_row_of_its_own(loop: asyncio.AbstractEventLoop) -> None:
    card, _ = card_for(loop, "Bash", {"command": "ls"})
    # Its own row, the card's whole width (about 85 characters at 700 px), not 14em beside
    # the buttons.
    assert card.reason.layout.flex == "1 1 100%"
    assert card.reason.continuous_update is False  # synced before the Deny click lands
    reason = "no: this folder holds the only copy of the survey export, use a scratch dir instead"
    card.reason.value = reason
    assert len(reason) >= 80 and card.answer("deny", card.reason.value) == Deny(reason)


def test_code_in_the_card_is_highlighted_and_still_whole(loop: asyncio.AbstractEventLoop) -> None:
    code = "def total(xs):\n    return sum(x for x in xs if x)  # \u202e\n"
    card, text = card_for(loop, "mcp__byre__python", {"code": code})
    body = next(w.value for w in card.widget.children if "byre-approval-body" in str(w.value))
    assert "<span style=" in body and ">def</span>" in body  # a keyword of its own
    assert marker("\u202e") in text and "sum(x for x in xs if x)" in text  # all there, revealed
    command, _ = card_for(loop, "Bash", {"command": 'for f in *.csv; do wc -l "$f"; done'})
    shell = next(w.value for w in command.widget.children if "byre-approval-body" in str(w.value))
    assert ">for</span>" in shell or ">do</span>" in shell
