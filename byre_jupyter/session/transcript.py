"""Transcripts: every line in both directions as ``{"dir": "send"|"recv", "msg": ...}``.

Stream events are left out (they repeat what the assistant lines carry). The account email from
the initialize response is replaced by ``[redacted]`` everywhere it appears
(``shared/protocol/claude-protocol.md``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import IO, Any

__all__ = ["TranscriptWriter"]

REDACTED = "[redacted]"


class TranscriptWriter:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self._file: IO[str] | None = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self._secrets: set[str] = set()

    def redact(self, secret: str | None) -> None:
        if secret:
            self._secrets.add(secret)

    def write(self, direction: str, message: Mapping[str, Any]) -> None:
        if self._file is None or message.get("type") == "stream_event":
            return
        if direction == "recv":
            self._learn(message)
        line = json.dumps({"dir": direction, "msg": message}, ensure_ascii=False)
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        self._file.write(line + "\n")
        self._file.flush()

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

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
