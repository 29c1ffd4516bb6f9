"""The frontend bridge (labextension/, docs/bridge.md) and the wheel agree with the kernel side:
one version, one extension name shipped where JupyterLab looks, one comm target and protocol."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import byre_jupyter
from byre_jupyter import bridge as notebook_bridge

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "labextension"


def _package() -> dict[str, object]:
    loaded: dict[str, object] = json.loads((EXTENSION / "package.json").read_text())
    return loaded


def test_the_extension_has_the_package_version() -> None:
    assert _package()["version"] == byre_jupyter.__version__


def test_the_wheel_ships_the_build_where_jupyterlab_looks() -> None:
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    name = _package()["name"]
    shared = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    out_dir = _package()["jupyterlab"]["outputDir"]  # type: ignore[index]
    built = (EXTENSION / str(out_dir)).resolve().relative_to(ROOT).as_posix()
    assert shared[built] == f"share/jupyter/labextensions/{name}"
    assert shared["labextension/install.json"] == f"share/jupyter/labextensions/{name}/install.json"
    install = json.loads((EXTENSION / "install.json").read_text())
    assert install["packageName"] == pyproject["project"]["name"]
    hook = pyproject["tool"]["hatch"]["build"]["hooks"]["jupyter-builder"]
    assert all(target.startswith(built + "/") for target in hook["ensured-targets"])
    assert built + "/" in (ROOT / ".gitignore").read_text()  # build output is never committed


def test_both_ends_speak_the_same_protocol() -> None:
    source = (EXTENSION / "src" / "protocol.ts").read_text()
    assert re.findall(r"export const TARGET = '([^']+)';", source) == [notebook_bridge.TARGET]
    assert re.findall(r"export const PROTOCOL = (\d+);", source) == [str(notebook_bridge.PROTOCOL)]
    assert re.findall(r"export const VERSION = '([^']+)';", source) == [byre_jupyter.__version__]
