"""``%%claude`` and ``%claude``: parse arguments, delegate to the extension.

Bad input always raises exactly :class:`~IPython.core.error.UsageError` (a short red message,
no traceback), before anything is sent, and leaves the session untouched.
"""

from __future__ import annotations

import asyncio
import html
import os
import shlex
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import HTML, Markdown, display

from ..errors import ByreError
from ..protocol import model_option
from .conversation import find_turn, render_history
from .doctor import doctor_checks, render_checks
from .extension import ClaudeExtension
from .handoff import attach_variables, interpolate
from .inputs import resolve_image
from .portable import PortableError
from .runner import TurnRequest, run_turn

__all__ = ["ClaudeMagics", "parse_cell_args"]

SUBCOMMANDS = {
    "sessions": "list sessions (name, state, model, conversation id, turns, cost)",
    "model": "model [NAME] [-s SESSION]: show or switch the model",
    "new": "new [NAME]: start a fresh conversation in a session",
    "stop": "stop [NAME]: interrupt the running turn",
    "close": "close [NAME]: end a session and its CLI process",
    "resume": "resume [NAME] [ID]: continue an earlier conversation (e.g. after a kernel restart); "
    "resume --from NOTEBOOK.ipynb [NAME]: continue the one a notebook saved with Claude.portable",
    "usage": "usage: cost and tokens per session",
    "transcript": "transcript [NAME]: the last turn of a session as text",
    "permissions": "permissions [--clear] [NAME]: the tools always allowed in the session's "
    "conversation (--clear ends them)",
    "history": "history [NAME]: the session's turns as a tree (branches, cells, cost per turn, "
    "which is current)",
    "checkout": "checkout TURN [-s NAME]: continue from an earlier turn: #N (a turn), [N] (the "
    "cell In [N]), a cell id, or start",
    "doctor": "doctor: check the CLI, login and kernel, each with a fix",
    "help": "help: this list",
}


@magic_arguments()
@argument(
    "-s", "--session", default="default", help="Session name (several conversations side by side)."
)
@argument("-m", "--model", default=None, help="Switch the session to this model before the turn.")
@argument("--new", action="store_true", help="Start a fresh conversation in this session.")
@argument(
    "-i",
    "--image",
    action="append",
    default=[],
    metavar="PATH_OR_VAR",
    help="Attach an image: a file, or a variable holding PNG/JPEG bytes, a PIL image, a "
    "matplotlib figure or an IPython.display.Image. Repeatable.",
)
@argument(
    "-w",
    "--with",
    dest="with_vars",
    default=None,
    metavar="VARS",
    help="Attach variables as context, comma-separated: DataFrames as schema + head, arrays as "
    "shape/dtype/stats, figures and images as pictures, text as text.",
)
@argument(
    "-o", "--out", default=None, metavar="VAR", help="Store the turn's result in this variable."
)
@argument("--bg", action="store_true", help="Run in the background: the cell returns at once.")
def _cell_args(line: str, cell: str | None = None) -> None:
    """Talk to Claude Code. The cell body is the prompt; the conversation carries across cells.

    ``{name}`` in the prompt is replaced by the variable's value (``{{`` and ``}}`` are literal
    braces).

    Examples::

        %%claude
        Explain what the dataframe `df` holds.

        %%claude -s review -m sonnet -i plot.png
        Is this chart misleading?
    """


def parse_cell_args(line: str) -> Any:
    try:
        # POSIX quoting, like %claude: -i "my plot.png" names that file, -s 'x' the session x
        # (IPython's parse_argstring keeps the quotes as part of the value).
        args = _cell_args.parser.parse_args(shlex.split(line))
    except UsageError:
        raise
    except (ValueError, SystemExit) as e:  # shlex errors, argparse exits
        raise UsageError(f"%%claude: {e}") from None
    if args.out is not None and not args.out.isidentifier():
        raise UsageError(f"-o {args.out!r}: not a valid variable name")
    _check_session_name(args.session, "-s")
    return args


def _session_option(rest: list[str], command: str) -> tuple[str, list[str]]:
    """``-s NAME`` taken out of a subcommand's words: (the session name, the other words)."""
    if "-s" not in rest:
        return "default", rest
    i = rest.index("-s")
    if i + 1 >= len(rest):
        raise UsageError(f"%claude {command}: -s needs a session name")
    name = _check_session_name(rest[i + 1], f"%claude {command} -s")
    return name, rest[:i] + rest[i + 2 :]


def _check_session_name(name: str, where: str) -> str:
    """Session names are letters, digits, - and _ (they name transcript files, table rows)."""
    if not name or not name.replace("-", "_").isidentifier():
        raise UsageError(f"{where} {name!r}: session names are letters, digits, - and _")
    return name


@dataclass(frozen=True)
class _CellPlan:
    """A checked ``%%claude`` cell: everything but the session, which ``execute`` takes."""

    args: Any
    prompt: str
    images: list[tuple[str, bytes]]
    context: list[dict[str, Any]]
    names: list[str]


@magics_class
class ClaudeMagics(Magics):
    def __init__(self, shell: Any, ext: ClaudeExtension) -> None:
        super().__init__(shell)
        self.ext = ext

    # -- %%claude -----------------------------------------------------------------------

    @cell_magic("claude")  # type: ignore[arg-type]  # IPython's decorator is untyped
    def claude_cell(self, line: str, cell: str) -> None:
        """Fallback when the input transformer did not run (e.g. ``run_cell_magic``)."""
        # Bad input raises UsageError here, in the caller's cell, before anything is scheduled
        # (inside a task it would only be an unretrieved task exception).
        plan = self.prepare(line, cell)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            from IPython.core.async_helpers import get_asyncio_loop

            get_asyncio_loop().run_until_complete(self.execute(plan))
            return
        # The turn outlives this call, as a --bg turn does: its failure cannot fail the cell.
        task = loop.create_task(self.execute(plan, detached=True))
        self.ext.background.add(task)
        task.add_done_callback(self.ext.background.discard)

    claude_cell.__doc__ = _cell_args.__doc__

    async def run(self, line: str, body: str) -> None:
        await self.execute(self.prepare(line, body))

    def prepare(self, line: str, body: str) -> _CellPlan:
        """Parse and check the cell, resolve its inputs; raises UsageError, sends nothing."""
        args = parse_cell_args(line)
        prompt = body.strip()
        if not prompt:
            raise UsageError(
                "%%claude: the cell is empty; write the prompt below the %%claude line"
            )
        assert self.shell is not None
        namespace = self.shell.user_ns
        prompt = interpolate(prompt, namespace).strip()
        if not prompt:  # e.g. the body was only "{x}" and x is empty
            raise UsageError("%%claude: the prompt is empty after filling in {names}")
        images = [resolve_image(spec, namespace) for spec in args.image]
        context: list[dict[str, Any]] = []
        names: list[str] = []
        if args.with_vars is not None:
            context, with_images, names = attach_variables(args.with_vars, namespace)
            images += with_images
        return _CellPlan(args, prompt, images, context, names)

    async def execute(self, plan: _CellPlan, *, detached: bool = False) -> None:
        args = plan.args
        session, node = self.ext.conversations.begin(args.session, plan.prompt, new=args.new)
        if args.model:
            try:
                await session.set_model(model_option(args.model))
            except ByreError as e:
                raise UsageError(f"-m {args.model}: {e}") from None
        request = TurnRequest(
            session=session,
            prompt=plan.prompt,
            images=plan.images,
            out=args.out,
            extra_blocks=plan.context,
            context_names=plan.names,
            background=args.bg or detached,
            node=node,
        )
        if args.bg:
            task = asyncio.get_running_loop().create_task(run_turn(self.ext, request))
            self.ext.background.add(task)
            task.add_done_callback(self.ext.background.discard)
            return
        await run_turn(self.ext, request)

    # -- %claude ------------------------------------------------------------------------

    @line_magic("claude")  # type: ignore[arg-type]
    def claude_line(self, line: str) -> Any:
        """%claude SUBCOMMAND: sessions, model, new, stop, close, resume, usage, transcript,
        permissions, doctor, help."""
        try:
            words = shlex.split(line)
        except ValueError as e:
            raise UsageError(f"%claude: {e}") from None
        if not words:
            words = ["help"]
        command, rest = words[0], words[1:]
        handler = getattr(self, f"_cmd_{command}", None)
        if command not in SUBCOMMANDS or handler is None:
            raise UsageError(
                f"%claude: unknown subcommand {command!r}. Try: {', '.join(SUBCOMMANDS)}"
            )
        return handler(rest)

    def _one_name(self, rest: list[str], command: str) -> str:
        if len(rest) > 1:
            raise UsageError(f"%claude {command}: at most one session name")
        return _check_session_name(rest[0], f"%claude {command}") if rest else "default"

    def _existing(self, name: str) -> Any:
        session = self.ext.manager.peek(name)
        if session is None:
            raise UsageError(f"no session named {name!r}; see %claude sessions")
        return session

    def _cmd_help(self, rest: list[str]) -> None:
        rows = "".join(
            f"<tr><td><code>%claude {k}</code></td><td>{html.escape(v)}</td></tr>"
            for k, v in SUBCOMMANDS.items()
        )
        display(HTML(f"<table>{rows}</table>"))

    def _show(self, markdown: str) -> None:
        """A Markdown table in a notebook; its text in terminal IPython (where a Markdown
        object would print as ``<IPython.core.display.Markdown object>``)."""
        if self.ext.frontend() == "terminal":
            print(markdown)
        else:
            display(Markdown(markdown))

    def _cmd_sessions(self, rest: list[str]) -> None:
        lines = [
            "| session | state | model | conversation | turns | cost |",
            "|---|---|---|---|---|---|",
        ]
        for s in self.ext.manager:
            state = (
                "closed" if s.closed else "busy" if s.busy else "running" if s.running else "idle"
            )
            model = html.escape(s.model or "default").replace("|", "\\|").replace("`", "\\`")
            lines.append(
                f"| {s.name} | {state} | {model} | `{(s.session_id or '').replace('`', '')}` | "
                f"{s.turns_completed} | {dollars(s.total_cost_usd)} |"
            )
        if len(lines) == 2:
            lines.append("| *(none yet: run a %%claude cell)* | | | | | |")
        self._show("\n".join(lines))

    def _cmd_model(self, rest: list[str]) -> str | None:
        name, rest = _session_option(rest, "model")
        session = self.ext.session(name)
        if not rest:
            return session.model or "default"
        if len(rest) > 1:
            raise UsageError("%claude model: one model name")
        model = model_option(rest[0])
        session.model = model  # the running CLI is switched on the loop
        if session.running:
            self.ext.schedule(session.set_model(model))
        return None

    def _cmd_new(self, rest: list[str]) -> None:
        name = self._one_name(rest, "new")
        self.ext.session(name, new=True)
        print(f"session {name!r}: fresh conversation")

    def _cmd_stop(self, rest: list[str]) -> None:
        session = self._existing(self._one_name(rest, "stop"))
        if not session.busy:
            print(f"session {session.name!r} is idle")
            return
        self.ext.schedule(session.interrupt())

    def _cmd_close(self, rest: list[str]) -> None:
        name = self._one_name(rest, "close")
        self._existing(name)
        self.ext.schedule(self.ext.manager.drop(name))

    def _cmd_resume(self, rest: list[str]) -> None:
        if rest and rest[0] == "--from":
            self._resume_from(rest[1:])
            return
        if len(rest) > 2:
            raise UsageError("%claude resume [NAME] [ID] | --from NOTEBOOK.ipynb [NAME]")
        name = _check_session_name(rest[0], "%claude resume") if rest else "default"
        session = self.ext.resume(name, rest[1] if len(rest) > 1 else None)
        print(f"session {name!r} resumes conversation {session.session_id}")

    def _resume_from(self, rest: list[str]) -> None:
        if not rest or len(rest) > 2:
            raise UsageError("%claude resume --from NOTEBOOK.ipynb [NAME]")
        name = "default"
        if len(rest) > 1:
            name = _check_session_name(rest[1], "%claude resume --from")
        try:
            session, restored = self.ext.resume_from(rest[0], name)
        except PortableError as e:
            raise UsageError(f"%claude resume --from: {e}") from None
        where = "written to" if restored.written else "already in"
        print(
            f"session {name!r} resumes conversation {session.session_id} from {rest[0]} "
            f"(its session file {where} {restored.path})"
        )

    def _cmd_usage(self, rest: list[str]) -> None:
        lines = [
            "| session | turns | cost (USD) | input tokens | output tokens |",
            "|---|---|---|---|---|",
        ]
        for s in self.ext.manager:
            u = s.usage_totals
            lines.append(
                f"| {s.name} | {s.turns_completed} | {s.total_cost_usd:.4f} | "
                f"{u.get('input_tokens', 0) + u.get('cache_read_input_tokens', 0)} | "
                f"{u.get('output_tokens', 0)} |"
            )
        self._show("\n".join(lines))

    def _cmd_transcript(self, rest: list[str]) -> None:
        from ..ui import terminal_text

        name = self._one_name(rest, "transcript")
        view = self.ext.last_views.get(name)
        if view is None:
            raise UsageError(f"no turn yet in session {name!r}")
        print(terminal_text(view, max_lines=10_000))

    def _cmd_permissions(self, rest: list[str]) -> None:
        clear = "--clear" in rest
        rest = [w for w in rest if w != "--clear"]
        if any(w.startswith("-") for w in rest):
            raise UsageError("%claude permissions [--clear] [NAME]")
        session = self._existing(self._one_name(rest, "permissions"))
        tools = self.ext.clear_allowances(session) if clear else self.ext.allowed_tools(session)
        listed = ", ".join(sorted(tools))
        if clear:
            print(
                f"session {session.name!r}: cleared ({listed}); these tools ask again"
                if tools
                else f"session {session.name!r}: nothing was always allowed"
            )
        else:
            print(
                f"session {session.name!r}: always allowed in this conversation: {listed}"
                if tools
                else f"session {session.name!r}: nothing is always allowed (every tool asks)"
            )

    def _cmd_history(self, rest: list[str]) -> None:
        name = self._one_name(rest, "history")
        tree = self.ext.conversations.tree(name)
        if tree is None or not tree.turns:
            raise UsageError(f"no turn yet in session {name!r}")
        print(render_history(name, tree))

    def _cmd_checkout(self, rest: list[str]) -> None:
        name, rest = _session_option(rest, "checkout")
        if len(rest) != 1:
            raise UsageError(
                "%claude checkout TURN [-s NAME]: one turn (#N, [N], a cell id, start)"
            )
        tree = self.ext.conversations.tree(name)
        if tree is None or not tree.turns:
            raise UsageError(f"no turn yet in session {name!r}")
        try:
            node = find_turn(tree, rest[0])
        except LookupError as e:
            raise UsageError(f"%claude checkout: {e}") from None
        session = self._existing(name)
        if session.busy:
            raise UsageError(f"session {name!r} is running a turn; stop it first")
        self.ext.conversations.checkout(name, node)
        where = f"turn #{node.number} {node.label()}" if node is not None else "the start"
        print(f"session {name!r} continues after {where}")

    def _cmd_doctor(self, rest: list[str]) -> None:
        self._show(doctor_report(self.ext))


def dollars(amount: float) -> str:
    """A dollar amount for Markdown. The ``$`` is escaped: Jupyter reads two bare ``$`` in one
    paragraph (two rows of a table) as LaTeX, and the row turns into italic maths."""
    return f"\\${amount:.4f}"


def doctor_report(ext: ClaudeExtension) -> str:
    checks = doctor_checks(ext.config.cli_path, {**os.environ, **ext.config.env}, ext.frontend())
    return render_checks(checks)
