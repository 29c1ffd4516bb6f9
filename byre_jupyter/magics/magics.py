"""``%%claude`` and ``%claude``: parse arguments, delegate to the extension.

Bad input always raises exactly :class:`~IPython.core.error.UsageError` (a short red message,
no traceback), before anything is sent, and leaves the session untouched.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import os
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import HTML, Markdown, display

from ..app.attach import attach_variables, interpolate
from ..app.conversation import find_turn, render_history
from ..app.doctor import bridge_check, doctor_checks, render_checks
from ..app.extension import ClaudeExtension
from ..app.inputs import resolve_image
from ..app.picker import CliConversation, Origin
from ..app.policy import read_policy
from ..app.portable import PortableError
from ..app.turns import TurnRequest, run_turn
from ..app.undo import apply_undo, parse_turn, prepare_undo
from ..bridge import announce_turn, bridge_of
from ..errors import ByreError
from ..protocol import (
    EFFORT_LEVELS,
    ContextUsage,
    Image,
    PermissionMode,
    model_label,
    parse_context_usage,
)
from ..session.accounting import SCRIPTED_COST, format_cost, short_tokens
from ..session.permissions import Decision
from ..tools.claude_cells import EDIT_TOOL
from ..tools.edit_log import turn_lines
from ..ui.approval_card import ApprovalCard
from ..ui.edit_card import review_text
from ..ui.format import context_meter
from ..ui.markdown import inert_line
from ..ui.toolinfo import allowance_lines

__all__ = ["ClaudeMagics", "parse_cell_args"]

#: How many conversations ``%claude conversations`` lists without ``--all``.
LISTED = 20
#: The longest first-prompt preview in that list, in characters.
PREVIEW_CHARS = 80


@magic_arguments()
@argument(
    "-s", "--session", default="default", help="Session name (several conversations side by side)."
)
@argument("-m", "--model", default=None, help="Switch the session to this model before the turn.")
@argument(
    "-e",
    "--effort",
    default=None,
    choices=("default", *EFFORT_LEVELS),
    help="Switch the session to this effort level before the turn (default: the model's own).",
)
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


def _check_session_name(name: str, where: str) -> str:
    """Session names are letters, digits, - and _ (they name transcript files, table rows)."""
    if not name or not name.replace("-", "_").isidentifier():
        raise UsageError(f"{where} {name!r}: session names are letters, digits, - and _")
    return name


class _HelpShown(Exception):
    """``--help`` printed a subcommand's help: the magic returns without doing anything."""


class _SubcommandParser(argparse.ArgumentParser):
    """One ``%claude`` subcommand's parser. argparse exits the process on bad input and after
    ``--help``; inside a kernel that would be a ``SystemExit`` in the user's cell. Here bad input
    raises ``UsageError`` with the subcommand's usage line, and ``--help`` prints and returns."""

    def __init__(self, name: str, description: str) -> None:
        super().__init__(prog=f"%claude {name}", description=description, allow_abbrev=False)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}\n{self.format_usage().rstrip()}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status:
            raise UsageError(message or self.format_usage().rstrip())
        raise _HelpShown


def _session_name(value: str) -> str:
    """argparse ``type=`` for session names (the message keeps saying "session names")."""
    try:
        return _check_session_name(value, "")
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e).strip()) from None


def _session_or_pick(value: str) -> str:
    """``resume``'s first word: a session name, or ``#N`` (then the session is default)."""
    return value if value.startswith("#") else _session_name(value)


def _subcommand_parsers() -> dict[str, _SubcommandParser]:
    """One parser per subcommand, in the order ``%claude help`` lists them."""
    parsers: dict[str, _SubcommandParser] = {}

    def sub(name: str, description: str) -> _SubcommandParser:
        parsers[name] = _SubcommandParser(name, description)
        return parsers[name]

    def name_arg(p: _SubcommandParser) -> None:
        p.add_argument(
            "name", nargs="?", default="default", type=_session_name, metavar="NAME",
            help="the session (default: default)",
        )  # fmt: skip

    def session_opt(p: _SubcommandParser) -> None:
        p.add_argument(
            "-s", "--session", default="default", type=_session_name, metavar="NAME",
            help="the session (default: default)",
        )  # fmt: skip

    sub("sessions", "List sessions: name, state, model, mode, effort, conversation, turns, cost.")
    p = sub("model", "Show the session's model, or switch it.")
    p.add_argument("model", nargs="?", metavar="MODEL", help="e.g. sonnet, opus, or default")
    session_opt(p)
    name_arg(sub("new", "Start a fresh conversation in a session."))
    name_arg(sub("stop", "Interrupt the session's running turn."))
    name_arg(sub("close", "End a session and its CLI process."))
    p = sub("conversations", "The CLI's conversations in this folder, newest first, numbered "
            "for resume #N: when, first prompt, turns, cost, and where from.")  # fmt: skip
    p.add_argument("--all", action="store_true", help=f"all of them, not the newest {LISTED}")
    p = sub("resume", "Continue an earlier conversation (e.g. after a kernel restart).")
    p.add_argument(
        "name", nargs="?", default="default", type=_session_or_pick, metavar="NAME",
        help="the session (default: default)",
    )  # fmt: skip
    p.add_argument(
        "id", nargs="?", metavar="ID",
        help="the conversation id, or #N: the one numbered N by %%claude conversations "
        "(default: the session's last)",
    )  # fmt: skip
    p.add_argument(
        "--from", dest="notebook", metavar="NOTEBOOK",
        help="the conversation a notebook saved with Claude.portable (another machine's too)",
    )  # fmt: skip
    sub("usage", "Cost and tokens per session.")
    session_opt(sub("commands", "The slash commands and skills the CLI offers a %%claude cell."))
    session_opt(sub("context", "How full the session's context window is."))
    name_arg(sub("transcript", "The last turn of a session as text."))
    p = sub("permissions", "The rules always allowed in the conversation: tool and scope.")
    p.add_argument("--clear", action="store_true", help="end them: what they covered asks again")
    name_arg(p)
    name_arg(
        sub("history", "The session's turns as a tree: branches, cells, cost per turn, current.")
    )
    p = sub("undo", "Take back a turn's cell edits: one batch you review as a diff, run alone in "
            "its cell; a cell changed since the turn is left as it is, and named.")  # fmt: skip
    p.add_argument(
        "turn", nargs="?", type=parse_turn, metavar="TURN",
        help="#N or N, the turn (default: the newest that changed cells)",
    )  # fmt: skip
    session_opt(p)
    p = sub("checkout", "Continue the session from an earlier turn.")
    p.add_argument("turn", metavar="TURN", help="#N (a turn), [N] (the cell In [N]), a cell id, "
                   "or start")  # fmt: skip
    session_opt(p)
    sub("doctor", "Check the CLI, login and kernel, each with a fix.")
    p = sub("help", "List the subcommands, or show one's help.")
    p.add_argument("subcommand", nargs="?", metavar="SUBCOMMAND")
    return parsers


SUBCOMMANDS = _subcommand_parsers()


@dataclass(frozen=True)
class _CellPlan:
    """A checked ``%%claude`` cell: everything but the session, which ``execute`` takes."""

    args: Any
    prompt: str
    images: list[Image]
    context: list[dict[str, Any]]
    names: list[str]


@magics_class
class ClaudeMagics(Magics):
    def __init__(self, shell: Any, ext: ClaudeExtension) -> None:
        super().__init__(shell)
        self.ext = ext
        #: The conversation ids ``%claude conversations`` last listed, in its numbering.
        self._listed: list[str] | None = None

    # -- %%claude -----------------------------------------------------------------------

    @cell_magic("claude")  # type: ignore[arg-type]  # IPython's decorator is untyped
    def claude_cell(self, line: str, cell: str) -> None:
        """Fallback when the input transformer did not run (e.g. ``run_cell_magic``)."""
        # Bad input raises UsageError here, in the caller's cell, before anything is scheduled
        # (inside a task it would only be an unretrieved task exception).
        plan = self.prepare(line, cell)
        # With a loop running (a kernel), the turn outlives this call, as a --bg turn does: its
        # failure cannot fail the cell (what fails after parsing, such as the CLI refusing -m,
        # is shown by schedule). Without one (terminal IPython), schedule runs it to the end.
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            detached = False
        else:
            detached = True
        self.ext.schedule(self.execute(plan, detached=detached))

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
                await session.set_model(args.model)
            except ByreError as e:
                raise UsageError(f"-m {args.model}: {e}") from None
        if args.effort:
            try:
                await session.set_effort(args.effort)
            except ByreError as e:
                raise UsageError(f"-e {args.effort}: {e}") from None
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
        # Told now, in the cell's own run: the frontend opens a turn only while the cell runs
        # (a --bg turn goes on after it), and refuses edits and runs outside one.
        turn = announce_turn(self.ext.shell, self.ext.cell_id())
        if args.bg:
            self.ext.schedule(turn.around(run_turn(self.ext, request)))
            return
        await turn.around(run_turn(self.ext, request))

    # -- %claude ------------------------------------------------------------------------

    @line_magic("claude")  # type: ignore[arg-type]
    def claude_line(self, line: str) -> Any:
        """%claude SUBCOMMAND [ARGS]: sessions, model, new, stop, close, conversations, resume,
        usage, commands, context, transcript, permissions, history, undo, checkout, doctor, help
        (``%claude SUB --help``)."""
        try:
            words = shlex.split(line)
        except ValueError as e:
            raise UsageError(f"%claude: {e}") from None
        command, rest = (words[0], words[1:]) if words else ("help", [])
        parser = SUBCOMMANDS.get(command)
        if parser is None:
            raise UsageError(
                f"%claude: unknown subcommand {command!r}. Try: {', '.join(SUBCOMMANDS)}"
            )
        # Everything is parsed and checked before any handler runs, so bad input changes
        # nothing (a handler may create a session).
        try:
            args = parser.parse_args(rest)
        except _HelpShown:
            return None
        return self._handlers()[command](args)

    def _handlers(self) -> dict[str, Callable[[argparse.Namespace], Any]]:
        """What runs each subcommand (one entry per parser in SUBCOMMANDS)."""
        return {
            "sessions": self._cmd_sessions,
            "model": self._cmd_model,
            "new": self._cmd_new,
            "stop": self._cmd_stop,
            "close": self._cmd_close,
            "conversations": self._cmd_conversations,
            "resume": self._cmd_resume,
            "usage": self._cmd_usage,
            "commands": self._cmd_commands,
            "context": self._cmd_context,
            "transcript": self._cmd_transcript,
            "permissions": self._cmd_permissions,
            "history": self._cmd_history,
            "undo": self._cmd_undo,
            "checkout": self._cmd_checkout,
            "doctor": self._cmd_doctor,
            "help": self._cmd_help,
        }

    def _existing(self, name: str) -> Any:
        session = self.ext.conversations.peek(name)
        if session is None:
            raise UsageError(f"no session named {name!r}; see %claude sessions")
        return session

    def _cmd_help(self, args: argparse.Namespace) -> None:
        if args.subcommand is not None:
            parser = SUBCOMMANDS.get(args.subcommand)
            if parser is None:
                raise UsageError(
                    f"%claude help: unknown subcommand {args.subcommand!r}. "
                    f"Try: {', '.join(SUBCOMMANDS)}"
                )
            parser.print_help()
            return
        usages = [
            (p.format_usage().removeprefix("usage: ").strip(), p.description or "")
            for p in SUBCOMMANDS.values()
        ]
        if self.ext.frontend() == "terminal":
            print("\n".join(f"{u}\n    {d}" for u, d in usages))
            return
        rows = "".join(
            f"<tr><td><code>{html.escape(u)}</code></td><td>{html.escape(d)}</td></tr>"
            for u, d in usages
        )
        display(HTML(f"<table>{rows}</table>"))

    def _show(self, markdown: str) -> None:
        """A Markdown table in a notebook; its text in terminal IPython (where a Markdown
        object would print as ``<IPython.core.display.Markdown object>``)."""
        if self.ext.frontend() == "terminal":
            print(markdown)
        else:
            display(Markdown(markdown))

    def _cmd_sessions(self, args: argparse.Namespace) -> None:
        lines = [
            "| session | state | model | mode | effort | conversation | turns | cost |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for entry in self.ext.conversations:
            s, paid = entry.session, entry.ledger
            state = (
                "closed" if s.closed else "busy" if s.busy else "running" if s.running else "idle"
            )
            model = html.escape(model_label(s.model)).replace("|", "\\|").replace("`", "\\`")
            # The mode in force (a switch changes it at once; docs/security.md).
            mode = PermissionMode.of(s.permission_mode) or PermissionMode.DEFAULT
            lines.append(
                f"| {s.name} | {state} | {model} | {mode} | {s.effort or 'default'} | "
                f"`{(s.session_id or '').replace('`', '')}` | "
                f"{paid.turns} | {dollars(paid.cost_usd, scripted=paid.scripted)} |"
            )
        if len(lines) == 2:
            lines.append("| *(none yet: run a %%claude cell)* | | | | | | | |")
        self._show("\n".join(lines))

    def _cmd_model(self, args: argparse.Namespace) -> str | None:
        session = self.ext.session(args.session)
        if args.model is None:
            return model_label(session.model)
        # set_model maps the name (model_option) and switches a running CLI, on the loop.
        self.ext.schedule(session.set_model(args.model))
        return None

    def _cmd_new(self, args: argparse.Namespace) -> None:
        self.ext.session(args.name, new=True)
        print(f"session {args.name!r}: fresh conversation")

    def _cmd_stop(self, args: argparse.Namespace) -> None:
        session = self._existing(args.name)
        if not session.busy:
            print(f"session {session.name!r} is idle")
            return
        self.ext.schedule(session.interrupt())

    def _cmd_close(self, args: argparse.Namespace) -> None:
        self._existing(args.name)
        self.ext.schedule(self.ext.conversations.drop(args.name))

    def _cmd_conversations(self, args: argparse.Namespace) -> None:
        limit = None if args.all else LISTED
        found = self.ext.cli_conversations(None if limit is None else limit + 1)
        shown = found[:limit]
        self._listed = [c.session_id for c in shown]
        if not shown:
            print(f"The CLI has no conversation in {self.ext.cwd()} yet.")
            return
        self._show(conversations_table(shown, time.time(), more=len(found) > len(shown)))

    def _cmd_resume(self, args: argparse.Namespace) -> None:
        name, wanted = args.name, args.id
        if name.startswith("#"):  # resume #N: the default session
            if wanted is not None:
                SUBCOMMANDS["resume"].error("the session comes first: resume [NAME] #N")
            name, wanted = "default", name
        if args.notebook is not None:
            if wanted is not None:
                raise UsageError("%claude resume: give an ID or --from NOTEBOOK, not both")
            self._resume_from(name, args.notebook)
            return
        if wanted is not None and wanted.startswith("#"):
            wanted = self._picked(wanted)
        session = self.ext.resume(name, wanted)
        print(f"session {name!r} resumes conversation {session.session_id}")

    def _picked(self, pick: str) -> str:
        """The conversation ``#N`` names: in the last ``%claude conversations``, or in a
        fresh listing numbered the same way when there was none."""
        number = pick[1:]
        if not (number.isascii() and number.isdigit()):
            raise UsageError(f"%claude resume: {pick!r} is no number; write #N, e.g. #2")
        listed = self._listed
        if listed is None:
            listed = [c.session_id for c in self.ext.cli_conversations(None)]
        n = int(number)
        if not 1 <= n <= len(listed):
            have = f"#1 to #{len(listed)}" if listed else "none"
            raise UsageError(
                f"%claude resume: no conversation {pick} in the listing ({have}); "
                "see %claude conversations (--all for every one)"
            )
        return listed[n - 1]

    def _resume_from(self, name: str, notebook: str) -> None:
        """``%claude resume --from NOTEBOOK [NAME]``: the conversation a notebook saved with
        ``Claude.portable`` (app/portable.py checks and restores it)."""
        try:
            session, restored = self.ext.resume_from(notebook, name)
        except PortableError as e:
            raise UsageError(f"%claude resume --from: {e}") from None
        where = "written to" if restored.written else "already in"
        print(
            f"session {name!r} resumes conversation {session.session_id} from {notebook} "
            f"(its session file {where} {restored.path})"
        )

    def _cmd_usage(self, args: argparse.Namespace) -> None:
        lines = [
            "| session | turns | cost (USD) | input tokens | output tokens |",
            "|---|---|---|---|---|",
        ]
        # Every turn paid for under the name, abandoned branches included; input tokens as
        # the footer counts them (TokenUsage.input).
        for entry in self.ext.conversations:
            paid = entry.ledger
            lines.append(
                f"| {entry.name} | {paid.turns} | {usd(paid.cost_usd, paid.scripted, unit='')} | "
                f"{paid.tokens.input} | {paid.tokens.output} |"
            )
        # The kernel's sum, closed names included: what Claude.kernel_budget_usd caps.
        spent, budget = self.ext.conversations.spent, self.ext.config.kernel_budget_usd
        cap = "no cap" if budget is None else f"{budget:.4f} USD"
        lines += [
            "",
            f"This kernel: {spent.turns} turn(s), "
            f"{usd(spent.cost_usd, spent.scripted)} in all (closed "
            f"sessions included); `Claude.kernel_budget_usd`: {cap}.",
        ]
        self._show("\n".join(lines))

    def _cmd_commands(self, args: argparse.Namespace) -> None:
        session = self.ext.session(args.session)
        commands = session.commands
        if not commands:
            print(
                f"The CLI of session {args.session!r} lists its commands when it starts: run a "
                "%%claude cell first (a prompt such as /context starts it without the model)."
            )
            return
        init = session.last_init
        skills = set(init.skills) if init is not None else set()
        lines = ["| command | what it does | kind |", "|---|---|---|"]
        for c in commands:
            usage = f"/{c.name} {c.argument_hint}".rstrip()
            kind = "skill" if c.name in skills else "built in" if c.builtin else "custom"
            # Descriptions come from files in the project (.claude/commands): untrusted text.
            lines.append(f"| {inert_line(usage)} | {inert_line(c.description)} | {kind} |")
        self._show("\n".join(lines))

    def _cmd_context(self, args: argparse.Namespace) -> None:
        session = self.ext.session(args.session)
        fill = session.context.fill
        if fill.used:
            share = f" ({fill.percent:.0f}% of the window)" if fill.percent is not None else ""
            figures = f"context of session {args.session!r}: {context_meter(fill)} tokens{share}."
        else:
            figures = f"Session {args.session!r} has no answer yet: its context is not measured."
        if not session.running or session.busy or self.ext.frontend() == "terminal":
            # The breakdown is the CLI's to count (through the API): only from a running,
            # idle CLI, and only where the answer can replace the line later.
            print(f"{figures}\nA %%claude cell with /context shows the CLI's breakdown.")
            return
        handle = display(Markdown(inert_line(figures)), display_id=True)

        async def breakdown() -> None:
            try:
                usage = parse_context_usage(await session.get_context_usage())
            except ByreError as e:
                handle.update(
                    Markdown(f"{inert_line(figures)}\n\n{inert_line(f'No breakdown: {e}')}")
                )
                return
            handle.update(Markdown(f"{inert_line(figures)}\n\n{context_table(usage)}"))

        self.ext.schedule(breakdown())

    def _cmd_transcript(self, args: argparse.Namespace) -> None:
        from ..ui import terminal_text

        entry = self.ext.conversations.entry(args.name)
        view = entry.last_view if entry is not None else None
        if view is None:
            raise UsageError(f"no turn yet in session {args.name!r}")
        print(terminal_text(view, max_lines=10_000))

    def _cmd_permissions(self, args: argparse.Namespace) -> None:
        session = self._existing(args.name)
        approvals = self.ext.approvals
        rules = approvals.clear(session.session_id) if args.clear else approvals.allowed(session)
        who = f"session {session.name!r}"
        if not rules:
            print(
                f"{who}: nothing was always allowed"
                if args.clear
                else f"{who}: nothing is always allowed (every tool asks)"
            )
            return
        count = f"{len(rules)} rule" if len(rules) == 1 else f"{len(rules)} rules"
        head = (
            f"{who}: cleared {count}; what they covered asks again:"
            if args.clear
            else f"{who}: always allowed in this conversation ({count}):"
        )
        print("\n".join([head, *allowance_lines(rules)]))

    def _cmd_history(self, args: argparse.Namespace) -> None:
        tree = self.ext.conversations.tree(args.name)
        if tree is None or not tree.turns:
            raise UsageError(f"no turn yet in session {args.name!r}")
        display(render_history(args.name, tree), raw=True)
        edited = self.ext.approvals.edit_log.turns(args.name)
        if edited:
            lines = [line for entry in edited for line in turn_lines(entry)]
            print("Cells each turn changed (%claude undo #N takes one back):", *lines, sep="\n")

    def _cmd_undo(self, args: argparse.Namespace) -> None:
        # Reached only when the transformer did not make the cell an async one (the line is
        # not alone in its cell, or run_line_magic): the review must await a click.
        raise UsageError(
            "%claude undo runs alone in a cell of its own (it waits for your review there)"
        )

    async def undo(self, line: str) -> None:
        """What a transformed ``%claude undo`` cell awaits (magics/transform.py)."""
        try:
            args = SUBCOMMANDS["undo"].parse_args(shlex.split(line))
        except ValueError as e:  # an unclosed quote
            raise UsageError(f"%claude undo: {e}") from None
        except _HelpShown:
            return
        log = self.ext.approvals.edit_log
        # Told first, in the cell's own run: the frontend takes the edit only inside a turn
        # of a %claude undo cell the user ran (labextension/src/gate.ts).
        turn = announce_turn(self.ext.shell, self.ext.cell_id())
        try:
            prepared = await prepare_undo(
                log, args.session, args.turn, bridge_of(self.ext.shell), turn.cell
            )
            entry = prepared.entry
            about = f" ({entry.prompt!r})" if entry.prompt else ""
            print(f"Undo {entry.label} of session {entry.session!r}{about}:")
            for why in prepared.plan.refused:
                print(f"- left as it is: {why}")
            outcome = await apply_undo(log, prepared, self._review)
        finally:
            turn.end()
        print(outcome.text)

    async def _review(self, tool_input: Mapping[str, Any]) -> Decision:
        """The edit review card (ui/edit_card.py through the approval card), without
        *Always allow*: an undo is one act, not a rule. Closed once answered: the cell keeps
        the plain lines that say what happened, which read without a kernel."""
        made: list[Any] = []

        def own(widget: Any) -> Any:
            made.append(widget)
            return widget

        card = ApprovalCard(EDIT_TOOL, tool_input, loop=asyncio.get_running_loop(), own=own)
        card.always.layout.display = "none"
        card.scope.layout.display = "none"
        if card.scope_menu is not None:
            card.scope_menu.layout.display = "none"
        handle = display(card.widget, display_id=True)
        try:
            return await card.decision
        except asyncio.CancelledError:
            card.reject("the cell was interrupted")
            raise
        finally:
            # The diff stays as text (a saved notebook has no widget state for the card).
            shown = review_text(tool_input)
            text = "\n\n".join(shown) if shown is not None else "The undo's edits."
            handle.update({"text/plain": text}, raw=True)
            for widget in made:
                widget.close()

    def _cmd_checkout(self, args: argparse.Namespace) -> None:
        name = args.session
        tree = self.ext.conversations.tree(name)
        if tree is None or not tree.turns:
            raise UsageError(f"no turn yet in session {name!r}")
        try:
            node = find_turn(tree, args.turn)
        except LookupError as e:
            raise UsageError(f"%claude checkout: {e}") from None
        session = self._existing(name)
        if session.busy:
            raise UsageError(f"session {name!r} is running a turn; stop it first")
        self.ext.conversations.checkout(name, node)
        where = f"turn #{node.number} {node.label()}" if node is not None else "the start"
        print(f"session {name!r} continues after {where}")

    def _cmd_doctor(self, args: argparse.Namespace) -> None:
        self._show(doctor_report(self.ext))


def context_table(usage: ContextUsage) -> str:
    """The CLI's context breakdown as a Markdown table (category names are the CLI's, made
    inert all the same: an MCP server names its own tools' category)."""
    lines = ["| category | tokens | share |", "|---|---|---|"]
    for c in usage.categories:
        share = f"{100 * c.tokens / usage.window:.1f}%" if usage.window else ""
        lines.append(f"| {inert_line(c.name)} | {short_tokens(c.tokens)} | {share} |")
    window = f" of {short_tokens(usage.window)}" if usage.window else ""
    lines.append(f"| **total** | {short_tokens(usage.total)}{window} | |")
    return "\n".join(lines)


def conversations_table(found: list[CliConversation], now: float, *, more: bool) -> str:
    """``%claude conversations`` as Markdown. First prompts and names come from files anyone
    may have written (a prompt pasted from a web page, a hand-edited index): inert text."""
    lines = ["| # | when | first prompt | turns | cost | from |", "|---|---|---|---|---|---|"]
    for number, c in enumerate(found, 1):
        when = f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(c.mtime))} ({ago(now - c.mtime)})"
        prompt = inert_line(preview(c.first_prompt)) if c.first_prompt else "*(none read)*"
        turns = str(c.turns) if c.complete else f"≥ {c.turns}"
        known = c.cost_usd is not None or c.scripted
        cost = dollars(c.cost_usd, scripted=c.scripted) if known else ""
        lines.append(
            f"| {number} | {when} | {prompt} | {turns} | {cost} | {origin_text(c.origin)} |"
        )
    if more:
        lines += ["", f"The newest {len(found)}; `%claude conversations --all` lists every one."]
    lines += ["", "`%claude resume [NAME] #N` continues number N."]
    return "\n".join(lines)


def preview(text: str) -> str:
    """One line of at most :data:`PREVIEW_CHARS` characters."""
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


def ago(seconds: float) -> str:
    """A rough age: "just now", "5 min ago", "2 h ago", "3 days ago"."""
    if seconds < 60:
        return "just now"
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''} ago"
    return "just now"


def origin_text(origin: Origin) -> str:
    if origin.session is None:
        return "terminal"
    session = f"session {inert_line(origin.session)}"
    if origin.here:
        return f"this notebook, {session}"
    if origin.notebook is not None:
        return f"notebook {inert_line(origin.notebook)}, {session}"
    return f"byre in this folder, {session}"


def dollars(amount: float | None, *, scripted: bool = False) -> str:
    """A cost for Markdown (``format_cost``). The ``$`` is escaped: Jupyter reads two bare
    ``$`` in one paragraph (two rows of a table) as LaTeX, and the row turns into italic maths."""
    return format_cost(amount, scripted=scripted).replace("$", "\\$")


def usd(amount: float, scripted: bool, *, unit: str = " USD") -> str:
    """``0.0123 USD`` (``%claude usage``), marked when the scripted model answered
    (``SCRIPTED_COST``, as ``format_cost`` marks it)."""
    return f"{amount:.4f}{unit}" + (f" {SCRIPTED_COST}" if scripted else "")


def doctor_report(ext: ClaudeExtension) -> str:
    frontend = ext.frontend()
    # A plain dict lookup of a str: nothing of the user's runs (app/context.py reads it so too).
    vscode = type(ext.shell.user_ns.get("__vsc_ipynb_file__")) is str
    bridge = bridge_check(bridge_of(ext.shell), frontend, vscode)
    checks = doctor_checks(
        ext.config.cli_path, {**os.environ, **ext.config.env}, frontend, bridge, read_policy()
    )
    return render_checks(checks)
