"""The cut-off estimators by name: each maps (scores in [0, 1], one consensus tier per item) to (low, high).

* ``smooth``: :func:`medeval.calibration.smooth.smooth_cutoffs` -- a psychometric curve per boundary with a
  lapse rate, each cut-off where its curve crosses 0.5 (:func:`smooth_pair`: its two cut-offs);
* ``accuracy``: the paper's search (MedDisKEval §3.2.2), kept and named -- the pair of cut-offs that grades the
  most items into their clinicians' tier (:func:`medeval.calibration.active.optimal_accuracy_cuts`, the same pair
  as the exhaustive search of :mod:`medeval.calibration.cutoffs`).

Both raise ``MedevalError`` when the grades cannot give cut-offs. This module imports ``active``: ``active`` and
``cutoffs`` must not import it (they are below it).
"""

from __future__ import annotations

import numpy as np

from medeval.calibration.active import optimal_accuracy_cuts
from medeval.calibration.smooth import check_inputs, smooth_cutoffs
from medeval.core.errors import MedevalError


def smooth_pair(scores, tiers) -> tuple[float, float]:
    """The smooth estimator's (low, high); ``MedevalError`` saying why when the grades leave either undetermined."""
    fit = smooth_cutoffs(scores, tiers, ci=False)
    bad = [b for b in (fit.low, fit.high) if b.status != "ok"]
    if bad:
        raise MedevalError("; ".join(f"{b.boundary}: {b.status} ({b.reason})" for b in bad))
    return float(fit.low.cutoff), float(fit.high.cutoff)


def accuracy_cutoffs(scores, tiers) -> tuple[float, float]:
    """The paper's accuracy-maximising pair of cut-offs over [0, 1] (ties: the widest middle tier, then the first)."""
    s, t, _ = check_inputs(scores, tiers)
    if len(s) < 3:
        raise MedevalError(f"{len(s)} graded items; the accuracy search needs at least 3")
    if len(np.unique(t)) < 2:
        raise MedevalError("the clinicians used only one tier: no cut-off can be learnt")
    return optimal_accuracy_cuts(s, t, 0.0, 1.0)


ESTIMATORS = {"smooth": smooth_pair, "accuracy": accuracy_cutoffs}


def estimator_names() -> tuple[str, ...]:
    """The estimators' names, the default (``smooth``) first."""
    return tuple(ESTIMATORS)


def get_estimator(name: str):
    """The estimator called ``name``; an unknown name is a ``MedevalError`` listing the known ones."""
    try:
        return ESTIMATORS[name]
    except KeyError:
        raise MedevalError(f"unknown cut-off estimator {name!r}: choose one of {', '.join(ESTIMATORS)}") from None
