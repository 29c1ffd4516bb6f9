"""Running one ``%%claude`` turn on the kernel's loop.

The cell is rewritten into ``await`` of :func:`ClaudeExtension.run_cell` (see ``transform``), so
ipykernel runs it as an async cell: the cell blocks until the turn ends (Run All, nbclient and
papermill capture the whole answer) while widget messages are still dispatched (ipykernel 7.4),
so Stop and the model menu work mid-turn. Jupyter's ■ arrives here as ``CancelledError``: it
becomes a graceful ``interrupt`` with our own deadline (a second ■ is ignored by ipykernel), and
the cell ends cleanly, marked interrupted, with the session alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ByreError
from ..session import Session, TurnResult
from ..ui import TurnView
from .frontend import Surface, make_surface

if TYPE_CHECKING:
    from .extension import ClaudeExtension

__all__ = ["TurnRequest", "run_turn"]

log = logging.getLogger(__name__)


@dataclass
class TurnRequest:
    session: Session
    prompt: str
    images: Sequence[tuple[str, bytes]] = ()
    out: str | None = None
    background: bool = False
    extra_blocks: Sequence[dict[str, Any]] = field(default_factory=list)
    context_names: Sequence[str] = ()


def _model_values(session: Session) -> list[str]:
    values = [str(m.get("value")) for m in session.models if m.get("value")]
    return values or ["default"]


async def run_turn(ext: ClaudeExtension, request: TurnRequest) -> TurnResult | None:
    """Show and run one turn; returns its result (None if it could not start)."""
    session = request.session
    loop = asyncio.get_running_loop()
    shown = request.prompt
    if request.context_names:
        shown += f"\n(with {', '.join(request.context_names)})"
    view = TurnView(session.name, shown, attached_images=request.images)
    view.model = session.model or "default"

    def on_stop() -> None:
        surface.reject_pending("Stopped by the user.")
        ext.python_runner.interrupt()
        ext.schedule(_quiet(session.interrupt()))

    def on_permission_mode(mode: str) -> None:
        async def switch() -> None:
            before = session.permission_mode or "default"
            try:
                await session.set_permission_mode(mode)
                view.add_notice("info", f"Permission mode: {mode}")
            except ByreError as e:
                view.add_notice("error", f"permission mode change to {mode} refused: {e}")
                surface.show_permission_mode(before)  # the menu shows what is in force
            surface.update(list(view.walk()))

        ext.schedule(switch())

    def on_model(name: str) -> None:
        async def switch() -> None:
            try:
                await session.set_model(None if name == "default" else name)
            except ByreError as e:
                view.add_notice("error", f"model change failed: {e}")
                surface.update(list(view.walk()))

        ext.schedule(switch())

    surface: Surface = make_surface(
        ext.frontend(),
        ext.config.live,
        view,
        models=_model_values(session) if session.models else [view.model],
        on_stop=on_stop,
        on_model=on_model,
        loop=loop,
        permission_mode=session.permission_mode or "default",
        on_permission_mode=on_permission_mode,
    )
    ext.views[session.name] = view
    ext.surfaces[session.name] = surface
    result: TurnResult | None = None
    try:
        try:
            await session.start()
            surface.set_models(_model_values(session), session.model or "default")
            turn = await session.send(
                [*request.extra_blocks, {"type": "text", "text": request.prompt}]
                if request.extra_blocks
                else request.prompt,
                images=[data for _, data in request.images],
            )
            async for message in turn.events():
                surface.update(view.apply(message))
            result = await turn.result()
        except asyncio.CancelledError:
            # Kernel ■ (or the cell's task cancelled): stop the turn gracefully, bounded.
            surface.reject_pending("Interrupted by the user.")
            ext.python_runner.interrupt()
            result = await _stop_after_cancel(ext, session)
            view.finish(interrupted=True)
        except ByreError as e:
            view.finish(error=str(e))
        else:
            if result.error is not None:
                view.finish(error=str(result.error), interrupted=result.interrupted)
            else:
                view.finish(interrupted=result.interrupted)
        if result is not None:
            ext.remember(session, result)
            if request.out:
                ext.shell.user_ns[request.out] = result
    finally:
        if ext.surfaces.get(session.name) is surface:
            del ext.surfaces[session.name]
        surface.finish()
    return result


async def _stop_after_cancel(ext: ClaudeExtension, session: Session) -> TurnResult | None:
    turn = session.active_turn
    deadline = ext.config.interrupt_grace + 2.0
    try:
        await asyncio.wait_for(session.interrupt(), deadline)
        if turn is not None:
            return await asyncio.wait_for(turn.result(), deadline)
    except (asyncio.TimeoutError, ByreError) as e:
        log.warning("byre: stopping the turn after ■ failed: %s", e)
    return None


async def _quiet(awaitable: Any) -> None:
    with contextlib.suppress(ByreError, asyncio.TimeoutError):
        await awaitable
