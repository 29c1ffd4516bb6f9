"""A faster driver for Pygments' regex lexers, with the same tokens.

Pygments' ``RegexLexer`` tries the rules of its current state one by one at each position
until one matches: some forty ``re`` calls per token for Python, most of the time it takes to
highlight a code block (4 µs a character here; bench/RESULTS.md, shapes). Most rules cannot
match where they are tried, because they cannot start with the character found there: a rule
for ``def`` cannot match at a ``(``. This driver reads, once per rule, the characters its
pattern can start with (from ``re``'s own parse of it), and at each position tries, in the
same order, only the rules that can start with the character there. A rule that can match
the empty string, or starts with something this reading does not follow, is always tried.
Skipping only rules that cannot match leaves the first rule that matches, and so every token
and state change, as Pygments' own loop has them; ``tests/unit/ui/test_lexing.py`` holds the
two to that over the languages we highlight and generated text.

Used only for lexers whose class runs ``RegexLexer``'s own loop (not an
``ExtendedRegexLexer`` or a lexer of its own), and installed on our own cached instances.

Kept because the figures say so (measured with the driver and without, Python 3.11, Pygments
of the lock): 30,000 characters of Python take 23 ms to highlight whole instead of
60-80 ms, 29 ms instead of 60-100 ms streamed as a growing fence (``code_chunks``, a flush per
400 characters), for about 100 ms more the first time a language is lexed in a kernel; the
shapes bench's code answer (58,000 characters, a real kernel) costs 0.86 s of kernel CPU with
it and 1.10 s without (live widgets; 0.58 s and 0.79 s for the Markdown draft), medians of
three. Chunked highlighting lexes each line once, but the finished record lexes the whole
block again, and that pass is where most of the saving is. A Python or Pygments upgrade that
changed what this reads fails ``tests/unit/ui/test_lexing.py``, which compares the tokens.
"""

from __future__ import annotations

import functools
import importlib
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

from pygments.lexer import RegexLexer
from pygments.token import Error, Text, _TokenType

__all__ = ["faster"]


def _module(new: str, old: str) -> Any:
    """``re``'s parser and its constants: ``re._parser`` since Python 3.11, ``sre_parse``
    before (which 3.11 and later still have, deprecated)."""
    try:
        return importlib.import_module(new)
    except ImportError:  # pragma: no cover - Python 3.10
        return importlib.import_module(old)


_sre = _module("re._constants", "sre_constants")
_parse = _module("re._parser", "sre_parse")

#: The characters a match can start with: some characters, and tests for more (a character
#: class such as ``\\s``, a negated set); None: any character, or the empty string.
Starts = tuple[frozenset[str], tuple[Callable[[str], bool], ...]] | None

_MAX_RANGE = 512  # a wider character range counts as "any character"
_ZERO_WIDTH = {_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT}


def faster(lexer: Any) -> Any:
    """``lexer`` with this driver as its ``get_tokens_unprocessed``, where its class runs
    ``RegexLexer``'s own loop; any other lexer as it is."""
    if isinstance(lexer, RegexLexer) and (
        type(lexer).get_tokens_unprocessed is RegexLexer.get_tokens_unprocessed
    ):
        # (the rules are the instance's: some lexers choose theirs by an option, C#'s by
        # its Unicode level)
        lexer._byre_candidates = _candidates(lexer._tokens)
        lexer.get_tokens_unprocessed = types.MethodType(_tokens, lexer)
    return lexer


def _tokens(
    self: RegexLexer, text: str, stack: tuple[str, ...] = ("root",)
) -> Iterator[tuple[int, Any, str]]:
    """``RegexLexer.get_tokens_unprocessed``, trying at each position only the rules that can
    start there (the loop is Pygments', line for line, but for that)."""
    pos = 0
    tokendefs = self._tokens
    statestack = list(stack)
    state = statestack[-1]
    candidates = self._byre_candidates
    end = len(text)
    while 1:
        rules = candidates(state, text[pos]) if pos < end else tokendefs[state]
        for rexmatch, action, new_state in rules:
            m = rexmatch(text, pos)
            if m:
                if action is not None:
                    if type(action) is _TokenType:
                        yield pos, action, m.group()
                    else:
                        yield from action(self, m)
                pos = m.end()
                if new_state is not None:
                    if isinstance(new_state, tuple):
                        for st in new_state:
                            if st == "#pop":
                                if len(statestack) > 1:
                                    statestack.pop()
                            elif st == "#push":
                                statestack.append(statestack[-1])
                            else:
                                statestack.append(st)
                    elif isinstance(new_state, int):
                        if abs(new_state) >= len(statestack):
                            del statestack[1:]
                        else:
                            del statestack[new_state:]
                    elif new_state == "#push":
                        statestack.append(statestack[-1])
                    else:
                        raise AssertionError(f"wrong state def: {new_state!r}")
                    state = statestack[-1]
                break
        else:
            if pos >= end:
                break
            if text[pos] == "\n":
                statestack = ["root"]
                state = "root"
                yield pos, _EOL_TOKEN, "\n"
                pos += 1
                continue
            yield pos, Error, text[pos]
            pos += 1


def _eol_token() -> Any:
    """What this Pygments yields for a newline no rule matched (``Text`` before 2.13,
    ``Whitespace`` since): asked of its own loop."""

    class Probe(RegexLexer):  # type: ignore[misc]
        tokens = {"root": [("a", Text)]}  # noqa: RUF012 - Pygments' own class attribute

    return next(iter(RegexLexer.get_tokens_unprocessed(Probe(), "\n")))[1]


_EOL_TOKEN = _eol_token()


def _candidates(tokendefs: dict[str, list[Any]]) -> Any:
    """For one lexer's rules: (state, character) -> the state's rules that can start there."""
    starts = {state: [_starts_of(rule[0]) for rule in rules] for state, rules in tokendefs.items()}

    @functools.lru_cache(maxsize=4096)
    def candidates(state: str, char: str) -> tuple[Any, ...]:
        return tuple(
            rule
            for rule, can in zip(tokendefs[state], starts[state], strict=True)
            if _may_start(can, char)
        )

    return candidates


def _may_start(starts: Starts, char: str) -> bool:
    if starts is None:
        return True
    chars, tests = starts
    return char in chars or any(test(char) for test in tests)


def _starts_of(rexmatch: Any) -> Starts:
    """What a rule's pattern can start a match with (None: anything, or the empty string, or
    a pattern this does not read)."""
    pattern = getattr(rexmatch, "__self__", None)
    if not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
        return None
    if pattern.flags & (re.IGNORECASE | re.LOCALE):
        return None  # (case folding: not worth reading)
    try:
        parsed = _parse.parse(pattern.pattern, pattern.flags)
        starts, nullable = _sequence(list(parsed), _Flags(pattern.flags))
    except Exception:  # anything unexpected: try the rule everywhere
        return None
    return None if nullable else starts


class _Flags:
    def __init__(self, flags: int) -> None:
        self.ascii = bool(flags & re.ASCII)
        self.dotall = bool(flags & re.DOTALL)


_EMPTY: Starts = (frozenset(), ())


def _union(a: Starts, b: Starts) -> Starts:
    if a is None or b is None:
        return None
    return a[0] | b[0], a[1] + b[1]


def _sequence(items: list[Any], flags: _Flags) -> tuple[Starts, bool]:
    """(what it can start with, whether it can match the empty string) of parsed items."""
    out = _EMPTY
    for op, arg in items:
        if op in _ZERO_WIDTH:
            continue  # consumes nothing: what follows starts the match (a superset)
        starts, nullable = _item(op, arg, flags)
        out = _union(out, starts)
        if out is None:
            return None, False
        if not nullable:
            return out, False
    return out, True


def _item(op: Any, arg: Any, flags: _Flags) -> tuple[Starts, bool]:
    if op is _sre.LITERAL:
        return (frozenset(chr(arg)), ()), False
    if op is _sre.NOT_LITERAL:
        other = chr(arg)
        return (frozenset(), (lambda c: c != other,)), False
    if op is _sre.ANY:
        return (None if flags.dotall else (frozenset(), (lambda c: c != "\n",))), False
    if op is _sre.IN:
        return _charset(arg, flags), False
    if op is _sre.SUBPATTERN:
        if arg[1] & (re.IGNORECASE | re.LOCALE | re.DOTALL | re.ASCII):
            return None, False  # a group with flags of its own, (?i:...)
        return _sequence(list(arg[-1]), flags)
    if op is _sre.BRANCH:
        out = _EMPTY
        nullable = False
        for branch in arg[1]:
            starts, empty = _sequence(list(branch), flags)
            out = _union(out, starts)
            if out is None:
                return None, False
            nullable = nullable or empty
        return out, nullable
    if op in _REPEATS:
        low, _high, body = arg
        starts, empty = _sequence(list(body), flags)
        return starts, empty or low == 0
    if op is getattr(_sre, "ATOMIC_GROUP", None):
        return _sequence(list(arg), flags)
    return None, False  # CATEGORY outside a set, GROUPREF, GROUPREF_EXISTS...


_REPEATS = tuple(
    op for op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None)) if op
)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


#: ``\\s``, ``\\d`` and ``\\w`` as ``re`` reads them in a str pattern, without and with
#: ``re.ASCII``; their negations (``\\S``...) are the same tests, negated.
_CATEGORIES: dict[Any, tuple[Callable[[str], bool], Callable[[str], bool]]] = {
    _sre.CATEGORY_SPACE: (str.isspace, lambda c: c in " \t\n\r\f\v"),
    _sre.CATEGORY_DIGIT: (str.isdecimal, lambda c: "0" <= c <= "9"),
    _sre.CATEGORY_WORD: (_word, lambda c: c.isascii() and _word(c)),
}
_NEGATED = {
    _sre.CATEGORY_NOT_SPACE: _sre.CATEGORY_SPACE,
    _sre.CATEGORY_NOT_DIGIT: _sre.CATEGORY_DIGIT,
    _sre.CATEGORY_NOT_WORD: _sre.CATEGORY_WORD,
}


def _category(name: Any, flags: _Flags) -> Callable[[str], bool] | None:
    if name in _CATEGORIES:
        return _CATEGORIES[name][flags.ascii]
    if name in _NEGATED:
        test = _CATEGORIES[_NEGATED[name]][flags.ascii]
        return lambda c: not test(c)
    return None


def _charset(items: list[Any], flags: _Flags) -> Starts:
    chars: set[str] = set()
    tests: list[Callable[[str], bool]] = []
    negate = False
    for op, arg in items:
        if op is _sre.NEGATE:
            negate = True
        elif op is _sre.LITERAL:
            chars.add(chr(arg))
        elif op is _sre.RANGE:
            low, high = arg
            if high - low > _MAX_RANGE:
                tests.append(_between(chr(low), chr(high)))
            else:
                chars.update(map(chr, range(low, high + 1)))
        elif op is _sre.CATEGORY:
            test = _category(arg, flags)
            if test is None:
                return None
            tests.append(test)
        else:
            return None  # (RANGE_UNI_IGNORE and the like)
    if not negate:
        return frozenset(chars), tuple(tests)
    inside: Starts = frozenset(chars), tuple(tests)

    def outside(char: str) -> bool:
        return not _may_start(inside, char)

    return frozenset(), (outside,)


def _between(low: str, high: str) -> Callable[[str], bool]:
    return lambda char: low <= char <= high
