"""Stopping Claude's code: cancellation at an await, and KeyboardInterrupt in running code."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

import pytest
from support.toolkit import Kit, text_of

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def sigint_handler() -> Iterator[None]:
    """Whatever the test installs as SIGINT handler is put back afterwards."""
    saved = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)


def interrupt_when(event: threading.Event, action: Callable[[], object]) -> list[object]:
    """On a thread: wait until the code says it is running, then act; returns the outcome."""
    outcome: list[object] = []

    def act() -> None:
        if event.wait(30):
            outcome.append(action())

    threading.Thread(target=act, daemon=True).start()
    return outcome


async def assert_shell_still_works(kit: Kit) -> None:
    result = await kit.python("after = 20 + 22\nafter")
    assert not result.is_error, text_of(result)
    assert kit.runs[-1].result == "42"


@pytest.mark.parametrize(
    "setup, code",
    [
        ("", "started.set()\nwhile True:\n    pass"),
        ("import time", "started.set()\ntime.sleep(600)"),
        ("def spin():\n    while True:\n        pass", "started.set()\nspin()"),
    ],
    ids=["busy-loop", "blocking-sleep", "loop-in-an-earlier-function"],
)
async def test_interrupt_from_another_thread_stops_synchronous_code(
    kit: Kit, setup: str, code: str
) -> None:
    if setup:
        await kit.python(setup)
    handler_before = signal.getsignal(signal.SIGINT)
    started = kit.shell.user_ns["started"] = threading.Event()
    sent = interrupt_when(started, kit.runner.interrupt)

    result = await kit.python(code)

    assert sent == [True]
    assert result.is_error
    assert "[interrupted]" in text_of(result)
    run = kit.runs[-1]
    assert run.status == "interrupted"
    assert run.error == "KeyboardInterrupt"
    assert run.traceback and run.traceback.rstrip().endswith("KeyboardInterrupt")
    assert "runner.py" not in run.traceback
    assert signal.getsignal(signal.SIGINT) is handler_before
    assert not kit.runner.running
    await assert_shell_still_works(kit)


async def test_interrupt_at_an_await_throws_keyboard_interrupt_there(kit: Kit) -> None:
    started = kit.shell.user_ns["started"] = asyncio.Event()
    task = asyncio.ensure_future(
        kit.python(
            "import asyncio\nstarted.set()\ntry:\n    await asyncio.sleep(600)\n"
            "finally:\n    print('cleanup ran')"
        )
    )
    await started.wait()
    sent: list[bool] = []
    asyncio.get_running_loop().call_soon(lambda: sent.append(kit.runner.interrupt()))

    result = await task  # the tool call itself is not cancelled

    assert sent == [True]
    assert not task.cancelled()
    if sys.version_info >= (3, 11):  # Task.cancelling() is 3.11+; 3.10 counts no cancels
        assert task.cancelling() == 0  # the wake-up cancel was undone
    assert kit.runs[-1].status == "interrupted"
    assert kit.runs[-1].stdout == "cleanup ran\n"
    assert "KeyboardInterrupt" in text_of(result)
    await assert_shell_still_works(kit)


async def test_cancelling_the_call_cancels_awaiting_code_and_records_it(kit: Kit) -> None:
    started = kit.shell.user_ns["started"] = asyncio.Event()
    task = asyncio.ensure_future(
        kit.python(
            "import asyncio\nstarted.set()\nprint('partial')\ntry:\n    await asyncio.sleep(600)\n"
            "finally:\n    cleaned = True"
        )
    )
    await started.wait()
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task

    (run,) = kit.runs
    assert run.status == "cancelled"
    assert run.stdout == "partial\n"
    assert kit.shell.user_ns["cleaned"] is True
    await assert_shell_still_works(kit)


async def test_a_kernel_sigint_interrupts_the_code_and_reaches_the_kernels_handler(
    kit: Kit, sigint_handler: None
) -> None:
    seen: list[int] = []

    def kernel_handler(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)  # stands in for ipykernel's "cancel the running cell"

    signal.signal(signal.SIGINT, kernel_handler)
    started = kit.shell.user_ns["started"] = threading.Event()
    main = threading.main_thread().ident
    assert main is not None
    interrupt_when(started, lambda: signal.pthread_kill(main, signal.SIGINT))

    result = await kit.python("started.set()\nwhile True:\n    pass")

    assert kit.runs[-1].status == "interrupted"
    assert "KeyboardInterrupt" in text_of(result)
    assert seen == [signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is kernel_handler


async def test_interrupt_without_a_run_does_nothing(kit: Kit) -> None:
    assert kit.runner.interrupt() is False
    result = await kit.python("import time\ntime.sleep(0)\n'fine'")
    assert not result.is_error
    assert kit.runs[-1].result == "'fine'"


async def test_code_that_handles_the_interrupt_keeps_its_state(kit: Kit) -> None:
    started = kit.shell.user_ns["started"] = threading.Event()
    interrupt_when(started, kit.runner.interrupt)
    result = await kit.python(
        "n = 0\nstarted.set()\ntry:\n    while True:\n        n += 1\n"
        "except KeyboardInterrupt:\n    print('stopped')\nn > 0"
    )
    assert not result.is_error
    assert kit.runs[-1].stdout == "stopped\n"
    assert kit.runs[-1].result == "True"


async def test_a_kernel_sigint_while_the_code_awaits_goes_to_the_kernels_handler(
    kit: Kit, sigint_handler: None
) -> None:
    loop = asyncio.get_running_loop()
    started, go = asyncio.Event(), asyncio.Event()
    kit.shell.user_ns.update(started=started, go=go)
    seen: list[int] = []

    def kernel_handler(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)  # like ipykernel's: schedule work on the loop, raise nothing
        loop.call_soon_threadsafe(go.set)

    signal.signal(signal.SIGINT, kernel_handler)
    task = asyncio.ensure_future(kit.python("started.set()\nawait go.wait()\n'resumed'"))
    await started.wait()
    main = threading.main_thread().ident
    assert main is not None
    signal.pthread_kill(main, signal.SIGINT)  # the code is suspended: not ours to interrupt

    result = await task
    assert not result.is_error, text_of(result)
    assert kit.runs[-1].result == "'resumed'"
    assert seen == [signal.SIGINT]


async def test_a_second_interrupt_stops_code_that_survived_the_first(kit: Kit) -> None:
    started = kit.shell.user_ns["started"] = threading.Event()
    again = kit.shell.user_ns["again"] = threading.Event()
    sent: list[object] = []

    def twice() -> None:
        if started.wait(30):
            sent.append(kit.runner.interrupt())
        if again.wait(30):
            sent.append(kit.runner.interrupt())

    threading.Thread(target=twice, daemon=True).start()
    result = await kit.python(
        "started.set()\ntry:\n    while True:\n        pass\nexcept KeyboardInterrupt:\n"
        "    print('survived')\nagain.set()\nwhile True:\n    pass"
    )
    assert sent == [True, True]
    assert kit.runs[-1].status == "interrupted"
    assert kit.runs[-1].stdout == "survived\n"
    assert "KeyboardInterrupt" in text_of(result)
