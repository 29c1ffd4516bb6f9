"""The redaction corpus: one row per variant that must be redacted, and one per piece
of ordinary code that must be left alone. Every miss found becomes a row here.

Values are built at run time so no credential-shaped literal sits in the repository.
"""

from __future__ import annotations

import pytest

from byre_jupyter.redact import REDACTED, redact_text

ANT = "sk-ant-api03-" + "Zq7" * 30
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
PW = "Hunter2-corpus"
HEX32 = "0123456789abcdef" * 2

#: (id, text, the secret that must not survive)
MUST_REDACT: list[tuple[str, str, str]] = [
    ("pgpassword", f"PGPASSWORD={PW} psql -h db", PW),
    ("pgpassword-export", f"export PGPASSWORD='{PW}'", PW),
    ("pass", f"PASS={PW}", PW),
    ("db-pass", f"DB_PASS={PW}", PW),
    ("smtp-pass", f"SMTP_PASS: {PW}", PW),
    ("slack-xapp", "xapp-1-A0ABCDEFGH-1234567890123-" + "ab12" * 16, "ab12" * 16),
    ("slack-xoxe", "xoxe-1-" + "My0xLTEy" * 6, "My0xLTEy" * 6),
    ("slack-xoxc", "xoxc-" + "1234567890-" * 3 + "ab12" * 8, "ab12" * 8),
    ("query-pass", f"https://example.com/login?user=bob&pass={PW}&x=1", PW),
    ("curl-u", f"curl -u admin:{PW} https://example.com", PW),
    ("curl-user", f"curl --user admin:{PW} https://example.com", PW),
    ("mysql-p", f"mysql -u root -p{PW} app", PW),
    ("sshpass", f"sshpass -p {PW} ssh me@host", PW),
    (
        "discord-webhook",
        "https://discord.com/api/webhooks/123456789012345678/" + "aB3-" * 17,
        "aB3-" * 17,
    ),
    (
        "telegram-bot",
        "https://api.telegram.org/bot123456789:AA" + "hK2x" * 8 + "Q/sendMessage",
        "hK2x" * 8,
    ),
    ("telegram-bare", "bot token 123456789:AA" + "hK2x" * 8 + "Q", "hK2x" * 8),
    ("twilio-sk", f"TWILIO_SID SK{HEX32}", HEX32),
    ("after-url-newline", f"msg=hello%0A{ANT}", ANT[7:]),
    ("after-emoji", f"\U0001f511{ANT}", ANT[7:]),
    ("after-emoji-ascii", ascii(f"\U0001f511{ANT}"), ANT[7:]),
    ("after-emoji-vs", f"\u2705\ufe0f{JWT}", JWT[20:]),
    ("glued-letter", f"x{ANT}", ANT[7:]),
    ("glued-digit", f"7{ANT}", ANT[7:]),
    ("glued-github", "abc" + "ghp_" + "Z9y8" * 9, "Z9y8" * 9),
    ("jwt-wrapped", f"{JWT[:30]}\n{JWT[30:60]}\n{JWT[60:]}", JWT[60:]),
    ("paren-unclosed", f"DB_PASSWORD=s3cr(et{PW}", PW),
    ("paren-inside", f"PASSWORD=p(ss)w{PW}", PW),
    ("url-bare-token", "https://" + "ab12CD34ef56GH78ij90KL12" + "@github.com/o/r.git", "ab12CD34"),
]

#: Ordinary text that stays exactly as it is.
LEAVE_ALONE: list[tuple[str, str]] = [
    ("getpass", "password = getpass()"),
    ("getpass-module", "password = getpass.getpass('Password: ')"),
    ("environ", 'token = os.environ["GITHUB_TOKEN"]'),
    ("call-chain", 'api_key = config.get("key").strip()'),
    ("call-args", "secret = load_secret(name, default=None)"),
    ("pass-statement", "def f():\n    pass\n"),
    ("pass-in-if", "if ok:\n    pass\nelse:\n    x = 1"),
    ("ssh-port", "ssh -p 2222 me@host"),
    ("docker-port", "docker run -p 8080:80 nginx"),
    ("http-server", "python -m http.server -p 8080"),
    ("sort-u", "sort -u names.txt"),
    ("python-u", "python -u train.py"),
    ("url-user", "git clone https://git@github.com/o/r.git"),
    ("bypass", "bypass = True"),
    ("compass", "compass_heading: 270"),
    ("mysql-port", "mysql -h db -P 3306 -u root -p app"),
]


@pytest.mark.parametrize(
    ("text", "secret"), [r[1:] for r in MUST_REDACT], ids=[r[0] for r in MUST_REDACT]
)
def test_every_variant_of_the_corpus_is_redacted(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out, out
    assert REDACTED in out


@pytest.mark.parametrize("text", [r[1] for r in LEAVE_ALONE], ids=[r[0] for r in LEAVE_ALONE])
def test_ordinary_code_is_not_redacted(text: str) -> None:
    assert redact_text(text) == text
