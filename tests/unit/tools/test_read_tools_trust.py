"""The read tools never run the user's code and never hand out secrets.

Every hook through which reading an object could run the user's code records itself in
``EFFECTS``; after ``variables``, ``inspect`` and ``history`` over such objects (alone, inside
containers, and along dotted paths) nothing may have been recorded. Secrets are built at run
time, put in the namespace, the environment and the history, and must appear in no result.
"""

from __future__ import annotations

import datetime
import os
import re
import secrets
from collections.abc import Callable
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.toolkit import Kit, text_of

from byre_jupyter.session import Allow, Decision, Deny

EFFECTS: list[str] = []


def _record(hook: str) -> None:
    EFFECTS.append(hook)


class WithProperty:
    @property
    def value(self) -> int:
        _record("property")
        return 1

    @property
    def shape(self) -> tuple[int, int]:
        _record("shape")
        return (2, 2)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        _record("__class__")
        return dict


class WithGetattr:
    def __getattr__(self, name: str) -> Any:
        _record(f"__getattr__({name})")
        return 1


class WithGetattribute:
    def __init__(self) -> None:
        self.inner = 1

    def __getattribute__(self, name: str) -> Any:
        _record(f"__getattribute__({name})")
        return object.__getattribute__(self, name)


class WithDunders:
    """Every protocol method that formatting, sizing or comparing an object may call."""

    def __repr__(self) -> str:
        _record("__repr__")
        return "WithDunders()"

    def __str__(self) -> str:
        _record("__str__")
        return "WithDunders"

    def __format__(self, spec: str) -> str:
        _record("__format__")
        return "WithDunders"

    def __len__(self) -> int:
        _record("__len__")
        return 3

    def __sizeof__(self) -> int:
        _record("__sizeof__")
        return 10

    def __bool__(self) -> bool:
        _record("__bool__")
        return True

    def __eq__(self, other: object) -> bool:
        _record("__eq__")
        return False

    def __hash__(self) -> int:
        _record("__hash__")
        return 1

    def __iter__(self) -> Any:
        _record("__iter__")
        return iter([])

    def __dir__(self) -> list[str]:
        _record("__dir__")
        return []


class Raising:
    """Anything but a static read raises."""

    def __getattribute__(self, name: str) -> Any:
        _record(f"raising.{name}")
        raise RuntimeError("do not touch")

    def __repr__(self) -> str:
        raise RuntimeError("do not touch")


class SneakyDict(dict):  # type: ignore[type-arg]
    def __len__(self) -> int:
        _record("SneakyDict.__len__")
        return 0

    def __repr__(self) -> str:
        _record("SneakyDict.__repr__")
        return "{}"

    def __iter__(self) -> Any:
        _record("SneakyDict.__iter__")
        return iter([])

    def keys(self) -> Any:
        _record("SneakyDict.keys")
        return []

    def items(self) -> Any:
        _record("SneakyDict.items")
        return []


class SneakyList(list):  # type: ignore[type-arg]
    def __len__(self) -> int:
        _record("SneakyList.__len__")
        return 0

    def __repr__(self) -> str:
        _record("SneakyList.__repr__")
        return "[]"


class Meta(type):
    def __repr__(cls) -> str:
        _record("Meta.__repr__")
        return "Meta"

    def __getattr__(cls, name: str) -> Any:
        _record(f"Meta.__getattr__({name})")
        return 1

    def __hash__(cls) -> int:
        _record("Meta.__hash__")
        return 1

    def __eq__(cls, other: object) -> bool:
        _record("Meta.__eq__")
        return False

    @property
    def __doc__(cls) -> str:  # type: ignore[override]
        _record("Meta.__doc__")
        return "doc"


class WithMeta(metaclass=Meta):
    pass


class Box:
    """A plain object holding traps in its instance ``__dict__``."""

    def __init__(self) -> None:
        self.prop = WithProperty()
        self.getattr = WithGetattr()
        self.dunders = WithDunders()
        self.items = [WithDunders(), WithProperty()]


class Zone(datetime.tzinfo):
    def __repr__(self) -> str:
        _record("Zone.__repr__")
        return "Zone"

    def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta:
        _record("Zone.utcoffset")
        return datetime.timedelta(0)


class Name:
    """A label or name: formatting, hashing or comparing it runs its hooks."""

    def __hash__(self) -> int:
        _record("Name.__hash__")
        return 1

    def __eq__(self, other: object) -> bool:
        _record("Name.__eq__")
        return False

    def __str__(self) -> str:
        _record("Name.__str__")
        return "Name"

    def __repr__(self) -> str:
        _record("Name.__repr__")
        return "Name"

    def __deepcopy__(self, memo: Any) -> Name:
        _record("Name.__deepcopy__")
        return self


def _lookalikes() -> dict[str, Any]:
    """Objects that pass for pandas' and numpy's own: a real container of the library's exact
    class holding one user part, and user classes that claim the library's module."""
    import numpy as np
    import pandas as pd
    from pandas.api.extensions import ExtensionArray, ExtensionDtype

    class UserIndex(pd.Index):
        def memory_usage(self, deep: bool = False) -> int:
            _record("UserIndex.memory_usage")
            return 0

        @property
        def dtype(self) -> Any:
            _record("UserIndex.dtype")
            return np.dtype(object)

        def tolist(self) -> list[Any]:
            _record("UserIndex.tolist")
            return [1, 2]

        def __len__(self) -> int:
            _record("UserIndex.__len__")
            return 2

        def _rename(self, name: Any) -> Any:
            _record("UserIndex._rename")
            return self

        def copy(self, *args: Any, **kwargs: Any) -> Any:
            _record("UserIndex.copy")
            return self

    class PandasLookalike(UserIndex):
        __module__ = "pandas.core.indexes.base"
        __qualname__ = "Index"

    class UserArray(np.ndarray):  # type: ignore[type-arg]
        def __array_finalize__(self, obj: Any) -> None:
            _record("UserArray.__array_finalize__")

        def tolist(self) -> Any:
            _record("UserArray.tolist")
            return []

    class LookalikeDtype(ExtensionDtype):
        __module__ = "numpy"
        name = "int64"
        type = object

        @property
        def kind(self) -> str:  # type: ignore[override]
            _record("LookalikeDtype.kind")
            return "i"

        @classmethod
        def construct_array_type(cls) -> type[ExtensionArray]:
            return LookalikeArray

        def __str__(self) -> str:
            _record("LookalikeDtype.__str__")
            return "int64"

    class LookalikeArray(ExtensionArray):
        def __init__(self, values: Any) -> None:
            self._values = np.asarray(values, dtype=object)

        @property
        def dtype(self) -> Any:
            _record("LookalikeArray.dtype")
            return LookalikeDtype()

        def __len__(self) -> int:
            return len(self._values)

        def __getitem__(self, item: Any) -> Any:
            _record("LookalikeArray.__getitem__")
            found = self._values[item]
            return LookalikeArray(found) if type(found) is np.ndarray else found

        def isna(self) -> Any:
            return np.zeros(len(self), bool)

        def copy(self) -> Any:
            return LookalikeArray(self._values.copy())

        def take(self, indices: Any, allow_fill: bool = False, fill_value: Any = None) -> Any:
            _record("LookalikeArray.take")
            return LookalikeArray(self._values.take(indices))

        @property
        def nbytes(self) -> int:
            _record("LookalikeArray.nbytes")
            return 8

        @classmethod
        def _concat_same_type(cls, arrays: Any) -> Any:
            return cls(np.concatenate([a._values for a in arrays]))

        @classmethod
        def _from_sequence(cls, scalars: Any, dtype: Any = None, copy: bool = False) -> Any:
            return cls(scalars)

    from matplotlib.figure import Figure

    class UserFigure(Figure):
        def get_size_inches(self) -> Any:
            _record("UserFigure.get_size_inches")
            return super().get_size_inches()

        def savefig(self, *args: Any, **kwargs: Any) -> None:
            _record("UserFigure.savefig")
            super().savefig(*args, **kwargs)

    user_index = UserIndex._simple_new(np.array(["a", "b"], dtype=object))
    odd_index = pd.DataFrame({"n": [1, 2]})
    odd_index.index = user_index
    odd_columns = pd.DataFrame([[1, 2]])
    odd_columns.columns = UserIndex._simple_new(np.array(["a", "b"], dtype=object))
    odd_level = pd.DataFrame(
        {"n": [1, 2]},
        index=pd.MultiIndex(levels=[user_index, [1, 2]], codes=[[0, 1], [0, 1]]),
    )
    odd_series = pd.Series([1, 2])
    odd_series.index = UserIndex._simple_new(np.array(["a", "b"], dtype=object))
    named_index = pd.DataFrame({"n": [1, 2]})
    named_index.index.name = Name()
    with_attrs = pd.DataFrame({"n": [1, 2]})
    with_attrs.attrs["note"] = Name()
    return {
        "odd_index": odd_index,
        "odd_columns": odd_columns,
        "odd_level": odd_level,
        "odd_series": odd_series,
        "user_index": UserIndex._simple_new(np.array([1, 2])),
        "lookalike_index": PandasLookalike._simple_new(np.array([1, 2])),
        "user_array": np.arange(4).view(UserArray),
        "lookalike_dtype": pd.DataFrame({"x": LookalikeArray([1, 2]), "n": [1, 2]}),
        "lookalike_series": pd.Series(LookalikeArray([1, 2])),
        "user_in_columns": pd.DataFrame([[1, 2]], columns=[Name(), "b"]),
        "named_series": pd.Series([1.0, 2.0], name=Name()),
        "named_index": named_index,
        "with_attrs": with_attrs,
        "axes_of_user_figure": UserFigure().add_subplot(),
    }


def _traps() -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    return {
        "zoned": datetime.datetime(2020, 1, 1, tzinfo=Zone()),
        "frame": pd.DataFrame({"o": [WithDunders(), "x"], "n": [1, 2]}),
        "labelled": pd.Series([1, 2], index=[WithDunders(), WithDunders()]),
        "objects": np.array([WithDunders(), WithProperty()], dtype=object),
        "with_property": WithProperty(),
        "with_getattr": WithGetattr(),
        "with_getattribute": WithGetattribute(),
        "with_dunders": WithDunders(),
        "raising": Raising(),
        "sneaky_dict": SneakyDict(a=1),
        "sneaky_list": SneakyList([1, 2]),
        "with_meta": WithMeta,
        "with_meta_instance": WithMeta(),
        "box": Box(),
        "holder": {"a": WithDunders(), "b": [WithProperty(), WithGetattr()], "c": Raising()},
        "listed": [WithDunders(), WithGetattribute(), (WithProperty(),), {WithDunders()}],
        **_lookalikes(),
    }


TRAP_NAMES = list(_traps())


@pytest.fixture
def trapped(kit: Kit) -> Kit:
    kit.shell.user_ns.update(_traps())
    EFFECTS.clear()
    return kit


async def test_variables_runs_no_user_code(trapped: Kit) -> None:
    table = text_of(await trapped.call("variables"))
    assert EFFECTS == []
    assert "with_dunders" in table and "box" in table and "sneaky_dict" in table


async def test_inspect_runs_no_user_code(trapped: Kit) -> None:
    for name in TRAP_NAMES:
        result = await trapped.call("inspect", name=name)
        assert EFFECTS == [], name
        assert name in text_of(result)


@pytest.mark.parametrize(
    "path",
    [
        "box.prop",
        "box.prop.value",
        "box.prop.shape",
        "box.getattr",
        "box.getattr.anything",
        "box.dunders",
        "box.items",
        "with_property.value",
        "with_property.shape",
        "with_getattr.missing",
        "with_getattribute.inner",
        "raising.anything",
        "with_meta.missing",
        "sneaky_dict.keys",
        "frame.o",
        "frame.columns",
        "labelled.index",
        "objects.T",
        "odd_index.index",
        "odd_index.n",
        "odd_columns.columns",
        "odd_columns.a",
        "odd_level.index",
        "odd_series.index",
        "lookalike_dtype.dtypes",
        "lookalike_dtype.x",
        "lookalike_series.dtype",
        "user_in_columns.b",
        "named_index.index",
        "user_array.T",
    ],
)
async def test_dotted_paths_run_no_user_code(trapped: Kit, path: str) -> None:
    await trapped.call("inspect", name=path)
    assert EFFECTS == [], path


async def test_properties_are_not_followed_but_instance_attributes_are(trapped: Kit) -> None:
    refused = await trapped.call("inspect", name="with_property.value")
    assert refused.is_error and "property" in text_of(refused)
    found = await trapped.call("inspect", name="box.dunders")
    assert not found.is_error and "WithDunders" in text_of(found)
    assert EFFECTS == []


async def test_history_runs_no_user_code(trapped: Kit, shell: InteractiveShell) -> None:
    out = shell.user_ns["Out"]
    for name, value in _traps().items():
        shell.run_cell(f"'{name}'", store_history=True)  # type: ignore[no-untyped-call]
        out[shell.execution_count - 1] = value  # as if the trap had been the cell's result
    EFFECTS.clear()
    text = text_of(await trapped.call("history", n=len(TRAP_NAMES)))
    assert EFFECTS == []
    assert "'holder'\nOut[" in text and "WithDunders object>" in text


async def test_a_dict_subclass_is_not_trusted_with_its_own_len_and_repr(trapped: Kit) -> None:
    text = text_of(await trapped.call("inspect", name="sneaky_dict"))
    assert EFFECTS == []
    assert "SneakyDict" in text


# --------------------------------------------------------------------------- secrets


@pytest.fixture
def secret_kit(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> tuple[Kit, list[str]]:
    api_key = "sk-ant-api03-" + secrets.token_urlsafe(40)
    token = secrets.token_hex(20)
    password = "pw-" + secrets.token_hex(8)
    env_key = secrets.token_hex(16)  # no known shape: only its environment name gives it away
    monkeypatch.setenv("ANTHROPIC_API_KEY", env_key)

    class Creds:
        def __init__(self) -> None:
            self.user = "ada"
            self.password = password

    kit.shell.user_ns.update(
        api_key=api_key,
        cfg={"token": token, "region": "eu"},
        creds=Creds(),
        os=os,
        copied=env_key,  # a secret's value under a harmless name
        shaped=[api_key],  # a key's shape under a harmless name
    )
    kit.shell.run_cell(f"my_key = {api_key!r}", store_history=True)  # type: ignore[no-untyped-call]
    kit.shell.run_cell(f"cfg2 = {{'token': {token!r}}}", store_history=True)  # type: ignore[no-untyped-call]
    return kit, [api_key, token, password, env_key]


PATHS_REFUSED = [
    "exit._ip._orig_sys_modules_main_mod",
    "exit._ip.user_ns",
    "exit._ip",
    "exit",
    "quit",
    "get_ipython",
    "In",
    "Out",
    "_ih",
    "__builtins__",
    "os",
    "os.environ",
    "os.path",
]


async def test_nothing_secret_appears_in_any_read_result(
    secret_kit: tuple[Kit, list[str]],
) -> None:
    kit, hidden = secret_kit
    results = [await kit.call("variables"), await kit.call("history", n=50)]
    names = ["api_key", "cfg", "cfg.token", "creds", "creds.password", "copied", "shaped"]
    for name in [*names, *PATHS_REFUSED, "my_key", "cfg2"]:
        results.append(await kit.call("inspect", name=name))
    for result in results:
        text = text_of(result)
        for secret in hidden:
            assert secret not in text, text
    assert "[redacted]" in text_of(results[0])


@pytest.mark.parametrize("path", PATHS_REFUSED)
async def test_interpreter_internals_are_refused(
    secret_kit: tuple[Kit, list[str]], path: str
) -> None:
    kit, _ = secret_kit
    result = await kit.call("inspect", name=path)
    assert result.is_error, text_of(result)
    assert "not inspected" in text_of(result) or "No variable" in text_of(result)


async def test_underscore_attributes_are_refused(kit: Kit) -> None:
    kit.shell.user_ns["box"] = Box()
    kit.shell.user_ns["box"]._hidden = 1
    result = await kit.call("inspect", name="box._hidden")
    assert result.is_error and "_hidden" in text_of(result)


async def test_python_tool_output_is_redacted(secret_kit: tuple[Kit, list[str]]) -> None:
    kit, hidden = secret_kit
    for code in (
        "print(api_key)",
        "import sys; print(cfg, file=sys.stderr)",
        "api_key",
        "copied",
        "raise ValueError(api_key)",
        "from IPython.display import display; display(creds.password)",
    ):
        text = text_of(await kit.python(code))
        card = repr(kit.runs[-1])  # what the notebook's card shows and saves
        for secret in hidden:
            assert secret not in text, (code, text)
            assert secret not in card, (code, card)
        assert "[redacted]" in text, (code, text)


# --------------------------------------------------------------------------- policy


async def test_read_tools_deny_refuses_and_says_how_to_enable(
    make_kit: Callable[..., Kit],
) -> None:
    kit = make_kit(read_policy="deny")
    kit.shell.user_ns["x"] = 1
    for tool, args in (("variables", {}), ("inspect", {"name": "x"}), ("history", {})):
        result = await kit.call(tool, **args)
        assert result.is_error, tool
        assert "Claude.read_tools" in text_of(result) and '"allow"' in text_of(result)


async def test_read_tools_ask_goes_through_the_approver(make_kit: Callable[..., Kit]) -> None:
    asked: list[Any] = []

    def approve(request: Any) -> Decision:
        asked.append((request.tool, dict(request.input)))
        return Allow() if request.tool == "inspect" else Deny()

    kit = make_kit(read_policy="ask", approve=approve)
    kit.shell.user_ns["x"] = 41
    assert "41" in text_of(await kit.call("inspect", name="x"))
    denied = await kit.call("variables")
    assert denied.is_error and "x" not in text_of(denied).split()
    assert asked == [("inspect", {"name": "x"}), ("variables", {})]


async def test_read_tools_ask_without_an_approver_denies(make_kit: Callable[..., Kit]) -> None:
    kit = make_kit(read_policy="ask")
    result = await kit.call("history")
    assert result.is_error and '%config Claude.read_tools = "allow"' in text_of(result)


async def test_secret_named_text_is_hidden_but_numbers_stay(kit: Kit) -> None:
    import pandas as pd

    password = "pw-" + secrets.token_hex(8)
    kit.shell.user_ns.update(
        users=pd.DataFrame({"name": ["ada"], "password": [password], "n_tokens": [17]}),
        max_tokens=1024,
        settings={"auth_token": password, "max_tokens": 2048},
    )
    frame = text_of(await kit.call("inspect", name="users"))
    assert password not in frame and "[redacted]" in frame and "ada" in frame and "17" in frame
    table = text_of(await kit.call("variables"))
    assert re.search(r"max_tokens .* 1024", table), table
    settings = text_of(await kit.call("inspect", name="settings"))
    assert "'auth_token': [redacted]" in settings and "'max_tokens': 2048" in settings


async def test_look_alikes_are_shown_by_type_and_real_parts_still_read(trapped: Kit) -> None:
    """A library's exact class with a user part, or a user class that claims the library's
    module, is an object like any other: its class named, nothing of it evaluated."""
    for name in (
        "odd_index", "odd_level", "lookalike_dtype", "user_index", "lookalike_index",
        "axes_of_user_figure",
    ):  # fmt: skip
        text = text_of(await trapped.call("inspect", name=name))
        assert "nothing of it was evaluated" in text, (name, text)
    assert EFFECTS == []
    # The library's own parts still read: a plain frame and its real index.
    import pandas as pd

    trapped.shell.user_ns["plain"] = pd.DataFrame({"n": [11, 12]}, index=pd.Index(["p", "q"]))
    frame = text_of(await trapped.call("inspect", name="plain"))
    assert "head(5)" in frame and "12" in frame and "q" in frame
    assert "Index([p, q])" in text_of(await trapped.call("inspect", name="plain.index"))
