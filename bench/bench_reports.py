#!/usr/bin/env python
"""Benchmark of the offline reports (issue 36 §4): each report's size, its opening in Chromium, the zip's making.

    .venv/bin/python bench/bench_reports.py                        # 3-5 minutes on 2 busy cores (demo build: 15 s)
    .venv/bin/python bench/bench_reports.py --db /tmp/demo.db      # build the demo there once, reuse it afterwards
    .venv/bin/python bench/bench_reports.py --json bench/out/reports.json --keep /tmp/reports

"Before" figures: the same script on another commit, e.g. the base of a change::

    git worktree add -f /tmp/base_rep <commit>
    cp bench/bench_reports.py /tmp/base_rep/bench/
    cd /tmp/base_rep && PYTHONPATH=/tmp/base_rep /work/main/.venv/bin/python bench/bench_reports.py --db /tmp/demo.db

It builds the full demo database (as the first start does: every campaign, the simulated clinicians, the
calibrated active threshold set) unless ``--db`` names one already built, then makes the reports the pages offer,
in English and in Chinese:

- the agreement report of the demo campaign with the most grades (the Agreement page; 1000 bootstrap resamples);
- each demo task campaign's report (Task results);
- the leaderboard report of the active threshold set (Leaderboard).

For each it prints the HTML file's size; the time to open it in Chromium (Playwright, Debian's chromium, the browser
already started, a fresh context per opening): from ``goto`` until the page's load event *and* every figure drawn
(each ``.figure`` holds an ``<svg>``: Plotly draws its chart into one, a static chart is one); and the time the
page's "Report (zip)" button takes (``html_kit.zip_report`` over ``write_report``: HTML, the PDF printed by
headless Chromium, JSON, CSVs) from the report's data, which the page has already computed, and the same zip
without the PDF (what is not Chromium's). Each time is the median of ``--runs`` runs after one warm-up (min-max in
the note). The figures depend on the machine's load: the load average is printed with them.
"""

from __future__ import annotations

import time

_T_PROCESS = time.perf_counter()

import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MEDEVAL_PASSWORD_HASH_PROFILE", "test-only")  # the demo accounts' hashes: not measured here

from bench.benchlib import cpu_model, finish, loadavg, log, table_lines  # noqa: E402
from medeval.accounts.policy import local_actor  # noqa: E402
from medeval.annotation import tasks  # noqa: E402
from medeval.core import i18n  # noqa: E402
from medeval.reports import agreement_report, html_kit, leaderboard_report, task_report  # noqa: E402
from medeval.reports.dashboard import campaign_agreement  # noqa: E402
from medeval.store.db import connect  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = {"executable_path": CHROMIUM, "headless": True,
               "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]}
# the page has loaded and every figure is drawn (Plotly draws into an <svg>; a static chart is one)
DRAWN = """() => document.readyState === "complete"
    && [...document.querySelectorAll(".figure")].every(f => f.querySelector("svg"))"""


def median_of(fn, runs: int) -> tuple[float, float, float]:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def demo_db(path: Path | None, tmp: Path) -> Path:
    if path is not None and path.exists():
        log(f"using the demo database {path}")
        return path
    from medeval.demo.build import build_demo

    path = path or tmp / "demo.db"
    log(f"building the demo database at {path} ...")
    t = time.perf_counter()
    with connect(path) as db:
        build_demo(db, path.parent / "demo-files")
    log(f"built in {time.perf_counter() - t:.1f} s")
    return path


def report_data(db_path: Path, language: str) -> list[tuple[str, object, object]]:
    """(name, its write_report, the data the page computed) for every report the demo offers, in ``language``."""
    actor = local_actor()
    out = []
    with i18n.language(language), connect(db_path) as db:
        cid = _graded(db)[0][0]
        out.append((f"agreement-c{cid}", agreement_report.write_report,
                    campaign_agreement(db, cid, actor=actor, n_boot=1000, seed=0)))
        for c in tasks.task_campaigns(db, actor=actor):
            out.append((f"task-c{c['id']}-{c['kind']}", task_report.write_report,
                        task_report.build(db, c["id"], actor=actor)))
        lb = leaderboard_report.build(db)
        out.append((f"leaderboard-v{lb['threshold_set']['version']}", leaderboard_report.write_report, lb))
    return out


def _graded(db) -> list[tuple[int, int]]:
    """(campaign id, grades) of every campaign with grades, most first."""
    return db.conn.execute("SELECT ci.campaign_id, count(*) FROM grade_annotations g JOIN campaign_items ci "
                           "ON ci.id = g.item_id GROUP BY 1 ORDER BY 2 DESC, 1").fetchall()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, default=None, help="the demo database: used if it exists, else built there")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per figure, after one warm-up (default 3)")
    ap.add_argument("--languages", default="en,zh-CN", help="comma-separated (default en,zh-CN)")
    ap.add_argument("--keep", type=Path, default=None, help="write the reports into this folder and keep them")
    ap.add_argument("--no-zip", action="store_true", help="skip the zips (and their PDFs)")
    ap.add_argument("--json", default=None, help="also write every figure as JSON here")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    res: dict = {"machine": {"python": platform.python_version(), "cpu": cpu_model(), "cores": os.cpu_count()},
                 "loadavg_start": loadavg(), "runs": args.runs, "reports": []}
    rows: list[tuple[str, str, str]] = []
    pdf = html_kit.chromium_path() is not None
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db_path = demo_db(args.db, tmp)
        out_root = args.keep or tmp / "reports"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(**LAUNCH_ARGS)
            for language in args.languages.split(","):
                log(f"computing the reports' data ({language}) ...")
                rows.append((f"{language}", "", ""))
                for name, write, data in report_data(db_path, language):
                    folder = out_root / f"{name}-{language}"
                    paths = write(data, folder, pdf=False, language=language)
                    html = Path(paths["html"])
                    size = html.stat().st_size
                    n_figures = html.read_text(encoding="utf-8").count('<div class="figure"')

                    def open_once():
                        ctx = browser.new_context()
                        page = ctx.new_page()
                        page.goto(html.resolve().as_uri(), wait_until="load", timeout=60_000)
                        page.wait_for_function(DRAWN, polling="raf", timeout=60_000)
                        ctx.close()

                    log(f"{name} ({language}): opening ...")
                    o_med, o_min, o_max = median_of(open_once, args.runs)
                    entry = {"report": name, "language": language, "bytes": size, "figures": n_figures,
                             "open_s": o_med, "open_min_s": o_min, "open_max_s": o_max}
                    rows += [(f"{name}: HTML size", f"{size / 1e6:.2f} MB", f"{n_figures} figures"),
                             (f"{name}: open + draw", f"{o_med:.2f} s", f"min-max {o_min:.2f}-{o_max:.2f}")]
                    if not args.no_zip:
                        log(f"{name} ({language}): zipping ...")
                        for with_pdf in ((pdf, False) if pdf else (False,)):
                            holder: dict = {}

                            def zip_once():
                                holder["zip"] = html_kit.zip_report(
                                    lambda d: write(data, d, pdf=with_pdf, language=language))  # noqa: B023

                            z_med, z_min, z_max = median_of(zip_once, args.runs)
                            key = "zip" if with_pdf or not pdf else "zip_no_pdf"
                            entry.update({f"{key}_s": z_med, f"{key}_min_s": z_min, f"{key}_max_s": z_max,
                                          f"{key}_bytes": len(holder["zip"]), f"{key}_pdf": with_pdf})
                            label = ("zip (with PDF)" if with_pdf else
                                     "zip without the PDF" if pdf else "zip (no Chromium: no PDF)")
                            rows.append((f"{name}: {label}", f"{z_med:.2f} s",
                                         f"min-max {z_min:.2f}-{z_max:.2f}; {len(holder['zip']) / 1e6:.2f} MB"))
                    res["reports"].append(entry)
            browser.close()
    total = time.perf_counter() - _T_PROCESS
    head = [f"Offline reports on the demo data ({args.runs} runs each, median; load average at start "
            f"{res['loadavg_start']}, {os.cpu_count()} cores)"]
    finish(res, "\n".join(head + table_lines(rows) + [f"total {total:.1f} s, load average at end {loadavg()}"]),
           total, args.json)


if __name__ == "__main__":
    sys.exit(main())
