"""Make invisible and deceptive characters visible in untrusted text.

A command can read one way and run another: U+202E (right-to-left override) reverses what
follows on screen, zero-width characters hide inside words, and ``\\r`` or U+2028 look like a
line break in a browser while a shell or Python sees one line. Every place that shows model
text a user is asked to trust (approval cards, tool cards, decision notices) passes it through
:func:`reveal`, which replaces each such character with a visible token like ``⟨U+202E⟩``.

What counts as hidden (:func:`is_hidden`): every control and format character (Unicode
categories Cc, Cf: bidi embeddings, overrides, isolates and marks, zero-width characters, the
BOM, tag characters, soft hyphens, ...) except ``\\n`` and ``\\t``; line and paragraph
separators (Zl, Zp); lone surrogates (Cs); space separators other than the ASCII space (they
look like a space but are not one to a shell); variation selectors; and the few letters and
marks that render as nothing (Hangul fillers, the combining grapheme joiner, the braille blank).

Pure module.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata

__all__ = ["count_hidden", "is_hidden", "marker", "reveal", "reveal_html"]

# Characters that are not controls or format characters but still draw nothing.
_BLANK_LETTERS = frozenset(
    {
        0x034F,  # COMBINING GRAPHEME JOINER
        0x115F,  # HANGUL CHOSEONG FILLER
        0x1160,  # HANGUL JUNGSEONG FILLER
        0x17B4,  # KHMER VOWEL INHERENT AQ
        0x17B5,  # KHMER VOWEL INHERENT AA
        0x2800,  # BRAILLE PATTERN BLANK
        0x3164,  # HANGUL FILLER
        0xFFA0,  # HALFWIDTH HANGUL FILLER
    }
)
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

# Only characters outside printable ASCII need a closer look; most text has few of them.
_CANDIDATE = re.compile(r"[^\t\n\x20-\x7e]")
# In a title or a path a newline or a tab is itself a disguise: there they are shown too.
_CANDIDATE_ONE_LINE = re.compile(r"[^\x20-\x7e]")

#: Inline style of a marker in HTML: visibly not part of the text, in light and dark themes.
MARKER_STYLE = (
    "color:#c0392b;border:1px solid #c0392b;border-radius:3px;padding:0 0.15em;"
    "font-size:0.85em;white-space:nowrap"
)


@functools.lru_cache(maxsize=4096)
def is_hidden(ch: str) -> bool:
    """Whether ``ch`` (one character) draws nothing, moves other text, or fakes a line break."""
    if ch in "\n\t":
        return False
    category = unicodedata.category(ch)
    if category in _HIDDEN_CATEGORIES or (category == "Zs" and ch != " "):
        return True
    code = ord(ch)
    return (
        code in _BLANK_LETTERS
        or 0x180B <= code <= 0x180F  # Mongolian free variation selectors
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0100 <= code <= 0xE01EF  # variation selectors supplement
    )


def marker(ch: str) -> str:
    """The visible token for a hidden character: ``⟨U+202E⟩``."""
    return f"⟨U+{ord(ch):04X}⟩"


def _hidden(ch: str, one_line: bool) -> bool:
    return is_hidden(ch) or (one_line and ch in "\n\t")


def _hidden_positions(text: str, one_line: bool = False) -> list[re.Match[str]]:
    candidates = _CANDIDATE_ONE_LINE if one_line else _CANDIDATE
    return [m for m in candidates.finditer(text) if _hidden(m.group(), one_line)]


def count_hidden(text: str, *, one_line: bool = False) -> int:
    """How many hidden characters ``text`` holds (``one_line``: as :func:`reveal`)."""
    return len(_hidden_positions(text, one_line))


def reveal(text: str, *, one_line: bool = False) -> str:
    """``text`` with every hidden character replaced by its :func:`marker`. Plain text.

    ``one_line``: the text is a title or a path, so ``\\n`` and ``\\t`` are markers too.
    """
    candidates = _CANDIDATE_ONE_LINE if one_line else _CANDIDATE
    return candidates.sub(
        lambda m: marker(m.group()) if _hidden(m.group(), one_line) else m.group(), text
    )


def _name(ch: str) -> str:
    return unicodedata.name(ch, "") or f"control character {ord(ch):#04x}"


def reveal_html(text: str, *, one_line: bool = False) -> str:
    """``text`` escaped for HTML, each hidden character a styled marker (named in its title).

    The styling tells a real marker from the same characters typed literally by the model.
    """
    out: list[str] = []
    pos = 0
    for m in _hidden_positions(text, one_line):
        ch = m.group()
        out.append(html.escape(text[pos : m.start()], quote=True))
        out.append(
            f'<span class="byre-hidden-char" style="{MARKER_STYLE}" '
            f'title="{html.escape(_name(ch), quote=True)}">{marker(ch)}</span>'
        )
        pos = m.end()
    out.append(html.escape(text[pos:], quote=True))
    return "".join(out)
