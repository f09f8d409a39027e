"""The leaderboard report's words that are made from parts: clauses joined as the reader's language joins them,
and what a threshold set's provenance stored in English, said in the current language."""

from __future__ import annotations

import re

from medeval.annotation.campaign_text import DESIGN_NAMES
from medeval.calibration.estimator_text import SEARCH_TEXT, UNDETERMINED_TEXT
from medeval.core import i18n
from medeval.core.display import words
from medeval.core.i18n import N_, _

# -- joining text in the reader's language (whole clauses are translated; these only join them) ------------------

def _clauses(texts, joiner: str) -> str:
    """``texts`` joined as ``joiner`` (a marked "{text}; {more}" pattern) says, left to right."""
    texts = list(texts)
    out = texts[0] if texts else ""
    for t in texts[1:]:
        out = joiner.format(text=out, more=t)
    return out


def _and(texts) -> str:
    """ "a and b and c" (English as before; Chinese 和)."""
    return _clauses(texts, _("{text} and {more}"))


def _semicolons(texts) -> str:
    """ "a; b; c" (Chinese ；)."""
    return _clauses(texts, _("{text}; {more}"))


def _sentence(text: str) -> str:
    """``text`` ended as a sentence ("." in English, "。" in Chinese)."""
    return _("{sentence}.").format(sentence=text)


# -- what a set's provenance stores in English, in the reader's language ----------------------------------------

_ADOPTED_WARNING = re.compile(r"cosine cut-offs were calibrated for (?P<source>.+), not for (?P<model>.+); "
                              r"calibrate them with clinicians before relying on cosine tiers")
_SEARCH = re.compile(re.escape(SEARCH_TEXT).replace(re.escape("{criterion}"), r"(?P<criterion>\S+)"))
FIELD_NAMES = {
    "source": N_("source"), "method": N_("method"), "calibrated": N_("calibrated"), "warning": N_("warning"),
    "adopted_from": N_("adopted from"), "adopted_from_version": N_("adopted from version"),
    "estimator": N_("estimator"), "estimator_version": N_("estimator version"), "consensus": N_("consensus"),
    "strata": N_("strata"), "base_version": N_("base version"), "kept_from_base": N_("kept from base"),
    "scorers": N_("scorers"), "campaign": N_("campaign"), "campaign_name": N_("campaign name"),
    "items_graded": N_("items graded"), "annotators": N_("annotators"), "criterion": N_("criterion"),
    "value": N_("value"), "n": N_("n"), "value_ci95": N_("value 95% CI"), "low_ci95": N_("low 95% CI"),
    "high_ci95": N_("high 95% CI"), "stable_share": N_("stable share"),
    "fitted_to": N_("fitted to"), "items": N_("items"), "grades_per_item": N_("grades per item"),
    "at_range_end": N_("cut-off at the score range's end"), "joined": N_("crossed fits joined into one cut-off"),
    "undetermined": N_("undetermined by the grades"), "kept_from_base_cutoffs": N_("cut-offs kept from the base set"),
    "design": N_("design"), "design_version": N_("design version"), "round_size": N_("round size"),
    "rounds": N_("rounds"), "items_per_round": N_("items per round"), "low": N_("low cut-off"),
    "high": N_("high cut-off"),
}
"""A provenance's fields in words (English: as :func:`medeval.core.display.words` writes the code)."""
CONSENSUS_NAMES = {"median": N_("lower median"), "majority": N_("majority"), "adjudicated": N_("adjudicated")}
# a publication's "median" is the calibration's lower median (a cut-off needs a tier someone gave), so said


def coded_value(key: str | None, value) -> str | None:
    """A provenance value stored as a code, in words (None when ``key`` holds no code): the design's name, why a
    boundary is undetermined (``{"high": "none-reach"}``), the items of each round."""
    if key == "items_per_round" and isinstance(value, list):  # not an interval, even with two rounds
        return ", ".join(str(x) for x in value)
    if key == "design" and isinstance(value, str):
        return _(DESIGN_NAMES[value]) if value in DESIGN_NAMES else value
    if key == "undetermined" and isinstance(value, dict):
        return "; ".join(_("{field}: {value}").format(
            field=_field(str(k)), value=_(UNDETERMINED_TEXT[v]) if v in UNDETERMINED_TEXT else str(v))
            for k, v in value.items())
    return None


def kept_cutoff_text(entry: str, stratum) -> str:
    """One cut-off kept from the base set ("rouge1/enumerated high cut-off 0.6") in words; ``stratum`` names the
    stratum."""
    m = re.fullmatch(r"(\S+) (low|high) cut-off (\S+)", str(entry))
    if not m:
        return str(entry)
    return _("{stratum}: {which} {value}").format(stratum=stratum(m[1]), which=_field(m[2]), value=m[3])


def _field(key: str) -> str:
    return _(FIELD_NAMES[key]) if key in FIELD_NAMES else words(key)


def stored_text(text) -> str:
    """A sentence medeval stored in English in a provenance (an adopted set's warning, an estimator's method) in the
    current language where the catalogue knows it; anything else as stored."""
    t = str(text)
    if not t or i18n.current() == i18n.SOURCE:
        return t
    if m := _ADOPTED_WARNING.fullmatch(t):
        return _("cosine cut-offs were calibrated for {source}, not for {model}; calibrate them with clinicians "
                 "before relying on cosine tiers").format(**m.groupdict())
    parts = []
    for part in t.split("; "):  # a method of several estimators: "; ".join of their texts
        if m := _SEARCH.fullmatch(part):
            parts.append(_(SEARCH_TEXT).format(**m.groupdict()))
        else:
            parts.append(_(part) if part else part)
    return "; ".join(parts)
