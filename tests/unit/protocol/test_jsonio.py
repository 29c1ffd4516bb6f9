"""The stream's JSON parser: orjson when installed, the standard library otherwise, the same
messages either way (byre_jupyter/protocol/jsonio.py). The oldest CI tier has no orjson."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

import pytest
from support.memory_cli import FakeCLI, assistant, text_delta

from byre_jupyter import Session
from byre_jupyter.protocol import StreamEvent, jsonio

try:
    import orjson  # noqa: F401

    HAVE_ORJSON = True
except ImportError:
    HAVE_ORJSON = False

BACKENDS = [
    "json",
    pytest.param("orjson", marks=pytest.mark.skipif(not HAVE_ORJSON, reason="no orjson")),
]

# Lines as the CLI (a Node program) may write them, including the ones orjson alone refuses.
LINES = [
    b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"h\\u00e9 \\ud83d\\ude00 \xe2\x9c\x93"}}}',
    b'{"type":"user","tool_use_result":{"stdout":"cut \\ud83d"}}',  # a lone surrogate escape
    b'{"type":"system","subtype":"x","n":NaN,"big":1e400}',  # not JSON, but the stdlib reads it
    b'  {"type":"result","a":[1,2.5,true,null,{}],"a":"dup"}  ',
]
NOT_JSON = [b"npm WARN deprecated", b'{"a":', b"\xff\xfe{}", b""]


def parser(backend: str) -> Callable[[bytes], Any]:
    """A reader's rule (as the session's channel does it): the chosen parser, and for a line
    it refuses, :func:`jsonio.loads_refused`."""
    name, loads = jsonio.choose(use_orjson=backend == "orjson")
    assert name == backend

    def decode(line: bytes) -> Any:
        try:
            return loads(line)
        except ValueError:
            return jsonio.loads_refused(line)

    return decode


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("line", LINES)
def test_both_parsers_read_every_line_as_the_standard_library_does(
    backend: str, line: bytes
) -> None:
    got, want = parser(backend)(line), json.loads(line)
    assert repr(got) == repr(want)  # repr: nan != nan


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("line", NOT_JSON)
def test_both_parsers_refuse_what_is_not_json_with_a_value_error(backend: str, line: bytes) -> None:
    with pytest.raises(ValueError):
        parser(backend)(line)


def test_without_orjson_the_standard_library_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson -> ImportError
    assert jsonio.choose()[0] == "json"
    assert jsonio.choose()[1](b'{"a":1}') == {"a": 1}


@pytest.mark.skipif(not HAVE_ORJSON, reason="no orjson")
def test_orjson_is_used_when_installed() -> None:
    assert jsonio.BACKEND == "orjson" and jsonio.choose()[0] == "orjson"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_session_reads_its_stream_through_the_chosen_parser(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, loads = jsonio.choose(use_orjson=backend == "orjson")
    calls: list[bytes] = []

    def counting(data: bytes) -> Any:
        calls.append(data)
        return loads(data)

    monkeypatch.setattr(jsonio, "loads", counting)

    fake = FakeCLI([[text_delta("cut \ud83d"), text_delta(" ok"), assistant("done")]])
    session = Session("mem", transport_factory=fake.factory)
    try:
        turn = await session.send("hi")
        deltas = [m.delta.get("text") async for m in turn.events() if isinstance(m, StreamEvent)]
        assert deltas == ["cut \ud83d", " ok"]  # the lone surrogate line too, on both paths
        assert (await turn.result()).text == "done"
    finally:
        await asyncio.wait_for(session.close(), 5)
    assert name == backend
    assert sum(b'"stream_event"' in line for line in calls) == 2
