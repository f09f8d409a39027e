"""Accounts: users and roles, argon2 password hashes, server-side sessions, the append-only audit
log, and the policy (``policy.authorize``): how the layers above enforce permissions in the data layer.

Layer rules: see the docstring of ``medeval``."""
