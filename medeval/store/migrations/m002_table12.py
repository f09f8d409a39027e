"""Version 1 of every database's threshold sets: the MedDisKEval paper's Table 12, active.

The values are written out here rather than read from ``medeval.engine.thresholds.TABLE12``:
a migration is history, and a later change to that constant must not change what a new
database starts with. ``tests/test_thresholds.py`` checks that the two agree.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import json
import time

import sqlite_utils

NAME = "MedDisKEval Table 12"
TOKENIZER = "cjk-char-v1"
EMBEDDING_MODEL = "moka-ai/m3e-base"
CREATED_BY = "medeval (built in)"
PROVENANCE = {
    "source": "MedDisKEval (Do current LLMs master adequate clinical knowledge?), Appendix G, Table 12",
    "method": "clinicians tiered 10 examples per 0.1 score interval per (metric, type)",
    "note": "the cosine cut-offs were calibrated on M3E embeddings; they apply to scores from "
            "moka-ai/m3e-base (a local model directory named m3e-base) only",
}
CUTOFFS = {
    ("bleu1", "enumerated"): (0.05, 0.25), ("bleu1", "declarative"): (0.05, 0.45),
    ("rouge1", "enumerated"): (0.05, 0.75), ("rouge1", "declarative"): (0.05, 0.55),
    ("cosine", "enumerated"): (0.35, 0.75), ("cosine", "declarative"): (0.55, 0.65),
    ("exact_match", "numeric"): (1.0, 1.0),
}


def up(db: sqlite_utils.Database) -> None:
    conn = db.conn
    conn.execute("INSERT INTO threshold_sets (version, name, tokenizer, embedding_model, provenance, created_at, "
                 "created_by, active) VALUES (1, ?, ?, ?, ?, ?, ?, 1)",
                 (NAME, TOKENIZER, EMBEDDING_MODEL, json.dumps(PROVENANCE, ensure_ascii=False),
                  time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), CREATED_BY))
    conn.executemany("INSERT INTO thresholds (version, metric, aspect_type, low, high) VALUES (1, ?, ?, ?, ?)",
                     [(m, t, lo, hi) for (m, t), (lo, hi) in CUTOFFS.items()])
