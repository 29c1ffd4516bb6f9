"""The read-only tools: variables, inspect, history; and that loading them stays light."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

from IPython.core.interactiveshell import InteractiveShell
from support.toolkit import PNG_MAGIC, Kit, images_of, text_of

from byre_jupyter.tools import ToolLimits


async def test_variables_lists_user_data_and_hides_the_rest(kit: Kit) -> None:
    import numpy as np
    import pandas as pd

    await kit.python(
        "import os\nimport numpy as np\nimport pandas as pd\n"
        "from IPython.display import display, Image\n"
        "df = pd.DataFrame({'a': [1, 2, 3], 'b': [0.5, 1.5, 2.5]})\n"
        "arr = np.zeros((4, 5))\nname = 'Ada'\nitems = [1, 2]\n_private = 1\n"
        "def helper():\n    pass"
    )
    table = text_of(await kit.call("variables"))
    rows = {line.split()[0]: line for line in table.splitlines()[1:] if line and line[0] != "("}
    assert set(rows) == {"arr", "df", "helper", "items", "name"}
    assert re.search(r"pandas\.DataFrame\s+3x2\s+", rows["df"]), rows["df"]
    df_bytes = kit.shell.user_ns["df"].memory_usage(deep=False).sum()
    assert f"{df_bytes} B" in rows["df"]
    assert re.search(r"numpy\.ndarray\s+4x5\s+160 B", rows["arr"]), rows["arr"]
    assert "'Ada'" in rows["name"] and "len 3" in rows["name"]
    assert "len 2" in rows["items"] and "(shallow)" in rows["items"]
    assert isinstance(kit.shell.user_ns["df"], pd.DataFrame) and np is not None


async def test_variables_is_bounded(make_kit: Callable[..., Kit]) -> None:
    kit = make_kit(limits=ToolLimits(max_variables=5))
    await kit.python("for i in range(12):\n    globals()[f'v{i:02}'] = i")
    table = text_of(await kit.call("variables"))
    assert "v03" in table and "v04" not in table  # i, v00…v03
    assert "… 8 more variables not listed" in table  # 12 v's + i


async def test_inspect_a_dataframe(kit: Kit) -> None:
    await kit.python(
        "import pandas as pd\n"
        "df = pd.DataFrame({'height': [1.5, 1.7, 1.9], 'team': ['a', 'b', 'a']})"
    )
    result = await kit.call("inspect", name="df")
    text = text_of(result)
    assert not result.is_error
    assert "shape: 3 rows, 2 columns" in text
    assert re.search(r"height: float64", text)
    assert re.search(r"team: (object|str)", text)
    assert "head(5):" in text and "1.9" in text
    assert "describe():" in text and "mean" in text and "1.7" in text


async def test_inspect_a_series_and_a_dotted_name(kit: Kit) -> None:
    await kit.python("import pandas as pd\ndf = pd.DataFrame({'height': [1.0, 3.0]})")
    text = text_of(await kit.call("inspect", name="df.height"))
    assert "length: 2" in text and "mean" in text and "2.0" in text
    columns = text_of(await kit.call("inspect", name="df.columns"))
    assert "Index" in columns and "height" in columns


async def test_inspect_an_array_is_nan_safe(kit: Kit) -> None:
    await kit.python("import numpy as np\narr = np.array([[1.0, np.nan], [3.0, 8.0]])")
    text = text_of(await kit.call("inspect", name="arr"))
    assert "shape: (2, 2); dtype: float64" in text
    assert "min: np.float64(1.0)" in text or "min: 1.0" in text
    assert "max: np.float64(8.0)" in text or "max: 8.0" in text
    assert "mean: np.float64(4.0)" in text or "mean: 4.0" in text
    assert "NaNs: 1" in text
    assert "preview:" in text and "nan" in text


async def test_inspect_a_figure_returns_its_image_and_leaves_it_open(kit: Kit) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2])
    kit.shell.user_ns["fig"] = fig
    result = await kit.call("inspect", name="fig")
    images = images_of(result)
    assert len(images) == 1 and images[0].startswith(PNG_MAGIC)
    assert "Figure with 1 axes" in text_of(result)
    assert plt.fignum_exists(fig.number)


async def test_inspect_a_pil_image(kit: Kit) -> None:
    await kit.python("from PIL import Image\npic = Image.new('CMYK', (30, 20))")
    result = await kit.call("inspect", name="pic")
    images = images_of(result)
    assert len(images) == 1 and images[0].startswith(PNG_MAGIC)
    assert "size 30x20, mode CMYK" in text_of(result)


async def test_inspect_other_objects(kit: Kit) -> None:
    await kit.python(
        "def area(w: float, h: float) -> float:\n    '''Area of a box.'''\n    return w * h\n"
        "big = list(range(100_000))"
    )
    text = text_of(await kit.call("inspect", name="area"))
    assert "signature: area(w: float, h: float) -> float" in text
    assert "Area of a box." in text
    big = text_of(await kit.call("inspect", name="big"))
    assert "len 100000" in big and len(big) < 2_000


async def test_inspect_an_unknown_name_suggests_close_matches(kit: Kit) -> None:
    await kit.python("dataset = [1, 2, 3]")
    result = await kit.call("inspect", name="datset")
    assert result.is_error
    assert "No variable named 'datset'" in text_of(result)
    assert "Did you mean: dataset?" in text_of(result)

    missing_attr = await kit.call("inspect", name="dataset.apend")
    assert missing_attr.is_error and "append" in text_of(missing_attr)


async def test_inspect_walks_attributes_only(kit: Kit) -> None:
    await kit.python("d = {'k': 1}")
    for name in ("d['k']", "d.keys()", "d.__class__", "__import__('os')"):
        result = await kit.call("inspect", name=name)
        assert result.is_error, name


async def test_history_shows_recent_cells_bounded(kit: Kit, shell: InteractiveShell) -> None:
    for i in range(1, 61):
        shell.run_cell(f"value_{i} = {i}\n{i} * 2", store_history=True)  # type: ignore[no-untyped-call]
    shell.run_cell("'x' * 5000", store_history=True)  # type: ignore[no-untyped-call]

    recent = text_of(await kit.call("history"))
    assert recent.startswith("The last 10 cell(s) (51 older not shown):")
    assert "In [52]:\nvalue_52 = 52\n52 * 2\nOut[52]:\n104" in recent
    assert "In [51]:" not in recent
    assert "… " in recent and "more characters truncated" in recent  # Out[61] clipped

    everything = text_of(await kit.call("history", n=500))
    assert everything.startswith("The last 50 cell(s)")
    assert (await kit.call("history", n=0)).is_error


def test_loading_and_using_the_tools_does_not_import_data_libraries() -> None:
    script = """
import asyncio, sys
from IPython.core.interactiveshell import InteractiveShell
from byre_jupyter.tools import kernel_tools
shell = InteractiveShell.instance()
tools = {t.name: t for t in kernel_tools(shell, policy=lambda: "allow")}
async def main():
    await tools["python"].function({"code": "x = [1, 2]\\nprint(x)\\nx"})
    await tools["variables"].function({})
    await tools["inspect"].function({"name": "x"})
    await tools["history"].function({})
asyncio.run(main())
heavy = [m for m in ("numpy", "pandas", "matplotlib", "PIL") if m in sys.modules]
print("heavy:", heavy)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "heavy: []" in done.stdout, done.stdout + done.stderr
