"""A kernel started the way a Jupyter kernel gateway starts one: only PATH and KERNEL_*.

jupyter_kernel_gateway passes its kernels ``PATH``, ``KERNEL_*`` and the names in its
allow-list, nothing else (docs/gateway.md). The first ``%%claude`` cell must then say what to
allow-list on the gateway, not only "Claude Code CLI not found". PYTHONPATH is passed too, only
so that the kernel imports this checkout (as ./dev does for every test kernel).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.kernel import KernelDriver

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def gateway_kernel(kernels: Callable[..., Any]) -> KernelDriver:
    # The interpreter's own bin dir and the system's: no `claude` there (checked below).
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env = {
        "PATH": path,
        "KERNEL_GATEWAY": "1",
        "KERNEL_ID": str(uuid.uuid4()),
        "KERNEL_USERNAME": "someone",
        "PYTHONPATH": str(ROOT),
    }
    driver: KernelDriver = kernels(env, load=False)
    return driver


def test_cli_not_found_in_a_gateway_kernel_says_what_to_allow_list(
    gateway_kernel: KernelDriver,
) -> None:
    probe = gateway_kernel.run(
        "import os, shutil; print(shutil.which('claude'), 'HOME' in os.environ)"
    )
    assert probe.texts().strip() == "None False", probe.texts()  # the premise: a gateway's env
    assert gateway_kernel.run("%load_ext byre_jupyter").reply["status"] == "ok"
    cell = gateway_kernel.run("%%claude\nhello")
    text = cell.texts().replace("\\_", "_").replace("\\`", "`")  # Markdown escapes
    assert "Claude Code CLI not found" in text
    assert "KG_ENV_PROCESS_WHITELIST=HOME,ANTHROPIC_API_KEY,BYRE_CLAUDE_PATH" in text
    assert "EG_ENV_PROCESS_WHITELIST" in text
    assert "docs/gateway.md" in text


def test_doctor_in_a_gateway_kernel_names_the_gateway(gateway_kernel: KernelDriver) -> None:
    gateway_kernel.run("%load_ext byre_jupyter")
    text = gateway_kernel.run("%claude doctor").texts()
    assert "Kernel gateway" in text
    assert "KG_ENV_PROCESS_WHITELIST" in text and "--KernelGatewayApp.env_process_whitelist" in text
