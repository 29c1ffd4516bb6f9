"""Code blocks of an answer, looking like the notebook's own code: highlighted, monospace, boxed.

Most answers in a notebook are code. A fenced block becomes a ``<pre>`` with the
background, border and font of a code cell, its tokens coloured by pygments (installed with
IPython), for the language named by the fence's info string. There is no stylesheet to rely
on in a saved notebook or nbconvert HTML, so every colour is an inline style naming
JupyterLab's own CSS variable (``--jp-mirror-editor-keyword-color``...) with the light
theme's value as fallback: the dark theme, the light theme and a page without Jupyter's CSS
all read well, and nbconvert's lab template defines the same variables.

Safety: the language only picks a lexer and is never written out; every token is escaped at
the leaf, and invisible or bidi characters in it are shown as markers (:func:`reveal_html`), so
the code reads on screen, and copies, as it runs; styles come from the fixed table below, and
the sanitizer keeps only colour and font properties (:data:`CODE_STYLE_PROPERTIES`), none of
which can hold a ``url()``.
Pure module.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import (
    Comment,
    Error,
    Generic,
    Keyword,
    Name,
    Number,
    Operator,
    String,
    Text,
    _TokenType,
)
from pygments.util import ClassNotFound

from byre_jupyter.ui.lexing import faster
from byre_jupyter.ui.reveal import reveal_html

__all__ = [
    "CODE_STYLE_PROPERTIES",
    "PRE_STYLE",
    "code_box",
    "code_chunks",
    "highlight_body",
    "highlight_code",
    "language_of",
]

#: CSS properties a code block uses; the sanitizers keep these and drop every other one.
CODE_STYLE_PROPERTIES = frozenset(
    {
        "background-color", "border", "border-radius", "color", "font-family", "font-size",
        "font-style", "font-weight", "line-height", "margin", "overflow-x", "padding",
        "white-space",
    }
)  # fmt: skip

#: The box: a code cell's background, border, font and line height.
PRE_STYLE = (
    "background-color:var(--jp-cell-editor-background,#f5f5f5);"
    "border:1px solid var(--jp-cell-editor-border-color,#e0e0e0);border-radius:3px;"
    "padding:0.5em 0.75em;margin:0.5em 0;overflow-x:auto;white-space:pre;"
    "font-family:var(--jp-code-font-family,monospace);"
    "font-size:var(--jp-code-font-size,13px);line-height:var(--jp-code-line-height,1.3077);"
    "color:var(--jp-content-font-color1,inherit)"
)

#: The ``<code>`` inside: Jupyter's stylesheet gives every ``code`` a background of its own
#: and wraps it; inside our box it must only inherit.
CODE_STYLE = (
    "background-color:transparent;border:0;padding:0;font-size:inherit;"
    "white-space:inherit;color:inherit"
)


def _colour(name: str, fallback: str, extra: str = "") -> str:
    return f"color:var(--jp-mirror-editor-{name}-color,{fallback}){extra}"


# Most specific first: a token takes the style of its nearest listed ancestor.
_TOKEN_STYLES: tuple[tuple[_TokenType, str], ...] = (
    (Comment, _colour("comment", "#408080", ";font-style:italic")),
    (String, _colour("string", "#ba2121")),
    (Number, _colour("number", "#080")),
    (Keyword, _colour("keyword", "#008000", ";font-weight:bold")),
    (Operator.Word, _colour("keyword", "#008000", ";font-weight:bold")),
    (Operator, _colour("operator", "#a2f")),
    (Name.Builtin, _colour("builtin", "#008000")),
    (Name.Function, _colour("def", "#00f")),
    (Name.Class, _colour("def", "#00f")),
    (Name.Decorator, _colour("meta", "#a2f")),
    (Name.Tag, _colour("tag", "#170")),
    (Name.Attribute, _colour("attribute", "#00c")),
    (Name.Variable, _colour("variable-2", "#05a")),
    (Generic.Inserted, _colour("quote", "#090")),
    (Generic.Deleted, _colour("error", "#f00")),
    (Generic.Heading, _colour("header", "blue", ";font-weight:bold")),
    (Generic.Subheading, _colour("header", "blue")),
    (Generic.Prompt, _colour("comment", "#408080")),
    (Error, ""),  # what a lexer could not place: shown plain, not flagged red
)

_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,40}")
_MAX_HIGHLIGHTED = 200_000  # longer code is shown plain: lexing costs more than it helps


def language_of(info: str | None) -> str:
    """The language a fence's info string names (its first word), or ``""``."""
    word = (info or "").strip().split(maxsplit=1)
    if not word:
        return ""
    name = word[0].lstrip("{.").rstrip("}").lower()
    return name if _LANGUAGE.fullmatch(name) else ""


@functools.lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    """One lexer per language, reused: a streaming fence is highlighted again at every push."""
    if not language:
        return None
    try:
        # (with the first-character driver of ui/lexing.py: the same tokens, in well under half
        # the time)
        return faster(get_lexer_by_name(language, stripnl=False, ensurenl=False))
    except ClassNotFound:
        return None


@functools.lru_cache(maxsize=1024)
def _style(token: _TokenType) -> str:
    for kind, style in _TOKEN_STYLES:
        if token in kind:
            return style
    return ""


def highlight_code(code: str, info: str | None = None) -> str:
    """``code`` as a boxed, highlighted ``<pre><code>`` (escaped; pure)."""
    opening, closing = code_box()
    return f"{opening}{highlight_body(code, info)}{closing}"


def code_box() -> tuple[str, str]:
    """What :func:`highlight_code` writes before and after the highlighted code."""
    return f'<pre style="{PRE_STYLE}"><code style="{CODE_STYLE}">', "</code></pre>\n"


def highlight_body(code: str, info: str | None = None) -> str:
    """The inside of :func:`highlight_code`'s box: each token escaped, in a styled span."""
    lexer = _lexer(language_of(info)) if len(code) <= _MAX_HIGHLIGHTED else None
    return _highlighted(code, lexer)[0]


def _highlighted(code: str, lexer: Lexer | None) -> tuple[str, bool]:
    """``code``'s body, and whether its lexer ended it as it starts a text (see
    :func:`code_chunks`)."""
    if lexer is None:
        return reveal_html(code), True
    parts: list[str] = []
    token, text = Text, "\n"
    for token, text in lexer.get_tokens(code):
        parts.append(_token_html(token, text))
    return "".join(parts), token in Text and text.endswith("\n")


@functools.lru_cache(maxsize=8192)
def _token_html(token: _TokenType, text: str) -> str:
    """One token, escaped and styled. Cached: code repeats its tokens (names, keywords,
    operators, indentation), and writing each again was a third of a highlight."""
    escaped = reveal_html(text)
    style = _style(token)
    return f'<span style="{style}">{escaped}</span>' if style else escaped


#: Lines per chunk of a growing code block (each chunk is lexed and highlighted once).
CHUNK_LINES = 1
_RETRY_LINES = 2  # a chunk that did not end neutral grows by this many lines and tries again
_MAX_CHUNK_LINES = 64  # past this (a long docstring), the rest is all tail


def _same(html: str) -> str:
    return html


@functools.lru_cache(maxsize=512)
def _chunk(code: str, language: str) -> tuple[str, bool]:
    return _highlighted(code, _lexer(language))


def code_chunks(
    code: str, info: str | None = None, clean: Callable[[str], str] = _same
) -> list[str]:
    """``code``'s body in parts that join to :func:`highlight_body`'s, each passed through
    ``clean`` (the caller's sanitizer, which must clean a concatenation of elements as it
    cleans each alone), the finished ones highlighted and cleaned once: a streamed code block
    is drawn again at every flush, and lexing it whole each time made the kernel's cost grow
    with the block (bench/RESULTS.md, shapes).

    A chunk is a run of whole lines, at least :data:`CHUNK_LINES` of them, that the lexer,
    lexing the chunk alone, ends *neutral*: on a plain-text token ending the line (a line
    inside a string or a comment ends on a token of the string or comment). The next chunk is
    then lexed from the lexer's initial state, as the whole text would have it there. The cut
    is decided from the chunk's own text, so the chunks of a longer text start with the same
    chunks, and a call whose code starts with what an earlier call cut takes its parts as they
    were (:data:`_resumed`): a flush lexes and cleans only what was written since the last.
    The check sees tokens, not the lexer's state, so one gap remains: a construct the chunk
    alone leaves unmatched and lexes as plain code (a C ``/*`` comment whose ``*/`` is in a
    later chunk) colours the later chunks as code until the final record, which is always
    highlighted whole; the text itself never differs. Where no neutral end comes within
    :data:`_MAX_CHUNK_LINES` (a long docstring), the rest is the tail, lexed whole as before;
    code too long to highlight (plain) is one part.
    """
    global _resumed
    language = language_of(info)
    if len(code) > _MAX_HIGHLIGHTED or _lexer(language) is None:
        return [clean(highlight_body(code, info))]
    parts: list[str] = []
    start = 0
    resumed = _resumed
    found = next(
        (r for r in resumed if r[0] == language and r[3] is clean and code.startswith(r[1])),
        None,
    )
    if found is not None:
        parts, start = list(found[2]), len(found[1])  # the same cuts, found the time before
    new: list[str] = []
    lines = CHUNK_LINES
    while (end := _after_lines(code, start, lines)) < len(code):
        body, neutral = _chunk(code[start:end], language)
        if neutral:
            new.append(body)
            start, lines = end, CHUNK_LINES
        elif lines < _MAX_CHUNK_LINES:
            lines += _RETRY_LINES
        else:
            break
    if new:  # cleaned in one call: a sanitizer's call costs more than a line's worth of work
        parts.append(clean("".join(new)))
        others = (r for r in resumed if r is not found)
        _resumed = ((language, code[:start], tuple(parts), clean), *others)[:_RESUMED]
    parts.append(clean(_highlighted(code[start:], _lexer(language))[0]))
    return parts


#: The finished parts of the last codes :func:`code_chunks` read (language, the code's text up
#: to its tail, the cleaned parts, the cleaner), newest first: a growing fence's next flush,
#: which starts with the same text, takes them as they are instead of finding each cut again
#: (a look-up per chunk per flush, over the whole block). Several, for the turns of several
#: sessions streaming code at once; replaced whole (one tuple), so a reader never sees half.
_resumed: tuple[tuple[str, str, tuple[str, ...], Callable[[str], str]], ...] = ()
_RESUMED = 4


def _after_lines(text: str, start: int, lines: int) -> int:
    """The offset just after the ``lines``-th newline from ``start`` (or the text's end)."""
    at = start
    for _ in range(lines):
        found = text.find("\n", at)
        if found < 0:
            return len(text)
        at = found + 1
    return at
