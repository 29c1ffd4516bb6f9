"""Credential redaction: the names and shapes that count as secret, and what stays readable."""

from __future__ import annotations

import pytest

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
