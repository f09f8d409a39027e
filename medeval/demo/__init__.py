"""The demo data set (DEMO DATA -- NOT CLINICAL ADVICE): a knowledge base, cases and simulated
clinicians written for this project, built through the normal import path.

Layer rules: see the docstring of ``medeval``."""
