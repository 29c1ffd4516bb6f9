"""The kernel tools, one module each: every module holds one ``TOOL`` record (``tools/spec.py``).
``tools/registry.py`` lists them; a new tool is a module here and a line there."""
