"""The loaded-extension shell fixture (tests/support/shells.py)."""

from support.shells import shell

__all__ = ["shell"]
