"""The first-character driver (``ui/lexing.py``) yields Pygments' own tokens, for the languages
answers are written in, on real source and on generated text, and tries few of the rules at
each position (counted, not timed)."""

from __future__ import annotations

import functools
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from byre_jupyter.ui import lexing

ROOT = Path(__file__).resolve().parents[3]


def _exists(language: str) -> bool:
    try:
        get_lexer_by_name(language)
    except ClassNotFound:  # (the oldest Pygments we support has fewer)
        return False
    return True


#: Languages answers are written in, and some with unusual rules (heredocs, nested states,
#: case folding, lexers that call themselves on a part of the text).
_NAMES = (
    "python", "pycon", "javascript", "typescript", "jsx", "c", "cpp", "csharp", "java",
    "kotlin", "go", "rust", "swift", "ruby", "php", "perl", "lua", "r", "julia", "scala",
    "haskell", "bash", "console", "powershell", "sql", "json", "yaml", "toml", "ini", "xml",
    "html", "css", "scss", "markdown", "rst", "latex", "diff", "docker", "make", "nginx",
    "graphql", "protobuf", "elixir", "erlang", "clojure", "ocaml", "fortran", "matlab",
    "dart", "text",
)  # fmt: skip
LANGUAGES = tuple(language for language in _NAMES if _exists(language))


@functools.cache
def both(language: str) -> tuple[Any, Any]:
    """The lexer we highlight with, and Pygments' own (one of each per language, as
    ``highlight._lexer`` keeps them: reading the rules is the driver's one-off cost)."""
    ours = lexing.faster(get_lexer_by_name(language, stripnl=False, ensurenl=False))
    theirs = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    return ours, theirs


def tokens(lexer: Any, text: str) -> list[tuple[Any, str]]:
    return list(lexer.get_tokens(text))


def _sources() -> dict[str, tuple[str, Path]]:
    """Real code on every machine: this repository's and the standard library's."""
    stdlib = Path(json.__file__).parent.parent
    picks = {
        "python": [ROOT / "byre_jupyter/ui/markdown.py", stdlib / "textwrap.py", stdlib / "ast.py"],
        "typescript": sorted((ROOT / "labextension/src").glob("*.ts")),
        "javascript": sorted((ROOT / "byre_jupyter/ui").glob("*.js")),
        "bash": [ROOT / "dev", ROOT / ".ci/run"],
        "toml": [ROOT / "pyproject.toml"],
        "markdown": [ROOT / "README.md"],
        "json": [ROOT / "labextension/package.json"],
        "css": sorted((ROOT / "byre_jupyter/ui").glob("*.css")),
        "diff": [],
    }  # fmt: skip
    return {
        f"{language}:{path.name}": (language, path)
        for language, paths in picks.items()
        for path in paths
        if path.is_file()
    }


SOURCES = _sources()


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_real_source_lexes_to_pygments_own_tokens(name: str) -> None:
    language, path = SOURCES[name]
    text = path.read_text(encoding="utf-8")
    ours, theirs = both(language)
    assert tokens(ours, text) == tokens(theirs, text)


#: Pieces of code in many languages, and what opens or closes their states.
_PIECES = [
    *"abcxyzXZ_019 \t\n\n\\'\"`#$%&()*+,-./:;<=>?@[]^{|}~",
    "def ", "class ", "if ", "fn ", "let ", "SELECT ", "<<EOF\n", "EOF\n", '"""', "'''",
    "/*", "*/", "//", "--", "<!--", "-->", "${", "#{", "<?php ", "?>", "\r\n", "é", "数", "\u200b",
    "\u00a0", "\u3000", "٣", "r'", 'f"', "b'", "0x1F", "1e-3", "@dec\n", ">>> ", "... ",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=40), language=st.sampled_from(LANGUAGES))
def test_generated_text_lexes_to_pygments_own_tokens(pieces: list[str], language: str) -> None:
    text = "".join(pieces)
    ours, theirs = both(language)
    assert tokens(ours, text) == tokens(theirs, text)


def test_at_most_positions_it_tries_a_few_of_the_rules() -> None:
    """Python: Pygments tries the rules of the state in order until one matches, some forty
    in ``root``; here only those that can start with the character found."""
    ours, _ = both("python")
    candidates = ours._byre_candidates
    root = ours._tokens["root"]
    code = textwrap.dedent(
        """\
        def top(frame, column='value', *, limit=3):
            rows = frame.sort_values(column).head(limit)  # a comment
            return {'total': sum(rows) / 2.5}
        """
    )
    tried = sum(len(candidates("root", char)) for char in code)
    assert tried * 4 < len(root) * len(code), (tried, len(root) * len(code))
    # a character no rule can start with leaves only the rules that match anything
    assert len(candidates("root", "\u2603")) < len(root) // 2


def test_a_rule_that_can_match_nothing_is_tried_everywhere() -> None:
    for pattern in (r"\s*", r"x?", r"(?=x)", r"(a|)", r"\b"):
        assert lexing._starts_of(re.compile(pattern).match) is None, pattern
    starts = lexing._starts_of(re.compile(r"\s+|[a-c]|#").match)
    assert starts is not None
    assert all(lexing._may_start(starts, c) for c in " \t\n\u3000abc#")
    assert not any(lexing._may_start(starts, c) for c in "dz(1é")


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        (r"[^\n]", "a\t数", "\n"),
        (r"\w+", "a_9é数٣", " -("),
        (r"\d", "0٣", "a"),
        (r"(?a)\d", "07", "٣a"),
        (r"\D", "a ", "5"),
        (r"(?i:x)", "xX(", ""),  # case folding: tried everywhere
        (r"(?:ab|c)d", "ac", "bd"),
        (r"a?b", "ab", "c"),
        (r"(?<=x)y", "y", "x"),
        (r"\by", "y", "b"),
        (r".", "a(", "\n"),
        (r"(?s).", "a\n", ""),
        (r"[^abc]", "d\n", "abc"),
        (r"\s*x", " \u3000x", "y("),
        (r"[\u4e00-\u9fff]+|[\u0100-\uffff]", "数Ā\uffff", "a\u00ff"),
    ],
)
def test_what_a_pattern_can_start_with(pattern: str, yes: str, no: str) -> None:
    starts = lexing._starts_of(re.compile(pattern).match)
    for char in yes:
        assert lexing._may_start(starts, char), (pattern, char)
    for char in no:
        assert not lexing._may_start(starts, char), (pattern, char)


def test_a_lexer_with_a_loop_of_its_own_is_left_as_it_is() -> None:
    lexer = get_lexer_by_name("ruby")  # an ExtendedRegexLexer: a context of its own
    assert type(lexer).get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed
    assert "get_tokens_unprocessed" not in vars(lexing.faster(lexer))
    python = lexing.faster(get_lexer_by_name("python"))
    assert "get_tokens_unprocessed" in vars(python)


def test_highlighting_lexes_with_the_driver() -> None:
    """The lexers the live view and the record highlight with are the driver's (else every
    test above compares Pygments with itself, where it counts)."""
    from byre_jupyter.ui import highlight

    lexer = highlight._lexer("python")
    assert vars(lexer)["get_tokens_unprocessed"].__func__ is lexing._tokens


def test_the_newline_no_rule_takes_is_the_token_pygments_yields() -> None:
    class OnlyA(RegexLexer):
        tokens = {"root": [("a", lexing.Text)]}  # noqa: RUF012

    ours = lexing.faster(OnlyA())
    assert tokens(ours, "a\nb\n") == tokens(OnlyA(), "a\nb\n")
