"""The built-in Table 12 set grades lexical scores of the medical tokenizer (issue 21).

The tokenizer changed from ``cjk-char-v1`` (symbols dropped, "90mmHg" one token) to ``cjk-med-v2``
(Greek letters, ≥ ≤ < > ± % ° kept, numbers split from units), and lexical scores are computed after
OpenCC's traditional -> simplified conversion by default: scorer id ``cjk-med-v2+t2s``. A threshold set
grades only scores from the scorer it records, and the paper's Table 12 cut-offs were calibrated under the
paper's own tokenisation -- neither of medeval's -- so the built-in set (and sets adopted from it for
another embedding model, which copy its lexical cut-offs) now records ``cjk-med-v2+t2s``.

Its grades of ``cjk-char-v1`` BLEU-1/ROUGE-1 scores are removed: a grade is keyed by (version, response,
metric), so they would block the grades of the new scores. The old scores themselves stay (history; their
scorer id says what they are). ``medeval score`` then adds the new scores and grades them. Sets calibrated
by clinicians on ``cjk-char-v1`` scores keep that tokenizer and keep grading those scores: their cut-offs
belong to that tokenizer.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import json

import sqlite_utils

OLD = "cjk-char-v1"
NEW = "cjk-med-v2+t2s"
BUILT_IN = ("MedDisKEval Table 12", "medeval (built in)")


def _follows_table12(name: str, created_by: str, provenance: str) -> bool:
    if (name, created_by) == BUILT_IN:
        return True
    try:
        prov = json.loads(provenance or "{}")
    except ValueError:
        return False
    return isinstance(prov, dict) and prov.get("adopted_from") == BUILT_IN[0] and prov.get("calibrated") is False


def up(db: sqlite_utils.Database) -> None:
    conn = db.conn
    versions = [v for v, name, by, prov in conn.execute(
        "SELECT version, name, created_by, provenance FROM threshold_sets WHERE tokenizer = ?", (OLD,))
        if _follows_table12(name, by, prov)]
    for v in versions:
        conn.execute("UPDATE threshold_sets SET tokenizer = ? WHERE version = ?", (NEW, v))
        conn.execute("DELETE FROM grades WHERE version = ? AND scorer = ? AND metric IN ('bleu1', 'rouge1')", (v, OLD))
