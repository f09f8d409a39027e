"""Pieces the task types share: anchored 1-5 scales, agreement sections, small table helpers."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from medeval.annotation.tasks.registry import Option, Section
from medeval.core.i18n import N_, _
from medeval.stats.agreement import RatingTable, icc, krippendorff_alpha, percent_agreement

LIKERT = ("1", "2", "3", "4", "5")


@dataclass(frozen=True)
class Criterion:
    """A rubric criterion with an anchored 1-5 scale: ``anchors[0]`` is what 1 means, ``anchors[4]`` what 5 means."""

    key: str
    name: str
    question: str
    anchors: tuple[str, str, str, str, str]

    def options(self) -> tuple[Option, ...]:
        return tuple(Option(v, v, v, a) for v, a in zip(LIKERT, self.anchors))

    def shown(self) -> "Criterion":
        """The criterion in the reader's language: a built-in rubric's texts are in the catalogue (marked ``N_()``);
        a researcher's own criteria come back as written."""
        return Criterion(self.key, shown(self.name), shown(self.question), tuple(shown(a) for a in self.anchors))

    def to_dict(self) -> dict:
        return {"key": self.key, "name": self.name, "question": self.question, "anchors": list(self.anchors)}

    @classmethod
    def from_dict(cls, d: dict) -> "Criterion":
        return cls(d["key"], d["name"], d["question"], tuple(d["anchors"]))


def shown(text: str) -> str:
    """``text`` in the reader's language where the catalogue has it (the built-in texts), else as written (a
    researcher's own); never the catalogue's header for an empty text."""
    return _(text) if text else text


def case_label(title: str | None) -> str:
    """The label of a case's description on the screen: "Case: <its title>" (the title as imported)."""
    return _("Case: {title}").format(title=title) if title else _("Case")


def mean(values) -> float | None:
    values = [float(v) for v in values]
    return float(np.mean(values)) if values else None


ALPHA_GUIDE = N_("alpha ≥ .800 reliable, .667-.800 tentative, lower: do not rely on it (Krippendorff)")
ICC_GUIDE = N_("< .5 poor, .5-.75 moderate, .75-.9 good, > .9 excellent (Koo & Li); read the CI")
PERCENT_GUIDE = N_("chance is not removed: read it next to alpha")


def _row(subject: str, name: str, e, reading: str) -> dict:
    return {"rated": subject, "statistic": name, "value": e.value, "ci95": list(e.ci95) if e.ci95 else None,
            "n_items": e.n_pairable or e.n_items, "n_raters": e.n_raters, "undefined_reason": e.undefined_reason,
            "reading": _(reading)}  # how to read it: shown under the results table, in the reader's language


def _matrix(rows: list[tuple[object, str, float]]) -> RatingTable:
    units = sorted({u for u, _, _ in rows}, key=repr)
    raters = sorted({r for _, r, _ in rows})
    ui = {u: i for i, u in enumerate(units)}
    ri = {r: j for j, r in enumerate(raters)}
    m = np.full((len(units), len(raters)), np.nan)
    for u, r, v in rows:
        m[ui[u], ri[r]] = v
    return RatingTable(m, units, raters)


def _slots(t: RatingTable) -> RatingTable:
    """Items x rating slots: each item's ratings side by side whoever gave them.

    Only items rated by 2 or more raters count, and of those the ones with the most common number of
    ratings (the campaign's k once everyone has finished; items still waiting for a rating are left out).
    """
    counts = (~np.isnan(t.values)).sum(axis=1)
    rated = counts[counts >= 2]
    k = int(np.bincount(rated).argmax()) if len(rated) else 0
    keep = [i for i, c in enumerate(counts) if c == k]
    m = np.array([t.values[i][~np.isnan(t.values[i])] for i in keep]).reshape(len(keep), k)
    return RatingTable(m, [t.items[i] for i in keep], [f"rating {j + 1}" for j in range(k)])


def continuous_agreement(subject: str, rows: list[tuple[object, str, float]], *, n_boot: int = 500,
                         seed: int = 0) -> list[dict]:
    """Agreement of ratings on an interval scale (1-5 scores, or their means), rows of (unit, rater, value).

    When every clinician rated every unit: ICC(2,1) and ICC(2,k) (two-way random, Shrout & Fleiss case 2).
    When each unit was rated by k of more clinicians (a campaign with k < annotators): the two-way model
    does not apply -- ICC(1,1) and ICC(1,k) (one-way random: each unit rated by a different set of raters,
    Shrout & Fleiss case 1) over the units with the usual number of ratings. Krippendorff's alpha
    (interval) uses every rating either way; percent agreement is exact agreement of pairs.
    """
    if not rows:
        return []
    t = _matrix(rows)
    out = []
    if not np.isnan(t.values).any():
        ic = icc(t)
        out += [_row(subject, "ICC(2,1)", ic["ICC2"], ICC_GUIDE), _row(subject, "ICC(2,k)", ic["ICC2k"], ICC_GUIDE)]
    else:
        ic = icc(_slots(t))
        out += [_row(subject, "ICC(1,1), each item by different raters", ic["ICC1"], ICC_GUIDE),
                _row(subject, "ICC(1,k), each item by different raters", ic["ICC1k"], ICC_GUIDE)]
    out.append(_row(subject, "Krippendorff's alpha (interval)",
                    krippendorff_alpha(t, "interval", n_boot=n_boot, rng=seed), ALPHA_GUIDE))
    out.append(_row(subject, "Percent agreement (exact)", percent_agreement(t), PERCENT_GUIDE))
    return out


def nominal_agreement(subject: str, rows: list[tuple[object, str, str]], categories, *, n_boot: int = 500,
                      seed: int = 0) -> list[dict]:
    """Krippendorff's alpha (nominal) and percent agreement of categorical answers, rows of (unit, rater, label)."""
    if not rows:
        return []
    t = RatingTable.from_long(rows, categories=list(categories))
    return [_row(subject, "Krippendorff's alpha (nominal)",
                 krippendorff_alpha(t, "nominal", list(categories), n_boot=n_boot, rng=seed), ALPHA_GUIDE),
            _row(subject, "Percent agreement (exact)", percent_agreement(t), PERCENT_GUIDE)]


def group_mean(rows, key, value) -> dict:
    acc = defaultdict(list)
    for r in rows:
        acc[key(r)].append(value(r))
    return {k: mean(v) for k, v in acc.items()}


def section(title: str, text: str = "", **tables) -> Section:
    return Section(title, text, {k: v for k, v in tables.items()})
