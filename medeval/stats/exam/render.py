"""Exam results as output: a JSON-ready summary, json/csv/md reports, and one CSV row per question. Every figure
carries its name; ``definitions`` (JSON) and the lines under the tables (md) say how each is computed."""

from __future__ import annotations

from medeval.core.display import percent
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.stats.exam.score import DEFINITIONS, LABELS, ExamResult


def summary(results: list[ExamResult]) -> dict:
    """JSON-ready summary: the flat result for one model, ``{"models": {...}}`` for several."""
    if len(results) == 1:
        return results[0].to_dict()
    return {"models": {r.model: r.to_dict() for r in results}, "definitions": DEFINITIONS}


def _row(level, g, sub, d, macro=None):
    return (level, g, sub, d["n"], d["correct"], d["accuracy_settled"], d["accuracy_ambiguous_wrong"],
            d["ambiguous"], d["unsettled"], macro)


def rows(d: dict):
    """(level, group, subgroup, n, correct, accuracy_settled, accuracy_ambiguous_wrong, ambiguous, unsettled,
    accuracy_macro) for one model's ``to_dict``: overall, categories with their subcategories, question types."""
    yield _row("overall", "", "", d, d["accuracy_macro"])
    for cat, c in d["categories"].items():
        yield _row("category", cat, "", c, c.get("accuracy_macro"))
        for sub, s in c.get("subcategories", {}).items():
            yield _row("subcategory", cat, sub, s)
    for t, s in d["question_types"].items():
        yield _row("question_type", t, "", s)


HEADER = ["level", "group", "subgroup", "n", "correct", "accuracy_settled", "accuracy_ambiguous_wrong", "ambiguous",
          "unsettled", "accuracy_macro"]
SHARES = ("accuracy_settled", "accuracy_ambiguous_wrong", "accuracy_macro")
"""The columns of :data:`HEADER` that are shares (a page shows them as percentages)."""


COLUMN_LABELS = {"level": N_("scope"), "group": N_("group"), "subgroup": N_("subgroup"), "n": "n",
                 "correct": N_("correct"), "unsettled": N_("unsettled")}
"""The other columns of :data:`HEADER` in words (the figures: :data:`LABELS`)."""
LEVEL_NAMES = {"overall": N_("overall"), "category": N_("category"), "subcategory": N_("subcategory"),
               "question_type": N_("question type")}


def label(name: str) -> str:
    """A column or figure of the results as a page names it, in the current language ("accuracy (settled)")."""
    return _(LABELS.get(name) or COLUMN_LABELS.get(name, name))


def display_rows(d: dict) -> list[dict]:
    """:func:`rows` as a page shows them: the figures by their labels (:func:`label`), the levels in words, in the
    current language."""
    names = [label(h) for h in HEADER]
    return [dict(zip(names, (_(LEVEL_NAMES.get(row[0], row[0].replace("_", " "))), *row[1:]))) for row in rows(d)]


def definitions() -> list[tuple[str, str]]:
    """(label, how it is computed) for each figure, as a page lists them, in the current language."""
    return [(label(k) if k in LABELS else k, _(v)) for k, v in DEFINITIONS.items()]


def render(results: list[ExamResult], fmt: str = "json") -> str:
    """The results as ``json``, ``csv`` (one row per model and group) or ``md``."""
    import io
    import json

    from medeval.core import csvsafe

    if fmt == "json":
        return json.dumps(summary(results), ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csvsafe.writer(buf, lineterminator="\n")
        w.writerow(["model", *HEADER, "accuracy_cmb_regex"])
        for r in results:
            d = r.to_dict()
            for i, row in enumerate(rows(d)):
                cmb = d["accuracy_cmb_regex"] if i == 0 else None
                w.writerow([r.model, *("" if v is None else repr(v) if isinstance(v, float) else v for v in row),
                            "" if cmb is None else repr(cmb)])
        return buf.getvalue()
    if fmt == "md":
        out = []
        for r in results:
            d = r.to_dict()
            out += [f"## {r.model}" if r.model else "## Exam accuracy", "",
                    f"{d['n']} questions; accuracy_settled {_pct(d['accuracy_settled'])} ({d['correct']} correct), "
                    f"accuracy_ambiguous_wrong {_pct(d['accuracy_ambiguous_wrong'])}, accuracy_cmb_regex "
                    f"{_pct(d['accuracy_cmb_regex'])}, accuracy_macro {_pct(d['accuracy_macro'])}; "
                    f"{d['ambiguous']} ambiguous ({d['unsettled']} unsettled), {d['unanswered']} unanswered.", "",
                    "| level | group | subgroup | n | correct | accuracy_settled | accuracy_ambiguous_wrong | ambiguous "
                    "| unsettled | accuracy_macro |", "|---|---|---|---|---|---|---|---|---|---|"]
            for level, g, sub, n, k, acc, acc_w, amb, uns, mac in rows(d):
                out.append(f"| {level} | {_md(g)} | {_md(sub)} | {n} | {k} | {_pct(acc)} | {_pct(acc_w)} | {amb} | "
                           f"{uns} | {'' if mac is None else _pct(mac)} |")
            out.append("")
        out += ["Definitions:", ""] + [f"- **{k}**: {v}" for k, v in DEFINITIONS.items()] + [""]
        return "\n".join(out)
    raise MedevalError(f"unknown format {fmt!r}; use json, csv or md")


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _pct(v: float | None) -> str:
    return "undefined" if v is None else percent(v)


def details_csv(results: list[ExamResult]) -> str:
    """One row per question: our reading (letters, status, how, the reason), the settled letters, the key, and
    CMB's reading."""
    import io

    from medeval.core import csvsafe

    buf = io.StringIO()
    w = csvsafe.writer(buf, lineterminator="\n")
    w.writerow(["model", "id", "line", "expected", "extracted", "status", "method", "note", "candidates", "settled",
                "settled_by", "correct_settled", "correct_ambiguous_wrong", "cmb_regex", "cmb_correct"])
    for r in results:
        for a in r.answers:
            w.writerow([r.model, a.id, a.line or "", a.expected, a.extraction.letters, a.extraction.status,
                        a.extraction.method, a.extraction.note, a.extraction.candidates,
                        "" if a.settled is None else (a.settled or "(no answer)"), a.settled_by or "",
                        int(a.correct), int(a.correct_ambiguous_wrong), a.cmb, int(a.cmb_correct)])
    return buf.getvalue()
