"""Calibration: clinicians' grades turned into cut-offs (calibrate, publish), clinicians vs machine
(validation), the live tuning workspace of the Tune cut-offs page, and calibration v2's pure core (the
smooth cut-off estimator, the adaptive design, the estimators by name).

Layer rules: see the docstring of ``medeval``. This ``__init__`` re-exports the pure v2 API from its own
modules (``from medeval.calibration import smooth_cutoffs``); the modules never import the package."""

from medeval.calibration.adaptive import propose_items
from medeval.calibration.estimators import ESTIMATORS, estimator_names, get_estimator
from medeval.calibration.smooth import BoundaryFit, SmoothFit, smooth_cutoffs

__all__ = ["BoundaryFit", "ESTIMATORS", "SmoothFit", "estimator_names", "get_estimator", "propose_items",
           "smooth_cutoffs"]
