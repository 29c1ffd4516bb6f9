"""The "live widget, then static replacement" pattern on a real ipykernel through nbclient."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

TESTS = Path(__file__).resolve().parents[2]  # the kernel imports support.wire from tests/

CELL = f"""
import asyncio, sys
sys.path.insert(0, {str(TESTS)!r})
from support import wire as fx
from byre_jupyter.ui import TurnView, static_outputs
from byre_jupyter.ui.live import LiveView
from IPython.display import display, update_display
from ipywidgets.widgets import widget as wm

# ipywidgets 8.1 keeps open widgets in wm._instances, 8.0 in Widget._active_widgets.
open_widgets = getattr(wm, '_instances', None)
if open_widgets is None:
    open_widgets = wm.Widget._active_widgets
before = len(open_widgets)
loop = asyncio.get_running_loop()
view = TurnView("analysis", "Look at the picture", clock=loop.time)
live = LiveView(view, models=["opus"], on_stop=lambda: None, on_model=print, loop=loop)
display(live.widget, display_id="turn-1")
for msg in fx.parse_all(fx.read_png()):
    live.update(view.apply(msg))
    await asyncio.sleep(0)  # let the coalescer's timers run between messages, as a stream would
live.finish()
(data, meta), *images = static_outputs(view)
update_display(data, raw=True, metadata=meta, display_id="turn-1")
for image, image_meta in images:
    display(image, raw=True, metadata=image_meta)
live.close()
print("leftover widgets:", len(open_widgets) - before)
"""


@pytest.mark.kernel
def test_live_view_is_replaced_by_static_outputs_in_a_real_kernel() -> None:
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    nb.cells.append(nbformat.v4.new_code_cell(CELL))  # type: ignore[no-untyped-call]
    NotebookClient(nb, timeout=60, kernel_name="python3", store_widget_state=False).execute()
    outputs = nb.cells[0].outputs
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, errors
    mimes = [sorted(o.get("data", {})) for o in outputs if o.output_type == "display_data"]
    assert mimes == [["text/html", "text/markdown", "text/plain"], ["image/png", "text/plain"]]
    exchange = outputs[0]
    assert "It is a small red square." in exchange.data["text/html"]
    assert exchange.metadata["byre"]["session_name"] == "analysis"
    streams = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "leftover widgets: 0" in streams
