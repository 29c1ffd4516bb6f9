"""Helpers shared by tests: the CLI the suite runs, its environment, the stand-in CLI, and a
tiny PNG."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

from byre_jupyter.scripted import cli_env

TESTS = Path(__file__).resolve().parents[1]

#: The CLI's environment for tests (offline, isolated HOME/TMPDIR, no retries).
cli_env_for = cli_env

#: The stand-in CLI (what the real one cannot be made to do on demand: garbage, stalls...).
STANDIN = TESTS / "support" / "standin_cli.py"


def find_cli() -> str | None:
    """The pinned CLI installed by ./dev setup (BYRE_CLAUDE_PATH), else .byre, else None."""
    candidates = [os.environ.get("BYRE_CLAUDE_PATH", "")]
    candidates += map(str, (TESTS.parent / ".byre/cli/node_modules/@anthropic-ai").glob(
        "claude-code-linux-*/claude"))  # fmt: skip
    return next((p for p in candidates if p and os.access(p, os.X_OK)), None)


def tiny_png(width: int = 4, height: int = 4, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid RGB PNG made with zlib/struct only."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
