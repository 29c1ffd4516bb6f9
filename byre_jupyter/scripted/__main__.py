"""Run the scripted fake Messages API as a process.

    python -m byre_jupyter.scripted --port 0 --script demo

The first stdout line is the base URL (``http://127.0.0.1:PORT``), for ``ANTHROPIC_BASE_URL``.
The server then runs until SIGTERM/SIGINT. ``--verbose`` logs one line per request to stderr.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from .demo import DEFAULT_PYTHON_TOOL, demo_script
from .script import Reply, Script, Text
from .server import ScriptedAPI

SCRIPTS = ("demo", "ok")


def _script(name: str, python_tool: str) -> Script:
    if name == "demo":
        return demo_script(python_tool=python_tool)
    return Script(default=Reply(Text("OK.")))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m byre_jupyter.scripted",
        description="Serve a scripted fake Anthropic Messages API on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind (0: any free port)")
    parser.add_argument(
        "--script", choices=SCRIPTS, default="demo", help="rule set: the demo model, or 'OK.'"
    )
    parser.add_argument(
        "--python-tool",
        default=DEFAULT_PYTHON_TOOL,
        help=f"API-side name of the kernel tool the demo calls (default {DEFAULT_PYTHON_TOOL})",
    )
    parser.add_argument("--verbose", action="store_true", help="log each request to stderr")
    args = parser.parse_args(argv)

    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    api = ScriptedAPI(
        _script(args.script, args.python_tool), port=args.port, log=log if args.verbose else None
    )
    with api:
        print(api.url, flush=True)
        while not done.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
