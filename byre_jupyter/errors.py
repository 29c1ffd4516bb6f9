"""One error tree for byre_jupyter.

Every error the package raises on purpose is a :class:`ByreError`; each subclass carries the
data a caller needs to act on it (an exit code, the CLI's stderr tail, the offending line) rather
than burying it in the message. Text that comes from the CLI (its stderr, its error strings)
passes through :func:`~byre_jupyter.redact.redact_text` before it is stored or shown: a key the
CLI echoes must not land in a notebook. Pure module: importable from the protocol layer.
"""

from __future__ import annotations

from .redact import Secrets, redact_text
from .version import CLI_INSTALL

__all__ = [
    "ByreError",
    "ByreWarning",
    "CLIConnectionError",
    "CLINotFoundError",
    "CLIProcessError",
    "ControlError",
    "ControlTimeout",
    "LineTooLongError",
    "ProtocolError",
    "SessionClosedError",
]


class ByreError(Exception):
    """Base class of every error byre_jupyter raises on purpose."""


class ByreWarning(UserWarning):
    """Best-effort work failed (a transcript, the resume index); what the user asked for went on."""


def _redacted(text: str, secrets: Secrets | None = None) -> str:
    """``text`` from the CLI with credential-shaped strings and the ``secrets`` (by default
    this process's environment's) replaced."""
    return redact_text(text, Secrets.of_process() if secrets is None else secrets)


class CLINotFoundError(ByreError):
    """The ``claude`` executable could not be found."""

    def __init__(self, searched: str, hint: str | None = None) -> None:
        self.searched = searched
        self.hint = hint  # what to configure, when we can tell more (a kernel gateway)
        super().__init__(
            f"Claude Code CLI not found ({searched}). Install it with {CLI_INSTALL} (in a "
            "terminal), or point byre_jupyter at it with "
            "%config Claude.cli_path = '/path/to/claude' or the BYRE_CLAUDE_PATH variable."
            + (f"\n{hint}" if hint else "")
        )


class CLIConnectionError(ByreError):
    """The CLI could not be started, or its pipes broke."""


class CLIProcessError(CLIConnectionError):
    """The CLI process exited while we still needed it."""

    def __init__(
        self,
        message: str,
        exit_code: int | None,
        stderr_tail: str,
        secrets: Secrets | None = None,
    ) -> None:
        """``secrets``: those of the environment the CLI ran in (``Claude.env`` included)."""
        self.exit_code = exit_code
        # Stored redacted: the raw tail is shown nowhere, so nothing needs to keep it.
        self.stderr_tail = _redacted(stderr_tail, secrets)
        detail = f"{_redacted(message, secrets)} (exit code {exit_code})"
        if self.stderr_tail.strip():
            detail += f"\n--- claude stderr (tail) ---\n{self.stderr_tail.rstrip()}"
        super().__init__(detail)


class ProtocolError(ByreError):
    """The CLI sent something that breaks the stream-json protocol."""

    def __init__(self, message: str, line: bytes | str | None = None) -> None:
        self.line = line
        super().__init__(message)


class LineTooLongError(ProtocolError):
    """A stdout line exceeded the configured maximum; it was skipped, the session goes on."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"stdout line of at least {size} bytes exceeds the {limit}-byte limit")


class ControlError(ByreError):
    """The CLI answered a control request with an error."""

    def __init__(self, subtype: str, error: str, error_code: str | None = None) -> None:
        self.subtype = subtype
        self.error = _redacted(error)
        self.error_code = error_code
        code = f" [{error_code}]" if error_code else ""
        super().__init__(f"control request {subtype!r} failed{code}: {self.error}")


class ControlTimeout(ControlError):
    """A control request got no answer in time."""

    def __init__(self, subtype: str, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(subtype, f"no response within {timeout:g} s", "timeout")


class SessionClosedError(ByreError):
    """The session was closed; no more turns can be sent."""
