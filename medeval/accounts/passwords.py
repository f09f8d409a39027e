"""Password hashing parameters: argon2id under MEDEVAL_PASSWORD_HASH_PROFILE (``medeval.core.settings``).

``production`` (the default) is argon2-cffi's RFC 9106 low-memory profile; ``test-only`` the smallest parameters,
for test suites that create hundreds of users. The web app calls :func:`use_production_hashing` at start, so a
test-only profile never reaches its accounts. ``medeval.accounts.auth`` hashes and verifies through the current
runtime's hasher (:func:`hasher`; ``medeval.core.runtime``): a :class:`ProfileHasher`, or whatever a test put there.
"""

from __future__ import annotations

from argon2 import PasswordHasher

from medeval.core import runtime, settings

# argon2id parameters per MEDEVAL_PASSWORD_HASH_PROFILE (medeval.core.settings): argon2-cffi's defaults (RFC 9106
# low-memory: 64 MiB, 3 passes) or, for test suites only, the smallest ones. A hash carries its parameters, so
# either verifies anywhere; a weaker one is re-hashed at its next sign-in under production (check_needs_rehash).
_PROFILES = {"production": {}, "test-only": {"time_cost": 1, "memory_cost": 8, "parallelism": 1}}


class ProfileHasher:
    """The PasswordHasher of the profile in force (read at each use, like every setting); always production's
    when ``production_only`` (the web app's)."""

    def __init__(self, *, production_only: bool = False) -> None:
        self.production_only = production_only
        self._by_profile: dict[str, PasswordHasher] = {}

    def profile(self) -> str:
        return "production" if self.production_only else settings.password_hash_profile()

    def _current(self) -> PasswordHasher:
        name = self.profile()
        if name not in self._by_profile:
            self._by_profile[name] = PasswordHasher(**_PROFILES[name])
        return self._by_profile[name]

    def hash(self, password: str) -> str:
        return self._current().hash(password)

    def verify(self, stored: str, password: str) -> bool:
        return self._current().verify(stored, password)

    def check_needs_rehash(self, stored: str) -> bool:
        return self._current().check_needs_rehash(stored)


def hasher():
    """The current runtime's hasher: ``ProfileHasher(production_only=runtime.production_hashing)``, made on first
    use (a test may put a cheap or a counting one in a runtime of its own)."""
    return runtime.current().part("hasher", lambda rt: ProfileHasher(production_only=rt.production_hashing))


def use_production_hashing() -> None:
    """Hash every password of this process with the production parameters, whatever the settings say (the web
    app calls it at start, after installing its runtime: a test-only profile must never reach real accounts).
    It switches the current runtime to production hashing, for good: its hasher is production's from now on."""
    rt = runtime.current()
    rt.production_hashing = True  # first: a hasher made meanwhile (Runtime.part) is production's too
    rt.hasher = ProfileHasher(production_only=True)  # a new one: a runtime sharing the old one (Runtime.but) keeps it
