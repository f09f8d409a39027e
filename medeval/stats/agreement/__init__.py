"""Agreement statistics: ICC, Krippendorff's alpha, Cohen's and Fleiss' kappa, percent agreement, correlations.

An estimate's words (how missing data was handled, the method, why it is undefined) are made in the language of the
moment (:mod:`medeval.core.i18n`: English unless a page or a report asks for another); its numbers never change.

Written from the definitions (no pingouin/krippendorff at run time; the tests
compare with both and with published worked examples). Conventions:

* A :class:`RatingTable` is items x raters (rows = items) with NaN for a
  missing rating. Build it with :meth:`RatingTable.from_long` from
  ``(item, rater, value)`` rows: a rater rating an item twice is an error,
  never silently averaged (pingouin's pivot averages duplicates).
* Every function returns an :class:`Estimate` carrying n items, n raters,
  n pairable items, how missing data was handled, and -- where the statistic
  is undefined (one rater, constant values, nothing pairable) -- ``value=None``
  with ``undefined_reason``; never a silent NaN, 0 or 1.
* CIs are 95%: exact F-based for ICC (Shrout & Fleiss / McGraw & Wong, as psych
  and pingouin, unrounded), percentile bootstrap over items for alpha and kappa
  (seedable ``rng``), Fisher z for correlations.

How to read them: ICC -- Koo & Li (2016): < .5 poor, .5-.75 moderate, .75-.9
good, > .9 excellent, read against the CI. Alpha -- Krippendorff: >= .800
reliable, .667-.800 tentative conclusions only. Kappa and alpha suffer from the
prevalence paradox (one category dominating): look at percent agreement too.

The package, one job per module:

* :mod:`~medeval.stats.agreement.ratings` -- :class:`RatingTable`, :class:`Estimate`, shared helpers;
* :mod:`~medeval.stats.agreement.intraclass` -- the six ICC forms;
* :mod:`~medeval.stats.agreement.alpha` -- Krippendorff's alpha;
* :mod:`~medeval.stats.agreement.kappa` -- Cohen's and Fleiss' kappa, percent agreement;
* :mod:`~medeval.stats.agreement.correlations` -- Spearman, Pearson, Kendall;
* :mod:`~medeval.stats.agreement.summary` -- the ``agreement`` command: read a ratings file, summarise, render.

This module re-exports their public names: import from ``medeval.stats.agreement``.
"""

from __future__ import annotations

from medeval.stats.agreement.alpha import krippendorff_alpha
from medeval.stats.agreement.correlations import correlation
from medeval.stats.agreement.intraclass import ICC_DESCRIPTIONS, ICC_FORMS, icc
from medeval.stats.agreement.kappa import cohen_kappa, fleiss_kappa, percent_agreement
from medeval.stats.agreement.ratings import LEVELS, Estimate, RatingTable, check_bootstrap
from medeval.stats.agreement.summary import read_long, render_summary, summarise

__all__ = [
    "LEVELS", "Estimate", "RatingTable", "check_bootstrap",
    "ICC_FORMS", "ICC_DESCRIPTIONS", "icc",
    "krippendorff_alpha",
    "cohen_kappa", "fleiss_kappa", "percent_agreement",
    "correlation",
    "read_long", "summarise", "render_summary",
]
