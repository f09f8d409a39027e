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
    suffix (texts converted from traditional to simplified Chinese before embedding) does not change the model.

    >>> embedding_matches("moka-ai/m3e-base", "st:m3e-base:1a2b+t2s"), embedding_matches("x", "y+t2s")
    (True, False)
    """
    if scorer.endswith(T2S_SUFFIX):
        scorer = scorer[: -len(T2S_SUFFIX)]
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
