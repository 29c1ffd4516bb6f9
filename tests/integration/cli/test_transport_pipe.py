"""SubprocessTransport reads the CLI's stdout itself (``_PipeReader``): only when asked, all
that is in the pipe at once, to EOF, and leaves no descriptor behind."""

from __future__ import annotations

import os
import sys

import pytest

from byre_jupyter.transport import SubprocessTransport

pytestmark = pytest.mark.slow  # starts processes


def _open_fds() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/fd")}


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


async def _read_all(transport: SubprocessTransport) -> list[bytes]:
    lines: list[bytes] = []
    async for batch in transport.batches():
        lines += [line for line in batch if isinstance(line, bytes)]
    return lines


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
async def test_every_line_written_before_exit_is_read_then_the_pipe_is_closed() -> None:
    before = _open_fds()
    transport = SubprocessTransport(
        _python("import sys\nfor i in range(5000): sys.stdout.write(f'{i}\\n')")
    )
    await transport.start()
    await transport.wait()  # it has exited: what it wrote waits in the pipe
    lines = await _read_all(transport)
    assert lines == [f"{i}".encode() for i in range(5000)]
    await transport.close()
    assert _open_fds() <= before


async def test_a_line_larger_than_the_pipe_buffer_arrives_whole() -> None:
    size = 3 * (1 << 20)  # 48 pipe buffers
    code = f"import sys\nsys.stdout.write('x' * {size} + '\\nend\\n')"
    transport = SubprocessTransport(_python(code), max_line_bytes=size * 2)
    await transport.start()
    try:
        lines = await _read_all(transport)
    finally:
        await transport.close()
    assert [len(line) for line in lines] == [size, 3] and lines[1] == b"end"


async def test_a_read_waiting_for_a_silent_cli_ends_when_it_is_killed() -> None:
    transport = SubprocessTransport(_python("import time\ntime.sleep(60)"))
    await transport.start()
    batches = transport.batches()
    pending = batches.__anext__()
    await transport.kill()
    with pytest.raises(StopAsyncIteration):
        await pending
    assert transport.returncode is not None and transport.returncode < 0


async def test_the_cli_inherits_no_other_transport_s_pipe() -> None:
    # Each reader's descriptor is close-on-exec: a second CLI holding the first one's pipe
    # open would keep the first reader from ever seeing EOF.
    first = SubprocessTransport(_python("print('first')"))
    await first.start()
    second = SubprocessTransport(_python("import time\ntime.sleep(60)"))
    await second.start()
    try:
        assert await _read_all(first) == [b"first"]  # EOF although the second still runs
    finally:
        await second.kill()
        await first.close()
