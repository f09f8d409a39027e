"""The cut-off estimators and the round designs in words: what a publication's provenance and a report's methods
say of how cut-offs were estimated (nothing imported but the smooth fit's id: :mod:`medeval.calibration.cutoffs` and
the modules above it use it)."""

from __future__ import annotations

from medeval.core.i18n import N_

# English, as provenances and reports record them (marked: a page shows _() of them)
ESTIMATOR_TEXT = {
    "smooth": N_("smooth cut-off estimator (medeval.calibration.smooth_cutoffs): a psychometric curve of "
                 "P(consensus tier ≥ k | score) per boundary with a lapse rate and a slope on each side, fitted to one "
                 "consensus tier per item (the lower median of the item's grades) and refitted locally around its "
                 "crossing, each cut-off where the curve crosses 0.5 (the score range's end when it crosses beyond "
                 "it), 95% profile-likelihood intervals, and a boundary the grades leave undetermined keeps the base "
                 "set's cut-off"),
    "accuracy": N_("the paper's exhaustive cut-off search (medeval.calibration.cutoffs), the pair that maximises "
                   "agreement with the clinicians' tiers, 95% intervals by bootstrap over items"),
}
DESIGN_TEXT = {
    "adaptive": N_("adaptive design: each round where a grade most narrows the two cut-offs, a share drawn at random "
                   "over the whole range (medeval.calibration.adaptive)"),
    "active": N_("active rounds: each round where the bootstrap distribution of either cut-off has mass, a share "
                 "spread over the score intervals (medeval.calibration.active)"),
    "interval": N_("the paper's design: the same number of items from every score interval, round by round"),
}
UNDETERMINED_TEXT = {"none-reach": N_("no graded item reaches that tier"),
                     "all-reach": N_("every graded item reaches that tier"), "too-few": N_("too few graded items")}
"""Why the smooth estimator leaves a boundary undetermined (:meth:`medeval.calibration.smooth.BoundaryFit.
undetermined`), as a page or a report says it."""
SEARCH_TEXT = N_("exhaustive cut-off search maximising {criterion} (medeval.calibration.cutoffs)")


def estimator_provenance(criteria: list[str]) -> dict:
    """What a publication records of how its cut-offs were estimated: ``estimator`` (``smooth``, or ``accuracy
    search`` / ``kappa search`` ...) and ``method`` in words, from the calibrations' criteria."""
    est = sorted({"smooth" if c == "smooth" else f"{c} search" for c in criteria})
    out = {"method": "; ".join(ESTIMATOR_TEXT["smooth"] if e == "smooth" else
                               SEARCH_TEXT.format(criterion=e[:-7])
                               for e in est), "estimator": ", ".join(est)}
    if "smooth" in est:  # the smooth fit's stable id: which model and priors gave the cut-offs
        from medeval.calibration.smooth import METHOD

        out["estimator_version"] = METHOD
    return out

