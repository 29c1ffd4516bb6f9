"""What a turn cost and how many tokens it used, computed once, and the sums users see.

The CLI's result line carries ``total_cost_usd``, a *running* total of its conversation, and
``usage``, this turn's tokens (``docs/protocol.md``). :class:`CostMeter` turns the running total
into each turn's own cost, once, where the result arrives (the session); the turn's
:class:`~byre_jupyter.session.TurnResult` carries that cost and the typed tokens to every floor
above (the view's footer, the conversation tree, ``%claude usage``), which only show it.

A :class:`Ledger` sums the turns of one named conversation. The notebook keeps one per session
name across the session swaps that re-running a cell makes (each branch is a new session and a
new CLI process), so every turn paid for is in it, abandoned branches included. Each name's
ledger also adds into its ``parent``, the kernel's: what the kernel's spending cap
(``Claude.kernel_budget_usd``) is checked against, which a closed session name still counts in.

:func:`format_cost` is the one way a cost reads to the user (footers, headers, ``%claude
usage``, history): ``$0.0123``; a turn of the scripted model (the offline demo) is marked as
such, so a price nobody paid never reads as spending.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..protocol import AssistantMessage, CompactBoundary, Message, ResultMessage, TokenUsage

__all__ = [
    "NO_COST",
    "SCRIPTED_COST",
    "ContextFill",
    "ContextGauge",
    "CostMeter",
    "Ledger",
    "format_cost",
    "short_tokens",
    "turn_cost",
]

#: The mark after a cost of byre's scripted API (the offline demo, the tests): the CLI prices
#: the scripted tokens as a model's, and nobody paid them; the figure stays, marked.
SCRIPTED_COST = "(scripted model)"
#: A cost the CLI did not report.
NO_COST = "$-"


@dataclass(frozen=True)
class ContextFill:
    """How full a conversation's context window is: ``used`` tokens of ``window`` (None
    until the CLI has named the model's window)."""

    used: int = 0
    window: int | None = None

    @property
    def percent(self) -> float | None:
        return 100.0 * self.used / self.window if self.window else None


def short_tokens(count: int) -> str:
    """``950``, ``13.4k``, ``200k``, ``1M``: a token count at a glance (the context meter, a
    compaction's notice), as Claude Code's own ``/context`` writes them."""
    for size, unit in ((1_000_000, "M"), (1_000, "k")):
        if count >= size:
            return f"{count / size:.1f}".removesuffix(".0") + unit
    return str(count)


def format_cost(amount: float | None, *, scripted: bool = False) -> str:
    """The one way a cost reads to the user: ``$0.0123``, four places (a turn often costs
    under a cent; plain text: a Markdown caller escapes the ``$``), :data:`NO_COST` for no
    figure, and :data:`SCRIPTED_COST` after it for a scripted run, which nobody paid."""
    text = NO_COST if amount is None else f"${amount:.4f}"
    return f"{text} {SCRIPTED_COST}" if scripted else text


class ContextGauge:
    """One session's reading of its context window, from the messages the CLI sends anyway
    (no request of its own: ``get_context_usage`` makes the CLI count tokens through the API).

    The size is the prompt of the newest top-level API message (fresh input + cache writes +
    cache reads, what the next request sends again) plus its output; a compaction sets it to
    the summary's size; the window is the one the CLI reports for that model in each result
    (``modelUsage[...].contextWindow``). Subagents' messages are their own contexts, and the
    ``<synthetic>`` answers of local commands (``/context``) have no usage: both are skipped."""

    def __init__(self) -> None:
        self.fill = ContextFill()
        self._model: str | None = None
        self._windows: dict[str, int] = {}

    def feed(self, message: Message) -> bool:
        """Read one message; True if the fill changed."""
        before = self.fill
        if isinstance(message, AssistantMessage):
            tokens = message.tokens
            if message.parent_tool_use_id is None and tokens.input:
                self._model = message.model
                self.fill = ContextFill(
                    tokens.total, self._windows.get(message.model, self.fill.window)
                )
        elif isinstance(message, CompactBoundary) and message.post_tokens is not None:
            self.fill = ContextFill(message.post_tokens, self.fill.window)
        elif isinstance(message, ResultMessage) and message.context_windows:
            self._windows.update(message.context_windows)
            window = self._windows.get(self._model or "")
            if window is None and len(message.context_windows) == 1:
                (window,) = message.context_windows.values()
            self.fill = ContextFill(self.fill.used, window or self.fill.window)
        return self.fill != before


@dataclass
class Ledger:
    """The turns one conversation name has paid for: their number, cost and tokens."""

    turns: int = 0
    cost_usd: float = 0.0
    tokens: TokenUsage = field(default_factory=TokenUsage)
    #: Some turn was answered by byre's scripted API: the cost is the CLI pricing tokens
    #: nobody paid for, shown as such (``AssistantMessage.scripted``).
    scripted: bool = False
    #: A wider ledger every turn counts into as well (the kernel's, for all its names).
    parent: Ledger | None = field(default=None, repr=False, compare=False)

    def add(self, cost_usd: float | None, tokens: TokenUsage, *, scripted: bool = False) -> None:
        self.turns += 1
        self.cost_usd += cost_usd or 0.0
        self.tokens = self.tokens + tokens
        self.scripted = self.scripted or scripted
        if self.parent is not None:
            self.parent.add(cost_usd, tokens, scripted=scripted)


class CostMeter:
    """One session's reading of the CLI's running cost total, across its processes."""

    def __init__(self) -> None:
        #: (total, tokens) at the current process's previous result; None until it gave one.
        self._this_process: tuple[float, int] | None = None
        #: The same at the newest result of any process of this session.
        self._last_seen: tuple[float, int] | None = None

    def new_process(self) -> None:
        """A new CLI process: its running total starts from what it restores."""
        self._this_process = None

    def cost(self, result: ResultMessage) -> float | None:
        """This result's turn's own cost (None if the CLI gave no total)."""
        if result.total_cost_usd is None:
            return None
        cost = turn_cost(result, self._this_process, self._last_seen)
        self._this_process = self._last_seen = (result.total_cost_usd, _running_tokens(result))
        return cost


def _running_tokens(result: ResultMessage) -> int:
    """All tokens of the CLI's running per-model totals (``modelUsage``)."""
    return sum(t.total for t in result.model_usage.values())


def turn_cost(
    result: ResultMessage,
    this_process: tuple[float, int] | None,
    last_seen: tuple[float, int] | None = None,
) -> float:
    """The turn's own cost from the CLI's ``total_cost_usd``, which is a running total.

    Measured with CLI 2.1.328: the total grows over the turns of one process, and a process that
    resumes (or forks) a conversation starts from the total the CLI saved for it when an
    earlier process exited (its ``modelUsage`` token counts are restored with it).
    ``this_process`` is the (total, tokens) of the current process's previous result: then the
    difference is exact. For a process's first result: nothing restored (its token totals are
    this turn's) → the whole total; restored exactly what this session saw last
    (``last_seen``) → the difference; restored something else (the saved state of another
    process) → the restored share estimated by tokens.
    """
    total = float(result.total_cost_usd or 0.0)
    if this_process is not None:
        return max(0.0, total - this_process[0])
    tokens = _running_tokens(result)
    restored_tokens = tokens - result.tokens.total
    if tokens <= 0 or restored_tokens <= 0:
        return total
    if last_seen is not None and last_seen[1] == restored_tokens and last_seen[0] <= total:
        return total - last_seen[0]
    return total * (1 - restored_tokens / tokens)
