"""The process's state in one explicit object, created at start-up: :class:`Runtime`.

What a process keeps between operations -- the web app's idle database connections, the discovered schema
migrations, the password hasher, the loaded embedding models -- lives in a ``Runtime``, not in module globals
(datasette's ``Datasette`` object is the model). Each piece is an instance of a named class of the layer that owns
it, made on its first use by that layer's accessor and kept by this runtime:

* ``pool`` -- :class:`medeval.store.db.ConnectionPool` (``medeval.store.db.pool()``);
* ``migrations`` -- :class:`medeval.store.migrate.Migrations` (``medeval.store.migrate.discovered()``);
* ``hasher`` -- :class:`medeval.accounts.passwords.ProfileHasher` (``medeval.accounts.passwords.hasher()``),
  production parameters whatever the settings say when ``production_hashing`` is true;
* ``embeddings`` -- :class:`medeval.engine.embeddings.EmbeddingBackends` (``medeval.engine.embeddings.backends()``).

This module sits in ``core`` so every layer can reach its part; it imports none of them (the fields are typed in
words). Who creates the runtime:

* the web app: ``server.py`` installs one (:func:`install`) before it builds the app, and switches production
  hashing on (``medeval.accounts.auth.use_production_hashing()``);
* the command line: ``medeval.cli.main`` starts one (:func:`start`) when a command starts;
* a library user or a test that does neither gets :func:`default`, created on first use;
* a test that needs its own state (a cheap hasher, a migration list without one, a fake embedding model) runs
  inside ``with runtime.use(Runtime(...)):`` -- or ``runtime.use(runtime.current().but(hasher=...))`` to keep
  the rest -- and the previous runtime is back afterwards.

The current runtime is one per process (every thread of the web app shares it), not per thread or task.
"""

from __future__ import annotations

import dataclasses
import threading
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterator, TypeVar

T = TypeVar("T")


@dataclass(eq=False)
class Runtime:
    """One process's state. Fields left None are made on first use by the layer that owns them (:meth:`part`)."""

    name: str = "default"
    production_hashing: bool = False  # every password hashed with production parameters (the web app's)
    pool: Any = None  # medeval.store.db.ConnectionPool
    migrations: Any = None  # medeval.store.migrate.Migrations
    hasher: Any = None  # medeval.accounts.passwords.ProfileHasher, or any object with hash/verify/check_needs_rehash
    embeddings: Any = None  # medeval.engine.embeddings.EmbeddingBackends
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def part(self, name: str, make: Callable[[Runtime], T]) -> T:
        """This runtime's ``name`` (one of the fields above), made by ``make(self)`` on its first use."""
        value = getattr(self, name)
        if value is None:
            with self._lock:
                value = getattr(self, name)
                if value is None:
                    value = make(self)
                    setattr(self, name, value)
        return value

    def but(self, **changes: Any) -> Runtime:
        """A new runtime with ``changes`` and this one's other parts (the same objects, shared)."""
        return dataclasses.replace(self, **changes)

    def close(self) -> None:
        """Let go of what the parts hold: the pool's idle connections are closed (the last connection to a
        database file closing folds its write-ahead log back into the file, so a stopped server leaves one file
        to back up) and the loaded embedding models are dropped. Idempotent; a part used afterwards is made
        again on first use. The web app calls it when the server stops (:func:`closing`)."""
        with self._lock:
            pool, self.pool = self.pool, None
            self.embeddings = None
        if pool is not None:
            pool.clear()


_current: Runtime | None = None  # the one holder of the process's runtime (install / use / default)
_holder_lock = threading.Lock()


def default() -> Runtime:
    """The runtime of a process that installed none (a library user, a test): ``Runtime("default")``, created on
    first use and installed."""
    global _current
    with _holder_lock:
        if _current is None:
            _current = Runtime("default")
        return _current


def current() -> Runtime:
    """The process's runtime: the one installed, else :func:`default`."""
    runtime = _current
    return runtime if runtime is not None else default()


def install(runtime: Runtime) -> Runtime:
    """Make ``runtime`` the process's runtime from now on (an entry point, at start-up). Returns it."""
    global _current
    with _holder_lock:
        _current = runtime
    return runtime


def start(name: str) -> Runtime:
    """The process's runtime, installing ``Runtime(name)`` when it has none yet (the command line's start: a
    process that already has one -- a test, a library user calling the command in-process -- keeps it)."""
    global _current
    with _holder_lock:
        if _current is None:
            _current = Runtime(name)
        return _current


@asynccontextmanager
async def closing(_app: Any = None) -> AsyncIterator[None]:
    """A server lifespan (``server.py``: ``st.App(lifespan=owning(closing))``): nothing at start; the process's runtime
    is closed (:meth:`Runtime.close`) when the server stops."""
    try:
        yield None
    finally:
        current().close()


@contextmanager
def use(runtime: Runtime) -> Iterator[Runtime]:
    """Run a block with ``runtime`` as the process's runtime; the previous one is back afterwards (tests)."""
    global _current
    with _holder_lock:
        before, _current = _current, runtime
    try:
        yield runtime
    finally:
        with _holder_lock:
            _current = before
