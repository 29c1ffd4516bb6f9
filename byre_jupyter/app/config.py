"""``Claude``: the traitlets configuration of the notebook integration.

Settable with ``%config Claude.model = "sonnet"`` in a notebook or ``c.Claude.model = ...`` in
``ipython_config.py``. Every trait is read when a session is created (and ``model``,
``permission_mode`` and ``effort`` are pushed to running sessions when changed). Two
environment variables set defaults, for runs where no config file is at hand (CI, tests, a
kernel started by a script): ``BYRE_LIVE`` (``live``) and ``BYRE_STATE_DIR`` (``state_dir``); a
trait set explicitly wins.

Which traits a CLI is launched with is not listed here but read from the launch options
(``transport/launch.py``: each :class:`~byre_jupyter.transport.launch.LaunchOptions` field names
its trait): :data:`LAUNCH_TRAITS` and :func:`launch_settings`.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from traitlets import (
    Bool,
    Dict,
    Enum,
    Float,
    Int,
    List,
    TraitError,
    Unicode,
    Union,
    default,
    validate,
)
from traitlets.config import Configurable

from ..errors import ByreWarning
from ..protocol import EFFORT_LEVELS, PERMISSION_MODES, PermissionMode
from ..tools.policy import tool_list
from ..tools.registry import read_tool_names
from ..transport.launch import Setting, launch_fields
from .hostspares import on_hub
from .policy import mode_refusal, read_policy

__all__ = ["LAUNCH_TRAITS", "Claude", "launch_settings"]

#: The tools ``read_tools`` gates, as its help names them (from their records).
_READ_TOOLS = tool_list([f"`{name}`" for name in read_tool_names()])


class Claude(Configurable):
    """Claude Code in Jupyter (byre_jupyter)."""

    def __init__(self, **kwargs: Any) -> None:
        # While the configuration files are applied, a mode the managed settings forbid is
        # dropped with a warning (an error there would stop %load_ext); later it is refused.
        self._configuring = True
        super().__init__(**kwargs)
        self._configuring = False

    cli_path = Unicode(
        None, allow_none=True,
        help="Path of the `claude` executable. Default: $BYRE_CLAUDE_PATH, then `claude` on PATH.",
    ).tag(config=True)  # fmt: skip
    model = Unicode(
        None, allow_none=True, help="Model for new sessions (alias like 'sonnet' or a full id)."
    ).tag(config=True)
    permission_mode = Enum(
        PERMISSION_MODES, default_value="default",
        help="How the CLI asks before tools run (a change is in force at once, docs/security.md):"
        + "".join(f"\n  {mode.value}: {mode.meaning}" for mode in PermissionMode),
    ).tag(config=True)  # fmt: skip
    effort = Enum(
        EFFORT_LEVELS, default_value=None, allow_none=True,
        help="Effort level of the model (--effort): low, medium, high, xhigh or max; None: the "
        "model's default. Changing it also switches running sessions, from their next request; "
        "the header's effort menu and `%%claude -e LEVEL` switch one session.",
    ).tag(config=True)  # fmt: skip
    fallback_model = Unicode(
        None, allow_none=True,
        help="Models to fall back to when the main model is busy or unavailable "
        "(--fallback-model; comma-separated, in order).",
    ).tag(config=True)  # fmt: skip
    max_budget_usd = Float(
        None, allow_none=True, min=0.0,
        help="The CLI's own spending cap in US dollars (--max-budget-usd), counted over the "
        "conversation as the CLI counts its cost (a resumed one goes on from its total): the "
        "turn that reaches it stops, and the cell says so; later turns stop at once. None: "
        "no cap.",
    ).tag(config=True)  # fmt: skip
    add_dirs = List(
        Unicode(), help="More directories Claude's file tools may access (--add-dir)."
    ).tag(config=True)
    allowed_tools = List(
        Unicode(),
        help="Tools (and rules such as 'Bash(git *)') allowed without asking (--allowedTools).",
    ).tag(config=True)
    disallowed_tools = List(
        Unicode(), help="Tools (and rules such as 'Bash(rm *)') denied (--disallowedTools)."
    ).tag(config=True)
    agents = Dict(
        key_trait=Unicode(), value_trait=Dict(),
        help="Custom subagents by name, e.g. {'reviewer': {'description': 'Reviews code', "
        "'prompt': 'You review code.'}} (--agents, as JSON).",
    ).tag(config=True)  # fmt: skip
    plugin_dirs = List(
        Unicode(), help="Plugin directories or .zip files loaded for these sessions (--plugin-dir)."
    ).tag(config=True)
    cwd = Unicode(
        None, allow_none=True, help="Working directory of the CLI. Default: the kernel's cwd."
    ).tag(config=True)
    env = Dict(
        key_trait=Unicode(), value_trait=Unicode(),
        help="Extra environment variables for the CLI (added to the kernel's environment).",
    ).tag(config=True)  # fmt: skip
    extra_args = List(Unicode(), help="Extra command-line arguments for the CLI.").tag(config=True)
    live = Union(
        [Bool(), Enum(["auto"])],
        help="Live widgets while a turn runs: True, False, or 'auto' (only in a JupyterLab/"
        "Notebook frontend; headless runs such as nbclient or papermill get static output only). "
        "Default: $BYRE_LIVE when it is 1 (True) or 0 (False), else 'auto'.",
    ).tag(config=True)  # fmt: skip

    @default("live")
    def _live_default(self) -> bool | str:
        return {"1": True, "0": False}.get(os.environ.get("BYRE_LIVE", ""), "auto")

    state_dir = Unicode(
        help="Folder of byre_jupyter's own state: sessions.json, the conversation each session "
        "name last had in each folder and notebook (what `%claude resume` continues). "
        "Default: $BYRE_STATE_DIR, else ~/.byre_jupyter.",
    ).tag(config=True)

    @default("state_dir")
    def _state_dir_default(self) -> str:
        return os.environ.get("BYRE_STATE_DIR") or "~/.byre_jupyter"

    python_tool = Enum(
        ["ask", "allow", "deny"], default_value="ask",
        help="Claude's in-kernel `python` tool: ask before each run, allow, or deny.",
    ).tag(config=True)  # fmt: skip
    headless_permission = Enum(
        ["deny", "allow"], default_value="deny",
        help="Answer to permission prompts when nobody can click (headless runs).",
    ).tag(config=True)  # fmt: skip
    headless_questions = Enum(
        ["proceed", "deny"], default_value="proceed",
        help="Claude's questions (AskUserQuestion) when nobody can click (headless runs): "
        "'proceed' answers that nobody can answer and that Claude should go on with its best "
        "judgement; 'deny' refuses the question. The output records the questions either way.",
    ).tag(config=True)  # fmt: skip
    headless_plans = Enum(
        ["deny", "approve"], default_value="deny",
        help="Claude's plan (ExitPlanMode, plan mode) when nobody can click (headless runs): "
        "'deny' keeps plan mode, so nothing is changed unattended, and tells Claude the plan "
        "is recorded in the output; 'approve' continues in the default mode. The output "
        "records the plan either way.",
    ).tag(config=True)  # fmt: skip
    on_error = Enum(
        ["raise", "show"], default_value="raise",
        help="A failed turn (API error, no CLI, not logged in): 'raise' ends the cell with a "
        "short error after its output, so Run All, nbclient and papermill stop there as for any "
        "failing cell; 'show' only shows the error and the cell stays ok.",
    ).tag(config=True)  # fmt: skip
    interrupt_grace = Float(
        3.0, help="Seconds a turn may take to end after Stop or ■ before the CLI is killed."
    ).tag(config=True)
    transcripts = Unicode(
        None, allow_none=True,
        help="Folder to write a transcript per session ({dir, msg} lines); None: off.",
    ).tag(config=True)  # fmt: skip
    max_line_mb = Int(64, help="Largest stdout line accepted from the CLI, in MiB.").tag(
        config=True
    )
    env_drop = List(
        Unicode(),
        help="Environment variables withheld from the CLI, as names or globs ('OPENAI_*'), in "
        "addition to Jupyter's own credentials, which are always dropped: JUPYTER_TOKEN, "
        "JUPYTER_TOKEN_FILE, JPY_API_TOKEN, JPY_COOKIE_SECRET, JUPYTERHUB_*TOKEN*, "
        "JUPYTERHUB_*SECRET*, JUPYTERHUB_*COOKIE*, JUPYTERHUB_*KEY*, CONFIGPROXY_AUTH_TOKEN, "
        "JUPYTER_GATEWAY_AUTH_TOKEN, JUPYTER_GATEWAY_HTTP_PWD, JUPYTER_GATEWAY_HEADERS, "
        "JUPYTER_GATEWAY_CLIENT_KEY. To pass one of those on anyway, set it in Claude.env "
        "(an entry there always wins), e.g. `%config Claude.env = {'JUPYTERHUB_API_TOKEN': "
        "os.environ['JUPYTERHUB_API_TOKEN']}`.",
    ).tag(config=True)
    max_saved_images_mb = Float(
        5.0, min=0.0,
        help="Most image data one turn saves into the notebook, in MB, all its images together "
        "(tool results, attachments). An image that does not fit is downscaled when Pillow is "
        "installed, otherwise replaced by a note with its type and size. 0 saves no images.",
    ).tag(config=True)  # fmt: skip
    read_tools = Enum(
        ["allow", "ask", "deny"], default_value="allow",
        help=f"Claude's read tools on the kernel ({_READ_TOOLS}): allow, ask before each call (as "
        "`python_tool`), or deny. They never run the user's code and show credentials as "
        "[redacted].",
    ).tag(config=True)  # fmt: skip
    rerun = Enum(
        ["branch", "append"], default_value="branch",
        help="Running a %%claude cell again: 'branch' continues from the state before the "
        "cell's earlier run (its old answer and later cells are out of the context; their "
        "outputs get a mark), 'append' adds the turn to the end of the conversation. Only "
        "frontends that send a cellId (JupyterLab, Notebook 7, VS Code) can branch.",
    ).tag(config=True)  # fmt: skip
    notebook_prompt = Bool(
        True,
        help="Tell Claude it runs in a Jupyter kernel (--append-system-prompt): the notebook's "
        "path when known, the in-kernel tools and when to prefer them over Bash `python -c`, "
        "and that code for the user goes in fenced blocks.",
    ).tag(config=True)
    guard_notebook = Bool(
        True,
        help="Deny Claude's Write/Edit/MultiEdit/NotebookEdit of the notebook open in the "
        "editor (a PreToolUse hook; the model is told why), so it never conflicts with the "
        "user's unsaved changes.",
    ).tag(config=True)
    prewarm = Bool(
        True,
        help="Start the default session's CLI in the background when the extension loads, so "
        "the first %%claude cell does not wait for it. A failure there stays silent until a "
        "cell needs the CLI (and reports it).",
    ).tag(config=True)
    speculate = Bool(
        True,
        help="Keep up to two spare CLI processes started, idle, when a turn ends: one forked "
        "where re-running the newest %%claude cell branches, one fresh for a new conversation "
        "(--new, -s NEW, %claude new), so those need not wait for a CLI to start. When you "
        "start editing an earlier %%claude cell (JupyterLab / Notebook 7, through the "
        "frontend bridge), the fork is made where its re-run branches instead. A spare never "
        "sends a request to the API and is closed when it cannot be used. Off with "
        "Claude.transcripts set.",
    ).tag(config=True)  # fmt: skip
    host_spares = Int(
        None,
        allow_none=True,
        help="The most idle spare CLIs (Claude.speculate) that all the kernels of this host "
        "keep together, across users where they share /tmp ($BYRE_HOST_SPARES_DIR, else "
        "/tmp/byre-spares); None: no bound but each kernel's own two. Default: 2 in a "
        "JupyterHub user's server (its JUPYTERHUB_* variables), else None. An admin sets it "
        "for every user in a system-wide IPython config (docs/hub.md); 0 turns spares off.",
    ).tag(config=True)
    spare_min_free_mb = Int(
        1024,
        help="Start no spare CLI (each is about 180 MiB) while the host has less memory "
        "available than this, in MiB (MemAvailable in /proc/meminfo).",
    ).tag(config=True)

    @default("host_spares")
    def _host_spares_default(self) -> int | None:
        return 2 if on_hub(os.environ) else None

    portable = Bool(
        False,
        help="Save what another machine needs to continue the conversation in the notebook: "
        "the newest turn's output carries the conversation of the CLI's session file (no "
        "instruction files, system prompt, paths of this machine or OS details; redacted, "
        "gzipped: about 1 kB for a short turn), and `%claude resume --from NOTEBOOK.ipynb` "
        "continues it elsewhere. Off by default: the conversation holds every tool output and "
        "file content Claude saw.",
    ).tag(config=True)
    portable_max_kb = Int(
        2048, min=0,
        help="Largest portable record one turn saves, in kB (gzipped, base64). A larger "
        "conversation saves none, and the turn says so.",
    ).tag(config=True)  # fmt: skip

    # -- the administrator's rules and the kernel's spend (app/policy.py, docs/hub.md) -----

    @validate("permission_mode")
    def _allowed_mode(self, proposal: Any) -> str:
        """A mode this machine's managed settings forbid is refused, naming the setting and
        its file: the CLI would start in another mode without a word (docs/hub.md)."""
        mode = str(proposal["value"])
        # The mode in force: under hold_trait_notifications (config files, %config) the
        # proposed value is already stored when this runs.
        current = getattr(self, "_mode_in_force", "default")
        refusal = mode_refusal(read_policy(), mode, current)
        if refusal is None:
            self._mode_in_force = mode
            return mode
        if getattr(self, "_configuring", True):
            warnings.warn(refusal, ByreWarning, stacklevel=2)
            return current
        raise TraitError(refusal)

    kernel_budget_usd = Float(
        None, allow_none=True, min=0.0,
        help="Most this kernel's %%claude turns may cost together, in USD: every session, "
        "every conversation and branch (what `%claude usage` sums, closed sessions included). "
        "Checked before each turn is sent: once reached, a turn sends nothing and its cell "
        "fails with what was spent and how to raise the cap. None: no cap. A turn already "
        "running is not cut short.",
    ).tag(config=True)  # fmt: skip


def _trait_fields() -> list[tuple[str, Setting]]:
    settings = [(option.name, option.metadata["launch"]) for option in launch_fields()]
    return [(name, setting) for name, setting in settings if setting.trait is not None]


#: The traits the launch options name: a CLI started before one of them changed was started
#: with the old value.
LAUNCH_TRAITS = tuple(setting.trait for _, setting in _trait_fields() if setting.trait)


def launch_settings(config: Claude) -> dict[str, Any]:
    """The launch options the ``Claude`` traits set, by field name (``max_line_mb`` as
    ``max_line_bytes``...)."""
    return {
        name: setting.from_trait(getattr(config, setting.trait))
        for name, setting in _trait_fields()
        if setting.trait is not None
    }
