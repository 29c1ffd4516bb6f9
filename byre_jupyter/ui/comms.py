"""Let widget edits reach the kernel while the ``%%claude`` cell is still running.

The frontend's widget model sends one state update at a time: after sending one it keeps
later changes in a buffer until the kernel's ``status: idle`` for that update comes back
(ipywidgets' ``_pending_msgs`` throttle). ipykernel 7.4 runs comm messages that arrive while
an async cell holds the shell lock *concurrently*, and on that path it publishes no
busy/idle status (``Kernel.dispatch_shell(..., concurrent=True)``). So during a turn the
first change of a text box or menu reaches the kernel and every later one waits forever in
the browser: a Deny reason arrived as its first character, a second model choice never
arrived, an opened card's Accordion stopped syncing (issue 9).

:class:`UpdateAcknowledger` closes that gap for the widgets of one turn: after an ``update``
from the frontend was handled on the concurrent path it publishes the idle the frontend
waits for (parented to that update, so only its widget's throttle sees it), then ``busy``
parented to the running cell, so the kernel indicator keeps saying the cell runs. Where
ipykernel publishes the status itself (no cell running, or the message came on a subshell
thread) it does nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["UpdateAcknowledger"]


def _running_kernel() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None)


class UpdateAcknowledger:
    """Publish the missing idle for widget updates handled while the cell runs.

    Make one in the running cell (it remembers that cell's request) and :meth:`watch` each
    widget whose state the user can change.
    """

    def __init__(self, kernel: Any = None) -> None:
        self._kernel = kernel if kernel is not None else _running_kernel()
        cell = None
        if self._kernel is not None and hasattr(self._kernel, "get_parent"):
            cell = self._kernel.get_parent("shell")
        self._cell: Mapping[str, Any] | None = cell or None

    def watch(self, widget: Any) -> None:
        """Route ``widget``'s comm messages through :meth:`handled` after its own handler."""
        comm = getattr(widget, "comm", None)
        handle: Callable[[Any], Any] | None = getattr(widget, "_handle_msg", None)
        if self._kernel is None or comm is None or handle is None:
            return

        def on_msg(msg: Any) -> None:
            try:
                handle(msg)
            finally:
                self.handled(msg)

        comm.on_msg(on_msg)

    def handled(self, msg: Any) -> None:
        """``msg`` (a comm_msg) was handled: acknowledge it if ipykernel will not."""
        data = msg.get("content", {}).get("data", {}) if isinstance(msg, Mapping) else {}
        if not isinstance(data, Mapping) or data.get("method") != "update":
            return  # only state updates are throttled; clicks (custom messages) are not
        if not self._concurrent():
            return
        publish = getattr(self._kernel, "_publish_status", None)
        if publish is None:
            return
        publish("idle", "shell", msg)
        if self._cell:
            publish("busy", "shell", self._cell)

    def _concurrent(self) -> bool:
        # The concurrent path runs on the main thread while the main shell's lock is held
        # (kernelbase.Kernel.shell_main); a subshell thread publishes its own status.
        if threading.current_thread() is not threading.main_thread():
            return False
        lock = getattr(self._kernel, "_main_asyncio_lock", None)
        locked = getattr(lock, "locked", None)
        return bool(locked()) if callable(locked) else False
