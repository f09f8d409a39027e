"""Tier thresholds as data, and grading as a pure function of (score, threshold set).

A threshold set holds, per (metric, aspect type), two cut-offs ``low <= high``:

* ``score <  low``          -> tier 0, Completely Wrong
* ``low <= score < high``   -> tier 1, Partially Correct
* ``score >= high``         -> tier 2, Basically Correct

This reproduces the half-open intervals of the paper's Table 12 (e.g. BLEU-1
enumerated [0, 0.05) / [0.05, 0.25) / [0.25, 1]). The numeric aspect uses
``low = high = 1`` on exact match: 1 -> Basically Correct, 0 -> Completely Wrong.

**The comparison rule** (:mod:`medeval.engine.cutoff_rule`, one rule for the whole package): a score
reaches a cut-off when ``round(score, 9) >= round(cut, 9)``, so a score exactly on a cut-off -- ROUGE-1 F1
0.7499999999999999 for P = 3/5, R = 1 -- is graded in the upper tier, as the paper's [0.75, 1] says.
Stored scores are never rounded; the SQL compares them with :func:`reach_bound`.

Sets are versioned and stored with provenance (who, when, from what) and the scorers they were calibrated for --
the tokenizer and the embedding model. Cosine cut-offs only apply to cosine scores from that embedding model.
Table 12 is version 1 of every database (migration ``store/migrations/m002_table12.py``).
"""

from __future__ import annotations

import json
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import sqlite_utils

from medeval.core.errors import MedevalError
from medeval.core.i18n import N_
from medeval.engine.cosine_scorers import (  # noqa: F401 (the cosine choice, imported from here by its readers)
    cosine_blockers,
    cosine_conversion,
    cosine_pick,
    cosine_rank,
    cosine_scorers_in_order,
    cosine_undetermined,
    embedding_matches,
    unblocked_sql,
)
from medeval.engine.cutoff_rule import DECIMALS, canonical, canonical_array, reach_bound, reaches  # noqa: F401
from medeval.engine.threshold_files import read_json, threshold_cutoffs
from medeval.engine.metrics import EXACT_SCORER_ID
from medeval.engine.registry import BUILTINS, METRICS, get_metric
from medeval.engine.tokenize import DEFAULT_SCORER_ID as TOKENIZER_ID  # a set records the lexical scorer id
from medeval.store.db import BUSY_TIMEOUT_MS, job_lock, transaction

# stored and exported in English (N_: shown with _()); TIERS_ZH: the papers' own Chinese names
TIERS = {0: N_("Completely Wrong"), 1: N_("Partially Correct"), 2: N_("Basically Correct")}
TIERS_ZH = {0: "完全错误", 1: "部分正确", 2: "基本正确"}
PAPER_EMBEDDING_MODEL = "moka-ai/m3e-base"


def tier(score: float, low: float, high: float) -> int:
    """The tier of ``score`` under cut-offs ``low <= high`` (0, 1 or 2); a score on a cut-off reaches it.

    >>> tier(0.0499, 0.05, 0.25), tier(0.05, 0.05, 0.25), tier(0.25, 0.05, 0.25)
    (0, 1, 2)
    >>> tier(2 * 0.6 * 1.0 / (0.6 + 1.0), 0.05, 0.75)  # ROUGE-1 F1 of P = 3/5, R = 1: 0.7499999999999999
    2
    """
    if score is None or (isinstance(score, float) and math.isnan(score)):
        raise MedevalError("cannot grade a missing score")
    s = canonical(score)
    if s < canonical(low):
        return 0
    if s < canonical(high):
        return 1
    return 2


@dataclass(frozen=True)
class ThresholdSet:
    name: str
    cutoffs: dict[tuple[str, str], tuple[float, float]]
    tokenizer: str = TOKENIZER_ID
    embedding_model: str = PAPER_EMBEDDING_MODEL
    provenance: dict = field(default_factory=dict)
    version: int | None = None
    created_at: str | None = None
    created_by: str | None = None
    active: bool = False

    def grade(self, metric: str, aspect_type: str, score: float) -> int:
        key = (get_metric(metric).name, aspect_type)
        if key not in self.cutoffs:
            raise MedevalError(f"threshold set {self.label} has no cut-offs for {key[0]} / {aspect_type}")
        low, high = self.cutoffs[key]
        return tier(score, low, high)

    def scorer_for(self, metric: str) -> str | None:
        if metric not in BUILTINS:  # a plugin metric: the scorer recorded when the set was stored, else the loaded
            recorded = (self.provenance.get("scorers") or {}).get(metric)  # plugin's; not loaded: graded by no set
            if recorded:
                return recorded
            plugin = METRICS.get(metric)
            return plugin.current_scorer_id() if plugin else None
        return {"bleu1": self.tokenizer, "rouge1": self.tokenizer, "exact_match": EXACT_SCORER_ID}.get(
            metric, self.embedding_model)

    def grades(self, metric: str, scorer: str) -> bool:
        """Does this set grade ``metric`` scores stored under ``scorer`` (cosine: the model it was calibrated for,
        :func:`embedding_matches`; the others: exactly :meth:`scorer_for`)?"""
        return embedding_matches(self.embedding_model, scorer) if metric == "cosine" else scorer == self.scorer_for(metric)

    @property
    def label(self) -> str:
        return f"v{self.version} ({self.name})" if self.version else self.name

    def to_dict(self) -> dict:
        return {
            "format": "medeval-thresholds/1",
            "version": self.version, "name": self.name,
            "tokenizer": self.tokenizer, "embedding_model": self.embedding_model,
            "created_at": self.created_at, "created_by": self.created_by,
            "provenance": self.provenance,
            "thresholds": [{"metric": m, "aspect_type": t, "low": lo, "high": hi}
                           for (m, t), (lo, hi) in sorted(self.cutoffs.items())],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)


TABLE12 = ThresholdSet(
    name="MedDisKEval Table 12",
    cutoffs={
        ("bleu1", "enumerated"): (0.05, 0.25), ("bleu1", "declarative"): (0.05, 0.45),
        ("rouge1", "enumerated"): (0.05, 0.75), ("rouge1", "declarative"): (0.05, 0.55),
        ("cosine", "enumerated"): (0.35, 0.75), ("cosine", "declarative"): (0.55, 0.65),
        ("exact_match", "numeric"): (1.0, 1.0),
    },
    tokenizer=TOKENIZER_ID,
    embedding_model=PAPER_EMBEDDING_MODEL,
    provenance={"source": "MedDisKEval (Do current LLMs master adequate clinical knowledge?), Appendix G, Table 12",
                "method": "clinicians tiered 10 examples per 0.1 score interval per (metric, type)",
                "note": "the cosine cut-offs were calibrated on M3E embeddings; they apply to scores from "
                        "moka-ai/m3e-base (a local model directory named m3e-base) only"},
    created_by="medeval (built in)",
)


def from_dict(data: dict, source: str = "threshold file") -> ThresholdSet:
    """Validate and build a set from its JSON form (the output of :meth:`ThresholdSet.to_dict`; the checks:
    :func:`medeval.engine.threshold_files.threshold_cutoffs`)."""
    cutoffs = threshold_cutoffs(data, source)
    name = str(data.get("name") or Path(source).stem)
    return ThresholdSet(name=name, cutoffs=cutoffs, tokenizer=str(data.get("tokenizer") or TOKENIZER_ID),
                        embedding_model=str(data.get("embedding_model") or PAPER_EMBEDDING_MODEL),
                        provenance=dict(data.get("provenance") or {}))


def read_file(path: str | Path) -> ThresholdSet:
    return from_dict(read_json(path), str(path))


# ---------------------------------------------------------------- storage

def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _insert(db: sqlite_utils.Database, ts: ThresholdSet, version: int | None = None, state: str = "ready") -> int:
    conn = db.conn
    plugin_scorers = {m: ts.scorer_for(m) for m, _ in sorted(ts.cutoffs) if m not in BUILTINS}
    if plugin_scorers:  # a plugin metric's cut-offs belong to the scorer they were calibrated for, as cosine's do
        ts = replace(ts, provenance={**ts.provenance, "scorers": plugin_scorers})
    if version is None:  # a set being built counts: its number is taken until it is removed
        version = (conn.execute("SELECT max(version) FROM threshold_sets").fetchone()[0] or 0) + 1
    conn.execute("INSERT INTO threshold_sets (version, name, tokenizer, embedding_model, provenance, created_at, "
                 "created_by, active, state) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)",
                 (version, ts.name, ts.tokenizer, ts.embedding_model, json.dumps(ts.provenance, ensure_ascii=False),
                  ts.created_at or _now(), ts.created_by or "unknown", state))
    conn.executemany("INSERT INTO thresholds (version, metric, aspect_type, low, high) VALUES (?, ?, ?, ?, ?)",
                     [(version, m, t, lo, hi) for (m, t), (lo, hi) in ts.cutoffs.items()])
    return version


def store(db: sqlite_utils.Database, ts: ThresholdSet, *, created_by: str, activate: bool = False) -> int:
    """Store ``ts`` as the next version (in one transaction); optionally make it active. Returns the version."""
    with transaction(db):
        v = _insert(db, ThresholdSet(**{**ts.__dict__, "created_by": created_by, "created_at": _now()}))
        if activate:
            _activate(db, v)
    return v


def load(db: sqlite_utils.Database, version: int, *, building: bool = False) -> ThresholdSet:
    """The set ``version``; a publication's set still being built (m028) is no version but to that publication
    (``building=True``), so no list, page, report or command sees one that a kill left half-made."""
    row = db.conn.execute("SELECT version, name, tokenizer, embedding_model, provenance, created_at, created_by, active "
                          "FROM threshold_sets WHERE version = ? AND (state != 'building' OR ?)",
                          (version, building)).fetchone()
    if row is None:
        known = [r[0] for r in db.conn.execute("SELECT version FROM threshold_sets WHERE state != 'building' "
                                               "ORDER BY version")]
        raise MedevalError(f"no threshold set version {version} (versions: {', '.join(map(str, known)) or 'none'})")
    cut = {(m, t): (lo, hi) for m, t, lo, hi in
           db.conn.execute("SELECT metric, aspect_type, low, high FROM thresholds WHERE version = ?", (version,))}
    return ThresholdSet(name=row[1], cutoffs=cut, tokenizer=row[2], embedding_model=row[3],
                        provenance=json.loads(row[4]), version=row[0], created_at=row[5], created_by=row[6],
                        active=bool(row[7]))


def active(db: sqlite_utils.Database) -> ThresholdSet:
    row = db.conn.execute("SELECT version FROM threshold_sets WHERE active = 1").fetchone()
    if row is None:
        raise MedevalError("no threshold set is active: run `python -m medeval thresholds activate VERSION`")
    return load(db, row[0])


def list_sets(db: sqlite_utils.Database) -> list[ThresholdSet]:
    return [load(db, v) for (v,) in db.conn.execute("SELECT version FROM threshold_sets WHERE state != 'building' "
                                                    "ORDER BY version")]


def _activate(db: sqlite_utils.Database, version: int) -> None:
    load(db, version, building=True)  # raises for an unknown version
    db.conn.execute("UPDATE threshold_sets SET active = 0 WHERE active = 1")
    db.conn.execute("UPDATE threshold_sets SET active = 1, state = 'ready' WHERE version = ?", (version,))


BUSY = "another publication or activation of a threshold set is running: wait for it to finish, then try again"


@contextmanager
def one_job(db: sqlite_utils.Database):
    """Publications and activations one at a time per database (an OS lock that dies with its holder, waited for as
    long as a write lock), each first removing what a killed one left (m028): a set still ``building`` with its
    grades, and the grades begun on a set ``grading``, which had none."""
    with job_lock(db, "thresholds", busy=BUSY, wait=BUSY_TIMEOUT_MS / 1000):
        for version, state in db.conn.execute("SELECT version, state FROM threshold_sets WHERE state != 'ready'"
                                              ).fetchall():
            forget_version(db, version, keep_set=state == "grading")
        yield


def activate(db: sqlite_utils.Database, version: int, *, regrade: bool = True, actor=None) -> int:
    """Make ``version`` the active set and grade every score under it, atomically (:func:`grade_then_flip`).
    Returns grades added. A set with no grades is ``grading`` meanwhile (m028): a failure deletes the grades begun, a
    kill leaves them to the next job (:func:`one_job`). ``actor``: the signed-in user (researchers and admins only);
    the command line passes its local actor, ``None`` is an in-process trusted caller. Audited."""
    from medeval.accounts.policy import authorize

    authorize(actor, "thresholds.publish", db=db)
    with one_job(db):
        load(db, version)  # raises for an unknown version
        fresh = False
        if regrade:
            with transaction(db):
                fresh = db.conn.execute("UPDATE threshold_sets SET state = 'grading' WHERE version = ? AND active = 0 "
                                        "AND NOT EXISTS (SELECT 1 FROM grades WHERE version = ?)",
                                        (version, version)).rowcount == 1
        return grade_then_flip(db, version, "thresholds.activate", actor.username if actor else "cli",
                                lambda was: {"from": was}, regrade=regrade, undo=True if fresh else None)


def grade_then_flip(db: sqlite_utils.Database, version: int, action: str, who: str, detail, *,
                    regrade: bool = True, undo: bool | None) -> int:
    """Grade every score under ``version`` in short transactions while it is not active (annotators' grades pass
    between them; readers of the active set see the old version's grades), then, in one short transaction, grade
    what was scored meanwhile, make it active and ready and audit ``action`` (``detail(the version before)``).
    Returns the grades added. A failure removes what ``undo`` says (None: nothing; :func:`forget_version`'s
    ``keep_set``) and raises. Run it under :func:`one_job`; a publication stores its new set ``building`` first."""
    from medeval.accounts.auth import audit

    try:
        n, last = grade_in_chunks(db, version) if regrade else (0, 0)
        with transaction(db):
            before = db.conn.execute("SELECT version FROM threshold_sets WHERE active = 1").fetchone()
            if regrade:
                n += grade_db_in_tx(db, version, after=last)
            _activate(db, version)
            audit(db, who, action, str(version), detail(before[0] if before else None))
    except BaseException:
        if undo is not None:
            try:
                forget_version(db, version, keep_set=undo)
            except Exception:  # noqa: BLE001 - the error raised says what went wrong; the next job removes it
                pass
        raise
    return n


def adopt(db: sqlite_utils.Database, version: int, embedding_model: str, *, created_by: str,
          activate_it: bool = False) -> int:
    """Copy a set for another embedding model, marked *provisional -- not calibrated for this model*."""
    src = load(db, version)
    ts = ThresholdSet(
        name=f"{src.name} (provisional for {embedding_model})", cutoffs=dict(src.cutoffs), tokenizer=src.tokenizer,
        embedding_model=embedding_model,
        provenance={"adopted_from_version": src.version, "adopted_from": src.name, "calibrated": False,
                    "warning": f"cosine cut-offs were calibrated for {src.embedding_model}, not for "
                               f"{embedding_model}; calibrate them with clinicians before relying on cosine tiers"})
    v = store(db, ts, created_by=created_by)
    if activate_it:
        activate(db, v)
    return v


# ---------------------------------------------------------------- grading in the database

GRADE_CHUNK = 5000
"""Responses graded per write transaction when a whole version is graded (a few ms each)."""
_NO_END = 2 ** 63 - 1


def grade_db_in_tx(db: sqlite_utils.Database, version: int, *, after: int = 0, upto: int | None = None) -> int:
    """Insert the grades of every score not yet graded under ``version`` (inside the caller's transaction).

    Same rule as :func:`tier`, as SQL: each raw score is compared with :func:`reach_bound` of the cut-offs
    (scores on a cut-off reach it; stored scores are not rounded). Only scores from the scorers the set was calibrated for
    are graded (cosine: one per response, :func:`cosine_blockers`), and only those of responses ``after < id <= upto``
    (default: all).
    """
    ts = load(db, version, building=True)
    conn = db.conn
    upto = _NO_END if upto is None else upto
    blockers = cosine_blockers(ts, [s for (s,) in conn.execute(
        "SELECT DISTINCT scorer FROM scores WHERE metric = 'cosine' AND response_id > ? AND response_id <= ?",
        (after, upto))])
    before = conn.total_changes
    for (metric, atype), (low, high) in ts.cutoffs.items():
        scorers = sorted(blockers) if metric == "cosine" else [ts.scorer_for(metric)]
        for scorer in scorers:
            # a cosine score is graded only where no closer or equally close scorer scored the response too
            others = blockers.get(scorer, []) if metric == "cosine" else []
            not_blocked = unblocked_sql(others)
            conn.execute(
                "INSERT OR IGNORE INTO grades (response_id, metric, version, scorer, tier) "
                "SELECT s.response_id, s.metric, ?, s.scorer, "
                "CASE WHEN s.score < ? THEN 0 WHEN s.score < ? THEN 1 ELSE 2 END "
                "FROM scores s JOIN responses r ON r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id "
                "WHERE s.response_id > ? AND s.response_id <= ? AND s.metric = ? AND s.scorer = ? "
                f"AND k.aspect_type = ?{not_blocked}",
                (version, reach_bound(low), reach_bound(high), after, upto, metric, scorer, atype, *others))
    return conn.total_changes - before


def grade_in_chunks(db: sqlite_utils.Database, version: int, *, chunk: int | None = None) -> tuple[int, int]:
    """Grade every score under ``version`` in short transactions, ``chunk`` response ids each.

    Returns (grades added, the last response id covered): a caller that then activates the
    version grades ``after=`` that id in its own (short) transaction, so the scores added
    meanwhile are graded too. The write lock is free between chunks (annotators' grades pass).
    """
    chunk = chunk or GRADE_CHUNK
    top = db.conn.execute("SELECT max(response_id) FROM scores").fetchone()[0] or 0
    added, after = 0, 0
    while after < top:
        with transaction(db):
            added += grade_db_in_tx(db, version, after=after, upto=after + chunk)
        after += chunk
    return added, after


def forget_version(db: sqlite_utils.Database, version: int, *, chunk: int | None = None, keep_set: bool = False) -> None:
    """Delete a version that is not active, with its grades, in short transactions (a publication that failed or was
    killed half-way); ``keep_set``: only its grades, and it is ``ready`` again (an activation of a set that had none)."""
    conn, chunk = db.conn, chunk or GRADE_CHUNK
    if conn.execute("SELECT active FROM threshold_sets WHERE version = ?", (version,)).fetchone() != (0,):
        return
    top = conn.execute("SELECT max(response_id) FROM grades WHERE version = ?", (version,)).fetchone()[0] or 0
    for after in range(0, top, chunk):
        with transaction(db):
            conn.execute("DELETE FROM grades WHERE version = ? AND response_id > ? AND response_id <= ?",
                         (version, after, after + chunk))
    with transaction(db):
        if conn.execute("SELECT active FROM threshold_sets WHERE version = ?", (version,)).fetchone() == (0,):
            conn.execute("DELETE FROM grades WHERE version = ?", (version,))
            if keep_set:
                conn.execute("UPDATE threshold_sets SET state = 'ready' WHERE version = ?", (version,))
            else:
                conn.execute("DELETE FROM thresholds WHERE version = ?", (version,))
                conn.execute("DELETE FROM threshold_sets WHERE version = ?", (version,))



def grade_db(db: sqlite_utils.Database, version: int | None = None) -> tuple[int, int]:
    """Grade under ``version`` (default: the active set), in short transactions. Returns (version, grades added).

    Grades are keyed by version and a pure function of the score, so a reader of the version
    sees each newly graded score either ungraded or graded, never wrongly graded.
    """
    v = version if version is not None else active(db).version
    load(db, v)  # raises for an unknown version
    return v, grade_in_chunks(db, v)[0]


def coverage(db: sqlite_utils.Database, version: int) -> dict[str, dict[str, int]]:
    """Per metric: how many scores exist and how many are graded under ``version`` (explains ungraded cosine)."""
    out: dict[str, dict[str, int]] = {}
    for metric, n in db.conn.execute("SELECT metric, count(DISTINCT response_id) FROM scores GROUP BY metric"):
        out.setdefault(metric, {})["scored"] = n
    for metric, n in db.conn.execute("SELECT metric, count(*) FROM grades WHERE version = ? GROUP BY metric", (version,)):
        out.setdefault(metric, {})["graded"] = n
    for v in out.values():
        v.setdefault("scored", 0)
        v.setdefault("graded", 0)
    return out
