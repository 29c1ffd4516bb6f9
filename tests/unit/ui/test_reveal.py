"""ui/reveal.py: which characters count as hidden, and how they are shown."""

from __future__ import annotations

import html

import pytest

from byre_jupyter.ui.reveal import (
    count_hidden,
    count_lookalikes,
    is_hidden,
    lookalike_positions,
    marker,
    reveal,
    reveal_html,
)

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
FAKE_BREAKS = "\u2028\u2029\r\x0b\x0c\x85"
CONTROLS = "\x00\x01\x07\x08\x1b\x1f\x7f\x9b"  # NUL, SOH, BEL, BS, ESC, US, DEL, CSI
FORMAT = "\u00ad\u180e\u2061\u2064\U000e0001\U000e0041\U000e007f\ufff9"  # SHY, tags, ...
SPACES = "\u00a0\u2000\u2007\u200a\u202f\u205f\u3000"  # look like " " but are not one
BLANKS = "\u034f\u115f\u1160\u3164\uffa0\u2800\ufe0f\ufe00\U000e0100\U000e01ef"
SURROGATE = "\ud800"


@pytest.mark.parametrize(
    "ch", list(BIDI + ZERO_WIDTH + FAKE_BREAKS + CONTROLS + FORMAT + SPACES + BLANKS + SURROGATE)
)
def test_each_hidden_character_becomes_a_marker(ch: str) -> None:
    assert is_hidden(ch)
    shown = reveal(f"a{ch}b")
    assert shown == f"a⟨U+{ord(ch):04X}⟩b" and ch not in shown
    assert count_hidden(f"a{ch}b{ch}") == 2


def test_ordinary_text_is_left_alone() -> None:
    text = (
        "plain ASCII: ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./\n\ttabbed\n"
        "accents: café naïve Ærøskøbing; Greek αβγ; Cyrillic жук; Hebrew שלום; Arabic سلام\n"
        "CJK 漢字かなカナ 한국어; emoji 🙂🚀; math ∑∫√≠; arrows ⟨⟩→; box ┌─┐\n"
    )
    assert reveal(text) == text
    assert count_hidden(text) == 0


def test_the_marker_spells_the_code_point() -> None:
    assert marker("\u202e") == "⟨U+202E⟩"
    assert marker("\r") == "⟨U+000D⟩"
    assert marker("\U000e0041") == "⟨U+E0041⟩"


def test_a_trojan_source_line_reads_in_logical_order() -> None:
    # CVE-2021-42574: on screen this shows as an innocent comment; run, it is not.
    line = 'access_level != "user\u202e \u2066// Check if admin\u2069 \u2066"'
    assert reveal(line) == (
        'access_level != "user⟨U+202E⟩ ⟨U+2066⟩// Check if admin⟨U+2069⟩ ⟨U+2066⟩"'
    )


def test_carriage_return_keeps_real_newlines() -> None:
    assert reveal("a\r\nb\rc") == "a⟨U+000D⟩\nb⟨U+000D⟩c"


def test_html_escapes_and_marks_only_real_hidden_characters() -> None:
    # The model may type the marker itself: in HTML only the real one is styled and named.
    out = reveal_html('<img src=x onerror=alert(1)>"&\u202e⟨U+202E⟩')
    assert "<img" not in out and "&lt;img" in out and "&quot;&amp;" in out
    assert out.count("byre-hidden-char") == 1
    assert 'title="RIGHT-TO-LEFT OVERRIDE"' in out
    assert out.endswith("</span>⟨U+202E⟩")
    assert "\u202e" not in out
    # A control character has no Unicode name: the title says what it is.
    assert 'title="control character 0x1b"' in reveal_html("\x1b")
    assert html.unescape(reveal_html("x\u200by")).count("⟨U+200B⟩") == 1


def test_one_line_text_shows_newlines_and_tabs_too() -> None:
    assert reveal("a\nb\tc") == "a\nb\tc"
    assert reveal("a\nb\tc", one_line=True) == "a⟨U+000A⟩b⟨U+0009⟩c"
    assert count_hidden("a\nb", one_line=True) == 1 and count_hidden("a\nb") == 0
    assert "⟨U+000A⟩</span>" in reveal_html("a\nb", one_line=True)


# --------------------------------------------------------------------------------------------
# look-alike letters: marked where they pass for Latin ones, nowhere else


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("curl https://g\u0456thub.com/x", "curl https://g⟨U+0456⟩thub.com/x"),  # a Cyrillic i
        ("git clone https://gith\u03bfb.com", "git clone https://gith⟨U+03BF⟩b.com"),  # omicron
        ("\u0441url -s x", "⟨U+0441⟩url -s x"),  # a command word, Cyrillic c
        ("\u0440\u0430\u0443\u0440\u0430l.com", "⟨U+0440⟩⟨U+0430⟩⟨U+0443⟩⟨U+0440⟩⟨U+0430⟩l.com"),
        ("\u0430\u0440\u0440\u04cf\u0435.com", "⟨U+0430⟩⟨U+0440⟩⟨U+0440⟩⟨U+04CF⟩⟨U+0435⟩.com"),
        ("\uff43url x", "⟨U+FF43⟩url x"),  # fullwidth c
        ("p\U0001d422p install", "p⟨U+1D422⟩p install"),  # mathematical bold i
        # The finding: these passed unmarked.
        ("curl https://\ua4f2nvoice.example.com", "curl https://⟨U+A4F2⟩nvoice.example.com"),
        ("\ua4e2\ua4f3\ua4df\ua4f0thing", "⟨U+A4E2⟩⟨U+A4F3⟩⟨U+A4DF⟩⟨U+A4F0⟩thing"),  # Lisu
        ("git clone https://g\u0131thub.com/x", "git clone https://g⟨U+0131⟩thub.com/x"),
        ("pip install p\u1d00ndas", "pip install p⟨U+1D00⟩ndas"),  # small capital A
        ("\u0280\u1d07quests.get(url)", "⟨U+0280⟩⟨U+1D07⟩quests.get(url)"),  # small r, e
        ("open(\u2ca3ath)", "open(⟨U+2CA3⟩ath)"),  # Coptic ro
        ("\u146dip install x", "⟨U+146D⟩ip install x"),  # Canadian syllabics ki
        ("h\u0131\u0307story.py", "h⟨U+0131⟩⟨U+0307⟩story.py"),  # dotless i + dot: an i
        ("ba\u0338sh run.sh", "ba⟨U+0338⟩sh run.sh"),  # a mark that makes no letter
    ],
)
def test_latin_lookalikes_in_words_and_hosts_are_marked(text: str, shown: str) -> None:
    assert reveal(text) == shown
    assert lookalike_positions(text) and count_lookalikes(text) == shown.count("⟨U+")
    assert "U+" in reveal_html(text) and "byre-hidden-char" in reveal_html(text)


@pytest.mark.parametrize(
    ("ch", "latin"),
    [("\ua4f2", "I"), ("\u0131", "i"), ("\u1d00", "a"), ("\ua731", "s"), ("\u2d54", "O")],
)
def test_the_marker_names_the_letter_it_passes_for(ch: str, latin: str) -> None:
    assert f"looks like the Latin letter {latin}" in reveal_html(f"x{ch}x")


@pytest.mark.parametrize(
    "text",
    [
        "curl https://github.com/x && echo done  # plain ASCII",
        "# Проверка: скачать файл с сервера и распаковать",  # noqa: RUF001 (Russian prose)
        "echo сор",  # noqa: RUF001 (a whole Cyrillic word of look-alike letters only)
        "https://пример.рф/путь",  # a Cyrillic host
        "https://пример.com",  # a Cyrillic label that is not all look-alikes
        "café naïve Ærøskøbing; Greek αβγ; Καλημέρα κόσμε",
        "Ελληνικά: ο άνθρωπος",  # noqa: RUF001 (Greek prose)
        "cafe\u0301 re\u0301sume\u0301 Vie\u0323\u0302t",  # accents that compose (macOS NFD)
        "\ua4e2\ua4f3\ua4df\ua4f0",  # a whole Lisu word
        # Other scripts' marks: Devanagari vowel signs, Hebrew points
        "\u0915\u093f\u0924\u093e\u092c \u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd",
    ],
)
def test_ascii_and_whole_words_of_other_scripts_are_left_alone(text: str) -> None:
    assert reveal(text) == text and count_lookalikes(text) == 0
