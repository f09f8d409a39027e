"""What keeps start-up light: sqlite-utils without pandas.

sqlite-utils imports pandas (most of a second on a small server) at import time, only to map ``pandas.Timestamp``
to ``TEXT`` when it creates a table from rows that hold one; medeval never inserts pandas values. So that every
command and page that opens the database does not pay for pandas, :func:`install` (called by ``medeval``'s
``__init__``) has ``sqlite_utils.db`` import as if pandas were not installed -- its own documented fallback --
unless pandas is loaded already. pandas itself stays importable; a page or command that uses it loads it then.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

_MODULE = "sqlite_utils.db"


class _Loader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        hide = "pandas" not in sys.modules
        if hide:
            sys.modules["pandas"] = None  # import pandas -> ImportError, which sqlite_utils.db catches
        try:
            self._loader.exec_module(module)
        finally:
            if hide and sys.modules.get("pandas", 0) is None:
                del sys.modules["pandas"]


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
