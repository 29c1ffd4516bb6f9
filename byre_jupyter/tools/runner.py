"""Running Claude's Python in the user's live namespace, on the kernel's loop, interruptibly.

Execution. The code runs on the thread and loop that run the tool call, which in a kernel is the
kernel's main thread and event loop: the same place the user's cells run, so matplotlib, widgets,
signals and ``get_running_loop()`` behave as in a cell. IPython syntax is transformed first
(``%magic``, ``!cmd``); the source is compiled with ``ast.PyCF_ALLOW_TOP_LEVEL_AWAIT``, all but a
trailing expression are executed, and that expression is evaluated for its value. Nothing is added
to ``In``/``Out``/``_``, and no ``pre/post_run_cell`` events fire: this is not a cell.

Code with top-level ``await`` becomes a coroutine that this module steps itself
(:class:`_Driven`), passing what it yields through to the tool call's task. That is what makes
both interrupt paths exact:

* While the code **executes** (a synchronous stretch), the loop is blocked, so only a signal can
  reach it. For the run's duration a SIGINT handler is installed (main thread only) that raises
  ``KeyboardInterrupt`` *only if the interrupted frame stack contains the run's own top-level
  code*. :meth:`PythonRunner.interrupt` starts a short-lived thread that sends SIGINT to the main
  thread with ``signal.pthread_kill`` (which also breaks a blocking ``time.sleep``; or
  ``_thread.interrupt_main`` where that is missing) every 20 ms until the handler has taken it: a
  signal landing just before a blocking call only trips a flag that Python checks after the call.
  A SIGINT from outside (the kernel's ■) also interrupts the code, and is passed on to the handler
  that was installed before (ipykernel's cancels the running ``%%claude`` cell).
* While the code is **suspended** at an ``await``, the interrupt wakes the task (``task.cancel()``,
  undone with ``uncancel()``) and the driver throws ``KeyboardInterrupt`` into the coroutine at its
  await point instead of ``CancelledError``. A real cancellation of the tool call (the CLI's
  ``notifications/cancelled``) is thrown in as ``CancelledError``, recorded, and re-raised.

``KeyboardInterrupt`` therefore never reaches asyncio's machinery (where it would stop the loop):
it is raised only under the run's frames, which sit inside the runner's ``try``. At the end of a
run the sending thread is joined, so any SIGINT of ours has reached our (by then inert) handler
before the previous handler is put back.

Why not a worker thread: user code expects the main thread (GUI backends, ``signal``, widgets,
the running loop), and the loop would be free to run other code against the same namespace.

Limits: code that swallows ``KeyboardInterrupt`` keeps running; code blocked in C that ignores
EINTR is interrupted when it returns; tasks the code spawned are not interrupted; without a
main-thread loop a synchronous stretch cannot be interrupted (it lands at the next ``await``).
"""

from __future__ import annotations
import __future__ as future_statements

import _thread
import ast
import asyncio
import inspect
import itertools
import linecache
import logging
import signal
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Collection, Coroutine, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import CodeType, FrameType, TracebackType
from typing import Any, Literal

from ..protocol import Image
from .bounded import DEFAULT_LIMITS, ToolLimits, clip, fit_budget, pretty_repr
from .capture import Capture, Output, displayed_image
from .figures import FigureTracker, as_figure, close_figure, render_figure

__all__ = ["PythonRun", "PythonRunCancelled", "PythonRunner", "RunStatus"]

log = logging.getLogger(__name__)

RunStatus = Literal["ok", "error", "interrupted", "cancelled"]

_FUTURE_FLAGS = 0
for _feature in future_statements.all_feature_names:
    _FUTURE_FLAGS |= getattr(future_statements, _feature).compiler_flag

_RUN_NUMBERS = itertools.count(1)  # unique file names for linecache, across runners
_RESEND_S = 0.02  # resend SIGINT this often until the handler has seen it
_DUPLICATE_S = 0.5  # a SIGINT this soon after ours was handled is one of our resends
_JOIN_S = 1.0
_PRETTY_MAX_SEQ = 200


@dataclass(frozen=True)
class PythonRun:
    """What one ``python`` tool call ran and produced (texts already bounded)."""

    code: str
    status: RunStatus
    stdout: str = ""
    stderr: str = ""
    displayed: str = ""
    result: str | None = None
    """``repr`` (IPython pretty) of the trailing expression's value; None if there was none."""
    error: str | None = None
    """``"ZeroDivisionError: division by zero"``; None when the code ran through."""
    traceback: str | None = None
    images: tuple[Image, ...] = ()
    """Displayed images (PNG or JPEG, as their bytes are), then figures (PNG)."""
    notes: tuple[str, ...] = ()
    duration: float = 0.0
    approved_by: str = ""


class PythonRunCancelled(asyncio.CancelledError):
    """The tool call was cancelled while its code ran; carries the record of the partial run."""

    def __init__(self, run: PythonRun) -> None:
        super().__init__("the python run was cancelled")
        self.run = run


@dataclass
class _Compiled:
    filename: str
    parts: list[tuple[CodeType, bool]] = field(default_factory=list)  # (code, is_last_expr)
    show_value: bool = True

    @property
    def codes(self) -> frozenset[CodeType]:
        return frozenset(code for code, _ in self.parts)


@dataclass
class _Outcome:
    value: Any = None
    has_value: bool = False
    error: BaseException | None = None
    cancelled: bool = False


class PythonRunner:
    """Runs code in ``shell.user_ns`` and can interrupt the running code.

    Runs are serialized per shell, also across runners, so several sessions can share a kernel.
    """

    def __init__(self, shell: Any, *, limits: ToolLimits = DEFAULT_LIMITS) -> None:
        self.shell = shell
        self.limits = limits
        # Shared with interrupt() (any thread) and the SIGINT handler (main thread).
        self._state = threading.Lock()
        self._active = False
        self._suspended = False
        self._interrupt_requested = False
        self._codes: frozenset[CodeType] = frozenset()
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._signals = False
        self._previous_handler: Any = None
        self._outstanding = False  # a SIGINT of ours is wanted and not yet handled
        self._signalled = False  # SIGINTs of ours were sent during this run
        self._delivered_at = 0.0
        self._interrupter: threading.Thread | None = None  # the one sending now, if any
        self._interrupters: list[threading.Thread] = []  # all of this run's, joined at its end
        self._stop_interrupting = threading.Event()
        self._wake_pending = False
        self._handler = self._on_sigint  # one object, so getsignal() can be compared with `is`

    @property
    def running(self) -> bool:
        """True while a run's code executes or awaits."""
        return self._active

    # ------------------------------------------------------------------ interrupt

    def interrupt(self) -> bool:
        """Raise ``KeyboardInterrupt`` in the running code; safe from any thread, returns at once.

        Returns True if an interrupt is on its way to a running run; False if no code is running
        (a run waiting for approval is not affected) or if it cannot be delivered now (a
        synchronous stretch on a loop outside the main thread; it lands at the next ``await``).
        """
        with self._state:
            if not self._active:
                return False
            self._interrupt_requested = True
            loop = self._loop
            if not self._suspended:
                if not self._signals:
                    return False
                self._outstanding = True
                self._signalled = True
                if self._interrupter is None:
                    thread = threading.Thread(
                        target=self._send_until_delivered,
                        args=(self._stop_interrupting,),
                        name="byre-python-interrupt",
                        daemon=True,
                    )
                    self._interrupter = thread
                    self._interrupters.append(thread)
                    thread.start()  # it waits for this lock first
                return True
        assert loop is not None
        loop.call_soon_threadsafe(self._wake)
        return True

    def _send_until_delivered(self, stop: threading.Event) -> None:
        """Send SIGINT to the main thread until the handler has seen it.

        A signal that arrives just before the code enters a blocking call (``time.sleep``) only
        trips a flag that Python checks after the call returns; sending again breaks the call.
        """
        current = threading.current_thread()
        wake = None
        while True:
            with self._state:
                if not (self._active and self._outstanding) or stop.is_set():
                    self._interrupter = None if self._interrupter is current else self._interrupter
                    break
                if self._suspended:  # the code reached an await meanwhile: wake it there
                    self._outstanding = False
                    self._interrupter = None
                    wake = self._loop
                    break
            _send_sigint()
            stop.wait(_RESEND_S)
        if wake is not None:
            wake.call_soon_threadsafe(self._wake)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self._signalled:  # we sent SIGINTs during this run
            if self._outstanding:
                if self._active and _on_stack(frame, self._codes):
                    self._delivered()
                    raise KeyboardInterrupt
                if self._active and self._suspended and self._loop is not None:
                    self._delivered()
                    self._loop.call_soon_threadsafe(self._wake)
                return  # between two steps of the code: the next resend (or step) delivers it
            if not self._active:
                return  # a resend still on its way when the run ended
            if time.monotonic() - self._delivered_at < _DUPLICATE_S:
                return  # a resend that crossed the delivery of the first one
        # A SIGINT from outside, e.g. the kernel's ■.
        if self._active and _on_stack(frame, self._codes):
            self._interrupt_requested = False
            self._chain(signum, frame, raising=False)  # ipykernel's: cancel the running cell
            raise KeyboardInterrupt
        self._chain(signum, frame, raising=True)

    def _delivered(self) -> None:
        self._outstanding = False
        self._interrupt_requested = False
        self._delivered_at = time.monotonic()

    def _chain(self, signum: int, frame: FrameType | None, *, raising: bool) -> None:
        previous = self._previous_handler
        if not callable(previous):
            return
        if previous is signal.default_int_handler and not raising:
            return
        previous(signum, frame)

    def _wake(self) -> None:
        with self._state:
            if not (self._active and self._suspended and self._interrupt_requested):
                return
            if self._wake_pending or self._task is None:
                return
            self._wake_pending = True
            task = self._task
        task.cancel()

    def _interrupt_instead_of(self, cancel: asyncio.CancelledError) -> BaseException:
        """At an await: the exception to throw into the code for a CancelledError."""
        with self._state:
            woken, self._wake_pending = self._wake_pending, False
        if not woken or self._task is None:
            return cancel
        remaining = self._task.uncancel() if hasattr(self._task, "uncancel") else 0
        if remaining > 0:  # a real cancellation arrived as well
            return cancel
        self._interrupt_requested = False
        return KeyboardInterrupt()

    def _take_interrupt(self) -> bool:
        if self._interrupt_requested:
            self._interrupt_requested = False
            return True
        return False

    @contextmanager
    def _executing(self, compiled: _Compiled, task: asyncio.Task[Any] | None) -> Iterator[None]:
        install = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGINT) if install else None
        if install:
            signal.signal(signal.SIGINT, self._handler)
        with self._state:
            self._codes = compiled.codes
            self._task = task
            self._loop = asyncio.get_running_loop()
            self._signals = install
            if install:
                self._previous_handler = previous
            self._interrupt_requested = False
            self._wake_pending = False
            self._outstanding = False
            self._signalled = False
            self._stop_interrupting = threading.Event()
            self._active = True
        try:
            yield
        finally:
            with self._state:
                self._active = False
                self._suspended = False
                self._interrupt_requested = False
                self._outstanding = False
                interrupters, self._interrupters = self._interrupters, []
                self._interrupter = None
            self._stop_interrupting.set()
            for thread in interrupters:
                # After these joins no SIGINT of ours is still being sent; one already sent is
                # pending on this thread and is delivered on the join's return from the kernel,
                # then handled by our handler (now inert) before the previous one is restored.
                thread.join(_JOIN_S)
            if install:
                if signal.getsignal(signal.SIGINT) is self._handler:
                    signal.signal(signal.SIGINT, previous)  # runs pending handlers first
                else:
                    log.warning("byre: the SIGINT handler was replaced while Claude's code ran")
            with self._state:
                self._codes = frozenset()
                self._task = None
                self._wake_pending = False
                self._signalled = False

    # ---------------------------------------------------------------------- run

    async def run(
        self,
        code: str,
        *,
        approved_by: str = "",
        on_output: Callable[[Output], None] | None = None,
        name: str | None = None,
    ) -> PythonRun:
        """Run ``code``; returns its record, or raises :class:`PythonRunCancelled` carrying it.

        A run whose task was cancelled before the code starts (e.g. while waiting for an earlier
        run) raises ``CancelledError`` without running anything. ``on_output`` gets each output
        as it comes (streams, displays, then the value and the figures, as a cell shows them);
        ``name`` is what tracebacks call the code (unique, like ``cell In[3]``; by default
        ``byre-python-N``).
        """
        task = asyncio.current_task()
        async with _shell_lock(self.shell):
            if task is not None and _cancelling(task):
                raise asyncio.CancelledError("cancelled before the python run started")
            capture = Capture(self.limits, on_output)
            return await self._run(code, approved_by, task, capture, name)

    async def _run(
        self,
        code: str,
        approved_by: str,
        task: asyncio.Task[Any] | None,
        capture: Capture,
        name: str | None,
    ) -> PythonRun:
        started = time.perf_counter()
        try:
            filename = f"<{name or f'byre-python-{next(_RUN_NUMBERS)}'}>"
            compiled = self._compile(code, filename)
        except (SyntaxError, ValueError, OverflowError, RecursionError) as e:
            return self._record(
                code, capture, _Outcome(error=e), None, started, approved_by, figures=[]
            )
        tracker = FigureTracker()
        with capture.installed(self.shell):
            tracker.start()
            try:
                with self._executing(compiled, task):
                    outcome = await self._execute(compiled, task)
            finally:
                created, changed = tracker.stop()
            value_figure = as_figure(outcome.value) if outcome.has_value else None
            figures = [*changed, *created]
            if value_figure is not None and all(f is not value_figure for f in figures):
                figures.append(value_figure)
            try:
                run = self._record(
                    code, capture, outcome, compiled, started, approved_by, figures=figures
                )
            finally:
                for figure in created:
                    close_figure(figure)
        if outcome.cancelled:
            raise PythonRunCancelled(run)
        return run

    def _compile(self, code: str, filename: str) -> _Compiled:
        source = code
        try:
            source = self.shell.transform_cell(code)
        except Exception:  # IPython syntax is a convenience; plain Python still compiles below
            log.debug("byre: transform_cell failed; compiling the code as is", exc_info=True)
        lines = source.splitlines(keepends=True)
        linecache.cache[filename] = (len(source), None, lines, filename)  # for tracebacks
        tree = ast.parse(source, filename, "exec")
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | (
            getattr(self.shell.compile, "flags", 0) & _FUTURE_FLAGS
        )
        compiled = _Compiled(filename, show_value=not code.rstrip().endswith(";"))
        body = list(tree.body)
        last = body.pop() if body and isinstance(body[-1], ast.Expr) else None
        assert last is None or isinstance(last, ast.Expr)
        if body:
            module = ast.Module(body=body, type_ignores=[])
            compiled.parts.append((compile(module, filename, "exec", flags, True), False))
        if last is not None:
            expression = ast.Expression(body=last.value)
            compiled.parts.append((compile(expression, filename, "eval", flags, True), True))
        return compiled

    async def _execute(self, compiled: _Compiled, task: asyncio.Task[Any] | None) -> _Outcome:
        shell = self.shell
        outcome = _Outcome()
        try:
            for code, is_expression in compiled.parts:
                value = eval(code, shell.user_global_ns, shell.user_ns)
                if code.co_flags & inspect.CO_COROUTINE:
                    value = await _Driven(self, value)
                if is_expression:
                    outcome.value, outcome.has_value = value, True
        except asyncio.CancelledError as e:
            # Ours only if the task is being cancelled; the code may raise one of its own.
            outcome.error = e
            outcome.cancelled = task is None or _cancelling(task) or not hasattr(task, "uncancel")
        except BaseException as e:  # the code may raise anything, KeyboardInterrupt included
            outcome.error = e
        return outcome

    # ------------------------------------------------------------------ record

    def _record(
        self,
        code: str,
        capture: Capture,
        outcome: _Outcome,
        compiled: _Compiled | None,
        started: float,
        approved_by: str,
        *,
        figures: list[Any],
    ) -> PythonRun:
        limits = self.limits
        result: str | None = None
        if outcome.has_value and outcome.value is not None and compiled and compiled.show_value:
            result = pretty_repr(outcome.value, _PRETTY_MAX_SEQ)
            shown: dict[str, Any] = {"text/plain": result}
            if as_figure(outcome.value) is None:
                image = _value_image(outcome.value)
                if image is not None:
                    capture.add_image(image)
                    shown[image.media_type] = image.data
            capture.emit({"output_type": "execute_result", "data": shown, "metadata": {}})
        for figure in figures:
            if len(capture.images) >= limits.max_images:
                capture.images_left_out += 1
                continue
            try:
                png = render_figure(figure, limits.figure_dpi)
                capture.add_image(png)
                figure_data = {png.media_type: png.data, "text/plain": "<Figure>"}
                capture.emit({"output_type": "display_data", "data": figure_data, "metadata": {}})
            except Exception as e:  # a broken plot must not lose the rest of the result
                capture.notes.append(f"could not render a figure: {type(e).__name__}: {e}")
        if capture.images_left_out:
            capture.notes.append(
                f"{capture.images_left_out} more image(s) not shown (limit {limits.max_images})"
            )

        error = outcome.error
        error_text = tb_text = None
        status: RunStatus = "ok"
        if error is not None:
            error_text = _error_line(error)
            tb_text = _format_traceback(error, compiled)
            if outcome.cancelled:
                status = "cancelled"
            elif isinstance(error, KeyboardInterrupt):
                status = "interrupted"
            else:
                status = "error"

        texts = [
            (capture.stdout.getvalue(), capture.stdout.omitted),
            (capture.stderr.getvalue(), capture.stderr.omitted),
            (capture.displayed.getvalue(), capture.displayed.omitted),
            (result or "", 0),
            (tb_text or "", 0),
        ]
        budgets = fit_budget([len(t) for t, _ in texts], limits.max_output_chars)
        clipped = [clip(t, b, already_omitted=o) for (t, o), b in zip(texts, budgets, strict=True)]
        return PythonRun(
            code=code,
            status=status,
            stdout=clipped[0],
            stderr=clipped[1],
            displayed=clipped[2],
            result=clipped[3] if result is not None else None,
            error=error_text,
            traceback=clipped[4] if tb_text is not None else None,
            images=tuple(capture.images),
            notes=tuple(capture.notes),
            duration=time.perf_counter() - started,
            approved_by=approved_by,
        )


class _Driven:
    """Steps the code's coroutine, so the runner knows when it is suspended at an await."""

    def __init__(self, runner: PythonRunner, coro: Coroutine[Any, Any, Any]) -> None:
        self._runner = runner
        self._coro = coro

    def __await__(self) -> Generator[Any, Any, Any]:
        runner, coro = self._runner, self._coro
        send: Any = None
        throw: BaseException | None = None
        try:
            while True:
                if throw is None and runner._take_interrupt():
                    throw = KeyboardInterrupt()
                try:
                    yielded = coro.send(send) if throw is None else coro.throw(throw)
                except StopIteration as stop:
                    return stop.value
                send, throw = None, None
                runner._suspended = True
                try:
                    send = yield yielded
                except asyncio.CancelledError as e:
                    throw = runner._interrupt_instead_of(e)
                except GeneratorExit:
                    raise
                except BaseException as e:  # forwarded to the code, as `await` would
                    throw = e
                finally:
                    runner._suspended = False
        finally:
            coro.close()


_SHELL_LOCKS: weakref.WeakKeyDictionary[Any, tuple[asyncio.AbstractEventLoop, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def _shell_lock(shell: Any) -> asyncio.Lock:
    """One run at a time per shell, across runners (one per session): runs swap process-wide
    state (``sys.stdout``, ``display_pub``, the SIGINT handler) and must nest cleanly."""
    loop = asyncio.get_running_loop()
    held = _SHELL_LOCKS.get(shell)
    if held is None or held[0] is not loop:
        held = _SHELL_LOCKS[shell] = (loop, asyncio.Lock())
    return held[1]


def _cancelling(task: asyncio.Task[Any]) -> bool:
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if cancelling is not None else False


def _on_stack(frame: FrameType | None, codes: Collection[CodeType]) -> bool:
    while frame is not None:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


def _send_sigint() -> None:
    main = threading.main_thread().ident
    if hasattr(signal, "pthread_kill") and main is not None:
        signal.pthread_kill(main, signal.SIGINT)  # also breaks a blocking sleep/select
    else:
        _thread.interrupt_main(signal.SIGINT)


def _error_line(error: BaseException) -> str:
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _format_traceback(error: BaseException, compiled: _Compiled | None) -> str:
    """Plain-text traceback from the run's first frame on, without the runner's own frames."""
    if compiled is None:  # it did not compile: the error line (and caret) is all there is
        return "".join(traceback.format_exception_only(type(error), error))
    tb: TracebackType | None = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != compiled.filename:
        tb = tb.tb_next
    if tb is None:
        return "".join(traceback.format_exception_only(type(error), error))
    formatted = traceback.TracebackException(type(error), error, tb, compact=True)
    ours = {__file__, _Driven.__await__.__code__.co_filename}
    while formatted.stack and formatted.stack[-1].filename in ours:
        formatted.stack.pop()  # the SIGINT handler's frame, for an interrupt
    return "".join(formatted.format())


def _value_image(value: Any) -> Image | None:
    for method in ("_repr_png_", "_repr_jpeg_"):
        render: Callable[[], Any] | None = getattr(value, method, None)
        if not callable(render) or isinstance(value, type):
            continue
        try:
            data = render()
        except Exception:  # an object's optional image repr failing is not the run failing
            log.debug("byre: %s of a %s failed", method, type(value).__name__, exc_info=True)
            continue
        if isinstance(data, tuple):  # (data, metadata)
            data = data[0]
        image = displayed_image(data)
        if image is not None:
            return image
    return None
