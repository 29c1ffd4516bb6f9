"""An in-process MCP server, answered over the control channel (``mcp_message``).

The CLI is launched with ``--mcp-config`` declaring ``{"type":"sdk","name":"byre"}``; it then
sends JSON-RPC messages for that server as ``mcp_message`` control requests and we answer with
``{"mcp_response": <JSON-RPC response>}``. Notifications need an answer too (docs/protocol.md,
section 6). ``notifications/cancelled`` (sent when the user interrupts during a tool) cancels
the running ``tools/call``.

Registering a tool::

    server = McpServer("byre")

    @server.tool("echo", "Echo the text back", {"type": "object",
                 "properties": {"text": {"type": "string"}}, "required": ["text"]})
    async def echo(args):
        return ToolResult.text(args["text"])
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..protocol import Image
from ..version import __version__

__all__ = ["McpServer", "McpTool", "ToolResult"]

log = logging.getLogger(__name__)

PROTOCOL_VERSION = "2025-11-25"


@dataclass
class ToolResult:
    """MCP ``tools/call`` result content: text and image items."""

    content: list[dict[str, Any]] = field(default_factory=list)
    is_error: bool = False

    @classmethod
    def text(cls, text: str, *, is_error: bool = False) -> ToolResult:
        return cls([{"type": "text", "text": text}], is_error)

    def add_text(self, text: str) -> ToolResult:
        self.content.append({"type": "text", "text": text})
        return self

    def add_image(self, image: Image) -> ToolResult:
        """Attach ``image``: its media type was decided where it was made (``Image``)."""
        self.content.append(image.mcp_content())
        return self

    def to_mcp(self) -> dict[str, Any]:
        return {"content": self.content, "isError": self.is_error}


ToolFunction = Callable[[Mapping[str, Any]], Awaitable["ToolResult | str"]]


@dataclass(frozen=True)
class McpTool:
    name: str
    description: str
    input_schema: Mapping[str, Any]
    function: ToolFunction
    annotations: Mapping[str, Any] | None = None

    def describe(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": dict(self.input_schema),
        }
        if self.annotations:
            spec["annotations"] = dict(self.annotations)
        return spec


class McpServer:
    """A minimal MCP server: initialize, tools/list, tools/call, cancellation."""

    def __init__(self, name: str = "byre", version: str = __version__) -> None:
        self.name = name
        self.version = version
        self.tools: dict[str, McpTool] = {}
        self._running: dict[Any, asyncio.Future[ToolResult | str]] = {}
        self._cancelled: set[Any] = set()

    def tool(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        *,
        annotations: Mapping[str, Any] | None = None,
    ) -> Callable[[ToolFunction], ToolFunction]:
        def register(function: ToolFunction) -> ToolFunction:
            self.add_tool(McpTool(name, description, input_schema, function, annotations))
            return function

        return register

    def add_tool(self, tool: McpTool) -> None:
        self.tools[tool.name] = tool

    def add_tools(self, tools: Sequence[McpTool]) -> None:
        for tool in tools:
            self.add_tool(tool)

    async def handle(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one JSON-RPC message (a notification gets an empty result)."""
        method = message.get("method")
        msg_id = message.get("id")
        params = message.get("params")
        params = params if isinstance(params, Mapping) else {}
        if method == "initialize":
            return self._ok(
                msg_id,
                {
                    "protocolVersion": params.get("protocolVersion", PROTOCOL_VERSION),
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": self.name, "version": self.version},
                },
            )
        if method == "tools/list":
            return self._ok(msg_id, {"tools": [t.describe() for t in self.tools.values()]})
        if method == "tools/call":
            return self._ok(msg_id, (await self._call(msg_id, params)).to_mcp())
        if method == "notifications/cancelled":
            task = self._running.get(params.get("requestId"))
            if task is not None:
                self._cancelled.add(params.get("requestId"))
                task.cancel()
            return {"jsonrpc": "2.0", "result": {}}
        if isinstance(method, str) and method.startswith("notifications/"):
            return {"jsonrpc": "2.0", "result": {}}
        if method == "ping":
            return self._ok(msg_id, {})
        return {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": {"code": -32601, "message": f"method not found: {method}"},
        }

    async def _call(self, msg_id: Any, params: Mapping[str, Any]) -> ToolResult:
        name = params.get("name")
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return ToolResult.text(f"unknown tool: {name}", is_error=True)
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, Mapping) else {}
        task: asyncio.Future[ToolResult | str] = asyncio.ensure_future(tool.function(arguments))
        self._running[msg_id] = task
        try:
            outcome = await task
        except asyncio.CancelledError:
            if msg_id in self._cancelled:  # by notifications/cancelled, not from outside
                return ToolResult.text("cancelled by the user", is_error=True)
            raise
        except Exception as e:
            log.debug("byre: tool %s failed", name, exc_info=True)
            return ToolResult.text(f"{type(e).__name__}: {e}", is_error=True)
        finally:
            self._running.pop(msg_id, None)
            self._cancelled.discard(msg_id)
        return ToolResult.text(outcome) if isinstance(outcome, str) else outcome

    @staticmethod
    def _ok(msg_id: Any, result: Mapping[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": msg_id, "result": dict(result)}
