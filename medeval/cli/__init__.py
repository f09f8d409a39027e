"""The command line, ``python -m medeval``: one module per command group, registered in ``cli/main.py``.

Layer rules: see the docstring of ``medeval``."""

from medeval.cli.main import main

__all__ = ["main"]
