"""The frontend bridge's kernel end (docs/bridge.md): the ``byre.bridge`` comm to the
JupyterLab / Notebook 7 extension in ``labextension/``.

Beside ``transport``: it owns a channel to another program and knows nothing of the tools,
the turns or the widgets above it. ``messages`` describes each message once (the
TypeScript side is checked against it); ``channel`` keeps the comms and their requests.
"""

from .channel import (
    PROTOCOL,
    TARGET,
    Bridge,
    BridgeError,
    BridgeTurn,
    Hello,
    PageClosedError,
    announce_turn,
    bridge_of,
    install_bridge,
    uninstall_bridge,
)
from .messages import (
    ApplyEdits,
    Ping,
    ReadNotebook,
    RestoreRecord,
    RunBegin,
    RunEnd,
    RunOutput,
    ShowLive,
)

__all__ = [
    "PROTOCOL",
    "TARGET",
    "ApplyEdits",
    "Bridge",
    "BridgeError",
    "BridgeTurn",
    "Hello",
    "PageClosedError",
    "Ping",
    "ReadNotebook",
    "RestoreRecord",
    "RunBegin",
    "RunEnd",
    "RunOutput",
    "ShowLive",
    "announce_turn",
    "bridge_of",
    "install_bridge",
    "uninstall_bridge",
]
