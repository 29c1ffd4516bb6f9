"""Every message of the ``byre.bridge`` comm, described once (docs/bridge.md, "The messages").

Each message is a frozen dataclass: what it carries, how it goes on the wire
(:meth:`to_wire`) and, for what the frontend sends, how the kernel parses it (a malformed
message parses to None and is ignored: the page and anything else in the kernel that opens
a comm are untrusted). :func:`describe` renders the whole set as JSON; the TypeScript side
imports that rendering (``labextension/src/messages.json``) for its method names and
checks its builders and its handler table against it, and tests/unit/bridge/test_messages.py
holds the file equal to :func:`describe`, so a change on either side fails a test until the
other follows. Run ``python -m byre_jupyter.bridge --schema`` to print it.

Pure: no comm, no asyncio; :mod:`.channel` moves these over the comm.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "KERNEL_MESSAGES",
    "PAGE_MESSAGES",
    "PROTOCOL",
    "TARGET",
    "Announce",
    "ApplyEdits",
    "Editing",
    "Hello",
    "Notify",
    "Ping",
    "ReadNotebook",
    "RefusedHello",
    "Reply",
    "Request",
    "RestoreRecord",
    "ReviewPending",
    "RunBegin",
    "RunEnd",
    "RunOutput",
    "ShowLive",
    "TurnBegin",
    "TurnEnd",
    "TurnOpened",
    "describe",
    "parse_page_message",
]

TARGET = "byre.bridge"
#: The message shapes' version (labextension/src/protocol.ts says the same); 3: the turn
#: announcements, without which the frontend refuses edits and runs.
PROTOCOL = 3
#: The longest string the kernel keeps of what a page says about itself (its version, path).
MAX_HELLO_TEXT = 500

Json = Any


# -- the kernel's messages ---------------------------------------------------------------


@dataclass(frozen=True)
class Announce:
    """The data of the comm the kernel opens when byre_jupyter loads: the page takes it only
    as gate.ts says (docs/bridge.md, "Who drives the bridge")."""

    type: ClassVar[str] = "announce"
    protocol: int = PROTOCOL

    def to_wire(self) -> dict[str, Json]:
        return {"type": self.type, "protocol": self.protocol}


@dataclass(frozen=True)
class Notify:
    """A message that needs no reply; ``method`` names it."""

    type: ClassVar[str] = "notify"
    method: ClassVar[str]

    def to_wire(self) -> dict[str, Json]:
        params = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {"type": self.type, "method": self.method, "params": params}


@dataclass(frozen=True)
class TurnBegin(Notify):
    method: ClassVar[str] = "turn.begin"
    cell: str


@dataclass(frozen=True)
class TurnEnd(Notify):
    method: ClassVar[str] = "turn.end"
    cell: str


@dataclass(frozen=True)
class ReviewPending(Notify):
    """A card of the turn of ``cell`` (an approval, a question, a plan) waits for the user's
    answer, or no longer does. Without real-time collaboration the card shows only in the page
    that ran the cell, so every other page marks the cell (labextension/src/waiting.ts,
    docs/bridge.md "Collaboration"). Only the cell id and a boolean: no model text."""

    method: ClassVar[str] = "review.pending"
    cell: str
    waiting: bool


@dataclass(frozen=True)
class RunOutput(Notify):
    method: ClassVar[str] = "run.output"
    cell: str
    output: dict[str, Json]


@dataclass(frozen=True)
class RunEnd(Notify):
    method: ClassVar[str] = "run.end"
    cell: str
    execution_count: int


@dataclass(frozen=True)
class Request:
    """A message the page answers with one :class:`Reply` of the same id. ``resend``: whether
    the kernel may ask another page when the one it asked closed before answering (a read
    changes nothing; an edit or a run may have been applied, docs/bridge.md)."""

    type: ClassVar[str] = "request"
    method: ClassVar[str]
    resend: ClassVar[bool] = False

    def to_wire(self, request_id: str) -> dict[str, Json]:
        params = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {"type": self.type, "id": request_id, "method": self.method, "params": params}


@dataclass(frozen=True)
class ReadNotebook(Request):
    method: ClassVar[str] = "read"
    resend: ClassVar[bool] = True
    images: bool = False


@dataclass(frozen=True)
class ApplyEdits(Request):
    """``reviewed``: each cell the batch replaces or deletes, with its source as the review
    showed it; ``provenance``: the cells' ``metadata.byre``, or None for an undo."""

    method: ClassVar[str] = "edit"
    edits: list[dict[str, Json]]
    reviewed: dict[str, str]
    provenance: dict[str, Json] | None


@dataclass(frozen=True)
class RunBegin(Request):
    method: ClassVar[str] = "run.begin"
    cell: str
    execution_count: int


@dataclass(frozen=True)
class ShowLive(Notify):
    """A running turn's live view, for a page that loaded during the turn (docs/bridge.md,
    "Pending answers"): served by labextension/src/restore.ts before the gate."""

    method: ClassVar[str] = "cell.restore"
    cell: str
    outputs: list[dict[str, Json]]
    final: bool = False


@dataclass(frozen=True)
class RestoreRecord(Request):
    """A finished record no page showed: kept until a page replies that it wrote it. Asked
    again of the next page when the one asked closed first: it replaces the cell's outputs,
    so a second write changes nothing."""

    method: ClassVar[str] = "cell.restore"
    resend: ClassVar[bool] = True
    cell: str
    outputs: list[dict[str, Json]]
    final: bool = True


@dataclass(frozen=True)
class Ping(Request):
    """Whether a page answers on the comm (a closed tab leaves it open): the page refuses it
    as any request it does not serve, and that reply is the answer."""

    method: ClassVar[str] = "ping"
    resend: ClassVar[bool] = True


#: What the kernel sends, each kind once.
KERNEL_MESSAGES: tuple[type[Announce] | type[Notify] | type[Request], ...] = (
    Announce,
    TurnBegin,
    TurnEnd,
    ReviewPending,
    RunOutput,
    RunEnd,
    ReadNotebook,
    ApplyEdits,
    RunBegin,
    ShowLive,
    RestoreRecord,
    Ping,
)


# -- the page's messages ------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """What the frontend says when its comm opens (or when it takes the kernel's)."""

    type: ClassVar[str] = "hello"
    version: str
    frontend: str  # "lab" or "notebook"
    path: str  # the notebook's path, relative to the server's root
    protocol: int = PROTOCOL

    def to_wire(self) -> dict[str, Json]:
        return {
            "type": self.type,
            "protocol": self.protocol,
            "version": self.version,
            "frontend": self.frontend,
            "path": self.path,
        }

    @classmethod
    def parse(cls, data: object) -> Hello | None:
        """A hello of our protocol, its texts bounded; None for anything else."""
        if not isinstance(data, Mapping) or data.get("type") != cls.type:
            return None
        if data.get("protocol") != PROTOCOL:
            return None
        fields = [data.get(name) for name in ("version", "frontend", "path")]
        if not all(isinstance(value, str) for value in fields):
            return None
        version, frontend, path = (str(value)[:MAX_HELLO_TEXT] for value in fields)
        return cls(version, frontend, path)


@dataclass(frozen=True)
class Reply:
    """The page's answer to the request with this id: ``result`` when ``ok``, else ``error``."""

    type: ClassVar[str] = "reply"
    id: str
    ok: bool
    result: Mapping[str, Json] | None = None
    error: str = ""

    def to_wire(self) -> dict[str, Json]:
        if self.ok:
            return {"type": self.type, "id": self.id, "ok": True, "result": dict(self.result or {})}
        return {"type": self.type, "id": self.id, "ok": False, "error": self.error}

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Reply | None:
        if data.get("type") != cls.type or not isinstance(data.get("id"), str):
            return None
        if data.get("ok") is True:
            result = data.get("result")
            return cls(data["id"], True, result if isinstance(result, Mapping) else None)
        return cls(data["id"], False, None, str(data.get("error"))[:300])


@dataclass(frozen=True)
class Editing:
    """The user began changing a ``%%claude`` cell that ran (docs/bridge.md, "editing")."""

    type: ClassVar[str] = "event"
    name: ClassVar[str] = "editing"
    cell: str

    def to_wire(self) -> dict[str, Json]:
        return {"type": self.type, "name": self.name, "cell": self.cell}

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Editing | None:
        if data.get("type") != cls.type or data.get("name") != cls.name:
            return None
        cell = data.get("cell")
        return cls(cell) if isinstance(cell, str) else None


@dataclass(frozen=True)
class TurnOpened:
    """This page opened the turn of ``cell`` (its user ran the cell here, or clicked in its
    re-shown card: labextension/src/gate.ts): the turn's edits and runs go to this page
    (docs/bridge.md, "Which page holds the bridge")."""

    type: ClassVar[str] = "event"
    name: ClassVar[str] = "turn.opened"
    cell: str

    def to_wire(self) -> dict[str, Json]:
        return {"type": self.type, "name": self.name, "cell": self.cell}

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> TurnOpened | None:
        if data.get("type") != cls.type or data.get("name") != cls.name:
            return None
        cell = data.get("cell")
        return cls(cell) if isinstance(cell, str) else None


@dataclass(frozen=True)
class RefusedHello:
    """A hello we do not speak (a stale page after an upgrade): its protocol, as doctor says."""

    protocol: str


#: What the page sends, each kind once.
PAGE_MESSAGES = (Hello, Reply, Editing, TurnOpened)

PageMessage = Hello | RefusedHello | Reply | Editing | TurnOpened


def parse_page_message(data: object) -> PageMessage | None:
    """One message from a page: a :class:`Hello` (or :class:`RefusedHello`), a :class:`Reply`,
    an :class:`Editing` or :class:`TurnOpened` event; None for anything else (ignored)."""
    if not isinstance(data, Mapping):
        return None
    if data.get("type") == Hello.type:
        return Hello.parse(data) or RefusedHello(str(data.get("protocol"))[:20])
    return Reply.parse(data) or Editing.parse(data) or TurnOpened.parse(data)


# -- the description both sides share ----------------------------------------------------


def _type_name(annotation: object) -> str:
    text = str(annotation)
    for python, json_name in (
        ("bool", "boolean"),
        ("int", "number"),
        ("str", "string"),
        ("list", "array"),
        ("dict", "object"),
        ("Mapping", "object"),
    ):
        if text.startswith(python):
            return json_name
    raise TypeError(f"no JSON type for {text}")


def _fields(cls: type) -> dict[str, str]:
    return {f.name: _type_name(f.type) for f in dataclasses.fields(cls)}


def describe() -> dict[str, Json]:
    """The messages as JSON: who sends each, its ``type``, its method or event name and its
    fields with their JSON types (labextension/src/messages.json is this, checked in)."""
    kernel: list[dict[str, Json]] = []
    for message in KERNEL_MESSAGES:
        entry: dict[str, Json] = {"type": message.type}
        if issubclass(message, Notify | Request):
            entry["method"] = message.method
            entry["params"] = _fields(message)
            if issubclass(message, Request):
                entry["resend"] = message.resend
        else:
            entry["fields"] = _fields(message)
        kernel.append(entry)
    page: list[dict[str, Json]] = [
        {"type": Hello.type, "fields": _fields(Hello)},
        {"type": Reply.type, "fields": _fields(Reply)},
        {"type": Editing.type, "name": Editing.name, "fields": _fields(Editing)},
        {"type": TurnOpened.type, "name": TurnOpened.name, "fields": _fields(TurnOpened)},
    ]
    return {"target": TARGET, "protocol": PROTOCOL, "kernel": kernel, "page": page}


def render() -> str:
    return json.dumps(describe(), indent=2) + "\n"
