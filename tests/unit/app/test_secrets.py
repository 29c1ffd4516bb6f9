"""The one set of known secrets (byre_jupyter.redact.Secrets): what the CLI is given through
``Claude.env`` is as secret to the tool results Claude gets as to the view ."""

from __future__ import annotations

from typing import Any

from IPython.core.interactiveshell import InteractiveShell

import byre_jupyter.magics as magics_pkg
from byre_jupyter.redact import REDACTED, Secrets, redact_json

# Built at run time: no credential-shaped literal in the repository, and no shape a pattern knows.
DB_PASSWORD = "plain" + "words" + "42" + "ok"


async def test_a_value_from_claude_env_printed_by_the_python_tool_is_redacted_for_claude(
    shell: InteractiveShell,
) -> None:
    ext = magics_pkg.extension()
    assert ext is not None
    ext.config.env = {"DB_PASSWORD": DB_PASSWORD}
    ext.config.python_tool = "allow"
    server = ext.approvals.kernel_server("default")
    reply: dict[str, Any] = await server.handle(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "python", "arguments": {"code": f"print({DB_PASSWORD!r})"}},
        }
    )
    text = "".join(item.get("text", "") for item in reply["result"]["content"])
    assert DB_PASSWORD not in text, text
    assert REDACTED in text
    # The view knows the same values: one set, not two that disagree.
    assert DB_PASSWORD in set(ext.secrets())


def test_secrets_of_an_environment_and_what_the_cli_is_given(monkeypatch: Any) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "from-the-kernel-env")
    secrets = Secrets.of_process({"PGPASSWORD": DB_PASSWORD, "HOME": "/root"})
    assert {"from-the-kernel-env", DB_PASSWORD} <= set(secrets) and "/root" not in secrets
    assert Secrets.of({"HOME": "/root"}) == Secrets()
    assert "user-value-1" in secrets | {"user-value-1"}
    # A secret-named key's value is replaced line by line: the JSON keeps its line breaks.
    assert redact_json({"password": "two\nlines"}, secrets) == {
        "password": f"{REDACTED}\n{REDACTED}"
    }
