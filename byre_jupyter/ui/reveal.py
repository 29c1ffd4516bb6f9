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

Look-alike letters are marked the same way (:func:`lookalike_positions`): a letter of another
script drawn like a Latin one (a Cyrillic i in github.com, a Greek omicron, a Lisu I
(U+A4F2), a Coptic, Cherokee, Canadian syllabics or Tifinagh letter), a Latin letter drawn like
another (a dotless i (U+0131), a small capital A (U+1D00)), or a fullwidth or mathematical
Latin letter, when it stands in a Latin word (one that also has Latin letters and either only
look-alikes besides or mostly Latin ones), or forms a whole label of a hostname that also has
Latin letters (apple.com spelled in Cyrillic); and combining marks on a Latin letter that
compose into no letter (U+0131 + U+0307 drawn as ``i``). ASCII-only text has none, and a word
wholly in another script (Russian prose, a Cyrillic domain) is that script's own word, not a
disguise.

Pure module.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata

__all__ = [
    "count_hidden",
    "count_lookalikes",
    "is_hidden",
    "lookalike_positions",
    "marker",
    "reveal",
    "reveal_html",
]

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


# Letters of other scripts that are drawn like a Latin letter (the Latin one beside each), from
# Unicode's confusables for Cyrillic, Greek, Armenian and Cherokee, plus two IPA letters.
_LOOKS_LATIN: dict[str, str] = dict(
    [
        # Cyrillic (and two IPA letters): aeopcyxsijhdqwlyga
        *zip(
            "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458"
            "\u04bb\u0501\u051b\u051d\u04cf\u04af\u0261\u0251",
            "aeopcyxsijhdqwlyga",
            strict=True,
        ),
        # Cyrillic capitals: ABEKMHOPCTXYSIJQWHY
        *zip(
            "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422"
            "\u0425\u0423\u0405\u0406\u0408\u051a\u051c\u04ba\u04ae",
            "ABEKMHOPCTXYSIJQWHY",
            strict=True,
        ),
        # Greek: aovpikucj
        *zip(
            "\u03b1\u03bf\u03bd\u03c1\u03b9\u03ba\u03c5\u03f2\u03f3",
            "aovpikucj",
            strict=True,
        ),
        # Greek capitals: ABEZHIKMNOPTYXC
        *zip(
            "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f"
            "\u03a1\u03a4\u03a5\u03a7\u03f9",
            "ABEZHIKMNOPTYXC",
            strict=True,
        ),
        # Armenian: osghn
        *zip(
            "\u0585\u057d\u0581\u0570\u0578",
            "osghn",
            strict=True,
        ),
        # Cherokee: ABCDEGHJKLMPSTVWZ
        *zip(
            "\u13aa\u13f4\u13df\u13a0\u13ac\u13c0\u13bb\u13ab\u13e6\u13de"
            "\u13b7\u13e2\u13da\u13a2\u13d9\u13d4\u13c3",
            "ABCDEGHJKLMPSTVWZ",
            strict=True,
        ),
        # Lisu (its letters are Latin capitals, some turned): BPDTGKJCZFMNLSRVHWXYAEIOU
        *zip(
            "\ua4d0\ua4d1\ua4d3\ua4d4\ua4d6\ua4d7\ua4d9\ua4da\ua4dc\ua4dd"
            "\ua4df\ua4e0\ua4e1\ua4e2\ua4e3\ua4e6\ua4e7\ua4ea\ua4eb\ua4ec"
            "\ua4ee\ua4f0\ua4f2\ua4f3\ua4f4",
            "BPDTGKJCZFMNLSRVHWXYAEIOU",
            strict=True,
        ),
        # Coptic: opcx OPCXHIKMNT
        *zip(
            "\u2c9f\u2ca3\u2ca5\u2cad\u2c9e\u2ca2\u2ca4\u2cac\u2c8e\u2c92\u2c94\u2c98\u2c9a\u2ca6",
            "opcxOPCXHIKMNT",
            strict=True,
        ),
        # Canadian syllabics: PUVABCDHJLRSWZ
        *zip(
            "\u146d\u144c\u142f\u15c5\u15f7\u1455\u15de\u157c\u148d\u14aa\u1587\u1515\u15ef\u1614",
            "PUVABCDHJLRSWZ",
            strict=True,
        ),
        # Tifinagh: OIX
        *zip("\u2d54\u2d4f\u2d5d", "OIX", strict=True),
    ]
)
# Latin letters drawn like another Latin letter: a dotless i or j, the Latin iota, the dental
# click (an l), and the small capitals (a "pᴀypal" reads as paypal). NFKC folds none of them.
_LATIN_LOOKS_LATIN: dict[str, str] = dict(
    zip(
        "\u0131\u0237\u0269\u01c0\u026a\u029f\u0274\u0280\u028f\u0299"
        "\u0262\u029c\u1d00\u1d04\u1d05\u1d07\u1d0a\u1d0b\u1d0d\u1d0f"
        "\u1d18\u1d1b\u1d1c\u1d20\u1d21\u1d22\ua730\ua731",
        "ijililnrybghacdejkmoptuvwzfs",
        strict=True,
    )
)
# A word: letters and digits; a run that may hold a hostname: words, hyphens and dots. Both
# match maximal runs of one class, so a scan is linear in the text (a pattern that must end in
# ".label" would retry from every character of a long word: quadratic).
_WORD = re.compile(r"[^\W_]+")
_RUN = re.compile(r"[\w.-]+")


@functools.lru_cache(maxsize=4096)
def looks_latin(ch: str) -> str:
    """The Latin letter ``ch`` passes for ("" if it is none, or is ASCII)."""
    if ch.isascii() or not ch.isalpha():
        return ""
    if ch in _LOOKS_LATIN:
        return _LOOKS_LATIN[ch]
    if ch in _LATIN_LOOKS_LATIN:
        return _LATIN_LOOKS_LATIN[ch]
    folded = unicodedata.normalize("NFKC", ch)  # fullwidth and mathematical letters
    return folded if len(folded) == 1 and folded.isascii() and folded.isalpha() else ""


@functools.lru_cache(maxsize=4096)
def _is_latin(ch: str) -> bool:
    if ch.isascii():
        return ch.isalpha()
    return unicodedata.name(ch, "").startswith("LATIN ") and not looks_latin(ch)


def lookalike_positions(text: str) -> set[int]:
    """Where ``text`` has a look-alike letter passing for a Latin one (see the module doc)."""
    if text.isascii():
        return set()
    found: set[int] = set()
    for m in _WORD.finditer(text):
        word = m.group()
        if word.isascii():
            continue
        looks = [i for i, ch in enumerate(word) if looks_latin(ch)]
        if not looks:
            continue
        latin = sum(1 for ch in word if _is_latin(ch))
        others = sum(1 for ch in word if ch.isalpha() and not _is_latin(ch))
        if latin and (len(looks) == others or latin >= others):
            found.update(m.start() + i for i in looks)
    found.update(_odd_marks(text))
    for m in _RUN.finditer(text):
        host = m.group()
        if "." not in host or host.isascii() or not any(_is_latin(ch) for ch in host):
            continue
        at = m.start()
        for label in host.split("."):
            letters = [i for i, ch in enumerate(label) if ch.isalpha()]
            if letters and all(looks_latin(label[i]) for i in letters):
                found.update(at + i for i in letters)
            at += len(label) + 1
    return found


#: A Latin letter (or digit) and the combining marks after it.
_MARKED = re.compile(
    r"[A-Za-z0-9\u00c0-\u024f\u1d00-\u1dbf\u1e00-\u1eff]"
    r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
)


def _odd_marks(text: str) -> list[int]:
    """Combining marks on a Latin letter that make no letter of their own: U+0131 + U+0307 is
    drawn as ``i``, a mark can hide a letter's difference. An accent that composes (``e`` +
    U+0301 is ``é``, as macOS spells file names) is the letter it makes, and is not marked."""
    found: list[int] = []
    for m in _MARKED.finditer(text):
        if len(unicodedata.normalize("NFC", m.group())) > 1:
            found.extend(range(m.start() + 1, m.end()))
    return found


def count_lookalikes(text: str) -> int:
    """How many look-alike letters ``text`` holds (:func:`lookalike_positions`)."""
    return len(lookalike_positions(text))


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


def _marked(text: str, one_line: bool) -> list[int]:
    """Every position :func:`reveal` shows as a marker: hidden characters and look-alikes."""
    hidden = {m.start() for m in _hidden_positions(text, one_line)}
    return sorted(hidden | lookalike_positions(text))


def count_hidden(text: str, *, one_line: bool = False) -> int:
    """How many hidden characters ``text`` holds (``one_line``: as :func:`reveal`)."""
    return len(_hidden_positions(text, one_line))


def reveal(text: str, *, one_line: bool = False) -> str:
    """``text`` with every hidden character and look-alike letter replaced by its
    :func:`marker`. Plain text.

    ``one_line``: the text is a title or a path, so ``\\n`` and ``\\t`` are markers too.
    """
    out: list[str] = []
    pos = 0
    for at in _marked(text, one_line):
        out.append(text[pos:at])
        out.append(marker(text[at]))
        pos = at + 1
    out.append(text[pos:])
    return "".join(out)


def _name(ch: str) -> str:
    name = unicodedata.name(ch, "") or f"control character {ord(ch):#04x}"
    latin = looks_latin(ch)
    return f"{name}, which looks like the Latin letter {latin}" if latin else name


def reveal_html(text: str, *, one_line: bool = False) -> str:
    """``text`` escaped for HTML, each hidden character or look-alike letter a styled marker
    (named in its title).

    The styling tells a real marker from the same characters typed literally by the model.
    """
    if not (_CANDIDATE_ONE_LINE if one_line else _CANDIDATE).search(text):
        return html.escape(text, quote=True)  # printable ASCII: nothing hidden, no look-alike
    out: list[str] = []
    pos = 0
    for at in _marked(text, one_line):
        ch = text[at]
        out.append(html.escape(text[pos:at], quote=True))
        out.append(
            f'<span class="byre-hidden-char" style="{MARKER_STYLE}" '
            f'title="{html.escape(_name(ch), quote=True)}">{marker(ch)}</span>'
        )
        pos = at + 1
    out.append(html.escape(text[pos:], quote=True))
    return "".join(out)
