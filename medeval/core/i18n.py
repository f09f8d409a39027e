"""The interface language: gettext catalogues managed with Babel, and the language of the text being made now.

Strings a person reads in the web app are marked where they are written -- ``_("Skip")``,
``ngettext("{n} item", "{n} items", n)``, and ``N_("...")`` for text defined at import time (a table of tiers,
a page title), translated with ``_()`` where it is shown. ``pybabel extract -F babel.cfg`` (``medeval i18n
update``) collects them; the Simplified Chinese catalogue is ``medeval/locale/zh_CN/LC_MESSAGES/medeval.po``.
English is the source language: its text is the message id itself, so English needs no catalogue.

Which language ``_()`` uses: the innermost ``with language("zh-CN"):`` (a report written for a reader), else
what the registered provider says (the web app registers the signed-in person's language), else English -- so
the command line and the library's messages stay English unless someone asks.
"""

from __future__ import annotations

import gettext as _gettext
import re
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator

LANGUAGES: tuple[str, ...] = ("zh-CN", "en")  # what a person may choose, in the order the choice lists them
SOURCE = "en"  # the language of the message ids
DOMAIN = "medeval"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
# Each language's own name, shown where it is chosen (never translated: a reader finds their own language)
NAMES = {"zh-CN": "中文", "en": "English"}
# gettext / Babel spell a locale with an underscore
_LOCALE = {"zh-CN": "zh_CN", "en": "en"}

_current: ContextVar[str | None] = ContextVar("medeval_language", default=None)
_provider: Callable[[], str | None] | None = None


def normalize(tag: str | None) -> str | None:
    """One of :data:`LANGUAGES` for a language tag as people and browsers write it, else None.

    >>> [normalize(t) for t in ("zh-CN", "zh_cn", "zh", "zh-Hans", "zh-Hans-CN", "en-US", "EN", "fr", "", None)]
    ['zh-CN', 'zh-CN', 'zh-CN', 'zh-CN', 'zh-CN', 'en', 'en', None, None, None]
    """
    if not tag:
        return None
    parts = re.split(r"[-_]", str(tag).strip().lower())
    if parts[0] == "en":
        return "en"
    # Traditional Chinese (zh-TW, zh-Hant) is not Simplified: no silent mapping to zh-CN
    if parts[0] == "zh" and not ({"tw", "hk", "mo", "hant"} & set(parts[1:])):
        return "zh-CN"
    return None


def from_accept_language(header: str | None) -> str | None:
    """The first of :data:`LANGUAGES` a browser's ``Accept-Language`` header prefers (by q-value), else None.

    >>> from_accept_language("en-US,en;q=0.9,zh-CN;q=0.8")
    'en'
    >>> from_accept_language("zh-TW;q=0.9, zh-CN;q=0.8, en;q=0.5")
    'zh-CN'
    >>> from_accept_language("fr, de;q=0.5") is None
    True
    """
    prefs = []
    for i, part in enumerate((header or "").split(",")):
        bits = part.strip().split(";")
        q = 1.0
        for b in bits[1:]:
            k, _, v = b.strip().partition("=")
            if k.strip() == "q":
                try:
                    q = float(v)
                except ValueError:
                    q = 0.0
        if bits[0].strip() and q > 0:
            prefs.append((-q, i, bits[0].strip()))
    for _q, _i, tag in sorted(prefs):
        if (lang := normalize(tag)) is not None:
            return lang
    return None


def check(tag: str) -> str:
    """``tag`` as one of :data:`LANGUAGES`, or a ValueError that lists them."""
    lang = normalize(tag)
    if lang is None:
        raise ValueError(f"language {tag!r} is not one of {', '.join(LANGUAGES)}")
    return lang


def set_provider(provider: Callable[[], str | None] | None) -> None:
    """Register where :func:`current` finds the language outside a ``with language(...)`` block (the web app:
    the signed-in person's)."""
    global _provider
    _provider = provider


def current() -> str:
    """The language ``_()`` translates into now."""
    lang = _current.get()
    if lang is None and _provider is not None:
        lang = _provider()
    return lang if lang in LANGUAGES else SOURCE


@contextmanager
def language(lang: str | None) -> Iterator[str]:
    """Make text in ``lang`` inside the block (None: leave the language as it is)."""
    if lang is None:
        yield current()
        return
    token = _current.set(check(lang))
    try:
        yield _current.get()
    finally:
        _current.reset(token)


def _catalogue_file(lang: str, suffix: str) -> Path:
    return LOCALE_DIR / _LOCALE[lang] / "LC_MESSAGES" / f"{DOMAIN}{suffix}"


@lru_cache(maxsize=None)
def translations(lang: str) -> _gettext.NullTranslations:
    """The catalogue of ``lang``: the compiled ``.mo`` when it is at least as new as its ``.po`` (the install
    compiles it), else the ``.po`` compiled in memory, so an edited catalogue is never shown stale."""
    if lang == SOURCE:
        return _gettext.NullTranslations()
    po, mo = _catalogue_file(lang, ".po"), _catalogue_file(lang, ".mo")
    if mo.exists() and (not po.exists() or mo.stat().st_mtime >= po.stat().st_mtime):
        with open(mo, "rb") as f:
            return _gettext.GNUTranslations(f)
    if not po.exists():
        return _gettext.NullTranslations()
    import io

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(po, "rb") as f:
        catalog = read_po(f, locale=_LOCALE[lang])
    buf = io.BytesIO()
    write_mo(buf, catalog)
    buf.seek(0)
    return _gettext.GNUTranslations(buf)


def gettext(message: str) -> str:
    """``message`` in the current language (the English message id where the catalogue has nothing)."""
    return translations(current()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of ``singular``/``plural`` for ``n`` in the current language (Chinese has one form)."""
    return translations(current()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the current language where the same English word means two things (``context`` tells)."""
    return translations(current()).pgettext(context, message)


_ = gettext


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it now (text defined at import time); show it
    with ``_(message)``."""
    return message


def translate_in(lang: str, message: str) -> str:
    """``message`` in ``lang``, whatever the current language (a page written for someone else)."""
    return translations(check(lang)).gettext(message)


# -- numbers and dates as the language writes them (Babel's CLDR data) ------------------------------------------

def _babel_locale(lang: str | None = None) -> str:
    return _LOCALE[lang or current()]


def number(value: float | int, decimals: int | None = None) -> str:
    """``value`` with the current language's digit grouping and decimal sign (``decimals`` fixed, else as given).

    >>> with language("en"): number(12345.678, 2)
    '12,345.68'
    >>> with language("zh-CN"): number(12345.678, 2)
    '12,345.68'
    """
    from babel.numbers import format_decimal

    if decimals is None:
        return format_decimal(value, locale=_babel_locale())
    return format_decimal(value, format=f"#,##0.{'0' * decimals}" if decimals else "#,##0",
                          locale=_babel_locale(), decimal_quantization=True)


def percent(fraction: float, decimals: int = 0) -> str:
    """``fraction`` (0.25) as the current language writes a percentage.

    >>> with language("en"): percent(0.256)
    '26%'
    >>> with language("zh-CN"): percent(0.2564, 1)
    '25.6%'
    """
    from babel.numbers import format_percent

    fmt = "#,##0%" if not decimals else f"#,##0.{'0' * decimals}%"
    return format_percent(fraction, format=fmt, locale=_babel_locale())


def local_moment(when: float | str | None):
    """A Unix time, or a time as the database stores it (ISO 8601, ``Z`` for UTC), as a naive ``datetime`` in the
    server's time zone; ``None`` for nothing or for text that is no such time.

    >>> local_moment("yesterday") is None
    True
    >>> local_moment("2026-11-28T09:05:00") .isoformat()
    '2026-11-28T09:05:00'
    """
    if when is None or when == "":
        return None
    import datetime as _dt

    if isinstance(when, str):
        try:
            moment = _dt.datetime.fromisoformat(when.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        # stored in UTC: shown in the server's zone, as Unix times are
        return moment.astimezone().replace(tzinfo=None) if moment.tzinfo is not None else moment
    return _dt.datetime.fromtimestamp(float(when))


def datetime_text(when: float | str | None, *, seconds: bool = False) -> str:
    """A moment as the current language writes a date and time of day, in the server's time zone.

    ``when`` is a Unix time, or a time as the database stores it (ISO 8601, ``Z`` for UTC); text that is no
    such time is given back as it is, since a page must still show what the record holds.

    >>> import time; t = time.mktime((2026, 11, 28, 9, 5, 0, 0, 0, -1))
    >>> with language("en"): datetime_text(t)
    'Nov 28, 2026, 9:05 AM'
    >>> with language("zh-CN"): datetime_text(t)
    '2026年11月28日 09:05'
    >>> with language("en"): datetime_text("not a time")
    'not a time'
    """
    moment = local_moment(when)
    if moment is None:
        return "" if when is None else str(when)
    from babel.dates import format_datetime

    if current() == "zh-CN":
        return format_datetime(moment, "y年M月d日 HH:mm" + (":ss" if seconds else ""), locale="zh_CN")
    return format_datetime(moment, "MMM d, y, h:mm" + (":ss" if seconds else "") + " a", locale="en")
