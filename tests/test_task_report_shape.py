"""The task report is a package split by meaning (issue 25 §6): ``methods`` (text), ``figures`` (Plotly),
``gold`` (the gold items' part) and ``document`` (the data, the HTML page, the files); the package keeps every
name the pages, the CLI and the tests used from the single module it was."""

from __future__ import annotations

import ast
from pathlib import Path

import medeval.reports.task_report as tr

PACKAGE = Path(tr.__file__).resolve().parent


def _imports(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.add(node.module or "")
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_modules_are_the_reports_parts():
    assert sorted(p.stem for p in PACKAGE.glob("*.py")) == ["__init__", "document", "figures", "gold", "methods"]


def test_the_methods_are_text_and_the_figures_know_no_database():
    assert not any(m.startswith("plotly") for m in _imports("methods"))  # sentences only
    assert not any(m.startswith(("sqlite", "medeval.store", "medeval.annotation")) for m in _imports("figures"))
    assert not any(m.startswith("plotly") for m in _imports("gold"))


def test_the_package_keeps_the_single_modules_names():
    for name in ("build", "render_html", "write_report", "methods_paragraph", "section_figures", "table_figure",
                 "chromium_path", "print_pdf", "with_gold", "gold_rows", "gold_html", "gold_methods", "N_BOOT",
                 "config_rows", "flag_rows", "ratings_figure", "agreement_figure", "criterion_figure"):
        assert callable(getattr(tr, name)) or name == "N_BOOT", name
    from medeval.annotation.tasks.common import continuous_agreement
    import inspect

    assert tr.N_BOOT == inspect.signature(continuous_agreement).parameters["n_boot"].default == 500


def test_each_table_gets_the_figure_of_its_name():
    per_criterion = [{"criterion": "Safety", "statistic": "Pearson", "value": 0.5, "ci95": [0.1, 0.8], "n": 9},
                     {"criterion": "Safety", "statistic": "Spearman", "value": None, "ci95": None, "n": 9,
                      "undefined_reason": "constant ratings"}]
    fig = tr.table_figure("per criterion", per_criterion, "Judge")
    assert fig.layout.yaxis.range == (-1, 1) and [t.name for t in fig.data] == ["Pearson", "Spearman"]
    mean_rating = [{"criterion": "Accuracy", "mean": 4.25}]
    assert tr.table_figure("mean rating", mean_rating, "Judge").data[0].y == (4.25,)
    assert tr.table_figure("per criterion", [], "Judge") is None
    assert tr.table_figure("something else", mean_rating, "Judge") is None
