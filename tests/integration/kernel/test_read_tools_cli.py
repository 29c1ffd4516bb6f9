"""The read tools through the real CLI in a real kernel: a scripted model walks the
paths that reached the API key and the kernel's signing key in 0.1, and lists variables next to
an object whose every hook records itself. Nothing secret reaches the API; nothing recorded."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from support.kernel import KernelDriver

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

API_KEY = "sk-ant-api03-" + secrets.token_urlsafe(40)
USER_KEY = "sk-ant-api03-" + secrets.token_urlsafe(40)

TRAP = """
effects = []
class Trap:
    @property
    def shape(self):
        effects.append("shape"); return (1,)
    @property
    def value(self):
        effects.append("property"); return 1
    def __getattr__(self, name):
        effects.append("getattr " + name)
    def __repr__(self):
        effects.append("repr"); return "Trap()"
    def __len__(self):
        effects.append("len"); return 1
    def __sizeof__(self):
        effects.append("sizeof"); return 1
trap = Trap()
traps = {"a": Trap(), "b": [Trap()]}
"""


# The kernel's own API key is a fresh secret the tests look for; the user's namespace holds
# another one and the trap.
pytestmark += [
    pytest.mark.kernel_env(MPLBACKEND="Agg", ANTHROPIC_API_KEY=API_KEY),
    pytest.mark.kernel_setup("%load_ext byre_jupyter", f"api_key = {USER_KEY!r}\n{TRAP}"),
]


def _signing_key(kernel: KernelDriver) -> str:
    key = json.loads(Path(kernel.km.connection_file).read_text())["key"]
    assert isinstance(key, str) and len(key) >= 16
    return key


def _ask_for(api: ScriptedAPI, keyword: str, *calls: tuple[str, dict[str, str]]) -> None:
    tools = [
        ToolUse(f"mcp__byre__{tool}", args, id=f"toolu_{keyword}_{i}")
        for i, (tool, args) in enumerate(calls)
    ]
    api.on(keyword, Reply(*tools), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("done with the tools")))


def test_the_read_tools_reach_no_secret_and_run_no_user_code(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    signing_key = _signing_key(kernel)
    _ask_for(
        api,
        "leak",
        ("inspect", {"name": "exit._ip._orig_sys_modules_main_mod.app.os.environ"}),
        ("inspect", {"name": "exit._ip.kernel.session.key"}),
        ("inspect", {"name": "get_ipython"}),
        ("inspect", {"name": "api_key"}),
        ("inspect", {"name": "trap.shape"}),
        ("inspect", {"name": "trap"}),
        ("inspect", {"name": "traps"}),
        ("variables", {}),
        ("history", {}),
    )
    run = kernel.run("%%claude\nleak the keys")
    assert "done with the tools" in run.texts()
    results = {r["tool_use_id"]: r for r in api.requests[-1].last_tool_results}
    assert len(results) == 9
    for i in range(3):  # the three paths into the interpreter
        refused = results[f"toolu_leak_{i}"]
        assert refused["is_error"] and "not inspected" in refused["text"], refused
    assert "[redacted]" in results["toolu_leak_3"]["text"]
    assert "property" in results["toolu_leak_4"]["text"]
    listing = results["toolu_leak_7"]["text"]
    assert "api_key" in listing and "trap" in listing and "[redacted]" in listing
    everything = json.dumps([r.messages for r in api.requests])
    for secret in (API_KEY, USER_KEY, signing_key, USER_KEY[:40]):
        assert secret not in everything
    assert kernel.run("print(effects)").texts().strip() == "[]"


def test_read_tools_ask_is_denied_headless_and_deny_refuses(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    kernel.run("%config Claude.read_tools = 'ask'")
    _ask_for(api, "look", ("variables", {}))
    kernel.run("%%claude\nlook around")
    result = api.requests[-1].last_tool_results[0]
    assert result["is_error"] and "%config Claude.read_tools = 'allow'" in result["text"]
    assert "api_key" not in result["text"]

    kernel.run("%config Claude.read_tools = 'deny'")
    _ask_for(api, "peek", ("inspect", {"name": "trap"}))
    kernel.run("%%claude\npeek at trap")
    result = api.requests[-1].last_tool_results[0]
    assert result["is_error"] and "Claude.read_tools = 'deny'" in result["text"]
    assert "Trap" not in result["text"]
