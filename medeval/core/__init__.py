"""The bottom layer: error types, settings (each declared once with its help text) and reading
tables from CSV, JSON and JSONL files.

Layer rules: see the docstring of ``medeval``."""
