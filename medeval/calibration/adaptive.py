"""Adaptive design: the next items to grade, where a grade most reduces the cut-offs' expected variance.

QUEST+ and Psi choose each next stimulus where the expected posterior uncertainty of the threshold is
smallest. Here, per boundary k (P(tier >= k | score), see :mod:`medeval.calibration.smooth`):

1. a **grid posterior** over (cut-off, log width) from the graded items (uniform prior over the pool's
   score range and over widths 0.005 .. 0.3; a fixed 4% lapse so a careless grade cannot pin it), on a grid
   that zooms in on the cut-off as it narrows;
2. a **round of m items picked greedily**: each candidate score's Fisher information about
   (cut-off, log width) is computed at each posterior draw; the pick is the score that most lowers the
   expected posterior spread of the two cut-offs together, sd(low) + sd(high) (per boundary the (cut-off,
   cut-off) element of the inverse of prior + graded + this round's information, averaged over draws, then
   its square root -- a Bayesian c-optimal design, so a round spreads over both sides of every plausible
   cut-off instead of piling on the likeliest one). The sum of standard deviations, not of variances, is what
   the cut-offs' mean absolute error follows: a sum of variances gives the wider (shallower) boundary a
   larger share of the items than that error repays (v1 did; bench/README.md has both, 100 panels per cell);
3. a share (``random_share``) of the round drawn **uniformly over the score range** (the nearest ungraded
   item to a uniform score), so a badly wrong starting posterior is corrected.

With nothing graded the posterior is the prior and the round spreads over the range. Deterministic for a
given ``rng``; never returns a graded index or the same index twice.
"""

from __future__ import annotations

import numpy as np
# (scipy is imported where it is used: `python -m medeval` and the app's pages start without it)

from medeval.calibration.smooth import check_inputs
from medeval.core.errors import MedevalError

DESIGN = "adaptive-psi-v2"  # v2: sd(low) + sd(high); v1 minimised Var(low) + Var(high)
DESIGN_LAPSE = 0.04
N_C, N_W = 121, 14
W_MIN, W_MAX = 0.015, 0.3  # the curve's width (logistic scale, score units) the design considers
N_BINS = 200  # candidate scores: the pool is binned so the cost does not grow with its size
N_DRAWS = 128


def _rng(rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _loglik(scores, y, cs, lws):
    from scipy.special import expit
    z = (scores[None, None, :] - cs[:, None, None]) / np.exp(lws)[None, :, None]
    p = DESIGN_LAPSE / 2 + (1 - DESIGN_LAPSE) * expit(z)
    return (y * np.log(p) + (1 - y) * np.log1p(-p)).sum(axis=2)


def posterior(scores, tiers, k: int, lo: float, hi: float):
    """Grid posterior over (cut-off, log width) of boundary k: (c grid, log-width grid, weights [N_C, N_W]).

    A coarse grid over the whole range first, then a grid as fine again over where the coarse one holds all
    but 1e-6 of the mass (the cut-off's posterior soon gets narrower than a coarse cell).
    """
    span = max(hi - lo, 1e-3)
    cs = np.linspace(lo - 0.02 * span, hi + 0.02 * span, N_C)
    lws = np.linspace(np.log(W_MIN), np.log(W_MAX), N_W)
    if not len(scores):
        return cs, lws, np.full((N_C, N_W), 1.0 / (N_C * N_W))
    y = (tiers >= k).astype(float)
    logp = _loglik(scores, y, cs, lws)
    w = np.exp(logp - logp.max())
    mass = w.sum(axis=1) / w.sum()
    keep = np.flatnonzero(mass > 1e-6 / N_C)
    step = cs[1] - cs[0]
    c_lo, c_hi = cs[keep[0]] - step, cs[keep[-1]] + step
    if c_hi - c_lo < (cs[-1] - cs[0]) / 2:
        cs = np.linspace(c_lo, c_hi, N_C)
        logp = _loglik(scores, y, cs, lws)
        w = np.exp(logp - logp.max())
    return cs, lws, w / w.sum()


def _info(x: np.ndarray, c: np.ndarray, lw: np.ndarray):
    """Fisher information of one grade at scores ``x`` about (c, log w), per draw: three [draws, x] arrays."""
    from scipy.special import expit
    w = np.exp(lw)[:, None]
    z = (x[None, :] - c[:, None]) / w
    f = expit(z)
    p = DESIGN_LAPSE / 2 + (1 - DESIGN_LAPSE) * f
    dp = (1 - DESIGN_LAPSE) * f * (1 - f)
    scale = dp * dp / (p * (1 - p))
    return scale / (w * w), scale * z / w, scale * z * z  # I_cc, I_cl, I_ll


class _Boundary:
    """One boundary's posterior draws and, per draw, the information about (cut-off, log width) so far.

    Each draw's information matrix starts from the prior's precision plus what the graded items tell at that
    draw's parameters; the round's picks add to it. The expected posterior variance of the cut-off is the
    average over draws of the (c, c) element of its inverse (a Bayesian c-optimal design), which rewards
    scores on both sides of each plausible cut-off, not just the most likely one.
    """

    def __init__(self, scores, tiers, k, lo, hi, g):
        cs, lws, w = posterior(scores, tiers, k, lo, hi)
        flat = g.choice(w.size, size=N_DRAWS, p=w.ravel())
        ci, li = np.unravel_index(flat, w.shape)
        # jitter within the grid cell so the draws are not stuck on grid points
        self.c = cs[ci] + g.uniform(-0.5, 0.5, N_DRAWS) * (cs[1] - cs[0])
        self.lw = lws[li] + g.uniform(-0.5, 0.5, N_DRAWS) * (lws[1] - lws[0])
        span = max(hi - lo, 1e-3)
        prior = np.array([12.0 / span ** 2, 0.0, 12.0 / (np.log(W_MAX / W_MIN)) ** 2])
        self.acc = np.repeat(prior[:, None], N_DRAWS, axis=1)
        if len(scores):
            self.acc += np.stack([x.sum(axis=1) for x in _info(scores, self.c, self.lw)])

    def expected_var(self, icc, icl, ill):
        """E over draws of Var(c) with the information so far plus each candidate's: [candidates]."""
        a = self.acc[0][:, None] + icc
        b = self.acc[1][:, None] + icl
        d = self.acc[2][:, None] + ill
        return (d / (a * d - b * b)).mean(axis=0)

    def add(self, icc, icl, ill):
        self.acc += np.stack([icc, icl, ill])


def propose_items(pool_scores, graded_idx, graded_tiers, m: int, rng, *, random_share: float = 0.1) -> np.ndarray:
    """Indices (into ``pool_scores``) of the next ``m`` items to grade: none graded, no duplicates, sorted.

    ``graded_idx`` are the pool positions already graded and ``graded_tiers`` their consensus tiers (0/1/2);
    both may be empty. Fewer than ``m`` come back only when fewer are left ungraded.
    """
    pool, _, _ = check_inputs(pool_scores, np.zeros(len(np.asarray(pool_scores).ravel()), dtype=int))
    raw = np.asarray(graded_idx).ravel()
    if len(raw) and not (np.issubdtype(raw.dtype, np.integer) or (np.issubdtype(raw.dtype, np.floating)
                                                                  and np.all(np.mod(raw, 1) == 0))):
        raise MedevalError(f"graded_idx must be whole pool positions; got {float(raw[np.mod(raw, 1) != 0][0])!r}"
                           if np.issubdtype(raw.dtype, np.floating) else "graded_idx must be whole pool positions")
    graded = raw.astype(int) if len(raw) else np.zeros(0, int)
    gt = np.asarray(graded_tiers).ravel()
    if len(gt) != len(graded):
        raise MedevalError(f"graded_idx and graded_tiers differ in length ({len(graded)} and {len(gt)})")
    if len(graded) and (graded.min() < 0 or graded.max() >= len(pool)):
        raise MedevalError(f"graded_idx must be positions in the pool (0 .. {len(pool) - 1})")
    if len(np.unique(graded)) != len(graded):
        raise MedevalError("graded_idx names an item twice: give one consensus tier per graded item")
    _, tiers, _ = check_inputs(pool[graded], gt)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer, float, np.floating)) or int(m) != m:
        raise MedevalError(f"m, the items in a round, must be a whole number; got {m!r}")
    if m < 1:
        raise MedevalError(f"a round needs at least one item (m >= 1); got {m!r}")
    if not 0 <= random_share <= 1:
        raise MedevalError("random_share is a share between 0 and 1")
    g = _rng(rng)
    free = np.ones(len(pool), dtype=bool)
    free[graded] = False
    m = min(int(m), int(free.sum()))
    if m == 0:
        return np.zeros(0, dtype=int)
    lo, hi = float(pool.min()), float(pool.max())
    n_random = int(np.floor(m * random_share + 0.5))
    picked: list[int] = []
    order = np.argsort(pool, kind="stable")
    for _ in range(n_random):  # uniform over the score range: the nearest free item to a uniform score
        picked.append(_nearest_free(pool, order, free, g.uniform(lo, hi), g))
    n_target = m - n_random
    if n_target:
        picked.extend(_targeted(pool, graded, tiers, free, n_target, lo, hi, g))
    out = np.array(picked, dtype=int)
    return np.sort(out)


def _nearest_free(pool, order, free, x, g) -> int:
    """The free item whose score is nearest ``x`` (ties broken at random); marks it taken."""
    cand = np.flatnonzero(free)
    d = np.abs(pool[cand] - x)
    best = cand[d == d.min()]
    i = int(best[g.integers(len(best))]) if len(best) > 1 else int(best[0])
    free[i] = False
    return i


def _targeted(pool, graded, tiers, free, n, lo, hi, g) -> list[int]:
    edges = np.linspace(lo, hi, N_BINS + 1)
    bins = np.clip(np.searchsorted(edges, pool, side="right") - 1, 0, N_BINS - 1)
    members = [[] for _ in range(N_BINS)]
    for i in g.permutation(np.flatnonzero(free)):
        members[bins[i]].append(int(i))
    count = np.array([len(x) for x in members])
    centres = np.array([pool[x].mean() if x else (edges[b] + edges[b + 1]) / 2 for b, x in enumerate(members)])
    s_g, t_g = pool[graded], tiers
    bounds = [_Boundary(s_g, t_g, k, lo, hi, g) for k in (1, 2)]
    infos = [_info(centres, b.c, b.lw) for b in bounds]
    picked = []
    for _ in range(n):
        total = sum(np.sqrt(b.expected_var(*inf)) for b, inf in zip(bounds, infos))
        total = np.where(count > 0, total, np.inf)
        j = int(np.argmin(total))
        if not np.isfinite(total[j]):
            break
        i = members[j][count[j] - 1]
        count[j] -= 1
        free[i] = False
        picked.append(i)
        for b, inf in zip(bounds, infos):
            b.add(*(x[:, j] for x in inf))
    return picked
