"""Statistics as pure functions of their inputs (no database): agreement (ICC, kappas, alpha,
Spearman), judge vs clinicians, preference models, fact-check and exam scoring.

Layer rules: see the docstring of ``medeval``."""
