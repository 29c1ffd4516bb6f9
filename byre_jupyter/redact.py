"""Credential-shaped text, found and replaced: one place for every output we write or show.

What Claude's kernel tools return, what transcripts record and what we show of the CLI's stderr
can all carry a secret by accident (a variable named ``api_key``, an ``Authorization`` header in
a traceback, a key the CLI echoes). Two things count as a secret here:

* a *name* that says so (:func:`is_secret_name`: its words include key, token, secret, password,
  credential, auth, cookie...), so ``api_key = "..."`` and ``"token": "..."`` have their values
  replaced; and
* a *value* with the shape of a known credential (Anthropic/OpenAI ``sk-`` keys, GitHub, GitLab,
  Slack, AWS, Google, Hugging Face and npm tokens, JWTs, ``Bearer`` headers, PEM blocks), wherever
  it stands.

Callers may also pass the exact values they know to be secret (:func:`secret_values` reads them
from an environment). Redaction is deliberately greedy: a false positive hides a harmless value,
a false negative sends a key into a shared notebook.

Pure module: no I/O, importable from every layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "is_secret_name", "redact_json", "redact_text", "secret_values"]

REDACTED = "[redacted]"

#: Words that make a name secret. ``pwd`` is left out on purpose: ``PWD`` is the working folder.
_SECRET_WORDS = frozenset(
    {
        "key", "apikey", "privatekey", "accesskey", "secretkey", "signingkey",
        "token", "tokens", "authtoken", "accesstoken", "refreshtoken",
        "secret", "secrets", "password", "passwd", "passphrase",
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
    if any(w in _SECRET_WORDS for w in words):
        return True
    # Run-together names: "apikey", "authtoken".
    joined = "".join(words)
    return any(joined.endswith(w) for w in ("apikey", "authtoken", "accesstoken", "privatekey"))


# Values with the shape of a credential, wherever they appear. Each shape comes with the literal
# text it cannot appear without: a shape is looked for only where that literal occurs
# (``str.__contains__`` runs at memory speed), so megabytes of ordinary tool output cost a few
# substring scans rather than a fourteen-way regex at every character.
_SHAPES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (hints, re.compile(pattern))
    for hints, pattern in [
        (
            ("-----BEGIN ",),
            r"-----BEGIN [A-Z0-9 ]{0,40}-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}-----|\Z)",
        ),
        (("sk-",), r"\bsk-(?:ant-[A-Za-z0-9_\-]{8,}|(?:proj-|live-|svcacct-)?[A-Za-z0-9_\-]{20,})"),
        (("k_live_", "k_test_"), r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}"),
        (("gh", "github_pat_"), r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
        (("glpat-",), r"\bglpat-[A-Za-z0-9_\-]{20,}"),
        (("xox",), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
        (
            ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
        ),
        (("AIza",), r"\bAIza[0-9A-Za-z_\-]{35}"),
        (("ya29.",), r"\bya29\.[0-9A-Za-z_\-]{20,}"),
        (("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
        (("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
        (("eyJ",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ]
)  # fmt: skip
# "Bearer <token>" / "Basic <b64>" in headers and tracebacks.
_SCHEME_TOKEN = re.compile(r"\b((?:[Bb]earer|[Bb]asic|[Tt]oken)\s+)[A-Za-z0-9._~+/=\-]{16,}")
# name = value, name: value, "name": "value", ?name=value, env["name"] = "value" (the name
# decides; see is_secret_name).
_ASSIGNMENT = re.compile(
    # The look-behind starts a name only at a word's start: without it, every character of a
    # long unbroken string (base64 pixels) began an 80-character attempt.
    r"""(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})"""
    r"""(?P<sep>["']?\]?\s*[:=]\s*)(?P<q>["']?)"""
    r"""(?P<value>[^\s"'`,;&<>(){}\[\]]{4,})"""
)
_NOT_SECRET_VALUE = re.compile(
    r"[\d.]+|true|false|none|null|bearer|basic|\[redacted\]", re.IGNORECASE
)


def _assignment(m: re.Match[str]) -> str:
    value = m.group("value")
    if not is_secret_name(m.group("name")) or _NOT_SECRET_VALUE.fullmatch(value):
        return m.group(0)
    return f"{m.group('name')}{m.group('sep')}{m.group('q')}{REDACTED}"


def redact_text(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with every credential-shaped value, every value of a secret-named assignment and
    every string in ``known`` (of 6 characters or more) replaced by ``[redacted]``."""
    for secret in sorted({k for k in known if len(k) >= 6}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    for hints, shape in _SHAPES:
        if any(hint in text for hint in hints):
            text = shape.sub(REDACTED, text)
    if "earer" in text or "asic" in text or "oken" in text:
        text = _SCHEME_TOKEN.sub(lambda m: m.group(1) + REDACTED, text)
    if "=" in text or ":" in text:
        text = _ASSIGNMENT.sub(_assignment, text)
    return text


def secret_values(environ: Mapping[str, str]) -> frozenset[str]:
    """The values of secret-named variables in ``environ`` (8 characters or more), to pass to
    :func:`redact_text` as ``known``: catches keys whose shape no pattern knows."""
    return frozenset(v for k, v in environ.items() if len(v) >= 8 and is_secret_name(k))


# Values under a secret-looking key that are plainly not secrets (usage counts, flags, "none").
_PLAIN = frozenset({"", "none", "null", "true", "false"})


def redact_json(value: Any, known: Iterable[str] = (), key: str = "") -> Any:
    """A JSON value with every string redacted (:func:`redact_text`) and the string values of
    secret-named keys replaced. An image's base64 payload (``data`` beside a ``media_type`` or
    ``mimeType``) is pixels, not text: kept as it is (and redact_text over megabytes of base64
    would stall the kernel's loop for seconds)."""
    if isinstance(value, str):
        if key and is_secret_name(key) and value.strip().lower() not in _PLAIN:
            return REDACTED
        return redact_text(value, known)
    if isinstance(value, Mapping):
        media = "media_type" in value or "mimeType" in value
        return {
            str(k): v if media and k == "data" else redact_json(v, known, str(k))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact_json(v, known) for v in value]
    return value
