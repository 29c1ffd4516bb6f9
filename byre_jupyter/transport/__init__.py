"""The transport layer: which CLI to run, and the process that runs it."""

from .launch import LaunchSpec, build_argv, build_env, find_cli
from .process import SubprocessTransport

__all__ = ["LaunchSpec", "SubprocessTransport", "build_argv", "build_env", "find_cli"]
