"""Credential redaction: the names and shapes that count as secret, and what stays readable."""

from __future__ import annotations

import pytest

from bench.redact import ADVERSARIAL
from byre_jupyter.redact import REDACTED, is_secret_name, redact_text, secret_values

# Built at run time so no credential-shaped literal sits in the repository.
ANT = "sk-ant-api03-" + "x7Q" * 30
SECRETS = {
    "anthropic": ANT,
    "openai": "sk-proj-" + "a1B2" * 10,
    "github": "ghp_" + "Z9y8" * 9,
    "github_pat": "github_pat_" + "11AB" * 8,
    "slack": "xoxb-" + "1234-5678-" + "abcd" * 5,
    "aws": "AKIA" + "ABCDEFGH12345678",
    "google": "AIza" + "Sy" + "A1b2C3d4" * 4 + "x",
    "hf": "hf_" + "abcdEFGH" * 5,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
    "pem": f"-----BEGIN RSA PRIVATE KEY-----\nMIIEow{'A' * 200}\n-----END RSA PRIVATE KEY-----",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_credential_shapes_are_redacted_anywhere(kind: str) -> None:
    secret = SECRETS[kind]
    out = redact_text(f"before {secret} after")
    assert secret not in out
    assert REDACTED in out
    assert out.startswith("before ") and out.endswith(" after")


def test_a_truncated_pem_block_is_redacted_to_the_end() -> None:
    out = redact_text("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk" + "Q" * 500)
    assert "b3BlbnNzaC1rZXk" not in out


@pytest.mark.parametrize(
    "name",
    ["api_key", "OPENAI_API_KEY", "apikey", "sessionToken", "db.password", "AWS_SECRET",
     "JUPYTERHUB_API_TOKEN", "auth", "Authorization", "my-credentials", "refresh_token"],
)  # fmt: skip
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["keys", "tokenizer", "monkey", "PWD", "df", "input_text", "secretary", "hotkeys"]
)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "text",
    [
        "api_key = 'hunter2-long-value'",
        'api_key="hunter2-long-value"',
        '{"token": "hunter2-long-value"}',
        "https://host/api?x=1&token=hunter2-long-value&y=2",
        "PASSWORD: hunter2-long-value",
        "export GITHUB_TOKEN=hunter2-long-value",
        "os.environ['MY_TOKEN'] = 'hunter2-long-value'",
        'cfg["password"]="hunter2-long-value"',
    ],
)
def test_values_of_secret_names_are_redacted(text: str) -> None:
    out = redact_text(text)
    assert "hunter2" not in out
    assert REDACTED in out


def test_bearer_headers() -> None:
    out = redact_text("Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123")
    assert "abcdefghij" not in out
    assert "Bearer" in out


@pytest.mark.parametrize(
    "text",
    [
        '{"input_tokens": 1234567, "output_tokens": 12}',
        "keys = ['a', 'b']",
        "for key in d: print(key)",
        "df.shape = (3, 4)",
        "auth: true",
        "the secret of good code is tests",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


def test_known_values_are_redacted_whatever_their_shape() -> None:
    env = {"ANTHROPIC_API_KEY": "plain-words-key", "HOME": "/root", "PWD": "/work/somewhere"}
    known = secret_values(env)
    assert known == {"plain-words-key"}
    out = redact_text("the CLI said plain-words-key in /work/somewhere", known)
    assert out == f"the CLI said {REDACTED} in /work/somewhere"


def test_redaction_is_idempotent() -> None:
    once = redact_text(f"api_key={ANT} and {SECRETS['jwt']}")
    assert redact_text(once) == once


# -- the misses of the second trust review: each was a value that passed ------------------------

GHP = SECRETS["github"]
AKIA = SECRETS["aws"]
JWT = SECRETS["jwt"]


@pytest.mark.parametrize("escape", ["\n", "\t", "\r", "\x1b"])
@pytest.mark.parametrize("kind", ["anthropic", "openai", "github", "aws", "jwt", "slack"])
def test_every_value_after_an_escape_in_a_repr_is_redacted(kind: str, escape: str) -> None:
    # repr() writes the escape as two characters: the value then follows a letter.
    secret = SECRETS[kind]
    shown = repr(f"first {secret}{escape}{secret}{escape}{secret}")
    out = redact_text(shown)
    assert secret not in out, out
    assert out.count(REDACTED) == 3


def test_a_secret_name_after_an_escape_is_redacted() -> None:
    out = redact_text(repr("user=bob\npassword=hunter2-long-value\ttoken=abcdefgh"))
    assert "hunter2" not in out and "abcdefgh" not in out


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        ("postgres://admin:s3cr3t-pass@db.internal:5432/app", "s3cr3t-pass", "admin"),
        ("DATABASE_URL=mysql://u:p@ss:w0rd@h/db", "ss:w0rd", "mysql://u:"),
        ("redis://:hunter2pw@cache:6379/0", "hunter2pw", "cache:6379"),
        ("git clone https://me:ghtoken123@github.example/x.git", "ghtoken123", "me:"),
        ('{"url": "amqp://guest:guestpw@mq/"}', "guestpw", "amqp://guest:"),
    ],
)
def test_passwords_inside_urls(text: str, secret: str, kept: str) -> None:
    out = redact_text(text)
    assert secret not in out, out
    assert kept in out


def test_a_url_without_a_password_is_left_alone() -> None:
    for text in ("https://user@host/x", "https://host:8443/path?q=1", "ssh://git@github.com/a"):
        assert redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "Server=db;Database=app;Uid=sa;Pwd=hunter2x;Encrypt=yes",
        "Driver={ODBC};Server=db;PWD=hunter2x",
        "MYSQL_PWD=hunter2x",
        "db_pwd: hunter2x",
    ],
)
def test_pwd_in_connection_strings(text: str) -> None:
    out = redact_text(text)
    assert "hunter2x" not in out, out
    if "Encrypt" in text:
        assert out.endswith(";Encrypt=yes")  # the next pair of the string stays


def test_pwd_the_working_folder_is_left_alone() -> None:
    assert redact_text("PWD=/home/me/work\nOLDPWD=/tmp") == "PWD=/home/me/work\nOLDPWD=/tmp"
    assert not is_secret_name("OLDPWD") and is_secret_name("MYSQL_PWD")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password=x;Zr8Qk2-tail", "Zr8Qk2"),
        ("PASSWORD=x;", "x;"),
        ("password = ab cdef-tail", "cdef"),
        ("api_key: ab", ": ab"),
        ("DB_PASSWORD=correct horse battery staple", "horse"),
        ("password: correct horse battery staple\nuser: bob", "staple"),
        ('{"password": "correct horse battery staple", "user": "bob"}', "horse"),
        ("secret = 'it is \\'quoted\\' here'", "quoted"),
    ],
)
def test_short_odd_and_multi_word_values_are_redacted_whole(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out, out
    assert REDACTED in out


def test_a_multi_word_value_ends_at_its_line_and_its_quote() -> None:
    out = redact_text("password: correct horse\nuser: bob")
    assert out == f"password: {REDACTED}\nuser: bob"
    out = redact_text('{"password": "correct horse", "user": "bob"}')
    assert out == f'{{"password": "{REDACTED}", "user": "bob"}}'


@pytest.mark.parametrize(
    "secret",
    [
        "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/" + "aBcD" * 6,
        "https://hooks.slack.com/workflows/T0ABCDEF1/A0ABCDEF2/123/" + "aBcD" * 6,
        "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "SG." + "aB3dE5fG7hI9jK1lM3nO5p" + "." + "qR7sT9uV1wX3yZ5aB7cD9eF1gH3iJ5kL7mN9oP1qR3s",
    ],
    ids=["slack-webhook", "slack-workflow", "whsec", "sendgrid"],
)
def test_webhook_and_mail_service_secrets(secret: str) -> None:
    out = redact_text(f"config: {{'hook': '{secret}'}}")
    tail = secret.rsplit("/", 1)[-1] if "/" in secret else secret
    assert tail not in out, out


@pytest.mark.parametrize(
    "text",
    [
        "if password == other_password:",
        "PWD=/root",
        "see https://example.com/a:b@c for details",
        "user=bob&mode=fast",
        "token_count: 12, keys: 3",
    ],
)
def test_more_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


def test_known_values_from_the_environment_anywhere() -> None:
    known = secret_values({"ANTHROPIC_AUTH_TOKEN": "gateway-words-123", "HOME": "/root"})
    out = redact_text("curl -H 'x-key:gateway-words-123' and again gateway-words-123!", known)
    assert "gateway-words-123" not in out and out.count(REDACTED) == 2


# -- linear time: megabytes of adversarial input ------------------------------------------------
# No clock here (bench/redact.py measures n and 4n). These inputs took quadratic time in the
# old patterns (100 KB of "-eyJ": 22.7 s); at 3 MB a quadratic pattern would not end before
# the suite's timeout (pyproject.toml), a linear one ends in a few seconds at most.


@pytest.mark.slow  # about a second a kind on a loaded 2-core machine; too long for --fast
@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
def test_megabytes_of_adversarial_input_are_redacted(kind: str) -> None:
    unit = ADVERSARIAL[kind]
    text = unit * (3 * 2**20 // len(unit))
    out = redact_text(text, known={"a-known-value"})
    assert len(out) <= len(text) + len(REDACTED) * (len(text) // 6 + 1)


# -- in place: redaction never removes a line or a line break -----------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028"]
# Pieces that start, continue or end every kind of redaction, to be shuffled with line breaks.
_PIECES = [
    *SECRETS.values(),
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    "token = ",
    "password: ",
    "PGPASSWORD=",
    "secret='",
    '"api_key": "',
    "\\",
    "Bearer ",
    "https://user:",
    "@host",
    "eyJhbGciOiJIUzI1NiJ9",
    ".",
    "mysql -p",
    "sshpass -p ",
    "curl -u a:",
    "Pwd=x;",
    "ab cd",
    "known-secret-value",
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES) | st.sampled_from(_BREAKS) | st.text(max_size=8), max_size=30)
)
def test_redaction_keeps_every_line_and_line_break(parts: list[str]) -> None:
    text = "".join(parts)
    known = {"known-secret-value", "multi\nline-known-secret"}
    out = redact_text(text, known)
    assert len(out.splitlines()) == len(text.splitlines())
    for brk in ("\n", "\r", "\u2028", "\x85"):
        assert out.count(brk) == text.count(brk)


@given(st.text())
def test_any_text_keeps_its_lines(text: str) -> None:
    assert len(redact_text(text).splitlines()) == len(text.splitlines())


def test_a_known_value_over_lines_keeps_its_line_breaks() -> None:
    out = redact_text(
        "a\nfirst-line-of-it\nsecond-line-of-it\nz", {"first-line-of-it\nsecond-line-of-it"}
    )
    assert out == f"a\n{REDACTED}\n{REDACTED}\nz"


CODE_IN_PEM = (
    "x = 1\n"
    "# -----BEGIN PRIVATE KEY-----\n"
    "import urllib.request\n"
    'urllib.request.urlopen("http://127.0.0.1:9/count")\n'
    "# -----END PRIVATE KEY-----\n"
    "print(x)"
)


def test_code_between_pem_markers_stays_visible() -> None:
    # The trick: a network call between two comments that look like a PEM block.
    assert redact_text(CODE_IN_PEM) == CODE_IN_PEM


def test_a_pem_block_keeps_its_lines_and_markers_and_loses_its_key() -> None:
    body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "Ab9+" * 8, "Zm9vYmFy" * 8, "QUJD=="]
    pem = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END PRIVATE KEY-----"
    out = redact_text(f"key = '''\n{pem}\n'''\nprint(1)")
    lines = out.splitlines()
    assert lines == [
        "key = '''",
        "-----BEGIN PRIVATE KEY-----",
        REDACTED,
        REDACTED,
        REDACTED,
        "-----END PRIVATE KEY-----",
        "'''",
        "print(1)",
    ]


def test_a_pem_block_in_a_json_string_loses_its_key() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "Ab9+" * 8
    text = (
        f'{{"k": "-----BEGIN PRIVATE KEY-----\\n{body}\\n{body}\\n-----END PRIVATE KEY-----\\n"}}'
    )
    out = redact_text(text)
    assert body not in out and body[1:] not in out
    assert "-----BEGIN PRIVATE KEY-----\\n" in out and "\\n-----END PRIVATE KEY-----" in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("token = abc123; urlopen('http://h/x')", f"token = {REDACTED}; urlopen('http://h/x')"),
        ("token = abc123 or fetch(url)", f"token = {REDACTED} fetch(url)"),
        ("password = hunter2xy  # the old one", f"password = {REDACTED}  # the old one"),
        ("api_key: abc123\nrequests.get(u)", f"api_key: {REDACTED}\nrequests.get(u)"),
    ],
)
def test_an_assignment_loses_its_value_and_nothing_after_it(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_a_bare_word_between_pem_markers_is_code_and_stays() -> None:
    text = "for x in items:\n# -----BEGIN PRIVATE KEY-----\n    break\n# -----END PRIVATE KEY-----"
    assert redact_text(text) == text
