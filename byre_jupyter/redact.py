"""Credential-shaped text, found and replaced: one place for every output we write or show.

What Claude's kernel tools return, what transcripts record and what we show of the CLI's stderr
can all carry a secret by accident (a variable named ``api_key``, an ``Authorization`` header in
a traceback, a key the CLI echoes). Two things count as a secret here:

* a *name* that says so (:func:`is_secret_name`: its words include key, token, secret, password,
  pass, credential, auth, cookie...), so ``api_key = "..."``, ``"token": "..."`` and
  ``PGPASSWORD=...`` have their values replaced; and
* a *value* with the shape of a known credential (Anthropic/OpenAI ``sk-`` keys, GitHub, GitLab,
  Slack, AWS, Google, Hugging Face, npm, Stripe webhook (``whsec_``), SendGrid (``SG.``) and
  Twilio (``SK``) tokens, Slack, Discord and Telegram webhook URLs, JWTs (wrapped over lines
  too), ``Bearer`` headers, PEM blocks, the password in ``scheme://user:password@host`` and the
  token in ``scheme://TOKEN@host``, ``curl -u``'s, ``mysql -p``'s and ``sshpass -p``'s password),
  wherever it stands.

**In place, never a line**: a redacted span becomes ``[redacted]`` where it stood,
and no line or line break is ever removed (tests/unit/test_redact.py holds it for any text). A
PEM block keeps its BEGIN and END lines and every line between them that is not key material
(code between two comments that look like a PEM block stays visible); a multi-line known value
becomes one ``[redacted]`` a line. The value of a secret-named assignment runs to its closing
quote, or its words to the end of the line, a closing bracket, quote or comma, a comment, a
call (``token = x; fetch(url)`` keeps ``; fetch(url)``) or the next ``Key=`` of a connection
string (``Pwd=...;Database=...``): a multi-word password is replaced whole, and ``password =
getpass()`` is code, left alone. Time is linear in the text (:func:`redact_text` says why).

Callers also pass the exact values they know to be secret: a :class:`Secrets`, the one way to
know an environment's (this process's and ``Claude.env``'s secret-named values). Redaction is
deliberately greedy: a false positive hides a harmless value, a false negative sends a key into
a shared notebook.

Pure module: no I/O (``Secrets.of_process`` reads ``os.environ``), importable from every layer.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "REDACTED",
    "Secrets",
    "is_secret_name",
    "redact_json",
    "redact_text",
    "redactions",
    "secret_values",
]

REDACTED = "[redacted]"

#: Words that make a name secret. ``pwd`` counts only beside other words (``MYSQL_PWD``,
#: ``db_pwd``): ``PWD`` and ``OLDPWD`` alone are the working folder (but see _assignments).
_SECRET_WORDS = frozenset(
    {
        "key", "apikey", "privatekey", "accesskey", "secretkey", "signingkey",
        "token", "tokens", "authtoken", "accesstoken", "refreshtoken",
        "secret", "secrets", "password", "passwd", "passphrase", "pwd", "pass",
        "credential", "credentials", "creds", "auth", "authorization", "cookie", "cookies",
    }
)  # fmt: skip
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def is_secret_name(name: str) -> bool:
    """Whether a variable, attribute, key or environment name says it holds a secret.

    Names are split into words (``snake_case``, ``camelCase``, ``kebab-case``, ``dotted.names``):
    ``api_key``, ``OPENAI_API_KEY``, ``sessionToken`` and ``db.password`` are secret; ``keys``,
    ``tokenizer``, ``monkey`` and ``PWD`` are not.
    """
    words = [w.lower() for w in _WORD.findall(name)]
    if words in (["pwd"], ["oldpwd"]):
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    # Run-together names: "apikey", "authtoken".
    joined = "".join(words)
    return joined.endswith(_RUN_TOGETHER)


# Run-together names: "apikey", "authtoken", libpq's "PGPASSWORD".
_RUN_TOGETHER = (
    "apikey", "authtoken", "accesstoken", "privatekey", "password", "passwd", "passphrase"
)  # fmt: skip


# Where a credential may start: not inside a word (``task-...`` is not an ``sk-`` key), but
# right after an escape that a repr or JSON string shows as two characters: in
# ``'a\\nsk-ant-...'`` the key follows the letter ``n``, and ``\\b`` saw no word start there.
# ANSI colour codes (``ESC[1;31m``) end in a digit and ``m``: a start too, and so does a URL's
# escape (``%0A``, a line break in a query) and ascii()'s ``\\U0001f511`` (an emoji).
_ESCAPES = (
    r"\\[nrtfvab0]",
    r"\\x[0-9A-Fa-f]{2}",
    r"\\u[0-9A-Fa-f]{4}",
    r"\\U[0-9A-Fa-f]{8}",
    r"%[0-9A-Fa-f]{2}",
    r"[0-9]m",
)
_ESCAPE = "|".join(f"(?<={e})" for e in _ESCAPES)


def _starting(prefix: str, inside: str = "A-Za-z0-9") -> str:
    """``prefix`` (a pattern of fixed width) where a credential may start: not right after a
    character of ``inside``, unless that character ends an escape. The check follows the
    prefix, so the pattern starts with a literal and ``re`` skips ahead to its occurrences
    instead of trying the look-behinds at every character."""
    after = "|".join(f"(?<={e}{prefix})" for e in _ESCAPES)
    return f"{prefix}(?:(?<![{inside}]{prefix})|{after})"


# Every line break str.splitlines knows: a redacted span never holds one (redact_text's promise).
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_BREAK_RUN = re.compile(f"[{_BREAKS}]+")
_NON_BREAK_RUN = re.compile(f"[^{_BREAKS}]+")


def _in_place(span: str) -> str:
    """``span`` replaced in place: each of its lines' content by ``[redacted]``, its line
    breaks kept, so what surrounds it keeps its lines (a known value may span lines)."""
    return _NON_BREAK_RUN.sub(REDACTED, span)


# A PEM block's body: whole lines of key material (base64, at most its padding at the end),
# and runs of it inside a line (a key in a JSON string, its line breaks written ``\\n``). What
# is neither (a line of code between two ``# -----BEGIN/END ... KEY-----`` comments) is not a
# key, and stays visible: a reader of the record sees the code that ran.
_PEM_EDGE = re.compile(r"-----(?:BEGIN|END) [A-Z0-9 ]{0,40}-----")
_KEY_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_KEY_RUN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}")
# A header line inside an encrypted PEM block ("Proc-Type: 4,ENCRYPTED"): its values are no key.
_PEM_HEADER = re.compile(r"[ \t]*[A-Za-z-]{1,20}:[^\n]*")


def _key_run(m: re.Match[str]) -> str:
    run, start = m.group(), m.start()
    # After "\\n" (a JSON or repr line break) the run starts with the escape's letter: keep it.
    if start > 0 and m.string[start - 1] == "\\" and run[0] in "nrt":
        return run[0] + REDACTED
    return REDACTED


def _key_material(line: str) -> bool:
    """A line of base64 is key material when it is 16 characters or more, or a shorter last
    line with a digit, "+", "/" or padding in it; a bare word (``    break`` in a loop) is code,
    and stays."""
    return len(line) >= 16 or any(c in "0123456789+/=" for c in line)


def _pem_piece(piece: str) -> str:
    """A piece of one line of a PEM block, between its BEGIN/END markers."""
    if not piece.strip():
        return piece
    stripped = piece.strip(" \t")
    if _KEY_LINE.fullmatch(stripped) and _key_material(stripped):
        return piece.replace(stripped, REDACTED, 1)
    if _PEM_HEADER.fullmatch(piece):
        return piece
    return _KEY_RUN.sub(_key_run, piece)


def _pem_block(m: re.Match[str]) -> str:
    """A PEM block with its key material replaced line by line: the BEGIN and END lines and
    every line break stay, so the block has as many lines as before."""
    out: list[str] = []
    for line in m.group().splitlines(keepends=True):
        body = line.rstrip(_BREAKS)
        done = 0
        for edge in _PEM_EDGE.finditer(body):
            out += (_pem_piece(body[done : edge.start()]), edge.group())
            done = edge.end()
        out += (_pem_piece(body[done:]), line[len(body) :])
    return "".join(out)


def _line_wrapped(m: re.Match[str]) -> str:
    """A JWT wrapped over lines, if its segments are a JWT's (each of 8 characters or more, the
    second a JSON object too): each line's part replaced, the line breaks kept."""
    segments = [_BREAK_RUN.sub("", part) for part in m.group().split(".")]
    if len(segments) != 3 or not segments[1].startswith("eyJ"):
        return m.group()
    if min(len(part) for part in segments) < 8:
        return m.group()
    return _in_place(m.group())


# The alphabet of a JWT, and a run of it that may wrap over lines.
_JWT_CHARS = r"A-Za-z0-9_\-"
_WRAPPED_RUN = rf"[{_JWT_CHARS}]+(?:\r?\n[{_JWT_CHARS}]+)*"
_WRAPPED_DOT = r"\r?\n?\.\r?\n?"

Replacement = str | Callable[[re.Match[str]], str]

# Values with the shape of a credential, wherever they appear. Each shape comes with the literal
# text it cannot appear without: a shape is looked for only where that literal occurs
# (``str.__contains__`` runs at memory speed), so megabytes of ordinary tool output cost a few
# substring scans rather than a fourteen-way regex at every character. Every shape is one of
# the linear forms redact_text's docstring names. A prefix nothing else has (``sk-ant-``,
# ``github_pat_``, a GitHub token of its exact length) is a key even glued to a word before it.
_SHAPE_TABLE: list[tuple[tuple[str, ...], str, Replacement]] = [
    (
        ("-----BEGIN ",),
        r"-----BEGIN [A-Z0-9 ]{0,40}-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}-----|\Z)",
        _pem_block,
    ),
    (
        ("sk-",),
        r"sk-(?:ant-[A-Za-z0-9_\-]{8,}|(?:proj|svcacct)-[A-Za-z0-9_\-]{20,})",
        REDACTED,
    ),
    (("sk-",), _starting("sk-") + r"(?:live-)?[A-Za-z0-9_\-]{20,}", REDACTED),
    (
        ("k_live_", "k_test_"),
        _starting(r"[rsp]k_(?:live|test)_") + r"[A-Za-z0-9]{10,}",
        REDACTED,
    ),
    (("gh",), _starting(r"gh[pousr]_") + r"[A-Za-z0-9]{20,}", REDACTED),
    (("gh",), r"gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9])", REDACTED),
    (("github_pat_",), r"github_pat_[A-Za-z0-9_]{20,}", REDACTED),
    (("glpat-",), r"glpat-[A-Za-z0-9_\-]{20,}", REDACTED),
    (("xox",), _starting(r"xox[abceoprs]-") + r"[A-Za-z0-9\-]{10,}", REDACTED),
    (("xapp-",), _starting(r"xapp-") + r"[A-Za-z0-9\-]{10,}", REDACTED),
    (
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
        _starting("(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)")
        + r"[0-9A-Z]{16}(?![0-9A-Za-z])",
        REDACTED,
    ),
    (("AIza",), _starting("AIza") + r"[0-9A-Za-z_\-]{35}", REDACTED),
    (("ya29.",), _starting(r"ya29\.") + r"[0-9A-Za-z_\-]{20,}", REDACTED),
    (("hf_",), _starting("hf_") + r"[A-Za-z0-9]{30,}", REDACTED),
    (("npm_",), _starting("npm_") + r"[A-Za-z0-9]{36}(?![A-Za-z0-9])", REDACTED),
    (("whsec_",), _starting("whsec_") + r"[A-Za-z0-9+/=]{16,}", REDACTED),
    (
        ("SG.",),
        _starting(r"SG\.") + r"[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}",
        REDACTED,
    ),
    # Twilio's API key SID: "SK" and 32 hex digits.
    (("SK",), _starting("SK") + r"[0-9a-fA-F]{32}(?![0-9A-Za-z])", REDACTED),
    (
        ("hooks.slack.com/",),
        r"(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+",
        REDACTED,
    ),
    # Discord's webhook URL (discord.com/api/webhooks/ID/TOKEN) and a Telegram bot's token,
    # in its API URL (api.telegram.org/botID:TOKEN/...) or alone (ID:AA...).
    (("/api/webhooks/",), r"(?<=/api/webhooks/)[0-9]{5,25}/[A-Za-z0-9_\-]+", REDACTED),
    (("/bot",), r"(?<=/bot)[0-9]{5,12}:[A-Za-z0-9_\-]{20,}", REDACTED),
    ((":AA",), r"(?<![0-9])[0-9]{8,12}:AA[A-Za-z0-9_\-]{30,}", REDACTED),
    (
        # A JWT starts only where a run of its own alphabet starts (the bound in redact_text).
        ("eyJ",),
        _starting("eyJ", _JWT_CHARS)
        + r"[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        REDACTED,
    ),
    (
        # The same JWT wrapped over lines: it starts where a run of its alphabet starts,
        # the line before included (a wrapped run is one run).
        ("eyJ",),
        rf"(?<![{_JWT_CHARS}])(?<![{_JWT_CHARS}]\n)(?<![{_JWT_CHARS}]\r\n)eyJ"
        rf"{_WRAPPED_RUN}{_WRAPPED_DOT}{_WRAPPED_RUN}{_WRAPPED_DOT}{_WRAPPED_RUN}",
        _line_wrapped,
    ),
]  # fmt: skip
_SHAPES = tuple((hints, re.compile(pattern), how) for hints, pattern, how in _SHAPE_TABLE)
# "Bearer <token>" / "Basic <b64>" in headers and tracebacks.
_SCHEME_TOKENS = tuple(
    (scheme, re.compile(f"({_starting(scheme)})" + r"([ \t]{1,8})[A-Za-z0-9._~+/=\-]{16,}"))
    for scheme in ("Bearer", "bearer", "Basic", "basic", "Token", "token")
)
# scheme://user:password@host: the password (up to the authority's last "@"), the user kept.
_URL_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.\-])(?P<head>[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s/@:\"'<>`]*:)"
    r"(?P<password>[^\s/\"'<>`]*)@"
)
# scheme://TOKEN@host: a user of 16 characters or more with a digit is a token (GitHub's
# x-access-token URLs written without the name); "git@", "me@" and "first.last@" stay.
_URL_TOKEN = re.compile(
    r"(?<![A-Za-z0-9+.\-])(?P<head>[A-Za-z][A-Za-z0-9+.\-]{0,30}://)"
    r"(?P<user>[^\s/@:\"'<>`]{16,})@"
)


def _url_token(m: re.Match[str]) -> str:
    user = m.group("user")
    if any(c.isdigit() for c in user) and any(c.isalpha() for c in user):
        return f"{m.group('head')}{REDACTED}@"
    return m.group()


# Passwords on a command line: curl's -u/--user NAME:PASSWORD, mysql's -pPASSWORD (glued: a
# "-p" alone asks for it) and sshpass's -p PASSWORD. Each command's options are read from its
# name to the end of its command (a line break, |, ; or &): -p is a port for ssh or docker.
_USER_OPTION = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:-u[ \t]*|--user[ \t=]+)(?P<q>['\"]?)"
    r"(?P<user>[^\s:'\"]{1,64}):(?P<password>[^\s'\"]+)"
)
_COMMAND = re.compile(
    r"(?<![A-Za-z0-9_\-])(?P<cmd>mysql|mysqldump|mysqladmin|mariadb|sshpass)"
    r"(?![A-Za-z0-9_\-])[^\n\r|;&]*"
)
_COMMAND_PASSWORD = {
    "sshpass": re.compile(r"(?<=[ \t])-p[ \t]*(?P<password>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"]+)"),
    "mysql": re.compile(r"(?<=[ \t])-p(?P<password>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"]+)"),
}


def _user_option(m: re.Match[str]) -> str:
    if m.group("password").isdigit():  # docker's -u UID:GID
        return m.group()
    return m.group()[: m.start("password") - m.start()] + REDACTED


def _command(m: re.Match[str]) -> str:
    option = _COMMAND_PASSWORD["sshpass" if m.group("cmd") == "sshpass" else "mysql"]

    def password(p: re.Match[str]) -> str:
        return p.group()[: p.start("password") - p.start()] + REDACTED

    return option.sub(password, m.group())


# The name and separator of an assignment: name = value, name: value, "name": "value",
# ?name=value, env["name"] = "value", Key=Value; in a connection string. Every part is bounded:
# an attempt costs a constant, whatever follows. The look-behind starts a name only at a word's
# start (or after an escape such as ``\\n``): without it, every character of a long unbroken
# string (base64 pixels) began an 80-character attempt.
_NAME_SEP = re.compile(
    rf"""(?:(?<![A-Za-z0-9_.\-\\])|{_ESCAPE})"""
    r"""(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})"""
    r"""(?P<sep>["']?\]?[ \t]{0,16}[:=](?![=:])[ \t]{0,16})(?P<q>["'`]?)"""
)
#: The stems of the secret words (_SECRET_WORDS): an assignment is looked for only around one.
_STEM = re.compile(r"key|token|secret|pass|pwd|cred|auth|cookie", re.IGNORECASE)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# The value after the separator, by how it is written (each a single pass, no backtracking):
# quoted, to the closing quote (escapes skipped); in a URL query, to the next "&"; otherwise
# words to the end of the line, a closing bracket, quote or comma, or a comment. Spaces between
# words belong to the value (a multi-word password), and so does ";" unless a space or the next
# ``Key=`` of a connection string follows. Never a line break: the rest of a line and the lines
# after it are not the value (``token = x; urlopen(...)`` keeps its call visible).
_QUOTED = {
    q: re.compile(rf"[^{q}\\{_BREAKS}]*(?:\\[^{_BREAKS}][^{q}\\{_BREAKS}]*)*") for q in "\"'`"
}
_QUERY_VALUE = re.compile(r"[^\s&#\"'<>`]*")
# A closing bracket belongs to a word only inside it (``p(ss)word``): at a word's end it closes
# what the assignment stood in (``f(token=abc)``).
_PLAIN_WORD = re.compile(
    r"(?:[^\s,)\]{}<>\"'`;]|[)\]](?=[^\s,;)\]}<>\"'`])"
    r"|;(?!\s|[A-Za-z_][A-Za-z0-9_ .\-]{0,40}=|\Z))+"
)
_WORD_GAP = re.compile(r"[ \t]+")
_NOT_SECRET_VALUE = re.compile(
    # A scheme alone: its credential was redacted by _SCHEME_TOKENS ("Bearer [redacted]").
    r"[\d.]+|true|false|none|null|nil|undefined|\[redacted\]|bearer|basic|digest",
    re.IGNORECASE,
)
# An auth scheme is kept in front of the redacted credential: "Authorization: Bearer [redacted]".
_SCHEME_PREFIX = re.compile(r"(?:bearer|basic|token|digest)[ \t]+", re.IGNORECASE)
# A working folder: "PWD=/home/me" is a path, "Pwd=hunter2;" in a connection string a password.
_PATH_LIKE = re.compile(r"[/~.\\$]|[A-Za-z]:[\\/]")


def _run_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern`` (which may match nothing) stops reading from ``pos``."""
    m = pattern.match(text, pos)
    return pos if m is None else m.end()


def _next_assignment(text: str, pos: int) -> re.Match[str] | None:
    """The next name and separator from ``pos`` on whose name holds a stem. Each stem costs a
    look back over at most 80 name characters (never before ``pos``, so no character is looked
    at twice) and at most four anchored attempts (the name may start after an escape)."""
    while (stem := _STEM.search(text, pos)) is not None:
        i = start = stem.start()
        limit = max(pos, i - 80)
        while start > limit and text[start - 1] in _NAME_CHARS:
            start -= 1
        # after "\\n", "%0A", "\\x1b", "\\u2028", "\\U0001f511"
        for at in (start, start + 1, start + 2, start + 3, start + 5, start + 9):
            if at > i:
                break
            m = _NAME_SEP.match(text, at)
            if m is not None and m.end("name") >= stem.end():
                return m
        pos = stem.end()
    return None


# A call or subscript of a (dotted) name whose bracket closes before another opens, and what
# may follow it in code: ``getpass()``, ``os.environ["X"]``, ``cfg.get("k").strip()``. Bounded,
# and the bracket's body stops at the next bracket: each scan reads up to the next one, so the
# scans from the words of a line read each character at most twice.
_CODE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]{0,80}(?:\.[A-Za-z_][A-Za-z0-9_]{0,80}){0,8}[ \t]{0,4}"
    rf"(?:\([^()\[\]{_BREAKS}]{{0,200}}\)|\[[^()\[\]{_BREAKS}]{{0,200}}\])"
    rf"(?=[ \t.;#,)\]}}(\[:{_BREAKS}]|\Z)"
)


def _is_code(text: str, start: int) -> bool:
    """Whether the unquoted value at ``start`` is code, not a secret: a call or subscript
    (``getpass()``, ``os.environ["X"]``). ``s3cr(et`` and ``p(ss)word`` are passwords."""
    return _CODE.match(text, start) is not None


def _plain_value_end(text: str, start: int) -> int:
    """Where an unquoted value from ``start`` ends: its words, each read once. A word that is
    code (:func:`_is_code`) is not the value's (``token = x or fetch(url)`` keeps
    ``fetch(url)``), and neither is a comment."""
    end = _run_end(_PLAIN_WORD, text, start)
    if end == start:
        return start
    while (gap := _WORD_GAP.match(text, end)) is not None:
        word_end = _run_end(_PLAIN_WORD, text, gap.end())
        if word_end == gap.end() or text[gap.end()] == "#":
            break
        if _is_code(text, gap.end()):
            break
        end = word_end
    return end


def _assignments(text: str) -> str:
    """``text`` with the value of every secret-named assignment replaced. One left-to-right
    pass: each search starts where the last one ended, and a value is read only after a secret
    name, once."""
    out: list[str] = []
    done = pos = 0
    while (m := _next_assignment(text, pos)) is not None:
        pos = start = m.end()
        name = m.group("name")
        working_folder = name.lower() == "pwd"
        if not (working_folder or is_secret_name(name)):
            continue
        q = m.group("q")
        if q and text.startswith((")", "]", "}", ","), start):
            continue  # the quote closed a string: getpass('Password: ')
        if q:
            value_end = _run_end(_QUOTED[q], text, start)
        elif m.start() > 0 and text[m.start() - 1] in "?&":
            value_end = _run_end(_QUERY_VALUE, text, start)
        elif start < len(text) and text[start] in "{[(":
            continue  # a structure: its own names are found inside it
        else:
            value_end = _plain_value_end(text, start)
            if _is_code(text, start):
                continue  # a call or subscript (getpass(), os.environ[...]) is no secret
        pos = value_end
        value = text[start:value_end]
        scheme = _SCHEME_PREFIX.match(value)
        if scheme is not None:
            start += scheme.end()
            value = value[scheme.end() :]
        if not value or _NOT_SECRET_VALUE.fullmatch(value) or text.startswith(REDACTED, start):
            continue
        if working_folder and _PATH_LIKE.match(value):
            continue
        out += (text[done:start], REDACTED)
        done = value_end
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def redact_text(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with every credential-shaped value, every value of a secret-named assignment,
    every password in a URL and every string in ``known`` (of 6 characters or more) replaced by
    ``[redacted]`` in place: the result has the same lines and line breaks as ``text``.

    **Cost: linear in the length of the text**, O(n·(s + k)) for n characters, the s shapes
    above and k known values, whatever the text (tests/unit/test_redact.py runs megabytes of
    adversarial input; figures in bench/RESULTS.md, ``python -m bench.redact``). Python's
    ``re`` backtracks, so each pattern is written in one of two forms that keep it linear:

    * **bounded**: every quantifier but the last has a fixed upper bound and the last one is
      the pattern's end (``sk-ant-[...]{8,}``): an attempt that fails has read a constant
      number of characters, and one that succeeds has read only what it replaces;
    * **runs**: an unbounded repeat of a class is followed only by a character outside that
      class, and an attempt may start only where such a run starts (a JWT's segments, a URL's
      authority): a failing attempt reads at most three runs, so each character is read at
      most three times per pattern;
    * **to a marker**: a PEM block's lazy body ends at its END line or at the end of the text,
      so once its bounded header matched it cannot fail, and it consumes what it reads.

    Assignments are one left-to-right scan from one stem of a secret word (``key``, ``pass``,
    ``token``...) to the next: a bounded look back for the name, a bounded name-and-separator
    pattern, and the value read once by a pattern without backtracking. Known values are
    replaced with ``str.replace``, linear per value.
    """
    for secret in sorted({k for k in known if len(k) >= 6}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, _in_place(secret))
    for hints, shape, replacement in _SHAPES:
        if any(hint in text for hint in hints):
            text = shape.sub(replacement, text)
    if "://" in text and "@" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group('head')}{REDACTED}@", text)
        text = _URL_TOKEN.sub(_url_token, text)
    if "-u" in text:
        text = _USER_OPTION.sub(_user_option, text)
    if "-p" in text and ("mysql" in text or "mariadb" in text or "sshpass" in text):
        text = _COMMAND.sub(_command, text)
    for scheme, pattern in _SCHEME_TOKENS:
        if scheme in text:
            text = pattern.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    if "=" in text or ":" in text:
        text = _assignments(text)
    return text


def secret_values(environ: Mapping[str, str]) -> frozenset[str]:
    """The values of secret-named variables in ``environ`` (8 characters or more): catches keys
    whose shape no pattern knows. Callers build a :class:`Secrets` (``Secrets.of``), not this."""
    return frozenset(v for k, v in environ.items() if len(v) >= 8 and is_secret_name(k))


@dataclass(frozen=True)
class Secrets:
    """The exact values known to be secret: the one way to know them.

    An environment's secrets are those of the kernel's own environment *and* of what the CLI is
    given on top of it (``Claude.env``): a database password passed to the CLI there and printed
    by user code through the python tool is as secret in the result Claude gets as in the view.
    Every caller builds them here (:meth:`of_process`, :meth:`of`) and adds what it knows besides
    (the user's secret-named variables, an account's email) with ``|``. Iterating gives the
    values, so a ``Secrets`` is what :func:`redact_text` and :func:`redact_json` take as
    ``known``.
    """

    values: frozenset[str] = frozenset()

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> Secrets:
        """The secret-named values of exactly ``environ`` (:func:`secret_values`)."""
        return cls(secret_values(environ))

    @classmethod
    def of_process(cls, extra: Mapping[str, str] | None = None) -> Secrets:
        """This process's environment with ``extra`` over it (``Claude.env``: what the CLI is
        launched with), read now: a key set after the extension loaded counts too."""
        return cls.of({**os.environ, **(extra or {})})

    def __or__(self, other: Iterable[str]) -> Secrets:
        return Secrets(self.values | frozenset(v for v in other if v))

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __contains__(self, value: object) -> bool:
        return value in self.values

    def __len__(self) -> int:
        return len(self.values)


def redactions(before: Any, after: Any) -> int:
    """How many spans redaction replaced between ``before`` and ``after`` (a text or a JSON
    value and its redacted copy): what a saved card counts in its note."""

    def count(value: Any) -> int:
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        return text.count(REDACTED)

    return max(0, count(after) - count(before))


# Values under a secret-looking key that are plainly not secrets (usage counts, flags, "none").
_PLAIN = frozenset({"", "none", "null", "true", "false"})


def redact_json(
    value: Any,
    known: Iterable[str] = (),
    key: str = "",
    *,
    redact: Callable[[str], str] | None = None,
) -> Any:
    """A JSON value with every string redacted (:func:`redact_text` with ``known``, or the
    caller's ``redact``) and the string values of secret-named keys replaced, line by line;
    its structure kept. An image's base64 payload (``data`` beside a ``media_type`` or
    ``mimeType``) is pixels, not text: kept as it is (and redact_text over megabytes of base64
    would stall the kernel's loop for seconds)."""
    if redact is None:
        redact = functools.partial(redact_text, known=frozenset(known))
    return _redact_json(value, redact, key)


def _redact_json(value: Any, redact: Callable[[str], str], key: str) -> Any:
    if isinstance(value, str):
        if key and is_secret_name(key) and value.strip().lower() not in _PLAIN:
            return _in_place(value)
        return redact(value)
    if isinstance(value, Mapping):
        media = "media_type" in value or "mimeType" in value
        return {
            str(k): v if media and k == "data" else _redact_json(v, redact, str(k))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_redact_json(v, redact, "") for v in value]
    return value
