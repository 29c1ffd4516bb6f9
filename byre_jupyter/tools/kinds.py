"""The types the read tools may ask anything: a registry of known-safe kinds, by exact class.

Reading an arbitrary object (its ``repr``, ``len``, a property) can run the user's code
(docs/security.md). So only the kinds registered in :data:`KINDS` are asked anything, and
each builds its own bounded summary: builtins (scalars, strings, containers: contents rendered
element by element, never by the elements' own ``repr``), some stdlib value types, and numpy
arrays and scalars, pandas objects, matplotlib figures and PIL images once the user imported
them. Matching is by exact class identity (a subclass of ``dict`` may override ``__len__``), or
for a library's ``family`` by the classes found in that library's own modules
(:func:`~.lookup.library_class`), never by the ``__module__`` a class claims. A container of the
library's exact class is read only when every part its summary calls a method on is library
code too (:attr:`Kind.parts`: a DataFrame's index, columns, arrays and dtypes). Everything else
is :func:`opaque`.
"""

from __future__ import annotations

import difflib
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..protocol import Image
from ..redact import REDACTED, is_secret_name
from .bounded import ToolLimits, clip
from .figures import lazy_class, pil_to_png, render_figure
from .lookup import inherits, is_class, library_class, type_module, type_name, type_qualname

__all__ = [
    "KINDS",
    "Description",
    "Kind",
    "Kinds",
    "NotFound",
    "guarded",
    "hidden_by_name",
    "human_size",
    "label",
    "opaque",
    "render",
    "shorten",
    "suggest",
]


@dataclass
class Description:
    """Text (already bounded) and images for one tool result."""

    text: str
    images: list[Image] = field(default_factory=list)
    is_error: bool = False


class NotFound(LookupError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------- kinds


def _blank(value: Any) -> str:
    return ""


def _no_memory(value: Any) -> tuple[int, bool] | None:
    return None


def _no_parts(value: Any) -> bool:
    return True


def _no_attributes(value: Any, name: str) -> Any:
    raise NotFound(f"a {type_name(value)} has no attributes to read here (methods are not called).")


@dataclass(frozen=True)
class Kind:
    """How the read tools handle one known-safe type; only these are asked anything."""

    text: Callable[[Any, int], str]
    """A repr-like text of about this many characters (our own, bounded)."""
    details: Callable[[Any, ToolLimits], Description] | None = None
    """``inspect``'s body; None: ``text`` with a larger budget."""
    size: Callable[[Any], str] = _blank
    """The variables table's shape/len column."""
    memory: Callable[[Any], tuple[int, bool] | None] = _no_memory
    """Bytes and whether that is deep (arrays, frames) or shallow."""
    attribute: Callable[[Any, str], Any] = _no_attributes
    """The dotted-path attributes this kind answers (like ``df.columns``); raises NotFound."""
    inline: bool = True
    """Show its ``text`` inside containers and in the value column (scalars, strings)."""
    parts: Callable[[Any], bool] = _no_parts
    """Whether the parts the functions above call methods on are library code too (a frame's
    index, columns, arrays, dtypes); a value whose parts are not is not read at all."""


class Kinds:
    """A registry of known-safe types, by exact class (as IPython's formatters ``for_type``).

    Classes of optional libraries are named by module (``for_type_by_name``,
    ``for_types_by_name``) and resolved only once the user imported that module, so nothing
    heavy is imported here. ``family=True`` also accepts the library's own subclasses
    (``RangeIndex`` for ``Index``): classes found in that package's modules, never a user's
    subclass, whatever ``__module__`` it claims.
    """

    def __init__(self) -> None:
        self._exact: dict[int, tuple[type, Kind]] = {}  # by id: hashing a class may run code
        self._pending: list[tuple[str, Callable[[Any], Iterable[type]], Kind]] = []
        self._families: list[tuple[str, str, Kind]] = []

    def for_type(self, cls: type, kind: Kind) -> None:
        self._exact[id(cls)] = (cls, kind)

    def for_type_by_name(self, module: str, name: str, kind: Kind, *, family: bool = False) -> None:
        if family:
            self._families.append((module, name, kind))
        else:
            self.for_types_by_name(module, _named(name), kind)

    def for_types_by_name(
        self, module: str, types_of: Callable[[Any], Iterable[type]], kind: Kind
    ) -> None:
        """Register ``types_of(module)`` once ``module`` has been imported by the user."""
        self._pending.append((module, types_of, kind))

    def lookup(self, value: object) -> Kind | None:
        """The kind for ``value``'s exact class (or library family), or None: not to be read."""
        if self._pending:
            self._resolve_imported()
        cls = type(value)
        entry = self._exact.get(id(cls))
        found = entry[1] if entry is not None and entry[0] is cls else None
        for module, name, kind in self._families if found is None else ():
            base = lazy_class(module, name)
            if base is None or not inherits(cls, base):
                continue
            if cls is base or library_class(cls, module.split(".")[0]):
                found = kind
                break
        if found is None:
            return None
        try:
            return found if found.parts(value) else None
        except Exception:  # a library object in a broken state: not read, as any other object
            return None

    def _resolve_imported(self) -> None:
        pending = []
        for module, types_of, kind in self._pending:
            loaded = sys.modules.get(module)
            if loaded is None:
                pending.append((module, types_of, kind))
                continue
            try:
                found = list(types_of(loaded))
            except AttributeError:  # the module is still being imported: try again later
                pending.append((module, types_of, kind))
                continue
            for cls in found:
                self.for_type(cls, kind)
        self._pending = pending


KINDS = Kinds()


# --------------------------------------------------------------------------- small texts


def opaque(value: object) -> str:
    """What an object the tools do not read looks like: ``<module.Class object>``."""
    if is_class(value):
        return f"<class {type_module(value).split('.')[0]}.{type_qualname(value)}>"  # type: ignore[arg-type]
    return f"<{type_name(value)} object>"


def render(value: object, width: int = 80, depth: int = 0) -> str:
    """A bounded, repr-like text of ``value`` built by us: known kinds render themselves
    (containers recurse), everything else is :func:`opaque`."""
    kind = KINDS.lookup(value)
    if kind is None:
        return opaque(value)
    if depth >= 4:
        return "…"
    try:
        if not kind.inline and depth > 0:
            size = kind.size(value)
            return f"<{type_name(value)}{' ' + size if size else ''}>"
        return kind.text(value, max(width, 8))
    except Exception:  # a library object in a broken state: show it as any other object
        return opaque(value)


_NUMBERS = (int, float, complex, bool, type(None))


def hidden_by_name(name: object, value: object) -> bool:
    """Whether ``value`` is shown as ``[redacted]`` because its name (a variable, attribute,
    key or column) says it is a secret. Numbers stay visible: ``max_tokens = 1024`` is not a
    credential, and a number rarely is."""
    if type(name) is not str or not is_secret_name(name):
        return False
    return not any(type(value) is number for number in _NUMBERS)


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _number_text(value: Any, width: int) -> str:
    if type(value) is int and value.bit_length() > 4_000:  # str(int) refuses > 4300 digits
        return f"<int of {value.bit_length()} bits>"
    return shorten(repr(value), max(width, 40))


def _string_text(value: Any, width: int) -> str:
    if len(value) > width:
        return repr(value[:width]) + f"… ({len(value)} total)"
    return repr(value)


def _length(value: Any) -> str:
    return f"len {len(value)}"


def _shallow(value: Any) -> tuple[int, bool]:
    return sys.getsizeof(value), False


def label(value: object, width: int = 40) -> str:
    """A key or column label: strings bare, other known scalars as repr, the rest opaque."""
    if type(value) is str:
        return shorten(value, width)
    return render(value, width, depth=1)


def _container_text(value: Any, width: int, depth: int = 0) -> str:
    cls = type(value)
    if cls is dict:
        opening, closing = "{", "}"
    elif cls is list:
        opening, closing = "[", "]"
    elif cls is tuple:
        opening, closing = "(", ",)" if len(value) == 1 else ")"
    elif cls is set:
        opening, closing = ("{", "}") if value else ("set(", ")")
    else:
        opening, closing = ("frozenset({", "})") if value else ("frozenset(", ")")
    parts: list[str] = []
    used = len(opening) + len(closing)
    items = iter(value.items()) if cls is dict else iter(value)
    for count, item in enumerate(items):
        if cls is dict:
            key, element = item
            shown = render(key, 40, depth + 1) + ": "
            if hidden_by_name(key, element):
                shown += REDACTED
            else:
                shown += _element(element, width - used, depth + 1)
        else:
            shown = _element(item, width - used, depth + 1)
        if used + len(shown) > width and parts:
            parts.append(f"… {len(value) - count} more")
            break
        parts.append(shown)
        used += len(shown) + 2
    return opening + ", ".join(parts) + closing


def _element(value: object, width: int, depth: int) -> str:
    if depth >= 4:
        return "…"
    kind = KINDS.lookup(value)
    if kind is _CONTAINER:
        return _container_text(value, max(width, 20), depth)
    return render(value, min(max(width, 20), 200), depth)


def _container_details(value: Any, limits: ToolLimits) -> Description:
    text = _container_text(value, min(limits.max_inspect_chars - 200, 1_500))
    return Description(f"len {len(value)}\nvalue: {text}")


_cls: type
for _cls in (type(None), bool, int, float, complex):
    KINDS.for_type(_cls, Kind(_number_text, memory=_shallow))
for _cls in (str, bytes, bytearray):
    KINDS.for_type(_cls, Kind(_string_text, size=_length, memory=_shallow))
KINDS.for_type(range, Kind(_number_text, size=_length, memory=_shallow))
_CONTAINER = Kind(_container_text, _container_details, size=_length, memory=_shallow, inline=False)
for _cls in (list, tuple, dict, set, frozenset):
    KINDS.for_type(_cls, _CONTAINER)


# --------------------------------------------------------------------------- stdlib values


def _value_text(value: Any, width: int) -> str:
    return shorten(repr(value), max(width, 40))


def _zoned_text(value: Any, width: int) -> str:
    """datetime and time format their ``tzinfo`` by its ``repr``: the stdlib's zones only."""
    zone = type(value.tzinfo)
    zoneinfo = sys.modules.get("zoneinfo")
    safe_zones = [type(None), sys.modules["datetime"].timezone, getattr(zoneinfo, "ZoneInfo", None)]
    if not any(zone is safe for safe in safe_zones):
        return f"<{type_name(value)} with a {type_name(value.tzinfo)} zone>"
    return _value_text(value, width)


def _named(*names: str) -> Callable[[Any], Iterable[type]]:
    return lambda module: [getattr(module, name) for name in names]


_VALUE = Kind(_value_text, memory=_shallow)
KINDS.for_types_by_name("datetime", _named("date", "timedelta", "timezone"), _VALUE)
KINDS.for_types_by_name("decimal", _named("Decimal"), _VALUE)
KINDS.for_types_by_name("fractions", _named("Fraction"), _VALUE)
KINDS.for_types_by_name("uuid", _named("UUID"), _VALUE)
KINDS.for_types_by_name(
    "pathlib", _named("PosixPath", "WindowsPath", "PurePosixPath", "PureWindowsPath"), _VALUE
)
KINDS.for_types_by_name("datetime", _named("datetime", "time"), Kind(_zoned_text, memory=_shallow))


# --------------------------------------------------------------------------- numpy


def _numpy_scalar_types(numpy: Any) -> Iterable[type]:
    # numpy's own scalars (np.float64(1.5)); void and object_ may hold arbitrary objects
    return set(numpy.sctypeDict.values()) - {numpy.void, numpy.object_}


KINDS.for_types_by_name("numpy", _numpy_scalar_types, _VALUE)

_PLAIN_DTYPES = "biufcmMUS"  # numbers, dates and strings: numpy formats them itself


def _array_size(array: Any) -> str:
    return "x".join(str(n) for n in array.shape) if array.shape else "scalar"


def _array_memory(array: Any) -> tuple[int, bool]:
    return int(array.nbytes), True


def _array_text(array: Any, width: int) -> str:
    numpy = sys.modules["numpy"]
    if array.dtype.kind in _PLAIN_DTYPES:
        text = numpy.array2string(array, threshold=60, edgeitems=3, max_line_width=100)
    else:  # objects: their own reprs would run; show what we can read
        text = _container_text(array.ravel()[:20].tolist(), width)
    return shorten(text, max(width, 200))


def _array_details(array: Any, limits: ToolLimits) -> Description:
    numpy = sys.modules["numpy"]
    parts = [f"shape: {array.shape}; dtype: {array.dtype}; size: {human_size(array.nbytes)}"]
    kind = array.dtype.kind
    if kind in "biuf" and array.size:

        def stats() -> str:
            with numpy.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                line = (
                    f"min: {numpy.nanmin(array)!r}; max: {numpy.nanmax(array)!r}; "
                    f"mean: {numpy.nanmean(array)!r}"
                )
                if kind == "f":
                    line += f"; NaNs: {int(numpy.isnan(array).sum())}"
            return line

        parts += guarded("", stats)
    if kind not in _PLAIN_DTYPES:
        parts.append(f"({array.dtype} elements are shown by type, not evaluated)")
    parts += guarded("preview:", lambda: _array_text(array, 2_000))
    return Description("\n".join(parts))


def _array_attribute(array: Any, name: str) -> Any:
    if name in ("T", "shape", "dtype", "size", "ndim"):
        return getattr(array, name)
    raise NotFound(f"numpy arrays answer .T, .shape, .dtype, .size and .ndim here, not .{name}.")


KINDS.for_type_by_name(
    "numpy",
    "ndarray",
    Kind(
        _array_text,
        _array_details,
        size=_array_size,
        memory=_array_memory,
        attribute=_array_attribute,
        inline=False,
    ),
)


# --------------------------------------------------------------------------- pandas


def _pandas() -> Any:
    return sys.modules["pandas"]


def _numpy_dtype(cls: type) -> bool:
    """numpy's own dtype classes: those of its scalar types' dtypes (numpy 1.24 makes them on
    the fly, in no module's namespace) and those in its modules (``numpy.dtypes``)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not inherits(cls, numpy.dtype):
        return False
    if library_class(cls, "numpy"):
        return True
    return any(type(numpy.dtype(scalar)) is cls for scalar in set(numpy.sctypeDict.values()))


def _library_dtype(dtype: Any) -> bool:
    cls = type(dtype)
    if _numpy_dtype(cls):
        return True
    if not library_class(cls, "pandas"):
        return False
    if cls is _pandas().CategoricalDtype and dtype.categories is not None:
        return _library_index(dtype.categories)
    return True


def _library_array(array: Any) -> bool:
    """numpy's or pandas' own array, with a dtype of theirs (``Categorical``'s categories too)."""
    cls = type(array)
    if cls is not sys.modules["numpy"].ndarray and not library_class(cls, "pandas"):
        return False
    return _library_dtype(array.dtype)


def _library_index(index: Any) -> bool:
    """An Index of pandas' own classes throughout: each level of a MultiIndex, the array that
    holds its labels, and names that are plain values."""
    pandas = _pandas()
    cls = type(index)
    if not (inherits(cls, pandas.Index) and library_class(cls, "pandas")):
        return False
    if not all(name is None or _plain_data(name) for name in index.names):
        return False
    if cls is pandas.MultiIndex:
        # ._levels, not .levels: that one calls each level's own _rename
        return all(_library_index(level) for level in index._levels)
    if cls is pandas.RangeIndex:
        return True  # start, stop and step only (its ._data would build the whole array)
    return _library_array(index._data)


def _plain_data(value: Any, depth: int = 0) -> bool:
    """Values deep-copied or printed without running the user's code: builtin containers of
    plain labels (a frame's ``attrs``, which every ``head()`` deep-copies)."""
    cls = type(value)
    if any(cls is container for container in (list, tuple, set, frozenset)):
        items: list[Any] = list(value)
    elif cls is dict:
        items = [*value, *value.values()]
    else:
        return _plainlabel(value)
    return depth < 4 and len(items) <= 1_000 and all(_plain_data(v, depth + 1) for v in items)


def _library_values(container: Any) -> bool:
    """A DataFrame's or Series' arrays, through pandas' own block manager."""
    manager = container._mgr
    if not library_class(type(manager), "pandas"):
        return False
    return all(_library_array(array) for array in manager.arrays) and _plain_data(container.attrs)


def _frame_parts(frame: Any) -> bool:
    # The labels too: pandas hashes them for many reads (memory_usage walks the columns through
    # its item cache; pandas 2.x builds the hash engine for is_unique), so a user object as a
    # label would run its __hash__ (and __eq__).
    return (
        _library_index(frame.index)
        and _library_index(frame.columns)
        and _labels_plain(frame.index)
        and _labels_plain(frame.columns)
        and _library_values(frame)
    )


def _series_parts(series: Any) -> bool:
    name = series.name
    plain_name = name is None or _plain_data(name)
    return (
        plain_name
        and _library_index(series.index)
        and _labels_plain(series.index)
        and _library_values(series)
    )


def _labels_plain(index: Any) -> bool:
    """Whether an Index holds only labels we can print without running the user's code."""
    if index.dtype.kind != "O":
        return True
    return all(_plainlabel(label) for label in index.tolist())


def _plainlabel(value: object) -> bool:
    if type(value) is tuple:
        return all(_plainlabel(v) for v in value)
    kind = KINDS.lookup(value)
    return kind is not None and kind.inline


def _needs_rendering(dtype: Any) -> bool:
    """Columns whose cells pandas would format by calling their own ``__str__``/``__repr__``
    (``dtype`` is library code: :func:`_library_dtype`)."""
    if inherits(type(dtype), sys.modules["numpy"].dtype):
        return bool(dtype.kind in "OV")
    categories = getattr(dtype, "categories", None)  # a pandas dtype (a library class)
    return categories is not None and not _labels_plain(categories)


def _plain_cell(value: object) -> object:
    return value if _plainlabel(value) and type(value) is not tuple else render(value, 40, 1)


def _frame_for_printing(frame: Any) -> Any | None:
    """``frame`` (a few rows) with every non-plain cell replaced by our own text; None when
    its labels are not plain values."""
    if not (_labels_plain(frame.columns) and _labels_plain(frame.index)):
        return None
    safe = frame.copy()
    numeric = _pandas().api.types.is_numeric_dtype
    columns = zip(frame.columns.tolist(), frame.dtypes.tolist(), strict=True)
    for position, (column, dtype) in enumerate(columns):
        if hidden_by_name(column, "") and not numeric(dtype):
            cells: list[object] = [REDACTED] * len(frame)
        elif _needs_rendering(dtype):
            cells = [_plain_cell(v) for v in frame.iloc[:, position].tolist()]
        else:
            continue
        safe.isetitem(position, _pandas().Series(cells, index=frame.index, dtype=object))
    return safe


def _pandas_options() -> Any:
    return _pandas().option_context(
        "display.max_columns", 20, "display.width", 120, "display.max_colwidth", 40
    )


def _frame_text(frame: Any, width: int) -> str:
    head = _frame_for_printing(frame.head(5))
    if head is None:
        return f"<DataFrame {_array_size(frame)}; labels not shown>"
    with _pandas_options():
        return clip(head.to_string(), max(width, 400))


def _frame_memory(frame: Any) -> tuple[int, bool]:
    return int(frame.memory_usage(deep=False).sum()), True


def _frame_details(frame: Any, limits: ToolLimits) -> Description:
    rows, columns = frame.shape
    dtypes = [
        f"  {label(col)}: {dtype}"
        for col, dtype in zip(frame.columns.tolist()[:50], frame.dtypes.tolist()[:50], strict=True)
    ]
    if columns > 50:
        dtypes.append(f"  … {columns - 50} more columns")
    parts = [
        f"shape: {rows} rows, {columns} columns; "
        f"memory: {human_size(_frame_memory(frame)[0])} (shallow)",
        f"index: {type_qualname(type(frame.index))}",
        "dtypes:",
        *dtypes,
    ]
    head = _frame_for_printing(frame.head(5))
    if head is None:
        parts.append("(row or column labels are not plain values: rows not shown)")
        return Description("\n".join(parts))
    numeric = frame.select_dtypes(include="number").iloc[:, :20]
    with _pandas_options():
        parts += guarded("head(5):", head.to_string)
        if numeric.shape[1]:
            parts += guarded("describe():", lambda: numeric.describe().to_string())
    return Description("\n".join(parts))


def _frame_attribute(frame: Any, name: str) -> Any:
    if name in ("columns", "index", "dtypes"):
        return getattr(frame, name)
    for position, column in enumerate(frame.columns.tolist()):
        if type(column) is str and column == name:
            return frame.iloc[:, position]
    raise NotFound(
        f"The DataFrame has no column {name!r} (here it answers its columns by name, and "
        ".columns, .index and .dtypes)."
        + suggest(name, [c for c in frame.columns.tolist() if type(c) is str])
    )


def _series_for_printing(series: Any) -> Any | None:
    frame = _frame_for_printing(series.head(5).to_frame(name="value"))
    return None if frame is None else frame.iloc[:, 0]


def _series_text(series: Any, width: int) -> str:
    head = _series_for_printing(series)
    if head is None:
        return f"<Series len {len(series)}; labels not shown>"
    return clip(head.to_string(), max(width, 400))


def _series_details(series: Any, limits: ToolLimits) -> Description:
    parts = [
        f"name: {label(series.name)}; length: {len(series)}; dtype: {series.dtype}",
        f"index: {type_qualname(type(series.index))}",
    ]
    head = _series_for_printing(series)
    if head is None:
        parts.append("(labels are not plain values: rows not shown)")
        return Description("\n".join(parts))
    with _pandas_options():
        parts += guarded("head(5):", head.to_string)
        if _pandas().api.types.is_numeric_dtype(series.dtype):
            parts += guarded("describe():", lambda: series.describe().to_string())
    return Description("\n".join(parts))


def _series_attribute(series: Any, name: str) -> Any:
    if name in ("index", "dtype"):
        return getattr(series, name)
    raise NotFound(f"Series answer .index and .dtype here, not .{name}.")


def _index_text(index: Any, width: int) -> str:
    labels = [label(v) if _plainlabel(v) else render(v, 40, 1) for v in index[:20].tolist()]
    more = f", … {len(index) - 20} more" if len(index) > 20 else ""
    return shorten(f"{type_qualname(type(index))}([{', '.join(labels)}{more}])", width)


def _index_details(index: Any, limits: ToolLimits) -> Description:
    text = _index_text(index, 4_000)
    return Description(f"length: {len(index)}; dtype: {index.dtype}\n{text}")


def _series_memory(series: Any) -> tuple[int, bool]:
    return int(series.memory_usage(deep=False)), True


KINDS.for_type_by_name(
    "pandas",
    "DataFrame",
    Kind(
        _frame_text,
        _frame_details,
        size=_array_size,
        memory=_frame_memory,
        attribute=_frame_attribute,
        inline=False,
        parts=_frame_parts,
    ),
)
KINDS.for_type_by_name(
    "pandas",
    "Series",
    Kind(
        _series_text,
        _series_details,
        size=_array_size,
        memory=_series_memory,
        attribute=_series_attribute,
        inline=False,
        parts=_series_parts,
    ),
)
KINDS.for_type_by_name(
    "pandas",
    "Index",
    Kind(_index_text, _index_details, size=_length, inline=False, parts=_library_index),
    family=True,
)


# --------------------------------------------------------------------------- images


def _figure_of(value: Any) -> Any:
    return value if lazy_class("matplotlib.figure", "Figure") is type(value) else value.figure


def _figure_text(value: Any, width: int) -> str:
    figure = _figure_of(value)
    width_in, height_in = figure.get_size_inches()
    return f"<{type_qualname(type(value))}: figure with {len(figure.axes)} axes, " \
        f"{width_in:.1f}x{height_in:.1f} in>"  # fmt: skip


def _figure_details(value: Any, limits: ToolLimits) -> Description:
    figure = _figure_of(value)
    width_in, height_in = figure.get_size_inches()
    text = f"Figure with {len(figure.axes)} axes, {width_in:.1f}x{height_in:.1f} in"
    return Description(text, [render_figure(figure, limits.figure_dpi)])


def _image_text(image: Any, width: int) -> str:
    return f"<PIL image {image.size[0]}x{image.size[1]} {image.mode}>"


def _image_details(image: Any, limits: ToolLimits) -> Description:
    text = f"PIL image, size {image.size[0]}x{image.size[1]}, mode {image.mode}"
    return Description(text, [pil_to_png(image)])


def _figure_parts(value: Any) -> bool:
    """An Axes is drawn through its figure: matplotlib's own Figure, not a user's subclass."""
    return type(_figure_of(value)) is lazy_class("matplotlib.figure", "Figure")


_FIGURE = Kind(_figure_text, _figure_details, inline=False, parts=_figure_parts)
KINDS.for_type_by_name("matplotlib.figure", "Figure", _FIGURE)
KINDS.for_type_by_name("matplotlib.axes", "Axes", _FIGURE, family=True)
KINDS.for_type_by_name("PIL.Image", "Image", Kind(_image_text, _image_details), family=True)


# --------------------------------------------------------------------------- helpers


def human_size(size: int) -> str:
    amount = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if amount < 1024 or unit == "GiB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} TiB"


def suggest(word: str, candidates: Iterable[str]) -> str:
    matches = difflib.get_close_matches(word, list(candidates), n=5, cutoff=0.6)
    if not matches:
        return ""
    return " Did you mean: " + ", ".join(matches) + "?"


def guarded(title: str, render_section: Callable[[], str]) -> list[str]:
    """A section of a summary; if computing it fails, say so instead of failing the summary."""
    try:
        text = render_section()
    except Exception as e:
        text = f"(failed: {type(e).__name__}: {e})"
    return [title, text] if title else [text]
