"""Spare sessions (app/spare.py) over MemoryTransport: a spare is adopted only by the launch it
was made for, its CLI is the one the adopting turn is sent to (no second launch), and one that
cannot be used (other settings, exited, no longer wanted) is closed, never handed out. The
same in a real kernel with the real CLI: tests/integration/kernel/test_spare_kernel.py."""

from __future__ import annotations

from typing import Any

import pytest
from support.memory_cli import FakeCLI, assistant
from support.waiting import apoll

from byre_jupyter.app.spare import Spares, Want, launch_key
from byre_jupyter.errors import ByreError
from byre_jupyter.session import Allow, PermissionRequest, Session
from byre_jupyter.transport import LaunchSpec, MemoryTransport


class Kept(FakeCLI):
    """The fake CLI, keeping each process (transport) it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.made: list[MemoryTransport] = []

    def factory(self, spec: LaunchSpec) -> MemoryTransport:
        transport = super().factory(spec)
        self.made.append(transport)
        return transport


def fresh(fake: FakeCLI, model: str = "opus") -> tuple[Want, Session]:
    settings = {"model": model, "transport_factory": fake.factory}
    return Want(None, None, launch_key(settings)), Session("spare", **settings)


def forked(fake: FakeCLI, at: str = "uuid-a") -> tuple[Want, Session]:
    settings = {"model": "opus", "transport_factory": fake.factory}
    session = Session("default", resume="conv-1").fork(at=at, name="default", **settings)
    return Want("conv-1", at, launch_key(settings)), session


async def test_the_adopted_spare_is_the_cli_the_turn_is_sent_to() -> None:
    # One fake CLI per process (a FakeCLI runs one at a time).
    cli_a, cli_b = FakeCLI([[assistant("forked answer")]]), FakeCLI([[assistant("fresh answer")]])
    spares = Spares()
    (fork_want, fork), (fresh_want, new) = forked(cli_a), fresh(cli_b)
    spares.offer([(fork_want, lambda: fork), (fresh_want, lambda: new)])
    await apoll(lambda: fork.server_info and new.server_info, 5, "both spares initialized")
    (launch,) = cli_a.launches
    assert launch.fork_session and (launch.resume, launch.resume_session_at) == ("conv-1", "uuid-a")

    adopted = spares.take(fork_want)
    assert adopted is fork and spares.sessions() == [new]
    assert (await adopted.query("again")).text == "forked answer"
    taken = spares.take(fresh_want)
    assert taken is new
    assert (await taken.query("hello")).text == "fresh answer"
    assert len(cli_a.launches) == len(cli_b.launches) == 1  # no turn started a CLI of its own
    assert spares.adopted == 2 and spares.sessions() == []
    await fork.close()
    await new.close()


async def test_a_launch_with_other_settings_or_another_point_gets_no_spare() -> None:
    fake = FakeCLI()
    spares = Spares()
    want, spare = forked(fake)
    spares.offer([(want, lambda: spare)])
    assert spares.take(Want("conv-1", "uuid-a", launch_key({"model": "haiku"}))) is None
    assert spares.take(Want("conv-1", "uuid-b", want.key)) is None
    assert spares.take(Want(None, None, want.key)) is None
    # The next turn's end wants another point: the old spare is closed, not kept.
    other_want, other = forked(fake, at="uuid-b")
    spares.offer([(other_want, lambda: other)])
    await apoll(lambda: spare.closed and not spare.running, 5, "the unwanted spare closed")
    assert spares.sessions() == [other]
    await spares.close()
    assert other.closed and not other.running


async def test_a_spare_whose_cli_exited_is_closed_not_adopted() -> None:
    fake = Kept()
    spares = Spares()
    want, spare = fresh(fake)
    spares.offer([(want, lambda: spare)])
    await apoll(lambda: spare.server_info, 5, "the spare initialized")
    await fake.made[0].kill()
    await apoll(lambda: not spare.running, 5, "the exit seen")
    assert spares.take(want) is None
    await apoll(lambda: spare.closed, 5, "the dead spare closed")
    assert spares.adopted == 0


async def test_at_most_limit_spares_and_one_per_want() -> None:
    fake = FakeCLI()
    spares = Spares(limit=2)
    made = [forked(fake, at) for at in ("u1", "u2", "u3")]
    same = fresh(fake)
    spares.offer([(w, lambda s=s: s) for w, s in made] + [(same[0], lambda: same[1])])
    assert [s for s in spares.sessions()] == [made[0][1], made[1][1]]
    # Offered again, the same wants keep their spares (nothing is started again).
    spares.offer([(w, lambda: pytest.fail("made again")) for w, _ in made[:2]])
    assert spares.sessions() == [made[0][1], made[1][1]]
    await spares.close()
    assert all(s.closed for _, s in made[:2])


async def test_no_spare_starts_while_a_turn_runs() -> None:
    """Run All begins the next turn as one ends: a spare started then would only be closed."""
    fake = FakeCLI()
    busy = True
    spares = Spares(idle=lambda: not busy, delay=0)
    want, spare = fresh(fake)
    spares.offer([(want, lambda: spare)])
    await spares.settled()
    assert fake.launches == [] and spares.take(want) is None
    busy = False
    want, spare = fresh(fake)
    spares.offer([(want, lambda: spare)])
    await apoll(lambda: spare.server_info, 5, "started once idle")
    assert len(fake.launches) == 1 and spares.started == 1
    await spares.close()


async def test_clear_while_a_spare_starts_leaves_no_process() -> None:
    fake = FakeCLI()
    spares = Spares()
    want, spare = fresh(fake)
    spares.offer([(want, lambda: spare)])
    spares.clear()  # before its start has run a step
    await spares.close()
    assert spare.closed and not spare.running


async def test_rebind_gives_an_unused_session_the_adopting_name_and_callbacks() -> None:
    fake = FakeCLI([[assistant("ok")]])
    _, spare = fresh(fake)
    asked: list[str] = []

    async def allow(request: PermissionRequest) -> Allow:
        asked.append(request.tool_name)
        return Allow()

    spare.rebind("other", can_use_tool=allow)
    assert spare.name == "other" and spare.can_use_tool is allow
    await spare.query("hi")
    with pytest.raises(ByreError, match="cannot be renamed"):
        spare.rebind("third")
    await spare.close()


# -- the key is the process the launch would start ----------------------------------------


def settings_now(env: dict[str, str], extra_args: list[str]) -> dict[str, Any]:
    return {"model": "opus", "env": env, "extra_args": extra_args, "transport_factory": "f"}


@pytest.mark.parametrize("change", ["new key", "deleted secret", "Claude.env", "extra_args"])
def test_a_launch_after_the_environment_or_a_setting_changed_wants_another_process(
    change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-old")
    monkeypatch.setenv("OLD_SECRET", "hunter2")
    env, extra_args = {"A": "1"}, ["--verbose"]
    offered = launch_key(settings_now(env, extra_args))  # the spare's key, as offered
    assert launch_key(settings_now(env, extra_args)) == offered
    if change == "new key":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-new")  # os.environ[...] = in a cell
    elif change == "deleted secret":
        monkeypatch.delenv("OLD_SECRET")
    elif change == "Claude.env":
        env["A"] = "2"  # the trait's dict mutated in place: no trait event
    else:
        extra_args.append("--debug")
    assert launch_key(settings_now(env, extra_args)) != offered


def test_the_key_holds_a_digest_of_the_environment_not_its_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-value")
    key = launch_key(settings_now({"TOKEN": "env-secret-value"}, []))
    assert "secret-value" not in repr(key).replace(repr(key.get("env")), "")


async def test_a_spare_started_after_the_environment_changed_is_not_adopted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Offered, then os.environ changed before its CLI started: the process it would start
    is not the one its key was made for."""
    fake = Kept()
    spares = Spares(delay=0)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-old")
    want, spare = fresh(fake)
    spares.offer([(want, lambda: spare)])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-new")
    await spares.settled()
    assert spares.take(want) is None and fake.made == []
    await spares.close()
