"""Double-blind preference results: shares per source, position bias, Bradley-Terry strengths, agreement.

Input rows are choices ``(item, annotator, left_source, right_source, choice)`` with
``choice`` one of ``"left"``, ``"right"`` or ``"tie"`` -- what the annotator pressed,
with the sources that were shown on each side (assigned per annotator from a stored
seed). From them:

* the share of comparisons each source won (a tie counts half), overall and per annotator,
  and the spread of that share across annotators;
* a position-bias check: among decided comparisons, the share won by the LEFT side, with
  an exact two-sided binomial test against 1/2 (a blind, well-randomised task should not
  favour a side);
* Bradley-Terry strengths when there are more than two sources (the maximum-likelihood
  fit by Hunter's (2004) MM algorithm; ties count half a win each way), normalised to
  sum to the number of sources;
* agreement among annotators on the items several of them judged: Krippendorff's alpha
  at the nominal level over the chosen *source* (or tie), so that left/right swaps
  between annotators do not count as disagreement.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
# (scipy is imported where it is used: `python -m medeval` and the app's pages start without it)

from medeval.core.errors import MedevalError
from medeval.stats.agreement import RatingTable, krippendorff_alpha

CHOICES = ("left", "right", "tie")


def _check(rows) -> list[tuple]:
    out, seen = [], set()
    for n, r in enumerate(rows, start=1):
        if len(r) != 5:
            raise MedevalError(f"choice {n}: expected (item, annotator, left_source, right_source, choice)")
        item, who, left, right, choice = r
        if choice not in CHOICES:
            raise MedevalError(f"choice {n}: {choice!r} is not one of {', '.join(CHOICES)}")
        if left == right:
            raise MedevalError(f"choice {n}: item {item!r} shows the same source {left!r} on both sides")
        if (item, who) in seen:
            raise MedevalError(f"choice {n}: annotator {who!r} judged item {item!r} twice")
        seen.add((item, who))
        out.append((item, who, left, right, choice))
    if not out:
        raise MedevalError("no choices to analyse")
    return out


def _winner(left, right, choice):
    return left if choice == "left" else right if choice == "right" else None


def shares(rows) -> dict:
    """Share of comparisons won per source (tie = half), overall and per annotator, with the spread."""
    rows = _check(rows)
    won: dict = defaultdict(float)
    seen: dict = defaultdict(int)
    per: dict = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for _, who, left, right, choice in rows:
        w = _winner(left, right, choice)
        for s in (left, right):
            seen[s] += 1
            per[who][s][1] += 1
            credit = 0.5 if w is None else float(w == s)
            won[s] += credit
            per[who][s][0] += credit
    out = {}
    for s in sorted(seen):
        by = [v[0] / v[1] for who in per for src, v in per[who].items() if src == s and v[1]]
        out[s] = {"share": won[s] / seen[s], "n": seen[s], "per_annotator_min": min(by), "per_annotator_max": max(by),
                  "per_annotator_sd": float(np.std(by, ddof=1)) if len(by) > 1 else None}
    return out


def position_bias(rows) -> dict:
    """Share of decided comparisons won by the left side, with an exact two-sided binomial test against 1/2."""
    from scipy.stats import binomtest
    rows = _check(rows)
    decided = [c for *_, c in rows if c != "tie"]
    left = sum(c == "left" for c in decided)
    if not decided:
        return {"left_share": None, "n_decided": 0, "p": None, "undefined_reason": "every choice is a tie"}
    test = binomtest(left, len(decided), 0.5, alternative="two-sided")
    return {"left_share": left / len(decided), "n_decided": len(decided), "left_wins": left, "p": float(test.pvalue),
            "undefined_reason": None}


def bradley_terry(rows, *, tol: float = 1e-10, max_iter: int = 10_000) -> dict:
    """Bradley-Terry strengths (MM algorithm, Hunter 2004); ties count half a win to each side.

    Strengths are normalised to sum to the number of sources; P(i beats j) = p_i / (p_i + p_j).
    Undefined (with the reason) when a source never wins or never loses: its MLE is 0 or infinite.
    """
    rows = _check(rows)
    sources = sorted({s for r in rows for s in (r[2], r[3])})
    idx = {s: i for i, s in enumerate(sources)}
    k = len(sources)
    wins = np.zeros((k, k))
    for _, _, left, right, choice in rows:
        i, j = idx[left], idx[right]
        if choice == "left":
            wins[i, j] += 1
        elif choice == "right":
            wins[j, i] += 1
        else:
            wins[i, j] += 0.5
            wins[j, i] += 0.5
    games = wins + wins.T
    w = wins.sum(axis=1)
    lost = wins.sum(axis=0)
    bad = [sources[i] for i in range(k) if w[i] == 0 or lost[i] == 0]
    if bad:
        return {"strengths": None, "sources": sources,
                "undefined_reason": f"{', '.join(map(str, bad))} never lost or never won: the strengths diverge"}
    p = np.ones(k)
    for it in range(max_iter):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = w / denom
        new *= k / new.sum()
        if np.max(np.abs(new - p)) < tol:
            p = new
            break
        p = new
    return {"strengths": {s: float(p[idx[s]]) for s in sources}, "sources": sources, "iterations": it + 1,
            "undefined_reason": None}


def annotator_agreement(rows, *, n_boot: int = 0, rng=0) -> dict:
    """Nominal alpha over the chosen source (or tie) on items judged by two or more annotators."""
    rows = _check(rows)
    labels = sorted({str(s) for r in rows for s in (r[2], r[3])}) + ["tie"]
    long = [(item, who, "tie" if choice == "tie" else str(_winner(left, right, choice)))
            for item, who, left, right, choice in rows]
    t = RatingTable.from_long(long, categories=labels)
    return krippendorff_alpha(t, "nominal", labels, n_boot=n_boot, rng=rng).to_dict()


def summarise(rows, *, n_boot: int = 0, rng=0) -> dict:
    rows = _check(rows)
    return {"n_choices": len(rows), "n_items": len({r[0] for r in rows}), "n_annotators": len({r[1] for r in rows}),
            "shares": shares(rows), "position_bias": position_bias(rows), "bradley_terry": bradley_terry(rows),
            "alpha_nominal": annotator_agreement(rows, n_boot=n_boot, rng=rng)}
