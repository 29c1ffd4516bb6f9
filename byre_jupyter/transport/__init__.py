"""The transport layer: which CLI to run, and what runs it (a process, or a coroutine in tests)."""

from .base import Transport, TransportFactory
from .launch import LaunchSpec, build_argv, build_env, find_cli
from .memory import MemoryTransport, Peer, PeerEnd
from .process import SubprocessTransport, subprocess_transport

__all__ = [
    "LaunchSpec",
    "MemoryTransport",
    "Peer",
    "PeerEnd",
    "SubprocessTransport",
    "Transport",
    "TransportFactory",
    "build_argv",
    "build_env",
    "find_cli",
    "subprocess_transport",
]
