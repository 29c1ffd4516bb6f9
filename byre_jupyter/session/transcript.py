"""Transcripts: every line in both directions as ``{"dir": "send"|"recv", "msg": ...}``.

Stream events are left out (they repeat what the assistant lines carry). Every string in a line
passes through :func:`~byre_jupyter.redact.redact_text` with the values of the environment's
secret-named variables, and the account email from the initialize response is replaced by
``[redacted]`` everywhere it appears (docs/protocol.md, section 9). Values under a
secret-named key (``"token": ...``) are replaced whole.

A transcript is a record, not part of the turn: the file is created ``0600`` in ``0700``
folders (:mod:`.storage`), and when writing fails (a full disk, a file size limit, permissions)
one :class:`~byre_jupyter.errors.ByreWarning` says so, the transcript stops and the turn goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Mapping
from typing import IO, Any

from ..errors import ByreWarning
from ..redact import Secrets, redact_json
from .storage import make_private_dirs, open_private

__all__ = ["TranscriptWriter"]


class TranscriptWriter:
    def __init__(self, path: str | os.PathLike[str], secrets: Secrets | None = None) -> None:
        """``secrets``: the values to redact (default: this process's environment's)."""
        self.path = os.fspath(path)
        self._secrets = Secrets.of_process() if secrets is None else secrets
        self._file: IO[str] | None = None
        try:
            make_private_dirs(os.path.dirname(os.path.abspath(self.path)))
            fd = open_private(self.path, append=True)
            self._file = open(fd, "a", encoding="utf-8", closefd=True)  # noqa: SIM115
        except OSError as e:
            self._fail(e)

    @property
    def active(self) -> bool:
        """Whether lines are still being written (False after a failure or close)."""
        return self._file is not None

    def redact(self, secret: str | None) -> None:
        if secret:
            self._secrets |= {secret}

    def write(self, direction: str, message: Mapping[str, Any]) -> None:
        """Append one line. Never raises for the file's sake: see the module docstring."""
        if self._file is None or message.get("type") == "stream_event":
            return
        if direction == "recv":
            self._learn(message)
        scrubbed = redact_json(message, self._secrets)
        line = json.dumps({"dir": direction, "msg": scrubbed}, ensure_ascii=False)
        try:
            self._file.write(line + "\n")
            self._file.flush()
        except OSError as e:
            self._fail(e)

    def _learn(self, message: Mapping[str, Any]) -> None:
        # The initialize response carries account{email,...}: redact it from this line on.
        response = message.get("response")
        if isinstance(response, Mapping):
            body = response.get("response")
            if isinstance(body, Mapping):
                account = body.get("account")
                if isinstance(account, Mapping):
                    email = account.get("email")
                    if isinstance(email, str):
                        self.redact(email)

    def _fail(self, error: OSError) -> None:
        """Stop writing, once, with one warning."""
        file, self._file = self._file, None
        if file is not None:
            # The buffered line that failed fails again on close: already reported.
            with contextlib.suppress(OSError):
                file.close()
        warnings.warn(
            f"byre_jupyter: the transcript {self.path} could not be written "
            f"({error.strerror or error}); it stops here and the conversation goes on.",
            ByreWarning,
            stacklevel=2,
        )

    def close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            try:
                file.close()
            except OSError as e:
                warnings.warn(
                    f"byre_jupyter: the end of the transcript {self.path} could not be written "
                    f"({e.strerror or e}).",
                    ByreWarning,
                    stacklevel=2,
                )
