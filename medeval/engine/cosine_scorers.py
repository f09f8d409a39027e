"""Which cosine scores a threshold set grades: the embedding model its cut-offs were calibrated for, and -- when one
response holds cosine scores of that model under several scorer ids -- which one.

A cosine scorer id names the model (a hub id, or ``st:<directory>:<fingerprint>`` for a local directory) and,
with ``+t2s``, that the texts were converted from traditional to simplified Chinese before embedding. One
database can hold one model's scores under two ids: scored with and without the conversion, or a local model
directory that changed (two fingerprints). Grading must not depend on which was stored first or on the setting
of the moment: the set's grading reads the id the set records (:func:`cosine_rank`: the exact model id first, then
the conversion the set records), and where two ids fit equally and nothing recorded decides, the response's
cosine is left ungraded and the reports say so (:func:`cosine_undetermined`), never graded by a pick.

``ts``: a :class:`medeval.engine.thresholds.ThresholdSet` (its ``embedding_model`` and ``tokenizer``).
"""

from __future__ import annotations

from medeval.engine.tokenize import T2S_SUFFIX


def embedding_matches(set_model: str, scorer: str) -> bool:
    """Does a cosine score's scorer id belong to the model a set was calibrated for?

    A local directory named like the set's model (``m3e-base`` for ``moka-ai/m3e-base``) matches. The ``+t2s``
    suffix (texts converted from traditional to simplified Chinese before embedding) does not change the model, on
    either side: a set may record the scorer id it was calibrated on, suffix and all (:func:`cosine_conversion`).

    >>> embedding_matches("moka-ai/m3e-base", "st:m3e-base:1a2b+t2s"), embedding_matches("x", "y+t2s")
    (True, False)
    >>> embedding_matches("moka-ai/m3e-base+t2s", "moka-ai/m3e-base"), embedding_matches("x/y+t2s", "st:y:1a")
    (True, True)
    """
    if scorer.endswith(T2S_SUFFIX):
        scorer = scorer[: -len(T2S_SUFFIX)]
    if set_model.endswith(T2S_SUFFIX):
        set_model = set_model[: -len(T2S_SUFFIX)]
    if scorer == set_model:
        return True
    base = set_model.rstrip("/").split("/")[-1]
    return scorer.startswith(f"st:{base}:")


def cosine_conversion(ts) -> bool:
    """Were the texts of the cosine scores ``ts`` grades converted traditional -> simplified (``+t2s``)? What the set
    records: its embedding model id when that carries the suffix, else its tokenizer id (one setting converts the
    texts of both, :func:`medeval.engine.scoring.scorer_id`) -- never the setting of the moment."""
    return ts.embedding_model.endswith(T2S_SUFFIX) or ts.tokenizer.endswith(T2S_SUFFIX)


def cosine_rank(ts, scorer: str) -> tuple[int, int] | None:
    """How closely a cosine scorer id fits what ``ts`` records (lower is closer; None: another model): first the
    model (0: the id the set records, 1: a local directory of that name, another fingerprint), then the
    traditional -> simplified conversion (0: the set's, :func:`cosine_conversion`; 1: the other)."""
    if not embedding_matches(ts.embedding_model, scorer):
        return None
    model = scorer[: -len(T2S_SUFFIX)] if scorer.endswith(T2S_SUFFIX) else scorer
    recorded = ts.embedding_model[: -len(T2S_SUFFIX)] if ts.embedding_model.endswith(T2S_SUFFIX) else ts.embedding_model
    return (0 if model == recorded else 1, 0 if scorer.endswith(T2S_SUFFIX) == cosine_conversion(ts) else 1)


def cosine_blockers(ts, scorers) -> dict[str, list[str]]:
    """For each cosine scorer ``ts`` grades among ``scorers``: the scorers whose score on the same response stops
    this one's being graded -- those that fit the set more closely (:func:`cosine_rank`) and those that fit it
    equally well. So a response scored by one model with and without ``+t2s`` is graded by the score whose
    conversion the set records, whichever was stored first; one scored by two equally fitting ids (two
    fingerprints of a local model the set does not name exactly) is not graded at all (:func:`cosine_pick` says
    which), rather than by whichever came first."""
    ranks = {s: r for s in set(scorers) if (r := cosine_rank(ts, s)) is not None}
    return {s: sorted(o for o, q in ranks.items() if o != s and q <= r) for s, r in sorted(ranks.items())}


def cosine_scorers_in_order(ts, scorers) -> list[str]:
    """The cosine ``scorers`` ``ts`` grades, closest fit first (:func:`cosine_rank`, then the id)."""
    return sorted((s for s in set(scorers) if cosine_rank(ts, s) is not None), key=lambda s: (cosine_rank(ts, s), s))


def cosine_pick(ts, scorers) -> tuple[str | None, list[str]]:
    """Which of one response's cosine scorer ids ``ts`` grades: ``(scorer, [])``; ``(None, tied)`` when two or more
    fit the set equally well and nothing recorded decides between them (the response's cosine is not graded);
    ``(None, [])`` when none is the set's model.

    >>> from medeval.engine.thresholds import ThresholdSet
    >>> ts = ThresholdSet("t", {}, tokenizer="cjk-med-v2+t2s", embedding_model="moka-ai/m3e-base")
    >>> cosine_pick(ts, ["st:m3e-base:aa", "st:m3e-base:aa+t2s"])
    ('st:m3e-base:aa+t2s', [])
    >>> cosine_pick(ts, ["st:m3e-base:aa+t2s", "st:m3e-base:bb+t2s"])
    (None, ['st:m3e-base:aa+t2s', 'st:m3e-base:bb+t2s'])
    """
    ranks = {s: r for s in set(scorers) if (r := cosine_rank(ts, s)) is not None}
    if not ranks:
        return None, []
    best = min(ranks.values())
    top = sorted(s for s, r in ranks.items() if r == best)
    return (top[0], []) if len(top) == 1 else (None, top)


def graded_scores(ts, rows, *, response: int = 0, metric: int = 1, scorer: int = 2) -> list:
    """Of score rows (tuples holding a response id, a metric and a scorer id at the positions given), the ones ``ts``
    grades, in their order: a score of another metric under the scorer the set records (``ts.grades``), and per
    response the one cosine score whose id :func:`cosine_pick` chooses among that response's cosine ids -- none
    where two tie, as grading does. So a reader of raw scores (calibration rows, the sampling pool, t-tests) sees
    each response once, with the score its grade comes from. A response's rows must all be among ``rows``.

    >>> from medeval.engine.thresholds import ThresholdSet
    >>> ts = ThresholdSet("t", {}, tokenizer="cjk-med-v2+t2s", embedding_model="moka-ai/m3e-base")
    >>> rows = [(1, "cosine", "st:m3e-base:aa", 0.4), (1, "cosine", "st:m3e-base:aa+t2s", 0.6),
    ...         (2, "cosine", "st:m3e-base:aa+t2s", 0.7), (2, "cosine", "st:m3e-base:bb+t2s", 0.2),
    ...         (3, "cosine", "st:m3e-base:aa", 0.5), (3, "rouge1", "cjk-med-v2+t2s", 0.3)]
    >>> [r[:3] for r in graded_scores(ts, rows)]  # 1: the +t2s score the set records; 2: two fingerprints tie
    [(1, 'cosine', 'st:m3e-base:aa+t2s'), (3, 'cosine', 'st:m3e-base:aa'), (3, 'rouge1', 'cjk-med-v2+t2s')]
    """
    rows = rows if isinstance(rows, list) else list(rows)
    pairs = {(r[metric], r[scorer]) for r in rows}
    blockers = {s: set(o) for s, o in cosine_blockers(ts, {s for m, s in pairs if m == "cosine"}).items()}
    kept = {(m, s) for m, s in pairs if (s in blockers if m == "cosine" else ts.grades(m, s))}
    if not any(blockers.values()):  # one id of the set's model (the usual case): the scorer decides, row by row
        return rows if kept == pairs else [r for r in rows if (r[metric], r[scorer]) in kept]
    # two ids of the set's model: which ones each response holds decides
    held: dict = {}
    for r in rows:
        if r[metric] == "cosine" and r[scorer] in blockers:
            held.setdefault(r[response], set()).add(r[scorer])
    return [r for r in rows if (r[metric], r[scorer]) in kept
            and not (r[metric] == "cosine" and held[r[response]] & blockers[r[scorer]])]


def unblocked_sql(others, alias: str = "s") -> str:
    """The SQL condition (`` AND ...``; empty for none) that keeps a cosine score row ``alias`` only where its
    response holds no cosine score by one of ``others`` -- its :func:`cosine_blockers`, so the row is the one
    :func:`cosine_pick` chooses. Takes ``others`` as parameters, in that order."""
    if not others:
        return ""
    return (f" AND NOT EXISTS (SELECT 1 FROM scores b WHERE b.response_id = {alias}.response_id AND "
            f"b.metric = 'cosine' AND b.scorer IN ({','.join('?' * len(others))}))")


def cosine_undetermined(db, ts) -> dict:
    """The responses whose cosine ``ts`` does not grade because two or more of their scorer ids fit it equally
    (:func:`cosine_pick`): ``{"responses": n, "scorers": [the tied ids]}`` (n = 0: none)."""
    ranks = {s: r for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'cosine'")
             if (r := cosine_rank(ts, s)) is not None}
    n, tied = 0, set()
    for rank in sorted(set(ranks.values())):
        group = sorted(s for s, r in ranks.items() if r == rank)
        if len(group) < 2:  # one id at this fit: nothing to decide between
            continue
        closer = sorted(s for s, r in ranks.items() if r < rank)
        blocked = (f" AND response_id NOT IN (SELECT response_id FROM scores WHERE metric = 'cosine' AND scorer IN "
                   f"({','.join('?' * len(closer))}))" if closer else "")
        found = db.conn.execute(
            f"SELECT count(*) FROM (SELECT response_id FROM scores WHERE metric = 'cosine' AND scorer IN "
            f"({','.join('?' * len(group))}){blocked} GROUP BY response_id HAVING count(DISTINCT scorer) > 1)",
            [*group, *closer]).fetchone()[0]
        if found:
            n += found
            tied.update(group)
    return {"responses": n, "scorers": sorted(tied)}
