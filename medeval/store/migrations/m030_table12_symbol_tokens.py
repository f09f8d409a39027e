"""The built-in Table 12 set grades lexical scores of the symbol-aware tokenizer (``cjk-med-v3``).

The tokenizer changed from ``cjk-med-v2`` to ``cjk-med-v3``: polarity and direction markers are tokens
((+)/(-)/(+++), +, a minus that marks a finding or a sign, ↑/↓), ≧ ⩾ ≦ ⩽ fold into ≥ ≤, and one normalisation
runs on every path (superscripts, circled list numbers), so "尿蛋白(+)" and "尿蛋白(-)" no longer score ROUGE-1 =
1.0 and a reference's 10¹² is tokenised as an answer's 10^12. The lexical scorer id under the default settings is
now ``cjk-med-v3+t2s``. A threshold set grades only scores from the scorer it records; the paper's Table 12
cut-offs were calibrated under the paper's own tokenisation -- none of medeval's -- so the built-in set (and sets
adopted from it for another embedding model, which copy its lexical cut-offs) now records ``cjk-med-v3+t2s``.

The same policy as ``m018_table12_tokenizer``: those sets' grades of ``cjk-med-v2+t2s`` BLEU-1/ROUGE-1 scores are
removed (a grade is keyed by (version, response, metric), so they would block the grades of the new scores); the
old scores themselves stay (history; their scorer id says what they are, and no score is rescored here).
``medeval score`` then adds the ``cjk-med-v3+t2s`` scores and grading grades them. Sets calibrated by clinicians on
``cjk-med-v2+t2s`` (or ``cjk-med-v2``) scores keep that tokenizer and keep grading those scores: their cut-offs
belong to that tokenizer.

Stored post-processed texts are not touched: a reference or a pattern-extracted answer imported before this change
was stored NFKC-folded (10¹² as "1012", ① as "1"), and the new scores of such a row read that text. Only a row whose
raw text holds a superscript right after a digit or a circled or parenthesised number is affected.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import json

import sqlite_utils

OLD = "cjk-med-v2+t2s"
NEW = "cjk-med-v3+t2s"
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
