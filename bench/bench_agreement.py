#!/usr/bin/env python
"""Benchmark of medeval's agreement statistics against pingouin and krippendorff.

    .venv/bin/python bench/bench_agreement.py            # full run: 5 raters x 2,000 items (about 25 s on 2 cores)
    .venv/bin/python bench/bench_agreement.py --quick    # small sizes, about 15 s
    .venv/bin/python bench/bench_agreement.py --json bench/out/agreement.json

The product promise measured: "everything recomputes in under a second for 5
annotators x 2,000 items". On a seeded synthetic data set (tiers 0/1/2, a true tier
per item plus rater noise, about 5% missing ratings) it times:

1. ``icc`` (all six forms) vs ``pingouin.intraclass_corr(nan_policy='omit')`` on the
   same data in long format: time, ratio, largest absolute difference of the ICCs;
2. ``krippendorff_alpha`` ordinal and interval (``n_boot=0``) vs
   ``krippendorff.alpha(reliability_data=<raters x items>, value_domain=[0,1,2])``,
   and ordinal alpha with a 1000-resample bootstrap CI;
3. ``cohen_kappa`` (quadratic, two raters, ``n_boot=1000``), ``fleiss_kappa`` (complete
   items), ``percent_agreement``, ``correlation`` (spearman);
4. ``summarise(rows, "ordinal", ["0","1","2"], n_boot=1000)`` end to end from
   long-format rows -- everything ``medeval agreement`` computes -- and, for comparison,
   the same call on the first two raters only (``summarise`` then adds Cohen's kappa
   unweighted, linear and quadratic, each with its own bootstrap, and Spearman);
5. interval alpha (closed form, ``n_boot=0``) on continuous data, 20 raters x 100,000 items.

Every figure is the median of 5 timed runs after one warm-up call (min-max in the note).
Progress goes to stderr; the machine info and the table go to stdout.
"""

from __future__ import annotations

import time

_T_PROCESS = time.perf_counter()  # before the imports: the total includes them

import argparse
import gc
import math
import os
import platform
import statistics
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.benchlib import cpu_model as benchlib_cpu_model  # noqa: E402
from bench.benchlib import finish, log, table_lines
from bench.benchlib import loadavg as _loadavg
from medeval.stats.agreement import (
    ICC_FORMS,
    RatingTable,
    cohen_kappa,
    correlation,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    percent_agreement,
    summarise,
)

SEED = 20240611
RUNS = 5
N_BOOT = 1000
PROMISE_SECONDS = 1.0
MISSING_RATE = 0.05

SIZES = {
    # tiered data (raters x items) and continuous data for the closed-form interval alpha
    "full": dict(raters=5, items=2_000, cont_raters=20, cont_items=100_000),
    "quick": dict(raters=5, items=300, cont_raters=20, cont_items=10_000),
}

# pingouin 0.7.0 labels -> medeval forms (0.5.x used the medeval names themselves)
PINGOUIN_LABELS = {"ICC(1,1)": "ICC1", "ICC(A,1)": "ICC2", "ICC(C,1)": "ICC3",
                   "ICC(1,k)": "ICC1k", "ICC(A,k)": "ICC2k", "ICC(C,k)": "ICC3k",
                   **{f: f for f in ICC_FORMS}}




def median_of(fn, runs: int = RUNS):
    """(median, min, max wall seconds of ``runs`` calls after one warm-up call, result of the last call)."""
    out = fn()  # warm-up
    times = []
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "runs": runs}, out


# ---------------------------------------------------------------- machine




def machine_info() -> dict:
    from importlib.metadata import version

    cpu_model = benchlib_cpu_model()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    pkgs = {}
    for p in ("medeval", "numpy", "scipy", "pandas", "pingouin", "krippendorff"):
        try:
            pkgs[p] = version(p)
        except Exception:
            if p == "medeval":
                import medeval
                pkgs[p] = getattr(medeval, "__version__", "?")
            else:
                pkgs[p] = "?"
    return {"cpu_count": os.cpu_count(), "cpus_usable": usable, "cpu_model": cpu_model,
            "python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "packages": pkgs,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "loadavg_start": _loadavg()}


# ---------------------------------------------------------------- data


def make_tiers(n_items: int, n_raters: int, seed: int = SEED) -> np.ndarray:
    """items x raters, values 0/1/2, NaN for ~5% missing: a true tier per item plus rater noise.

    Each rater gives the true tier with probability ~0.75, otherwise one tier up or
    down (clipped to 0..2); raters differ a little in leniency.
    """
    g = np.random.default_rng(seed)
    true = g.choice(3, size=n_items, p=[0.3, 0.45, 0.25])
    lenient = np.linspace(-0.06, 0.06, n_raters)  # rater r: p(+1) = 0.125 + l_r, p(-1) = 0.125 - l_r
    u = g.random((n_items, n_raters))
    p_up = 0.125 + lenient
    p_down = 0.125 - lenient
    shift = np.where(u < p_down, -1, np.where(u < p_down + p_up, 1, 0))
    x = np.clip(true[:, None] + shift, 0, 2).astype(float)
    x[g.random(x.shape) < MISSING_RATE] = np.nan
    return x


def make_continuous(n_items: int, n_raters: int, seed: int = SEED + 1) -> np.ndarray:
    g = np.random.default_rng(seed)
    x = g.normal(0, 1, (n_items, 1)) + g.normal(0, 0.2, n_raters) + g.normal(0, 0.6, (n_items, n_raters))
    x[g.random(x.shape) < MISSING_RATE] = np.nan
    return x


def long_rows(x: np.ndarray) -> list[tuple[str, str, str]]:
    """(item, rater, value) string rows as ``read_long`` returns them; a missing rating is a blank value."""
    rows = []
    for i in range(x.shape[0]):
        for r in range(x.shape[1]):
            v = x[i, r]
            rows.append((f"item-{i + 1:05d}", f"rater-{r + 1}", "" if math.isnan(v) else str(int(v))))
    return rows


# ---------------------------------------------------------------- sections


def bench_icc(x: np.ndarray, res: dict) -> None:
    import pandas as pd
    import pingouin as pg

    pg.options["round.column.CI95"] = None
    table = RatingTable(x)
    n, k = x.shape
    df = pd.DataFrame({"item": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n),
                       "value": x.reshape(-1)})
    log(f"ICC: {n} items x {k} raters ({len(df)} long rows)")
    t_med, ours = median_of(lambda: icc(table))

    def run_pg():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pg.intraclass_corr(data=df, targets="item", raters="rater", ratings="value", nan_policy="omit")

    t_pg, ref = median_of(run_pg)
    d_val, d_ci = 0.0, 0.0
    seen = set()
    for _, row in ref.iterrows():
        form = PINGOUIN_LABELS.get(str(row["Type"]))
        if form is None:
            continue
        seen.add(form)
        e = ours[form]
        d_val = max(d_val, abs(e.value - float(row["ICC"])))
        lo, hi = (float(c) for c in row["CI95"])
        d_ci = max(d_ci, abs(e.ci95[0] - lo), abs(e.ci95[1] - hi))
    if seen != set(ICC_FORMS):
        raise SystemExit(f"pingouin returned forms {sorted(seen)}, expected {list(ICC_FORMS)}")
    res["icc"] = {"items": n, "raters": k, "items_used": ours["ICC2"].n_pairable,
                  "medeval": t_med, "pingouin": t_pg, "ratio_pingouin_over_medeval": t_pg["median"] / t_med["median"],
                  "max_abs_diff_icc": d_val, "max_abs_diff_ci95": d_ci,
                  "icc2": ours["ICC2"].value}


def bench_alpha(x: np.ndarray, res: dict) -> None:
    import krippendorff

    table = RatingTable(x)
    reliability = np.ascontiguousarray(x.T)  # raters x items, NaN = missing
    out = {}
    for level in ("ordinal", "interval"):
        log(f"alpha {level}: medeval vs krippendorff")
        t_med, ours = median_of(lambda: krippendorff_alpha(table, level, categories=[0, 1, 2], n_boot=0))
        t_ref, ref = median_of(lambda: krippendorff.alpha(reliability_data=reliability, level_of_measurement=level,
                                                          value_domain=[0, 1, 2]))
        out[level] = {"medeval": t_med, "krippendorff": t_ref,
                      "ratio_krippendorff_over_medeval": t_ref["median"] / t_med["median"],
                      "medeval_value": ours.value, "krippendorff_value": float(ref),
                      "abs_diff": abs(ours.value - float(ref)), "n_pairable": ours.n_pairable}
    log(f"alpha ordinal with a {N_BOOT}-resample bootstrap")
    t_boot, est = median_of(lambda: krippendorff_alpha(table, "ordinal", categories=[0, 1, 2], n_boot=N_BOOT, rng=0))
    out["ordinal_boot"] = {"medeval": t_boot, "n_boot": N_BOOT, "value": est.value,
                           "ci95": list(est.ci95) if est.ci95 else None}
    res["alpha"] = out


def bench_others(x: np.ndarray, res: dict) -> None:
    two = RatingTable(x[:, :2])
    complete = x[~np.isnan(x).any(axis=1)]
    full = RatingTable(x)
    out = {}
    log(f"cohen_kappa quadratic, n_boot={N_BOOT}")
    t, e = median_of(lambda: cohen_kappa(two, "quadratic", categories=[0, 1, 2], n_boot=N_BOOT, rng=0))
    out["cohen_kappa_quadratic"] = {"time": t, "value": e.value, "ci95": list(e.ci95) if e.ci95 else None,
                                    "n": e.n_pairable}
    log("fleiss_kappa, percent_agreement, spearman")
    t, e = median_of(lambda: fleiss_kappa(RatingTable(complete), categories=[0, 1, 2]))
    out["fleiss_kappa"] = {"time": t, "value": e.value, "n": e.n_items}
    t, e = median_of(lambda: percent_agreement(full))
    out["percent_agreement"] = {"time": t, "value": e.value, "n": e.n_pairable}
    t, e = median_of(lambda: correlation(x[:, 0], x[:, 1], "spearman"))
    out["spearman"] = {"time": t, "value": e.value, "n": e.n_pairable}
    res["others"] = out


def bench_summarise(x: np.ndarray, res: dict) -> None:
    rows = long_rows(x)
    log(f"summarise end to end ({len(rows):,} long rows, n_boot={N_BOOT})")
    t_parse, _ = median_of(lambda: RatingTable.from_long(rows))
    t, s = median_of(lambda: summarise(rows, "ordinal", ["0", "1", "2"], n_boot=N_BOOT))
    computed = []
    for key in ("percent_agreement", "krippendorff_alpha", "icc", "fleiss_kappa", "cohen_kappa", "spearman"):
        if key not in s:
            continue
        v = s[key]
        undefined = v is None or (isinstance(v, dict) and "undefined_reason" in v and v["value"] is None)
        computed.append(f"{key} (undefined)" if undefined else key)
    res["summarise"] = {"time": t, "from_long": t_parse, "rows": len(rows), "items": s["n_items"],
                        "raters": s["n_raters"], "computed": computed,
                        "under_promise": t["median"] < PROMISE_SECONDS,
                        "alpha": s["krippendorff_alpha"]["value"]}
    rows2 = long_rows(x[:, :2])
    log(f"summarise end to end, first two raters only ({len(rows2):,} long rows, n_boot={N_BOOT})")
    t2, s2 = median_of(lambda: summarise(rows2, "ordinal", ["0", "1", "2"], n_boot=N_BOOT))
    res["summarise_two_raters"] = {"time": t2, "rows": len(rows2), "items": s2["n_items"], "raters": s2["n_raters"],
                                   "computed": [k for k in ("percent_agreement", "krippendorff_alpha", "icc",
                                                            "fleiss_kappa", "cohen_kappa", "spearman") if k in s2],
                                   "under_promise": t2["median"] < PROMISE_SECONDS}


def bench_continuous(n_items: int, n_raters: int, res: dict) -> None:
    x = make_continuous(n_items, n_raters)
    table = RatingTable(x)
    log(f"closed-form interval alpha, continuous {n_raters} x {n_items:,}")
    t, e = median_of(lambda: krippendorff_alpha(table, "interval", n_boot=0))
    res["continuous"] = {"time": t, "items": n_items, "raters": n_raters, "value": e.value,
                         "distinct_values": int(np.unique(x[~np.isnan(x)]).size)}


# ---------------------------------------------------------------- output


def fmt_t(t: dict | float) -> str:
    s = t["median"] if isinstance(t, dict) else t
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} µs"


def spread(t: dict) -> str:
    return f"runs {fmt_t(t['min'])}-{fmt_t(t['max'])}"


def table(res: dict) -> list[tuple[str, str, str]]:
    d = res["data"]
    i, a, o, s, c = res["icc"], res["alpha"], res["others"], res["summarise"], res["continuous"]
    s2 = res["summarise_two_raters"]
    rows = [
        ("data", f"{d['raters']} x {d['items']:,}",
         f"raters x items, tiers 0/1/2, {d['missing']:,} missing ({d['missing_share']:.1%}), "
         f"{d['complete_items']:,} complete items, seed {SEED}"),
        ("1. ICC", "", ""),
        ("medeval icc (6 forms)", fmt_t(i["medeval"]),
         f"{spread(i['medeval'])}; items x raters matrix; {i['items_used']:,} items after listwise deletion"),
        ("pingouin intraclass_corr", fmt_t(i["pingouin"]),
         f"{spread(i['pingouin'])}; long DataFrame, nan_policy='omit'"),
        ("speed ratio pingouin / medeval", f"{i['ratio_pingouin_over_medeval']:.1f}x", "above 1: medeval faster"),
        ("max |ICC difference| (6 forms)", f"{i['max_abs_diff_icc']:.3g}",
         f"max |CI95 difference| {i['max_abs_diff_ci95']:.3g}; ICC2 = {i['icc2']:.4f}"),
        ("2. Krippendorff's alpha", "", ""),
    ]
    for level in ("ordinal", "interval"):
        r = a[level]
        rows += [
            (f"medeval alpha {level}, n_boot=0", fmt_t(r["medeval"]),
             f"{spread(r['medeval'])}; {r['n_pairable']:,} pairable items"),
            (f"krippendorff.alpha {level}", fmt_t(r["krippendorff"]),
             f"{spread(r['krippendorff'])}; value_domain=[0,1,2]"),
            (f"speed ratio krippendorff / medeval ({level})", f"{r['ratio_krippendorff_over_medeval']:.1f}x",
             "above 1: medeval faster"),
            (f"|alpha difference| ({level})", f"{r['abs_diff']:.3g}", f"alpha = {r['medeval_value']:.4f}"),
        ]
    b = a["ordinal_boot"]
    ci = f"[{b['ci95'][0]:.4f}, {b['ci95'][1]:.4f}]" if b["ci95"] else "no CI"
    rows += [
        (f"medeval alpha ordinal, n_boot={b['n_boot']}", fmt_t(b["medeval"]), f"{spread(b['medeval'])}; CI95 {ci}"),
        ("3. Kappa, agreement, correlation", "", ""),
    ]
    ck = o["cohen_kappa_quadratic"]
    ci = f"[{ck['ci95'][0]:.4f}, {ck['ci95'][1]:.4f}]" if ck["ci95"] else "no CI"
    rows += [
        (f"cohen_kappa quadratic, 2 raters, n_boot={N_BOOT}", fmt_t(ck["time"]),
         f"{spread(ck['time'])}; {ck['n']:,} items; kappa {ck['value']:.4f} CI95 {ci}"),
        ("fleiss_kappa (complete items)", fmt_t(o["fleiss_kappa"]["time"]),
         f"{spread(o['fleiss_kappa']['time'])}; {o['fleiss_kappa']['n']:,} items; "
         f"kappa {o['fleiss_kappa']['value']:.4f}"),
        ("percent_agreement", fmt_t(o["percent_agreement"]["time"]),
         f"{spread(o['percent_agreement']['time'])}; {o['percent_agreement']['value']:.4f}"),
        ("correlation spearman (raters 1, 2)", fmt_t(o["spearman"]["time"]),
         f"{spread(o['spearman']['time'])}; {o['spearman']['n']:,} pairs; rho {o['spearman']['value']:.4f}"),
        ("4. summarise end to end", "", ""),
        (f"summarise ordinal, n_boot={N_BOOT}", fmt_t(s["time"]),
         f"{spread(s['time'])}; {s['rows']:,} long rows; computes {', '.join(s['computed'])}"),
        ("  of which: RatingTable.from_long", fmt_t(s["from_long"]), "timed separately"),
        (f"under {PROMISE_SECONDS:g} s for {s['raters']} x {s['items']:,}?",
         "yes" if s["under_promise"] else "NO",
         f"median {fmt_t(s['time'])}, slowest run {fmt_t(s['time']['max'])}"),
        (f"summarise ordinal, 2 raters x {s2['items']:,}", fmt_t(s2["time"]),
         f"{spread(s2['time'])}; for comparison: adds 3 Cohen kappas ({N_BOOT} resamples each) and spearman"),
        (f"under {PROMISE_SECONDS:g} s for 2 x {s2['items']:,}?", "yes" if s2["under_promise"] else "NO",
         f"median {fmt_t(s2['time'])}, slowest run {fmt_t(s2['time']['max'])}"),
        ("5. Continuous interval alpha (closed form)", "", ""),
        (f"medeval alpha interval, {c['raters']} x {c['items']:,}, n_boot=0", fmt_t(c["time"]),
         f"{spread(c['time'])}; {c['distinct_values']:,} distinct values; alpha {c['value']:.4f}"),
    ]
    return rows


def render(rows, total: float | None = None) -> str:
    lines = table_lines(rows)
    if total is not None:
        lines.append(f"total benchmark time: {total:.1f} s (process incl. imports: "
                     f"{time.perf_counter() - _T_PROCESS:.1f} s); load average at end: {_loadavg()}")
    return "\n".join(lines)


def header(info: dict, mode: str) -> str:
    return "\n".join([
        f"medeval agreement benchmark ({mode}) -- {info['date']}",
        f"CPU: {info['cpu_count']} logical CPUs ({info['cpus_usable']} usable), {info['cpu_model']}",
        f"Python {info['python']} ({info['implementation']}) on {info['platform']}",
        "packages: " + ", ".join(f"{k} {v}" for k, v in info["packages"].items()),
        f"load average at start (1/5/15 min): {info['loadavg_start']}",
        f"each figure: median of {RUNS} runs after a warm-up call",
        "",
    ])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (under 20 s)")
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON to PATH")
    args = ap.parse_args(argv)

    mode = "quick" if args.quick else "full"
    cfg = SIZES[mode]
    info = machine_info()
    print(header(info, mode), flush=True)
    t_start = time.perf_counter()
    x = make_tiers(cfg["items"], cfg["raters"])
    n_missing = int(np.isnan(x).sum())
    res: dict = {"mode": mode, "machine": info, "sizes": cfg, "seed": SEED, "runs": RUNS,
                 "data": {"items": x.shape[0], "raters": x.shape[1], "missing": n_missing,
                          "missing_share": n_missing / x.size,
                          "complete_items": int((~np.isnan(x).any(axis=1)).sum())}}
    bench_icc(x, res)
    bench_alpha(x, res)
    bench_others(x, res)
    bench_summarise(x, res)
    bench_continuous(cfg["cont_items"], cfg["cont_raters"], res)
    total = time.perf_counter() - t_start
    finish(res, render(table(res), total), total, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
