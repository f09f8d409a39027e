"""Accounts: users and roles, argon2 password hashes, server-side sessions, the append-only audit
log. require_role is how the layers above enforce roles in the data layer.

Layer rules: see the docstring of ``medeval``."""
