"""Metric plugins: loaded once, explicitly, when ``medeval`` or the web app starts.

Two sources, the way datasette finds its plugins:

* the ``medeval.metrics`` entry-point group of the installed distributions (``[project.entry-points."medeval.metrics"]``
  in a plugin's ``pyproject.toml``): each entry point is a module, imported, or a function, called; either registers
  its metrics with :func:`medeval.register_metric`;
* the modules named in the setting ``MEDEVAL_PLUGINS`` (comma-separated importable module names), each calling
  ``register_metric`` on import.

:func:`load_plugins` is called by the CLI's entry point and by the web app's start, never as a side effect of
importing medeval. A plugin that fails to load is a :class:`MedevalError` naming it and its error, not a traceback.
See ``docs/metrics.md``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import types

from medeval.core import settings
from medeval.core.errors import MedevalError

GROUP = "medeval.metrics"
SETTING = "MEDEVAL_PLUGINS"
_MODULE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_loaded: set[str] = set()  # what this process has loaded ("entry point NAME = VALUE", "module NAME")


def plugin_modules(value: str | None = None) -> list[str]:
    """The module names of ``MEDEVAL_PLUGINS`` (or ``value``), checked: each an importable dotted name."""
    raw = settings.get(SETTING) if value is None else value
    names = [n.strip() for n in (raw or "").split(",") if n.strip()]
    for n in names:
        if not _MODULE_RE.fullmatch(n):
            raise MedevalError(f"{SETTING}: {n!r} is not a module name (comma-separated importable module names, "
                               f"e.g. mylab.dice,mylab.bertscore)")
    return names


def _import(module: str, what: str) -> types.ModuleType:
    try:
        return importlib.import_module(module)
    except MedevalError as e:  # e.g. a metric name registered twice
        raise MedevalError(f"{what} {module!r}: {e}") from None
    except ModuleNotFoundError as e:
        raise MedevalError(f"{what} {module!r} could not be imported: {e} (is it installed, or its folder on "
                           f"PYTHONPATH?)") from None
    except Exception as e:
        raise MedevalError(f"{what} {module!r} failed on import: {type(e).__name__}: {e}") from None


def load_entry_points() -> list[str]:
    """Load every ``medeval.metrics`` entry point not loaded yet; returns their names."""
    done = []
    for ep in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        key = f"entry point {ep.name} = {ep.value}"
        if key in _loaded:
            continue
        what = f"plugin entry point {ep.name!r} ({ep.value}, group {GROUP})"
        _import(ep.module, what)  # its import error, worded; then the function it names, if any
        if ep.attr:
            try:
                obj = ep.load()
            except AttributeError:
                raise MedevalError(f"{what}: module {ep.module} has no {ep.attr}") from None
            if not callable(obj):
                raise MedevalError(f"{what}: {ep.attr} is not a function (an entry point names a module, or a "
                                   f"function that registers metrics)")
            try:
                obj()
            except MedevalError as e:
                raise MedevalError(f"{what}: {e}") from None
            except Exception as e:
                raise MedevalError(f"{what} failed: {type(e).__name__}: {e}") from None
        _loaded.add(key)
        done.append(ep.name)
    return done


def load_modules(value: str | None = None) -> list[str]:
    """Import the modules of ``MEDEVAL_PLUGINS`` (or ``value``) not imported yet; returns their names."""
    done = []
    for name in plugin_modules(value):
        key = f"module {name}"
        if key in _loaded:
            continue
        _import(name, f"plugin module (from {SETTING})")
        _loaded.add(key)
        done.append(name)
    return done


def load_plugins(value: str | None = None) -> list[str]:
    """Load the metric plugins: the ``medeval.metrics`` entry points, then the modules of ``MEDEVAL_PLUGINS``
    (or ``value``). Once per process: a second call loads only what is new. Returns what was loaded."""
    return load_entry_points() + load_modules(value)
