"""The schema's history: one module per migration, ``mNNN_what.py`` with ``up(db)``.

``medeval.store.migrate`` finds them by name and applies the missing ones in order; the name
is what ``_migrations`` records, so a module is never renamed once it has shipped.
"""
