"""Pieces the task types share: anchored 1-5 scales, agreement sections, small table helpers."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ..agreement import RatingTable, icc, krippendorff_alpha
from ..dashboard import Answer, panel_statistics
from . import Option, Section

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

    def to_dict(self) -> dict:
        return {"key": self.key, "name": self.name, "question": self.question, "anchors": list(self.anchors)}

    @classmethod
    def from_dict(cls, d: dict) -> "Criterion":
        return cls(d["key"], d["name"], d["question"], tuple(d["anchors"]))


def mean(values) -> float | None:
    values = [float(v) for v in values]
    return float(np.mean(values)) if values else None


def agreement_rows(scores: dict[str, list[tuple[object, str, str]]], *, scale: str, categories,
                   n_boot: int = 500, seed: int = 0) -> list[dict]:
    """One row per statistic and subject: ``scores[subject]`` is a list of (unit, annotator, value).

    ``unit`` is what was rated (an item, or an item's response); values are coded in ``categories``.
    """
    out = []
    for subject, rows in scores.items():
        graded = [Answer(unit, who, value, False, 0.0) for unit, who, value in rows]
        if not graded:
            continue
        for stat in panel_statistics(graded, scale=scale, categories=categories, n_boot=n_boot, seed=seed):
            e = stat["estimate"]
            out.append({"rated": subject, "statistic": stat["title"], "value": e["value"],
                        "ci95": e["ci95"], "n_items": e["n_items"], "n_raters": e["n_raters"],
                        "undefined_reason": e["undefined_reason"], "reading": stat["guide"]})
    return out


def interval_agreement(rows: list[tuple[object, str, float]], *, n_boot: int = 500, seed: int = 0) -> list[dict]:
    """ICC(2,1), ICC(2,k) and interval alpha of continuous values (e.g. the mean over a rubric's criteria)."""
    units = sorted({u for u, _, _ in rows}, key=repr)
    raters = sorted({r for _, r, _ in rows})
    if not units or not raters:
        return []
    ui = {u: i for i, u in enumerate(units)}
    ri = {r: j for j, r in enumerate(raters)}
    m = np.full((len(units), len(raters)), np.nan)
    for u, r, v in rows:
        m[ui[u], ri[r]] = v
    t = RatingTable(m, units, raters)
    ic = icc(t)
    out = []
    for name, e in (("ICC(2,1)", ic["ICC2"]), ("ICC(2,k)", ic["ICC2k"]),
                    ("Krippendorff's alpha (interval)", krippendorff_alpha(t, "interval", n_boot=n_boot, rng=seed))):
        out.append({"statistic": name, "value": e.value, "ci95": list(e.ci95) if e.ci95 else None,
                    "n_items": e.n_items, "n_raters": e.n_raters, "undefined_reason": e.undefined_reason})
    return out


def group_mean(rows, key, value) -> dict:
    acc = defaultdict(list)
    for r in rows:
        acc[key(r)].append(value(r))
    return {k: mean(v) for k, v in acc.items()}


def section(title: str, text: str = "", **tables) -> Section:
    return Section(title, text, {k: v for k, v in tables.items()})
