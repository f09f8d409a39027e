"""The report of a task campaign (rubric rating, double-blind preference, AccR, or any registered type).

One self-contained HTML file (plotly.js inlined once; works offline), its PDF (headless Chromium),
the results as JSON and every table as CSV. Everything comes from
:func:`medeval.annotation.tasks.results`: the header (campaign, task type, k, items, progress, seed),
a methods paragraph filled with the campaign's numbers (:func:`methods_paragraph`), every
section's tables with a figure where the table suits one, the flags and the configuration. A statistic
that is undefined is shown as such, with its reason. Names and notes are plain text (escaped). With gold items
(results from :func:`build`, or passed through :func:`with_gold`), the methods paragraph says how they were used
and a "Gold items" table gives each annotator's accuracy (gold.csv). Its words are in the current language
(``write_report(..., language="zh-CN")``; English by default, as papers are written in English).

The modules, one part of the report each:

* ``methods`` -- the methods paragraph, one function per task type (the rubric's with the judge's part), and the
  words of the results' tables in the reader's language (:func:`head`, :func:`term`);
* ``figures`` -- the figure that suits a results table, chosen by the table's name whatever the type;
* ``gold`` -- the gold items' part: its data, its methods sentence, its table;
* ``document`` -- the report's data (:func:`build`), the HTML page and the files (:func:`write_report`).

This package re-exports their public names, so ``task_report.render_html`` and the like keep working.
"""

from __future__ import annotations

from medeval.reports.html_kit import chromium_path, print_pdf  # the pages ask the report module
from medeval.reports.task_report.document import build, config_rows, flag_rows, render_html, write_report
from medeval.reports.task_report.figures import (
    accr_figure,
    agreement_figure,
    criterion_figure,
    judge_criterion_figure,
    rankings_figure,
    ratings_figure,
    section_figures,
    shares_figure,
    table_figure,
)
from medeval.reports.task_report.gold import gold_html, gold_methods, gold_part, gold_rows, with_gold
from medeval.reports.task_report.methods import N_BOOT, head, judge_methods, methods_paragraph, term

__all__ = [
    "chromium_path",
    "print_pdf",
    "build",
    "render_html",
    "write_report",
    "config_rows",
    "flag_rows",
    "methods_paragraph",
    "judge_methods",
    "N_BOOT",
    "head",
    "term",
    "table_figure",
    "section_figures",
    "ratings_figure",
    "agreement_figure",
    "shares_figure",
    "accr_figure",
    "rankings_figure",
    "criterion_figure",
    "judge_criterion_figure",
    "gold_part",
    "with_gold",
    "gold_methods",
    "gold_rows",
    "gold_html",
]
