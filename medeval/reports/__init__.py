"""Reports: the tier report and leaderboard, the agreement dashboard's statistics, offline HTML and
PDF reports.

Layer rules: see the docstring of ``medeval``."""
