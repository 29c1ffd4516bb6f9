"""Reading the user's objects without running their code: static lookups only.

An attribute read (``obj.x``), ``repr``, ``len``, ``isinstance`` (it falls back to a
``__class__`` property), even a dict lookup keyed by a class (a metaclass ``__hash__``) can run
the user's code. Everything here goes around those: classes are read through ``type``'s own
descriptors (``type.__dict__["__mro__"]`` etc.), instance attributes only from the instance
``__dict__`` (when the class's ``__dict__`` slot is the interpreter's own) or from ``__slots__``
members of the user's classes, the way :func:`inspect.getattr_static` does.

What the read tools may not reach at all (modules, ``os.environ``, IPython and kernel internals,
which hold the kernel's signing key and the process environment) is decided here too.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "class_lookup",
    "inherits",
    "instance_attributes",
    "is_class",
    "library_class",
    "mro",
    "off_limits",
    "type_module",
    "type_name",
    "type_qualname",
]

_TYPE_DICT = type.__dict__
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement

#: Packages whose objects are the interpreter's, not the user's: the shell, the kernel, its
#: session (signing key), its sockets, and this extension. Nothing of theirs is shown.
INTERNAL_PACKAGES = frozenset(
    {
        "IPython", "ipykernel", "traitlets", "zmq", "jupyter_client", "jupyter_core",
        "jupyter_server", "comm", "debugpy", "byre_jupyter",
    }
)  # fmt: skip


def inherits(cls: type, base: type) -> bool:
    """``issubclass`` by identity along the MRO: ``isinstance`` may call a ``__class__``
    property, and ``issubclass`` against an ABC hashes the class (a metaclass ``__hash__``)."""
    return any(klass is base for klass in mro(cls))


def is_class(value: object) -> bool:
    return inherits(type(value), type)


def mro(cls: type) -> tuple[type, ...]:
    found = _TYPE_DICT["__mro__"].__get__(cls, type)
    return found if type(found) is tuple else (cls,)


def class_dict(cls: type) -> Mapping[str, Any]:
    found = _TYPE_DICT["__dict__"].__get__(cls, type)
    return found if type(found) is types.MappingProxyType else {}


def class_lookup(cls: type, name: str) -> tuple[bool, Any]:
    """``(found, raw value)`` of ``name`` in the class dicts along ``cls``'s MRO."""
    for klass in mro(cls):
        namespace = class_dict(klass)
        if name in namespace:
            return True, namespace[name]
    return False, None


def _type_str(cls: type, attribute: str) -> str:
    found = _TYPE_DICT[attribute].__get__(cls, type)
    return found if type(found) is str else "?"


def type_qualname(cls: type) -> str:
    return _type_str(cls, "__qualname__")


def type_module(cls: type) -> str:
    return _type_str(cls, "__module__")


def type_name(value: object) -> str:
    """``DataFrame`` as ``pandas.DataFrame``, builtins bare; read without asking the object."""
    cls = type(value)
    module = type_module(cls)
    if module == "builtins":
        return type_qualname(cls)
    return f"{module.split('.')[0]}.{type_qualname(cls)}"


#: Per package: the ids of the classes its loaded modules hold, and how many modules were
#: loaded when they were collected (a module imported later may define more).
_LIBRARY_CLASSES: dict[str, tuple[int, frozenset[int]]] = {}


def library_class(cls: type, package: str) -> bool:
    """Whether ``cls`` is library code of ``package``: found, by identity, in the namespace of
    one of its modules the user already imported (what the library defines, and the
    library or stdlib classes it imports itself).

    Never by the ``__module__`` or ``__qualname__`` strings, which a class statement sets as
    it likes (``__module__ = "pandas.core.indexes.base"``): a user's class, a subclass of a
    library class included, lives in the user's namespace, not the library's. Nothing is
    imported here.
    """
    loaded = len(sys.modules)
    cached = _LIBRARY_CLASSES.get(package)
    if cached is None or cached[0] != loaded:
        found: set[int] = set()
        prefix = package + "."
        for name, module in list(sys.modules.items()):
            if type(module) is not types.ModuleType:
                continue  # a stand-in object registered as a module: its namespace is its own
            if type(name) is not str or not (name == package or name.startswith(prefix)):
                continue
            for value in list(_MODULE_DICT.__get__(module, types.ModuleType).values()):
                if is_class(value):
                    found.add(id(value))
        cached = _LIBRARY_CLASSES[package] = (loaded, frozenset(found))
    return id(cls) in cached[1]


_MODULE_DICT: Any = vars(types.ModuleType)["__dict__"]


def instance_attributes(value: object) -> Iterator[tuple[str, Any]]:
    """The object's own attributes: its instance ``__dict__`` and the ``__slots__`` of the
    user's classes, read without descriptors, properties or ``__getattr__``."""
    cls = type(value)
    found, slot = class_lookup(cls, "__dict__")
    if found and type(slot) is types.GetSetDescriptorType:
        namespace = slot.__get__(value, cls)
        if type(namespace) is dict:
            for name, item in list(namespace.items()):
                if type(name) is str:
                    yield name, item
    for klass in mro(cls):
        if not _TYPE_DICT["__flags__"].__get__(klass, type) & _HEAPTYPE:
            continue  # members of the interpreter's own types (frames, tracebacks) stay closed
        for name, member in list(class_dict(klass).items()):
            if type(member) is types.MemberDescriptorType and type(name) is str:
                try:
                    yield name, member.__get__(value, cls)
                except AttributeError:  # a slot never assigned
                    continue


def off_limits(value: object) -> str | None:
    """Why the read tools do not show ``value`` at all, or None if they may."""
    cls = type(value)
    if inherits(cls, types.ModuleType):
        return "modules are not inspected"
    if value is os.environ or inherits(cls, os._Environ):
        return "os.environ is not inspected (it holds the process's credentials)"
    owners = [cls]
    if is_class(value):
        owners.append(value)  # type: ignore[arg-type]  # a class: where it was defined counts
    if cls is types.MethodType or cls is types.BuiltinMethodType:
        owners.append(type(getattr(value, "__self__", None)))  # both types are the interpreter's
    for owner in owners:
        if type_module(owner).split(".")[0] in INTERNAL_PACKAGES:
            return "IPython and kernel internals are not inspected"
    return None
