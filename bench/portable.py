"""Portable notebooks: the bytes ``Claude.portable`` adds to a saved notebook.

The real CLI, against the scripted API, runs short turns (a one-line prompt, a one-line answer)
in a fresh HOME; after each, the record a turn would save (``app.portable.pack``: the
conversation of the CLI's session file, redacted, gzipped, base64) is measured, with the
session file's size on disk.
Run: ``python -m bench.portable [TURNS]``.
"""

from __future__ import annotations

import asyncio
import base64
import sys
import tempfile
from pathlib import Path

from byre_jupyter import Session
from byre_jupyter.app.portable import machine_places, pack, session_file
from byre_jupyter.scripted import Reply, ScriptedAPI, Text

from .common import cli_env, real_cli


async def measure(cli: str, turns: int) -> None:
    with ScriptedAPI() as api, tempfile.TemporaryDirectory() as tmp:
        api.default = lambda _request: Reply(Text("A short answer."))
        env = cli_env(api.url, Path(tmp) / "home")
        async with Session("bench", cli_path=cli, cwd=tmp, env=env) as session:
            for n in range(1, turns + 1):
                result = await session.query(f"A short question, number {n}.")
                assert result.session_id is not None
                path = session_file(env, tmp, result.session_id)
                assert path is not None, "the CLI wrote no session file"
                places = machine_places(tmp, env)
                record = pack(path, result.session_id, 2**30, secrets=(), places=places)
                gzipped = len(base64.b64decode(record["data"]))
                print(
                    f"after {n} short turn(s): record {len(record['data']) / 1024:.1f} kB "
                    f"(gzip {gzipped / 1024:.1f} kB, redacted file {record['size'] / 1024:.1f} "
                    f"kB; on disk {path.stat().st_size / 1024:.1f} kB)"
                )


def main(turns: int = 3) -> None:
    cli = real_cli()
    if cli is None:
        sys.exit("the real claude CLI is not installed")
    asyncio.run(measure(cli, turns))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
