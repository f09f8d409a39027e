"""Every setting of medeval, declared once: name, type, default, CLI option and help.

datasette's ``SETTINGS`` is the model. A setting is read from its environment variable at the moment
it is needed (never at import time, so tests and the app can point at another database):
:func:`value` returns it typed and checked, with a one-line :class:`MedevalError` naming the variable,
what it got and a good value. The CLI builds its options from these declarations
(``medeval.cli.base.setting_option``: name, type, environment variable, default and help), and the
README's settings table is :func:`markdown_table`'s output (``python -m medeval settings --markdown``;
``tests/test_settings.py`` fails when they differ). Adding a setting: one ``Setting`` below, then
regenerate the README's table.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from medeval.core.errors import MedevalError

TYPES = ("str", "int", "float", "bool", "choice", "seconds", "path", "list")


@dataclass(frozen=True)
class Setting:
    name: str  # environment variable
    default: str  # as it would be written in the environment
    help: str  # one line of Markdown: the README table's meaning and the CLI option's help
    option: str | None = None  # CLI option that overrides it
    type: str = "str"  # one of TYPES
    choices: tuple[str, ...] = ()  # type "choice": the values allowed
    fold_case: bool = False  # type "choice": CUDA is cuda (for names whose case means nothing)
    example: str = ""  # a good value, named in error messages (default: the default)
    low: float | None = None  # int / float: smallest value allowed
    high: float | None = None  # int / float: largest value allowed
    item: str = "str"  # type "list": "str" or "float", each comma-separated item
    check: Callable[[str], None] | None = None  # type "list": a further check of each item (raises MedevalError)
    shown_default: str = ""  # README's default cell when the default itself says little ("(none)")
    secret: bool = False  # never printed by `medeval settings`
    # a parser of its own (raw text -> value, or a MedevalError), for a value the types cannot check alone: a bound
    # that depends on the machine, an order between the items; ``type`` and the rest still describe it
    parser: Callable[["Setting", str], Any] | None = None

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"setting {self.name}: unknown type {self.type!r} (one of {', '.join(TYPES)})")
        if (self.type == "choice") != bool(self.choices):
            raise ValueError(f"setting {self.name}: choices go with type 'choice', and only with it")

    def parse(self, raw: Any) -> Any:
        """The typed, checked value of ``raw`` (text as in the environment; empty: the default)."""
        if self.type == "bool" and isinstance(raw, bool):
            return raw
        text = "" if raw is None else str(raw)
        if not text.strip():
            text = self.default
        return (self.parser or _PARSERS[self.type])(self, text)


def _bad(s: Setting, raw: str, kind: str) -> MedevalError:
    return MedevalError(f"{s.name} must be {kind} (e.g. {s.example or s.default}), not {raw!r}")


def _number_kind(s: Setting, whole: bool) -> str:
    kind = "a whole number" if whole else "a number"
    if s.low is not None and s.high is not None:
        return f"{kind} from {s.low:g} to {s.high:g}"
    if s.low is not None:
        return f"{kind} of at least {s.low:g}"
    return kind


def _in_range(s: Setting, x: float) -> bool:
    return (s.low is None or x >= s.low) and (s.high is None or x <= s.high)


def _parse_str(s: Setting, raw: str) -> str:
    return raw


def _parse_path(s: Setting, raw: str) -> str:
    if "\x00" in raw:
        raise _bad(s, raw, "a file or folder path (no NUL byte)")
    return raw


def _parse_int(s: Setting, raw: str) -> int:
    kind = _number_kind(s, whole=True)
    try:
        x = int(raw.strip())
    except ValueError:
        raise _bad(s, raw, kind) from None
    if not _in_range(s, x):
        raise _bad(s, raw, kind)
    return x


def _float(s: Setting, raw: str, kind: str) -> float:
    try:
        x = float(raw.strip())
    except ValueError:
        raise _bad(s, raw, kind) from None
    if not math.isfinite(x):
        raise _bad(s, raw, kind)
    return x


def _parse_float(s: Setting, raw: str) -> float:
    kind = _number_kind(s, whole=False)
    x = _float(s, raw, kind)
    if not _in_range(s, x):
        raise _bad(s, raw, kind)
    return x


def _parse_seconds(s: Setting, raw: str) -> float:
    kind = "a positive number of seconds"
    x = _float(s, raw, kind)
    if not x > 0:
        raise _bad(s, raw, kind)
    return x


TRUE, FALSE = ("1", "true", "on", "yes"), ("0", "false", "off", "no")


def _parse_bool(s: Setting, raw: str) -> bool:
    key = raw.strip().lower()
    if key in TRUE or key in FALSE:
        return key in TRUE
    raise MedevalError(f"{s.name} must be 1 or 0 (on or off), not {raw!r}")


def _parse_choice(s: Setting, raw: str) -> str:
    key = raw.strip()  # exact unless declared otherwise: TEST-ONLY is not test-only (a typo is refused, never guessed)
    if s.fold_case:  # the declared spelling of the choice it names
        key = next((c for c in s.choices if c.lower() == key.lower()), key)
    if key not in s.choices:
        raise MedevalError(f"{s.name} must be one of {', '.join(s.choices)}, not {raw!r}")
    return key


def _parse_list(s: Setting, raw: str) -> tuple:
    out: list = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        if s.check:
            s.check(item)
        if s.item == "float":
            try:
                item = float(item)
            except ValueError:
                item = math.nan
            if not math.isfinite(item):
                raise _bad(s, raw, "numbers separated by commas")
        out.append(item)
    return tuple(out)


def _parse_workers(s: Setting, raw: str) -> int:
    """1 to 2 x this machine's CPU count."""
    limit = (os.cpu_count() or 1) * 2
    try:
        x = int(raw.strip())
    except ValueError:
        x = 0
    if not 1 <= x <= limit:
        raise MedevalError(f"embedding workers must be a whole number from 1 to {limit} (2 x the {limit // 2} CPUs "
                           f"here), not {raw!r}: use --workers or {s.name}")
    return x


_PARSERS: dict[str, Callable[[Setting, str], Any]] = {
    "str": _parse_str, "path": _parse_path, "int": _parse_int, "float": _parse_float, "seconds": _parse_seconds,
    "bool": _parse_bool, "choice": _parse_choice, "list": _parse_list,
}


def _parse_level_bands(s: Setting, raw: str) -> tuple[float, ...]:
    """The model levels' lower bounds on the total score (``MEDEVAL_LEVEL_BANDS``): numbers as any list, then 1 to 9
    of them, decreasing, in [0, 10], none left out between two commas ("3.5,,2" is a slip, not two bands). The one
    parser: the web app's start check and the leaderboard (:func:`medeval.engine.totals.level_bands`) read it alike."""
    bands = _parse_list(s, raw)  # (a word or an infinity: the list's own message)
    parts = [p.strip() for p in raw.split(",")]
    if any(not p for p in parts[:-1]) or not 1 <= len(bands) <= 9 or not all(0 <= b <= 10 for b in bands) \
            or any(a <= b for a, b in zip(bands, bands[1:])):
        raise level_bands_refusal(raw)
    return bands


def level_bands_refusal(raw: str) -> MedevalError:
    """The one refusal of a ``MEDEVAL_LEVEL_BANDS`` value, in the bands' words (the leaderboard gives it for a word
    too, where the start check gives the list's own message)."""
    s = _BY_NAME["MEDEVAL_LEVEL_BANDS"]
    return MedevalError(f"{s.name} must be decreasing total scores between 0 and 10 separated by commas, the "
                        f"lower bound of level 1, 2, ... (default {s.default}), not {raw!r}")


def _proxy(item: str) -> None:
    try:
        ipaddress.ip_network(item, strict=False) if "/" in item else ipaddress.ip_address(item)
    except ValueError:
        raise MedevalError(f"MEDEVAL_TRUSTED_PROXIES: {item!r} is not an IP address or network (e.g. 127.0.0.1 "
                           "or 10.0.8.0/24); name each proxy, '*' and host names are not accepted") from None


PASSWORD_HASH_PROFILES = ("production", "test-only")
EMBEDDING_DEVICES = ("cpu", "cuda", "mps", "auto")

SETTINGS: tuple[Setting, ...] = (
    Setting("MEDEVAL_DB", "annotations.db", "SQLite database file, created with its schema on first use",
            "--db", type="path", example="/srv/medeval/prod.db"),
    Setting("MEDEVAL_EMBEDDING_MODEL", "use-multilingual",
            "`use-multilingual`, `minilm`, or a local sentence-transformers model directory",
            "--embedding-model", example="minilm"),
    Setting("MEDEVAL_EMBEDDING_DEVICE", "auto",
            "`cpu`, `cuda`, `mps` or `auto` (cuda when available, else cpu); used by sentence-transformers models "
            "-- `use-multilingual` always runs on the CPU", "--device", type="choice", choices=EMBEDDING_DEVICES,
            fold_case=True),
    Setting("MEDEVAL_EMBEDDING_WORKERS", "1",
            "CPU processes encoding embeddings in `score` when the database holds more than 5,000 responses "
            "(1 to 2 x CPU count)", "--workers", type="int", low=1, example="4", parser=_parse_workers),
    Setting("MEDEVAL_BATCH_SIZE", "2000", "responses scored and committed per chunk by `score`",
            "--batch-size", type="int", low=1, example="500"),
    Setting("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", "1",
            "`score` turns traditional Chinese into simplified with OpenCC (t2s) before tokenising and embedding "
            "(高血壓 = 高血压); lexical scorer id `cjk-med-v3+t2s`; `0`: scored as written (`cjk-med-v3`)",
            "--traditional-to-simplified/--keep-traditional", type="bool"),
    Setting("MEDEVAL_PLUGINS", "",
            "metric plugins: comma-separated module names, each calling `medeval.register_metric` on import, loaded "
            "once at start beside the `medeval.metrics` entry points ([docs/metrics.md](docs/metrics.md))",
            type="list", example="mylab.dice,mylab.bertscore", shown_default="(empty)"),
    Setting("MEDEVAL_ADDRESS", "127.0.0.1",
            "address the app listens on (`start.sh`); keep it behind a TLS proxy", "--server.address"),
    Setting("MEDEVAL_PORT", "8501", "port of the app (`start.sh`)", "--server.port", type="int", low=1, high=65535),
    Setting("MEDEVAL_TRUSTED_PROXIES", "",
            "addresses or networks of the reverse proxies whose `X-Forwarded-For`/`-Proto` the app believes "
            "(e.g. `127.0.0.1`, `10.0.8.0/24`); empty: the connection's address, headers ignored; `serve.sh` sets "
            "`127.0.0.1` for its nginx (docs/SECURITY.md)", type="list", check=_proxy, shown_default="(none)"),
    Setting("MEDEVAL_IDLE_TIMEOUT", "1800", "seconds without activity after which a session ends on the server",
            type="seconds", example="1800 for 30 minutes"),
    Setting("MEDEVAL_SESSION_LIFETIME", "43200",
            "seconds after signing in at which a session ends on the server, however active (12 h)",
            type="seconds", example="43200 for 12 hours"),
    Setting("MEDEVAL_RUN_DIR", "./run",
            "`scripts/serve.sh` only: folder for the generated nginx config, certificate, pid files and logs",
            type="path", example="/srv/medeval/run"),
    Setting("MEDEVAL_SERVE_WAIT_S", "180",
            "`scripts/serve.sh` only: seconds it waits for each app process, then nginx, to answer before it "
            "gives up", type="seconds", example="300"),
    Setting("MEDEVAL_SECRET_KEY", "",
            "key that signs the session cookie; empty: generated on first start and kept in the database",
            shown_default="(generated)", secret=True),
    Setting("MEDEVAL_PASSWORD_HASH_PROFILE", "production",
            "argon2id parameters of new password hashes: `production` (RFC 9106 low-memory, 64 MiB, ~0.1 s) or "
            "`test-only` (8 KiB, 1 pass) for test suites -- the test suite sets it; the web app always hashes with "
            "`production` and re-hashes a weaker hash at the next sign-in; `medeval users` warns while it is on",
            type="choice", choices=PASSWORD_HASH_PROFILES),
    Setting("MEDEVAL_DEMO", "0",
            "`1` marks the app as running on demo data (set by `start.sh` when the database holds the demo models)",
            type="bool"),
    Setting("MEDEVAL_LANGUAGE", "zh-CN",
            "the web app's language where a person has not chosen one (the sign-in page, new accounts): `zh-CN` "
            "(Simplified Chinese), `en`, or `auto` (the browser's `Accept-Language`, else zh-CN); each account "
            "keeps its own choice (`medeval users set-language`, the sidebar)",
            type="choice", choices=("zh-CN", "en", "auto"), fold_case=True),
    Setting("MEDEVAL_LEVEL_BANDS", "3.5,3.0,2.0",
            "lower bounds of the model levels on the total score, level 1 first (a total on a bound reaches it); "
            "medeval's own bands -- the paper's Table 4 names four levels but no cut-offs, and these defaults "
            "reproduce its grouping of its 12 models", type="list", item="float", parser=_parse_level_bands),
    Setting("MEDEVAL_SEVERITY_READING", "level-word",
            "how a Severity Level answer is read when it is imported: `level-word` (medeval's: the first level "
            "mention, a numeral before 级/度 or after level/grade, so a duration or a score before it is passed over: "
            "48小时内…属于一级 is 1) or `first-number` (the paper's rule, MedDisKEval 3.2.1: the first number, 48); "
            "in both a range of levels (三至四级) is no level",
            type="choice", choices=("level-word", "first-number"), fold_case=True),
)

_BY_NAME = {s.name: s for s in SETTINGS}


def setting(name: str) -> Setting:
    """The declaration of ``name``; an unknown name is a programming error, with the close names."""
    try:
        return _BY_NAME[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, _BY_NAME, n=3)
        raise KeyError(f"no setting {name!r}" + (f"; did you mean {', '.join(close)}?" if close else "")) from None


def get(name: str) -> str:
    """Current text of a setting: the environment variable, else its default (unchecked; see :func:`value`)."""
    s = setting(name)
    raw = os.environ.get(name)
    return raw if raw not in (None, "") else s.default


def value(name: str, given: Any = None) -> Any:
    """The typed, checked value of a setting: ``given`` (e.g. a CLI option) when not None or empty, else the
    environment variable, else the default. A bad value is a MedevalError naming the variable."""
    s = setting(name)
    return s.parse(given if given not in (None, "") else os.environ.get(name))


def check_all() -> None:
    """Every setting's value checked at once (the web app's start): one MedevalError naming each bad one."""
    bad = []
    for s in SETTINGS:
        try:
            value(s.name)
        except MedevalError as e:
            bad.append(str(e))
    if bad:
        raise MedevalError("; ".join(bad))


def db_path() -> str:
    return value("MEDEVAL_DB")


def embedding_model() -> str:
    return value("MEDEVAL_EMBEDDING_MODEL")


def embedding_device() -> str:
    """MEDEVAL_EMBEDDING_DEVICE as set (checked by ``medeval.engine.embeddings.resolve_device``)."""
    return get("MEDEVAL_EMBEDDING_DEVICE")


def language() -> str:
    """MEDEVAL_LANGUAGE as set: zh-CN, en or auto."""
    return value("MEDEVAL_LANGUAGE")


def default_language(accept_language: str | None = None) -> str:
    """The interface language for someone who has not chosen one: MEDEVAL_LANGUAGE, or with ``auto`` the
    browser's ``Accept-Language`` (else zh-CN)."""
    from medeval.core import i18n

    setting = language()
    if setting == "auto":
        return i18n.from_accept_language(accept_language) or "zh-CN"
    return i18n.check(setting)


def idle_timeout() -> float:
    """MEDEVAL_IDLE_TIMEOUT in seconds (a positive number)."""
    return value("MEDEVAL_IDLE_TIMEOUT")


def session_lifetime() -> float:
    """MEDEVAL_SESSION_LIFETIME in seconds (a positive number)."""
    return value("MEDEVAL_SESSION_LIFETIME")


def password_hash_profile() -> str:
    """MEDEVAL_PASSWORD_HASH_PROFILE (checked: production or test-only)."""
    return value("MEDEVAL_PASSWORD_HASH_PROFILE")


def trusted_proxies() -> tuple[str, ...]:
    """MEDEVAL_TRUSTED_PROXIES as a tuple of addresses and networks (checked: no '*', no host names)."""
    return value("MEDEVAL_TRUSTED_PROXIES")


def plain(text: str) -> str:
    """A setting's help without its Markdown code marks, for terminals."""
    return re.sub(r"`([^`]*)`", r"\1", text)


def markdown_table() -> str:
    """The README's settings table: variable, CLI option, default, meaning (``medeval settings --markdown``)."""
    lines = ["| setting | option | default | meaning |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = s.shown_default or f"`{s.default}`"
        lines.append(f"| `{s.name}` | {f'`{s.option}`' if s.option else '—'} | {default} | {s.help} |")
    return "\n".join(lines) + "\n"
