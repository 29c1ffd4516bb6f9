"""Helpers for the kernel tool tests."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from byre_jupyter.session.mcp import ToolResult
from byre_jupyter.tools import PythonRun, PythonRunner

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class Kit:
    """The four tools for one shell, the runner behind ``python``, and the recorded runs."""

    shell: InteractiveShell
    runner: PythonRunner
    tools: dict[str, Any]
    runs: list[PythonRun] = field(default_factory=list)

    async def call(self, tool: str, **args: Any) -> ToolResult:
        result = await self.tools[tool].function(args)
        assert isinstance(result, ToolResult)
        return result

    async def python(self, code: str) -> ToolResult:
        return await self.call("python", code=code)


def text_of(result: ToolResult) -> str:
    return "\n".join(c["text"] for c in result.content if c["type"] == "text")


def images_of(result: ToolResult) -> list[bytes]:
    return [base64.b64decode(c["data"]) for c in result.content if c["type"] == "image"]
