"""``python -m byre_jupyter.bridge --schema``: print the bridge's messages as JSON, the
checked-in ``labextension/src/messages.json`` (messages.py, :func:`describe`)."""

import sys

from .messages import render

if sys.argv[1:] != ["--schema"]:
    sys.exit("usage: python -m byre_jupyter.bridge --schema")
sys.stdout.write(render())
