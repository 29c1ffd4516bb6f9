"""A scripted fake Anthropic Messages API that the real ``claude`` CLI can talk to offline.

Used by the test-suite (point ``ANTHROPIC_BASE_URL`` at :attr:`ScriptedAPI.url`) and by the
offline demo (``python -m byre_jupyter.scripted --script demo``). Stdlib only.

    from byre_jupyter.scripted import ScriptedAPI, Reply, Text, ToolUse

    with ScriptedAPI() as api:
        api.on("weather", Reply(Text("Sunny.", chunk=4)))
        api.on(lambda req: bool(req.last_tool_results), Reply(Text("Done.")))
        ...  # run the CLI with ANTHROPIC_BASE_URL=api.url
        api.wait_for_request("weather")
"""

from __future__ import annotations

from .env import cli_env
from .script import (
    Action,
    Cut,
    Error,
    Hang,
    Malformed,
    Reply,
    Responder,
    Rule,
    Script,
    ScriptedRequest,
    Slow,
    Text,
    Thinking,
    ToolResultInfo,
    ToolUse,
)
from .server import ScriptedAPI

__all__ = [
    "Action",
    "Cut",
    "Error",
    "Hang",
    "Malformed",
    "Reply",
    "Responder",
    "Rule",
    "Script",
    "ScriptedAPI",
    "ScriptedRequest",
    "Slow",
    "Text",
    "Thinking",
    "ToolResultInfo",
    "ToolUse",
    "cli_env",
]
