"""``_PipeReader`` says whether a read found the pipe quiet (the settle's shorter pause after a
quiet spell, transport.base.line_batches)."""

from __future__ import annotations

import asyncio
import os

from byre_jupyter.transport.process import _PipeReader


async def test_a_read_says_whether_it_waited_for_the_writer() -> None:
    ours, theirs = os.pipe()
    try:
        reader = _PipeReader(ours)
        os.write(theirs, b"ready\n")
        assert await reader.read() == b"ready\n"
        assert reader.waited is False  # it was there already: a steady stream

        asyncio.get_running_loop().call_soon(os.write, theirs, b"later\n")
        assert await reader.read() == b"later\n"
        assert reader.waited is True  # the pipe was empty: the writer had been quiet

        os.write(theirs, b"again\n")
        assert await reader.read() == b"again\n"
        assert reader.waited is False
    finally:
        os.close(theirs)
    assert await reader.read() == b""  # EOF closes our end
