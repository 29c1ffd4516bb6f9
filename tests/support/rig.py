"""Helpers shared by tests: the CLI environment and a tiny PNG."""

from __future__ import annotations

from pathlib import Path


def cli_env_for(api_url: str, home: Path, **extra: str) -> dict[str, str]:
    """The environment a test CLI runs in: offline, isolated HOME/TMPDIR, no retries."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "TMPDIR": str(home),
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "IS_SANDBOX": "1",  # as root, bypassPermissions needs it
    }
    env.update(extra)
    return env


def tiny_png(width: int = 4, height: int = 4, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid PNG made with zlib/struct only."""
    import struct
    import zlib

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
