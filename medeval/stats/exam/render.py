"""Exam results as output: a JSON-ready summary, json/csv/md reports, and one CSV row per question."""

from __future__ import annotations

from medeval.core.errors import MedevalError
from medeval.stats.exam.score import ExamResult


def summary(results: list[ExamResult]) -> dict:
    """JSON-ready summary: the flat result for one model, ``{"models": {...}}`` for several."""
    if len(results) == 1:
        return results[0].to_dict()
    return {"models": {r.model: r.to_dict() for r in results}}


def _rows(r: ExamResult):
    d = r.to_dict()
    yield ("overall", "", "", d["n"], d["correct"], d["accuracy"], d["accuracy_macro"])
    for cat, c in d["categories"].items():
        yield ("category", cat, "", c["n"], c["correct"], c["accuracy"], c.get("accuracy_macro"))
        for sub, s in c.get("subcategories", {}).items():
            yield ("subcategory", cat, sub, s["n"], s["correct"], s["accuracy"], None)
    for t, s in d["question_types"].items():
        yield ("question_type", t, "", s["n"], s["correct"], s["accuracy"], None)
    yield ("cmb_regex", "", "", d["n"], d["cmb_regex"]["correct"], d["cmb_regex"]["accuracy"], None)


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
        w.writerow(["model", "level", "group", "subgroup", "n", "correct", "accuracy", "accuracy_macro"])
        for r in results:
            for level, g, sub, n, k, acc, mac in _rows(r):
                w.writerow([r.model, level, g, sub, n, k, "" if acc is None else repr(acc),
                            "" if mac is None else repr(mac)])
        return buf.getvalue()
    if fmt == "md":
        out = []
        for r in results:
            d = r.to_dict()
            out += [f"## {r.model}" if r.model else "## Exam accuracy", "",
                    f"{d['n']} questions, {d['correct']} correct ({_pct(d['accuracy'])}); "
                    f"{d['unanswered']} unanswered; CMB's regex would give {_pct(d['cmb_regex']['accuracy'])}.", "",
                    "| level | group | subgroup | n | correct | accuracy |", "|---|---|---|---|---|---|"]
            for level, g, sub, n, k, acc, _ in _rows(r):
                out.append(f"| {level} | {g} | {sub} | {n} | {k} | {_pct(acc)} |")
            out.append("")
        return "\n".join(out)
    raise MedevalError(f"unknown format {fmt!r}; use json, csv or md")


def _pct(v: float | None) -> str:
    return "undefined" if v is None else f"{100 * v:.2f}%"


def details_csv(results: list[ExamResult]) -> str:
    """One row per question: the extracted letters, how, the key, and CMB's reading."""
    import io

    from medeval.core import csvsafe

    buf = io.StringIO()
    w = csvsafe.writer(buf, lineterminator="\n")
    w.writerow(["model", "id", "line", "expected", "extracted", "method", "note", "correct", "cmb_regex"])
    for r in results:
        for a in r.answers:
            w.writerow([r.model, a.id, a.line or "", a.expected, a.extraction.letters, a.extraction.method,
                        a.extraction.note, int(a.correct), a.cmb])
    return buf.getvalue()
