"""Storage: SQLite connections (a new one per operation), BEGIN IMMEDIATE write transactions, and
the schema as numbered migrations discovered by name.

Layer rules: see the docstring of ``medeval``."""
