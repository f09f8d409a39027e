"""Annotation: tier-grading campaigns (sampling, exactly-k assignment, append-only grades),
clinical cases and judge rationales, and the task types (rubric, preference, AccR).

Layer rules: see the docstring of ``medeval``."""
