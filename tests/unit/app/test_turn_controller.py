"""The turn controller over MemoryTransport with a host and a surface of the test's own (no
kernel, no process): Stop, ■ (the cell's task cancelled), a queued cancel, an approval, a
failure, and the numbers a turn leaves behind (its own cost, the name's ledger across a
branch). The same turns with the real CLI in a real kernel: tests/integration/kernel/."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.memory_cli import Ask, Exit, FakeCLI, Item, Stall, assistant
from support.rig import tiny_png
from support.waiting import apoll

from byre_jupyter.app.conversation import Conversations
from byre_jupyter.app.failure import LOGIN_HELP, BudgetExceeded, CellInterrupted, TurnFailed
from byre_jupyter.app.inputs import resolve_image
from byre_jupyter.app.policy import MANAGED_DIR_ENV
from byre_jupyter.app.surfaces import SurfaceControls
from byre_jupyter.app.turns import TurnController, TurnRequest, run_turn
from byre_jupyter.errors import CLINotFoundError
from byre_jupyter.protocol import SCRIPTED_MESSAGE_ID
from byre_jupyter.protocol import image as protocol_image
from byre_jupyter.session import Allow, Deny, PermissionRequest, Session, TurnResult
from byre_jupyter.session.accounting import SCRIPTED_COST
from byre_jupyter.tools.edit_log import EditLog
from byre_jupyter.tools.notebook_edit import CellChange
from byre_jupyter.ui import TurnView, viewmodel
from byre_jupyter.ui.approval_card import ApprovalCard
from byre_jupyter.ui.blocks import BlockView
from byre_jupyter.ui.format import context_meter, footer_parts
from byre_jupyter.ui.record import static_outputs
from byre_jupyter.ui.viewmodel import StaleMark, UndoMark
from byre_jupyter.version import CLI_INSTALL, TESTED_CLI

BASH = Ask("can_use_tool", {"tool_name": "Bash", "input": {"command": "ls"}})


def result_line(
    total: float, usage: Mapping[str, int], model_usage: Mapping[str, int]
) -> dict[str, Any]:
    """A result as CLI 2.1.328 writes it: ``total_cost_usd`` and ``modelUsage`` are the
    process's running totals, ``usage`` this turn's own tokens (docs/protocol.md)."""
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "ok",
        "num_turns": 1,
        "duration_ms": 1,
        "total_cost_usd": total,
        "usage": dict(usage),
        "modelUsage": {"m": dict(model_usage)},
    }


class FakeSurface:
    """A cell's surface: counts what it is shown; approval cards are the approver's."""

    def __init__(self, host: FakeHost, view: TurnView, controls: SurfaceControls) -> None:
        self.host, self.view, self.controls = host, view, controls
        self.updates = 0
        self.finished: Mapping[str, Any] | None = None
        self.asked: list[str] = []
        #: Each record shown again: its stale mark then, and its extra metadata.
        self.restated: list[tuple[StaleMark | None, dict[str, Any]]] = []

    def set_models(self, models: Sequence[str], value: str | None) -> None:
        pass

    def update(self, changed: Sequence[BlockView]) -> None:
        self.updates += 1

    def finish(self, extra: Mapping[str, Any] | None = None) -> None:
        self.finished = dict(extra or {})

    def record(self) -> Callable[[Mapping[str, Any] | None], None]:
        return lambda extra: self.restated.append((self.view.stale, dict(extra or {})))

    def ask(self, tool_name: str, tool_input: Mapping[str, Any]) -> ApprovalCard | None:
        self.asked.append(tool_name)
        return None

    def reject_pending(self, reason: str) -> None:
        for answer in self.host.approver.open:
            if not answer.done():
                answer.set_result(Deny(reason))

    def show_permission_mode(self, mode: str) -> None:
        pass

    def show_effort(self, effort: str | None) -> None:
        self.shown_effort = effort


class FakeApprover:
    """Asks in the owner's cell, then waits for the test (or the cell's Stop) to answer."""

    def __init__(self) -> None:
        self.open: list[asyncio.Future[Allow | Deny]] = []
        self.owners: list[Any] = []

    async def decide(
        self, session: Session, owner: Any, request: PermissionRequest
    ) -> Allow | Deny:
        self.owners.append(owner)
        owner.card(request.tool_name, request.input)
        answer: asyncio.Future[Allow | Deny] = asyncio.get_running_loop().create_future()
        self.open.append(answer)
        return await answer


class Interrupts:
    def __init__(self) -> None:
        self.count = 0

    def interrupt(self) -> bool:
        self.count += 1
        return False


@dataclass
class Settings:
    max_saved_images_mb: float = 1.0
    interrupt_grace: float = 2.0
    portable: bool = False
    on_error: str = "raise"
    kernel_budget_usd: float | None = None


class Kernel:
    """What ``current_cell_id`` reads: the ``cellId`` of the running cell's request."""

    def __init__(self) -> None:
        self.cell: str | None = None

    def get_parent(self, channel: str = "shell") -> Mapping[str, Any]:
        return {"metadata": {"cellId": self.cell}} if self.cell else {}


@dataclass
class Shell:
    kernel: Kernel = field(default_factory=Kernel)
    #: Where the conversations read the running cell's In [n] (``input_hist_parsed``).
    history_manager: Any = None


class FakeHost:
    """A TurnHost (and the conversations' Host) over one scripted CLI."""

    def __init__(self, turns: Sequence[Sequence[Item]]) -> None:
        self.fake = FakeCLI(turns)
        self.config = Settings()
        self.approver = FakeApprover()
        self.python_runner = Interrupts()
        self.shell = Shell()
        self.ns: dict[str, Any] = {}
        self.remembered: list[str | None] = []
        self.surfaces: list[FakeSurface] = []
        self.tasks: set[asyncio.Task[Any]] = set()
        self.conversations = Conversations(self, self._new)

    @property
    def approvals(self) -> FakeApprover:
        return self.approver

    def _new(self, name: str, **options: Any) -> Session:
        return Session(name, transport_factory=self.fake.factory, **options)

    # -- the conversations' host --
    def session(self, name: str = "default", *, new: bool = False) -> Session:
        if new:
            return self.conversations.install(self._new(name), new=True)
        return self.conversations.get(name)

    def branch(self, name: str, conversation: str | None, at: str | None) -> Session:
        if conversation is None:
            session = self._new(name)
        else:
            session = Session(name, resume=conversation).fork(
                at=at, name=name, transport_factory=self.fake.factory
            )
        old = self.conversations.peek(name)
        if old is not None:
            self.schedule(old.close())
        return self.conversations.install(session, new=False)

    def rerun_mode(self) -> str:
        return "branch"

    # -- the turn's host --
    def schedule(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def remember(self, session: Session, result: TurnResult) -> None:
        self.remembered.append(result.session_id)

    def speculate(self, name: str) -> None:
        pass  # spares: tests/unit/app/test_spares.py

    def namespace(self) -> dict[str, Any]:
        return self.ns

    def surface(self, view: TurnView, controls: SurfaceControls) -> FakeSurface:
        surface = FakeSurface(self, view, controls)
        self.surfaces.append(surface)
        return surface

    def portable_record(self, session_id: str) -> dict[str, Any]:
        return {"session_id": session_id}

    def cell_id(self) -> str | None:
        cell: str | None = self.shell.kernel.cell
        return cell

    def secrets(self) -> set[str]:
        return set()

    def cell(self, prompt: str, cell: str | None = None, **request: Any) -> TurnController:
        """A cell's controller, placed in the ``default`` tree as a cell run would be."""
        self.shell.kernel.cell = cell
        session, node = self.conversations.begin("default", prompt)
        return TurnController(
            self, TurnRequest(session=session, prompt=prompt, node=node, **request)
        )


@pytest.fixture
async def hosts() -> AsyncIterator[list[FakeHost]]:
    made: list[FakeHost] = []
    yield made
    for host in made:
        await asyncio.wait_for(host.conversations.close_all(), 5)
        for task in list(host.tasks):
            await asyncio.wait_for(task, 5)


def host_with(hosts: list[FakeHost], *turns: Sequence[Item]) -> FakeHost:
    host = FakeHost(turns)
    hosts.append(host)
    return host


def user_lines(fake: FakeCLI) -> list[Any]:
    return [m["message"]["content"] for m in fake.received if m.get("type") == "user"]


async def running(controller: TurnController) -> None:
    await apoll(
        lambda: controller.turn is not None and controller.session.active_turn is controller.turn,
        5,
        "the cell's turn to run",
    )


async def test_a_turn_shows_its_own_figures_and_lands_in_its_name(hosts: list[FakeHost]) -> None:
    host = host_with(hosts, [assistant("hello", uuid="u1")])
    controller = host.cell("hi", out="answer")
    result = await asyncio.wait_for(controller.run(), 5)
    assert result is not None and result.text == "hello"
    view = controller.view
    assert (view.cost_usd, view.tokens_in, view.tokens_out) == (result.cost_usd, 1, 1)
    assert view.status == "done" and host.surfaces[0].finished == {}
    entry = host.conversations.entry("default")
    assert entry is not None and entry.last_view is view and entry.session is controller.session
    assert host.ns["answer"] is result and host.remembered == [result.session_id]
    controller.end_cell()  # a good turn ends its cell ok


async def test_stop_ends_only_the_turn_and_the_session_goes_on(hosts: list[FakeHost]) -> None:
    host = host_with(hosts, [assistant("partial"), Stall()], [assistant("next")])
    controller = host.cell("long")
    task = asyncio.ensure_future(controller.run())
    await running(controller)
    controller.stop()
    result = await asyncio.wait_for(task, 5)
    assert result is not None and result.interrupted and controller.view.status == "interrupted"
    assert host.python_runner.count == 1  # an in-kernel python run of the turn is stopped too
    controller.end_cell()  # Stop is not ■: the cell itself ends ok
    after = await asyncio.wait_for(run_turn(host, TurnRequest(controller.session, "again")), 5)
    assert after is not None and after.text == "next" and len(host.fake.launches) == 1


async def test_the_kernels_stop_button_cancels_the_cell_and_aborts_the_queue(
    hosts: list[FakeHost],
) -> None:
    host = host_with(hosts, [assistant("partial"), Stall()], [assistant("next")])
    controller = host.cell("long")
    task = asyncio.ensure_future(controller.run())
    await running(controller)
    task.cancel()  # ■: ipykernel cancels the cell's task
    result = await asyncio.wait_for(task, 5)  # the turn ends gracefully, its output recorded
    assert result is not None and result.interrupted and host.fake.interrupts == 1
    assert controller.kernel_interrupted and controller.view.status == "interrupted"
    with pytest.raises(CellInterrupted):  # then the cell ends interrupted: the queue aborts
        controller.end_cell()
    session = controller.session
    assert not session.busy and host.conversations.peek("default") is session
    assert (await asyncio.wait_for(session.query("again"), 5)).text == "next"


async def test_a_queued_cells_stop_withdraws_it_unsent(hosts: list[FakeHost]) -> None:
    host = host_with(hosts, [assistant("first"), Stall()], [assistant("third")])
    first = host.cell("one")
    running_first = asyncio.ensure_future(first.run())
    await running(first)
    second = TurnController(host, TurnRequest(first.session, "two"))
    queued = asyncio.ensure_future(second.run())
    await apoll(lambda: second.turn is not None, 5, "the second turn to queue")
    second.stop()
    withdrawn = await asyncio.wait_for(queued, 5)
    assert withdrawn is not None and withdrawn.interrupted and not first.turn.done()  # type: ignore[union-attr]
    first.stop()
    await asyncio.wait_for(running_first, 5)
    third = await asyncio.wait_for(first.session.query("three"), 5)
    assert third.text == "third"
    assert user_lines(host.fake) == ["one", "three"]  # "two" never reached the CLI


async def test_an_approval_is_asked_in_the_turns_own_cell(hosts: list[FakeHost]) -> None:
    host = host_with(hosts, [BASH, assistant("ran it")], [BASH, assistant("late"), Stall()])
    controller = host.cell("list")
    task = asyncio.ensure_future(controller.run())
    await apoll(lambda: host.approver.open, 5, "the approval")
    assert host.approver.owners == [controller] and host.surfaces[0].asked == ["Bash"]
    host.approver.open[0].set_result(Allow())
    assert (await asyncio.wait_for(task, 5)).text == "ran it"  # type: ignore[union-attr]
    assert host.fake.answers[0]["response"]["behavior"] == "allow"
    # Stop while a card waits: the card's answer itself interrupts, so the CLI cannot call
    # the model again before the interrupt request lands.
    stopped = host.cell("again")
    task = asyncio.ensure_future(stopped.run())
    await apoll(lambda: len(host.approver.open) == 2, 5, "the second approval")
    stopped.stop()
    await asyncio.wait_for(task, 5)
    answer = host.fake.answers[1]["response"]
    assert answer["behavior"] == "deny" and answer["interrupt"] is True


async def test_a_failed_turn_ends_its_cell_with_an_error(hosts: list[FakeHost]) -> None:
    host = host_with(hosts, [assistant("half"), Exit(3)], [assistant("recovered")])
    controller = host.cell("die")
    result = await asyncio.wait_for(controller.run(), 5)
    assert result is not None and result.error is not None and controller.failure
    assert controller.view.status == "error"
    with pytest.raises(TurnFailed):
        controller.end_cell()
    host.config.on_error = "show"
    controller.end_cell()  # Claude.on_error = "show": the output says it, the cell is ok
    after = await asyncio.wait_for(host.cell("again").run(), 5)
    assert after is not None and after.text == "recovered"  # the session restarted


async def test_usage_after_a_branch_counts_every_turn_paid_for(hosts: list[FakeHost]) -> None:
    """Cells A and B, then B again: the re-run forks at A (a new session, a new process), and
    B's first answer is left behind, paid for. The name's ledger holds all three turns."""
    usage_a = {"input_tokens": 10, "output_tokens": 5}
    usage_b = {"input_tokens": 20, "cache_read_input_tokens": 7, "output_tokens": 5}
    usage_b2 = {"input_tokens": 20, "cache_creation_input_tokens": 3, "output_tokens": 5}
    host = host_with(
        hosts,
        [assistant("a", uuid="ua"), result_line(
            0.10, usage_a, {"inputTokens": 10, "outputTokens": 5})],
        # The same process: its running totals include turn A's.
        [assistant("b", uuid="ub"), result_line(
            0.30, usage_b, {"inputTokens": 30, "cacheReadInputTokens": 7, "outputTokens": 10})],
        # The branch's new process, forked after A: its totals start afresh.
        [assistant("b2", uuid="ub2"), result_line(
            0.25, usage_b2, {"inputTokens": 20, "cacheCreationInputTokens": 3, "outputTokens": 5})],
    )  # fmt: skip
    costs = []
    for prompt, cell in (("a", "A"), ("b", "B"), ("b again", "B")):
        result = await asyncio.wait_for(host.cell(prompt, cell).run(), 5)
        assert result is not None and result.cost_usd is not None
        costs.append(result.cost_usd)
        # As between two cells: the session has settled its turn (a busy session is not moved
        # to a branch; Python 3.13's loop settles it a step after the cell's await returns).
        settled = host.conversations.peek("default")
        assert settled is not None
        await apoll(lambda s=settled: not s.busy, 5, "the session settles its turn")
    assert costs == pytest.approx([0.10, 0.20, 0.25])
    assert len(host.fake.launches) == 2 and host.fake.launches[1].fork_session  # a branch
    entry = host.conversations.entry("default")
    assert entry is not None and len(entry.tree.turns) == 3
    assert entry.ledger.turns == 3
    assert entry.ledger.cost_usd == pytest.approx(sum(n.cost_usd or 0 for n in entry.tree.turns))
    assert entry.ledger.cost_usd == pytest.approx(0.55)
    # One definition of input tokens: fresh input + cache writes + cache reads, as the footer.
    assert entry.ledger.tokens.input == 10 + 27 + 23
    assert entry.last_view is not None and entry.last_view.tokens_in == 23
    assert entry.session.ledger is entry.ledger  # the branch's session counts into the name


async def test_a_turn_of_the_scripted_api_shows_its_cost_as_scripted_not_dollars(
    hosts: list[FakeHost],
) -> None:
    """The CLI prices the scripted API's tokens as a model's (the offline demo showed $1.54 for
    one session): a turn answered with the scripted API's message ids says "scripted model"
    wherever its cost shows (the footer, the header, %claude history's tree, the ledger that
    %claude sessions and usage read), after the figure, which is kept."""
    usage = {"input_tokens": 10, "output_tokens": 5}
    host = host_with(
        hosts,
        [
            assistant("a", msg_id=f"{SCRIPTED_MESSAGE_ID}1", uuid="ua"),
            result_line(1.54, usage, {"inputTokens": 10, "outputTokens": 5}),
        ],
    )
    result = await asyncio.wait_for(host.cell("a", "A").run(), 5)
    assert result is not None and result.scripted and result.cost_usd == pytest.approx(1.54)
    entry = host.conversations.entry("default")
    assert entry is not None and entry.last_view is not None
    footer = " · ".join(footer_parts(entry.last_view))
    assert f"$1.5400 {SCRIPTED_COST}" in footer, footer
    _, metadata = static_outputs(entry.last_view)[0]
    assert metadata["byre"]["scripted"] is True  # the saved record says so too
    assert entry.ledger.scripted and host.conversations.spent.scripted
    (node,) = entry.tree.turns
    assert node.scripted


async def test_a_turn_of_a_model_shows_its_cost_in_dollars(hosts: list[FakeHost]) -> None:
    usage = {"input_tokens": 10, "output_tokens": 5}
    host = host_with(
        hosts, [assistant("a"), result_line(0.5, usage, {"inputTokens": 10, "outputTokens": 5})]
    )
    result = await asyncio.wait_for(host.cell("a", "A").run(), 5)
    assert result is not None and not result.scripted
    entry = host.conversations.entry("default")
    assert entry is not None and entry.last_view is not None
    assert "$0.5000" in footer_parts(entry.last_view)
    assert "scripted" not in static_outputs(entry.last_view)[0][1]["byre"]
    assert not entry.ledger.scripted


async def test_the_kernel_budget_refuses_a_turn_before_anything_reaches_the_cli(
    hosts: list[FakeHost],
) -> None:
    """Claude.kernel_budget_usd caps every turn of the kernel: all names, a closed one too.
    The turn over it writes nothing to the CLI (so no API request), its cell fails whatever
    on_error says, and with the cap raised the next cell runs in the same session."""
    usage = {"input_tokens": 10, "output_tokens": 5}
    model_usage = {"inputTokens": 10, "outputTokens": 5}
    host = host_with(
        hosts,
        [assistant("b"), result_line(0.20, usage, model_usage)],  # session "other"'s process
        [assistant("a"), result_line(0.10, usage, model_usage)],
        [assistant("after the cap was raised")],
    )
    host.config.kernel_budget_usd = 0.25
    session, node = host.conversations.begin("other", "b")
    other = TurnController(host, TurnRequest(session=session, prompt="b", node=node))
    assert (await asyncio.wait_for(other.run(), 5)) is not None  # 0 < 0.25: sent
    # %claude close (before the next process: the fake CLI runs one at a time): its spend
    # still counts.
    await host.conversations.drop("other")
    assert (await asyncio.wait_for(host.cell("a").run(), 5)) is not None  # 0.20 < 0.25
    assert host.conversations.spent.cost_usd == pytest.approx(0.30)

    written, launched = len(host.fake.received), len(host.fake.launches)
    refused = host.cell("over the cap")
    assert (await asyncio.wait_for(refused.run(), 5)) is None
    assert len(host.fake.received) == written and len(host.fake.launches) == launched
    assert "over the cap" not in str(host.fake.received)
    assert refused.view.status == "error" and refused.failure is not None
    assert "0.3000 USD" in refused.failure and "0.2500 USD" in refused.failure
    assert "Nothing was sent" in refused.failure
    assert "%config Claude.kernel_budget_usd = " in refused.failure
    assert "$" not in refused.failure  # two in a paragraph are LaTeX in Jupyter's Markdown
    host.config.on_error = "show"  # a batch stops spending whatever on_error says
    with pytest.raises(BudgetExceeded):
        refused.end_cell()

    host.config.kernel_budget_usd = 1.0
    after = await asyncio.wait_for(host.cell("next").run(), 5)
    assert after is not None and after.text == "after the cap was raised"
    assert user_lines(host.fake)[-1] == "next"


async def test_a_turns_mode_menu_offers_what_the_machines_policy_allows(
    hosts: list[FakeHost], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The surface is handed the modes the managed settings allow, read at each turn (a policy
    installed since the kernel started counts); a switch the menu did not offer is refused
    with the reason, and the menu shows the mode in force (tests/unit/app/test_policy.py)."""
    monkeypatch.setenv(MANAGED_DIR_ENV, str(tmp_path))
    host = host_with(hosts, [assistant("ok")])
    before = host.cell("before").surface
    assert isinstance(before, FakeSurface) and before.controls.modes is not None
    assert "bypassPermissions" in before.controls.modes
    policy = tmp_path / "managed-settings.json"
    policy.write_text('{"permissions": {"disableBypassPermissionsMode": "disable"}}')
    controller = host.cell("after")
    after = controller.surface
    assert isinstance(after, FakeSurface) and after.controls.modes is not None
    assert "bypassPermissions" not in after.controls.modes
    controller._on_permission_mode("bypassPermissions")  # a forged choice

    def notices() -> str:
        return " ".join(getattr(block, "text", "") for block in controller.view.walk())

    await apoll(lambda: "refused" in notices(), 5, "the refusal")
    assert str(policy) in notices() and "disableBypassPermissionsMode" in notices()
    assert controller.session.permission_mode in (None, "default")


async def test_a_branch_marks_the_answers_it_leaves_behind_in_their_records(
    hosts: list[FakeHost],
) -> None:
    """Cells A, B, C, then B again: C's record is shown again with the stale mark (the portable
    record it holds kept), A's is not; running C again shows the old record unmarked."""
    host = host_with(hosts, *([assistant(p, uuid=f"u{p}")] for p in ("a", "b", "c", "b2", "c2")))
    host.config.portable = True
    surfaces: dict[str, FakeSurface] = {}
    for n, (prompt, cell) in enumerate(
        (("a", "A"), ("b", "B"), ("c", "C"), ("b2", "B"), ("c2", "C"))
    ):
        # The running cell's In [n] is the last entry of the input history (n = 1, 2, ...).
        host.shell.history_manager = SimpleNamespace(input_hist_parsed=[""] * (n + 2))
        controller = host.cell(prompt, cell)
        surfaces[prompt] = host.surfaces[-1]
        assert await asyncio.wait_for(controller.run(), 5) is not None
        settled = host.conversations.peek("default")
        assert settled is not None
        await apoll(lambda s=settled: not s.busy, 5, "the session settles its turn")
    c = surfaces["c"]
    marked, extra = c.restated[0]
    assert marked == StaleMark(since=4, cell="C")  # B ran again as In [4]
    assert extra == {"portable": {"session_id": c.view.session_id}}  # C held it then
    # A (before the branch point) and B' are never marked; their records are restated only
    # to hand the portable record on.
    assert all(m is None for p in ("a", "b2") for m, _ in surfaces[p].restated)
    assert c.restated[-1] == (None, {}) and c.view.stale is None  # C ran again: unmarked


async def test_a_turn_that_changed_cells_offers_its_undo_in_its_record(
    hosts: list[FakeHost],
) -> None:
    host = host_with(hosts, [assistant("a", uuid="ua")], [assistant("b", uuid="ub")])
    log = host.approver.edit_log = EditLog()  # type: ignore[attr-defined]
    change = CellChange("c1", "code", "replace", "x = 1", "x = 2")
    log.record("default", {"conversation": "conv", "turn": 1}, [change], ["c1"])
    for prompt in ("a", "b"):
        controller = host.cell(prompt, prompt.upper())
        assert await asyncio.wait_for(controller.run(), 5) is not None
        settled = host.conversations.peek("default")
        assert settled is not None
        await apoll(lambda s=settled: not s.busy, 5, "the session settles its turn")
    first, second = host.surfaces
    assert first.view.undo == UndoMark("default", 1)
    assert "%claude undo #1" in static_outputs(first.view)[0][0]["text/plain"]
    assert second.view.undo is None  # turn 2 changed no cells


async def test_an_attached_image_is_sniffed_once_where_it_is_made(
    hosts: list[FakeHost], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sniffed: list[bytes] = []

    def counting(data: bytes) -> str | None:
        sniffed.append(data)
        return real(data)

    real = protocol_image.sniff_image_type
    # The one sniffer (no other floor has one of its own to call: ui.viewmodel had).
    monkeypatch.setattr(protocol_image, "sniff_image_type", counting)
    assert not hasattr(viewmodel, "sniff_image_type")
    (tmp_path / "plot.png").write_bytes(tiny_png())
    image = resolve_image(str(tmp_path / "plot.png"), {})
    host = host_with(hosts, [assistant("a plot")])
    controller = host.cell("look", images=[image])
    assert (await asyncio.wait_for(controller.run(), 5)) is not None
    assert sniffed == [tiny_png()]  # once, in resolve_image
    (sent,) = [m for m in host.fake.received if m.get("type") == "user"]
    block = sent["message"]["content"][0]
    assert block["type"] == "image" and block["source"]["media_type"] == "image/png"
    assert [i.media_type for i in controller.view.attached_images] == ["image/png"]


#: What CLI 2.1.328 writes for a turn without credentials (no key, no ``~/.claude`` login): a
#: synthetic API-error assistant line, then an error result that never reached a model.
NOT_LOGGED_IN: list[Item] = [
    {
        "type": "assistant",
        "parent_tool_use_id": None,
        "error": "authentication_failed",
        "is_api_error_message": True,
        "message": {
            "id": "synthetic-1",
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": "Not logged in · Please run /login"}],
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    },
    {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "Not logged in · Please run /login",
        "terminal_reason": "api_error",
        "num_turns": 1,
        "duration_ms": 300,
        "total_cost_usd": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "modelUsage": {},
    },
]


async def test_a_failed_login_says_once_in_notebook_terms_what_to_do(
    hosts: list[FakeHost],
) -> None:
    host = host_with(hosts, NOT_LOGGED_IN)
    controller = host.cell("hello")
    await asyncio.wait_for(controller.run(), 5)
    html, plain, markdown = (
        static_outputs(controller.view)[0][0][k]
        for k in ("text/html", "text/plain", "text/markdown")
    )
    for text in (html, plain, markdown):
        assert "/login" not in text, text  # a REPL command, meaningless in a notebook
        assert text.count(LOGIN_HELP.split(".")[0]) == 1, text  # one message
        assert "ANTHROPIC" in text and "%claude doctor" in text
        assert "$0" not in text  # no cost, and no model, for a turn that reached none
    assert "`" not in html  # our own words carry no Markdown marks into the HTML
    assert footer_parts(controller.view) == ["0.3 s", "error"]
    with pytest.raises(TurnFailed) as raised:
        controller.end_cell()
    # The cell's error line names the failure and points up; it does not repeat the advice.
    (line,) = raised.value._render_traceback_()
    assert "ANTHROPIC_API_KEY" not in line and "above" in line
    assert raised.value.message == LOGIN_HELP  # the whole text, for nbclient and papermill


def test_the_install_advice_names_the_pinned_cli() -> None:
    pinned = ".".join(map(str, TESTED_CLI))
    assert CLI_INSTALL.endswith(f"@anthropic-ai/claude-code@{pinned}")
    assert CLI_INSTALL in str(CLINotFoundError("PATH"))
    script = (Path(__file__).parents[3] / "scripts" / "install-cli.sh").read_text()
    assert f'VERSION="${{BYRE_CLI_VERSION:-{pinned}}}"' in script


async def test_a_background_cells_note_goes_when_its_answer_arrives(
    hosts: list[FakeHost],
) -> None:
    host = host_with(hosts, [assistant("late answer")])
    controller = host.cell("slowly", background=True)
    # Until the answer comes, the cell says why it is empty, in the words of someone who
    # ran it (a notebook saved now, or a headless run that ends now, keeps this).
    waiting = static_outputs(controller.view)[0][0]["text/plain"]
    assert "background (--bg)" in waiting and "headless run that ended first" not in waiting
    await asyncio.wait_for(controller.run(), 5)
    final = static_outputs(controller.view)[0][0]
    assert "late answer" in final["text/plain"]
    for mime in ("text/plain", "text/markdown", "text/html"):
        assert "--bg" not in final[mime].replace("\\", ""), final[mime]


def init_line(mode: str) -> dict[str, Any]:
    """The CLI's ``system/init`` at a turn's start, with the mode the turn runs in."""
    return {"type": "system", "subtype": "init", "model": "fake", "permissionMode": mode}


@pytest.mark.parametrize(
    ("asked", "running", "warned"),
    [
        ("bypassPermissions", "default", True),  # CLI 2.1.328 under disableBypassPermissionsMode
        ("auto", "default", True),
        ("bypassPermissions", "bypassPermissions", False),
        ("bypassPermissions", "plan", False),  # the CLI entered plan mode itself
        ("plan", "default", False),  # ... and left it (ExitPlanMode)
        ("default", "acceptEdits", False),
    ],
)
async def test_a_mode_the_cli_quietly_did_not_take_is_said_in_the_cell(
    hosts: list[FakeHost],
    monkeypatch: pytest.MonkeyPatch,
    asked: str,
    running: str,
    warned: bool,
) -> None:
    """Launched in bypassPermissions under a policy that turns it off, the real CLI ran in
    "default" and said so only in its init line (measured, docs/hub.md): the cell says it,
    naming where the policy lives, and the menu shows the mode in force."""
    monkeypatch.setenv("IS_SANDBOX", "1")  # as root, bypassPermissions needs it (launch.py)
    host = host_with(hosts, [init_line(running), assistant("ok")])
    session, node = host.conversations.begin("default", "hi")
    session.permission_mode = asked
    shown: list[str] = []
    controller = TurnController(host, TurnRequest(session=session, prompt="hi", node=node))
    controller.surface.show_permission_mode = shown.append  # type: ignore[method-assign]
    assert (await asyncio.wait_for(controller.run(), 5)) is not None
    texts = " ".join(getattr(block, "text", "") for block in controller.view.walk())
    assert ("not " + repr(asked) in texts) is warned, texts
    assert shown == ([running] if warned else [])
    # byre answers the CLI's prompts by the mode the CLI runs in, not the refused looser one.
    assert session.permission_mode == (running if warned else asked)
    if warned:
        assert "managed settings" in texts and "%claude doctor" in texts


async def test_the_effort_menu_switches_the_running_cli_and_says_so(hosts: list[FakeHost]) -> None:
    """The header's effort menu: the running CLI switches from its next request
    (apply_flag_settings), the session keeps it for later launches, the turn notes it; a word
    that is no level is refused and the menu shows what is in force."""
    host = host_with(hosts, [assistant("partial"), Stall()])
    controller = host.cell("long")
    task = asyncio.ensure_future(controller.run())
    await running(controller)
    controls = host.surfaces[0].controls
    assert controls.effort is None and controls.on_effort is not None
    controls.on_effort("high")
    await apoll(lambda: host.fake.flag_settings == {"effortLevel": "high"}, 5, "the switch")
    assert controller.session.effort == "high"
    controls.on_effort("turbo")
    await apoll(lambda: getattr(host.surfaces[0], "shown_effort", "") == "high", 5, "a refusal")
    texts = [getattr(b, "text", "") for b in controller.view.walk()]
    assert any("Effort: high" in t for t in texts)
    assert any("effort change to turbo refused" in t for t in texts)
    controller.stop()
    await asyncio.wait_for(task, 5)


async def test_the_header_menus_mode_is_in_force_when_chosen(hosts: list[FakeHost]) -> None:
    """The menu's choice changes the session's mode at once, not when the CLI answers: a cell
    queued behind the running one is sent only once the CLI is in it (docs/security.md)."""
    host = host_with(hosts, [assistant("partial"), Stall()], [assistant("next")])
    controller = host.cell("long")
    task = asyncio.ensure_future(controller.run())
    await running(controller)
    on_mode = host.surfaces[0].controls.on_permission_mode
    assert on_mode is not None
    on_mode("acceptEdits")
    assert controller.session.permission_mode == "acceptEdits"
    queued = asyncio.ensure_future(controller.session.query("next"))
    controller.stop()
    await asyncio.wait_for(task, 5)
    assert (await asyncio.wait_for(queued, 5)).text == "next"
    assert host.fake.modes == [None, "acceptEdits"]  # the launch's, then the switch
    kinds = [m.get("request", {}).get("subtype") or m["type"] for m in host.fake.received]
    assert kinds.index("set_permission_mode") < len(kinds) - 1 - kinds[::-1].index("user")


def sized(text: str, prompt_tokens: int, msg_id: str) -> dict[str, Any]:
    """An assistant line whose API message read ``prompt_tokens`` (mostly from the cache)."""
    line = assistant(text, msg_id=msg_id, uuid=f"u-{msg_id}")
    line["message"]["usage"] = {
        "input_tokens": 100,
        "cache_read_input_tokens": prompt_tokens - 100,
        "output_tokens": 0,
    }
    return line


async def test_the_context_meter_follows_each_turn_and_a_compaction(
    hosts: list[FakeHost],
) -> None:
    window = {"contextWindow": 200_000, "inputTokens": 1}
    first_result = result_line(0.01, {"input_tokens": 1}, window)
    host = host_with(
        hosts,
        [sized("one", 13_400, "m1"), first_result],
        [sized("two", 48_200, "m2"), result_line(0.02, {"input_tokens": 1}, window)],
        [
            {
                "type": "system",
                "subtype": "compact_boundary",
                "compact_metadata": {
                    "trigger": "manual",
                    "pre_tokens": 48_200,
                    "post_tokens": 3_100,
                },
            },
            result_line(0.03, {}, window) | {"result": "", "local_command": "compact"},
        ],
    )
    starts: list[str] = []
    meters: list[str] = []
    for prompt in ("one", "two", "/compact"):
        controller = host.cell(prompt)
        starts.append(context_meter(controller.view.context))
        await asyncio.wait_for(controller.run(), 5)
        meters.append(context_meter(controller.view.context))
    # Each cell starts with the figure the one before left, before its own answer.
    assert starts == ["", "13.4k / 200k", "48.2k / 200k"]
    assert meters == ["13.4k / 200k", "48.2k / 200k", "3.1k / 200k"]
    notices = [b.text for b in controller.view.blocks if isinstance(b, viewmodel.NoticeView)]
    assert notices == ["compacted: 48.2k → 3.1k tokens"]


async def test_a_tasks_stop_asks_the_cli_to_stop_that_task(hosts: list[FakeHost]) -> None:
    host = host_with(hosts, [assistant("working"), Stall()])
    controller = host.cell("long")
    run = asyncio.ensure_future(controller.run())
    await running(controller)
    on_stop_task = host.surfaces[0].controls.on_stop_task
    assert on_stop_task is not None
    on_stop_task("t1")

    def asked() -> list[Any]:
        return [
            m["request"]
            for m in host.fake.received
            if m.get("type") == "control_request" and m["request"].get("subtype") == "stop_task"
        ]

    await apoll(lambda: asked(), 5, "the stop_task request")
    assert asked() == [{"subtype": "stop_task", "task_id": "t1"}]
    # The fake CLI refuses it, as an older CLI would: the cell says so, the turn goes on.
    await apoll(
        lambda: any(
            "could not be stopped" in b.text
            for b in controller.view.blocks
            if isinstance(b, viewmodel.NoticeView)
        ),
        5,
        "the notice",
    )
    assert not controller.turn or not controller.turn.done()
    controller.stop()
    await asyncio.wait_for(run, 5)
