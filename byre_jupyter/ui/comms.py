"""Let widget edits reach the kernel while the ``%%claude`` cell is still running.

The frontend's widget model sends one state update at a time: after sending one it keeps
later changes in a buffer until the kernel's ``status: idle`` for that update comes back
(ipywidgets' ``_pending_msgs`` throttle). ipykernel 7.4 runs comm messages that arrive while
an async cell holds the shell lock *concurrently*, and on that path it publishes no
busy/idle status (``Kernel.dispatch_shell(..., concurrent=True)``). So during a turn the
first change of a text box or menu reaches the kernel and every later one waits forever in
the browser: a Deny reason arrived as its first character, a second model choice never
arrived, an opened card's Accordion stopped syncing.

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

__all__ = ["StatusKeeper", "UpdateAcknowledger"]

#: Requests a frontend sends by itself while a cell runs: JupyterLab's and Notebook 7's widget
#: manager asks ipykernel 7 for a comm subshell when the cell shows its first widget. ipykernel
#: answers each with busy/idle on the control channel, and jupyter_server does not list them as
#: untracked (its ``untracked_message_types``), so the frontends' kernel status read "Idle" for
#: the rest of a running %%claude cell (measured in Lab 4.6 and Notebook 7.6, ipykernel 7.4).
SIDE_REQUESTS = frozenset(
    {"create_subshell_request", "delete_subshell_request", "list_subshell_request"}
)


def _running_kernel() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None)


def _kernel_and_cell(kernel: Any) -> tuple[Any, Mapping[str, Any] | None]:
    """The kernel (the running one unless given) and the request of the cell it runs now."""
    kernel = kernel if kernel is not None else _running_kernel()
    cell = None
    if kernel is not None and hasattr(kernel, "get_parent"):
        cell = kernel.get_parent("shell")
    return kernel, cell or None


class UpdateAcknowledger:
    """Publish the missing idle for widget updates handled while the cell runs.

    Make one in the running cell (it remembers that cell's request) and :meth:`watch` each
    widget whose state the user can change.
    """

    def __init__(self, kernel: Any = None) -> None:
        self._kernel, self._cell = _kernel_and_cell(kernel)

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


class StatusKeeper:
    """Keep the kernel status "busy" while the cell runs, whatever the frontend asks meanwhile.

    While installed, an ``idle`` that ipykernel publishes for one of :data:`SIDE_REQUESTS` is
    followed by ``busy`` parented to the running cell (the same pair
    :class:`UpdateAcknowledger` sends for a widget update). Only while a shell message is being
    handled (a cell runs): after the cell, nothing is added. Installed by the live view for its
    turn; after :meth:`uninstall` the wrapper passes through, and it is taken off the kernel when
    it is the outermost one (two views of one kernel may uninstall in any order).
    """

    def __init__(self, kernel: Any = None) -> None:
        self._kernel, self._cell = _kernel_and_cell(kernel)
        self._active = False
        self._wrapper: Callable[..., None] | None = None
        self._below: Any = None  # what the kernel's instance held before us (None: the class's)

    def install(self) -> None:
        kernel, cell = self._kernel, self._cell
        original = getattr(kernel, "_publish_status", None)
        lock = getattr(kernel, "_main_asyncio_lock", None)  # ipykernel >= 7 (subshells)
        if self._wrapper is not None or original is None or lock is None or not cell:
            return

        def publish(status: str, channel: str, parent: Any = None) -> None:
            original(status, channel, parent)
            if not self._active or status != "idle" or not lock.locked():
                return
            source = parent if parent is not None else kernel.get_parent(channel)
            header = source.get("header", {}) if isinstance(source, Mapping) else {}
            if header.get("msg_type") in SIDE_REQUESTS:
                original("busy", "shell", cell)

        self._below = vars(kernel).get("_publish_status")
        self._wrapper, self._active = publish, True
        kernel._publish_status = publish

    def uninstall(self) -> None:
        self._active = False
        if self._wrapper is not None and vars(self._kernel).get("_publish_status") is self._wrapper:
            if self._below is None:
                del self._kernel._publish_status  # ipykernel's own method again
            else:
                self._kernel._publish_status = self._below
