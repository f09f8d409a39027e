"""The methods paragraph of a task campaign's report: what was done and what came out, in sentences a paper
could cite, filled with the campaign's numbers -- one function per task type (rubric rating with the judge's part
(AutoMedEval §4.3, CMB-Clin §5.3), double-blind preference, AccR), the sections' own texts for any other type, and
the gold items' sentence (:mod:`medeval.reports.task_report.gold`). A statistic that is undefined says why.
"""

from __future__ import annotations

import inspect

from medeval.annotation.tasks import common
from medeval.annotation.tasks.rubric import JUDGE_RUBRIC, RUBRIC_TITLES, RUBRICS
from medeval.reports import html_kit as kit
from medeval.reports.task_report.gold import gold_methods

N_BOOT = inspect.signature(common.continuous_agreement).parameters["n_boot"].default  # what the task types use


def _table_rows(r: dict, table: str) -> list[dict]:
    return [row for sec in r["sections"] for row in sec["tables"].get(table, [])]


def _stat(row: dict | None, label: str, digits=3) -> str:
    """"label = 0.712 (95% CI ...)", or "label undefined (reason)"."""
    if row is None:
        return f"{label} undefined (no ratings)"
    if row.get("value") is None:
        return f"{label} undefined ({row.get('undefined_reason') or 'no value'})"
    return f"{label} = {kit.fmt(row['value'], digits)}{kit.ci_text(row.get('ci95'), digits)}"


def _common(r: dict, what: str) -> str:
    p, cfg = r["progress"], r["config"]
    n_ann = len(cfg.get("annotators") or p["annotators"])
    active = sum(1 for a in p["annotators"] if a.get("answers"))
    data = f" from the data set {cfg['dataset']}" if cfg.get("dataset") else ""
    return (f"{p['items']} {what}{data} were each assigned to k = {p['k']} of {n_ann} annotators, balanced and "
            f"in an order of each annotator's own, drawn from seed {cfg.get('seed', 0)} and stored with the "
            f"campaign. {active} annotators answered; {p['items_complete']} of {p['items']} items were complete by "
            f"all k. Only each annotator's latest answer counts; skipped items are missing data. ")


def _agreement_text(rows: list[dict], unit: str, seed) -> str:
    if not rows:
        return "Agreement is undefined: no item has answers from two annotators yet. "
    icc = [x for x in rows if str(x.get("statistic", "")).startswith("ICC")]
    how = ""
    if icc:
        how = ("ICC(2,1) and ICC(2,k) (two-way random effects, absolute agreement: every annotator rated every "
               f"{unit})" if "ICC(2" in icc[0]["statistic"] else
               f"ICC(1,1) and ICC(1,k) (one-way random effects: each {unit} rated by a different set of k "
               f"annotators, over the {unit}s with the usual number of ratings)") + (
               ", with exact 95% CIs from the F distribution (Shrout & Fleiss 1979; McGraw & Wong 1996), and ")
    alpha = next((x for x in rows if "alpha" in str(x.get("statistic", ""))), None)
    level = "interval" if alpha is None or "interval" in alpha["statistic"] else "nominal"
    return (f"Inter-rater agreement was estimated with {how}Krippendorff's alpha ({level}; every pairable rating "
            f"used, missing ratings allowed) with a 95% CI by percentile bootstrap over {unit}s ({N_BOOT} resamples, "
            f"seed {seed}); exact percent agreement is given for orientation. "
            + "; ".join(_stat(x, f"{x['statistic']} ({x['rated']})") for x in rows
                        if not str(x["statistic"]).startswith("Percent")) + ". ")


def _rubric_methods(r: dict) -> str:
    cfg = r["config"]
    crit = [c["name"] for c in cfg["criteria"]] if cfg.get("criteria") else [c.name for c in RUBRICS.get(
        cfg.get("rubric"), ())]
    rubric = ("a rubric of the researchers' own" if cfg.get("criteria") else
              RUBRIC_TITLES.get(cfg.get("rubric"), str(cfg.get("rubric"))).split(":")[0] + " rubric")
    judge = cfg.get("judge") if cfg.get("judge") not in (None, "(none)") else None
    per_model = _table_rows(r, "per model")
    n_ratings = sum(x.get("ratings") or 0 for x in per_model)
    text = (_common(r, "case questions") + f"Each item showed a question with its reference answer and every "
            f"model's response, as \"Response 1..n\" in an order drawn per annotator (models never named). "
            f"Annotators rated each response on the {rubric} ({', '.join(crit)}), each criterion on an anchored "
            f"1-5 scale. {n_ratings} ratings of {len(per_model)} models' responses were analysed. ")
    if per_model:
        text += "Mean rating over criteria per model: " + "; ".join(
            f"{x['model']} {kit.fmt(x.get('mean'), 2)}" for x in per_model) + ". "
    agree = next((sec["tables"]["agreement"] for sec in r["sections"] if "agreement" in sec["tables"]), [])
    text += _agreement_text([x for x in agree if x.get("rated") == "mean over criteria"] or agree,
                            "response", cfg.get("seed", 0))
    if judge:
        text += judge_methods(r, judge)
    return text


def _preference_methods(r: dict) -> str:
    cfg = r["config"]
    what = "two judges' assessments of the same responses" if cfg.get("compare") == "judges" else \
        "two models' answers to the same question"
    text = (_common(r, "pairwise comparisons") + f"Each comparison showed {what}, double-blind: the sources were "
            "hidden and which one appeared on the left (A) was randomised per annotator. On each criterion the "
            "annotator chose A, B or tie; a tie counts half to each side. Position bias was checked with an exact "
            "binomial test of the left side's share of decided choices against 1/2, and agreement with "
            f"Krippendorff's alpha (nominal, over the chosen source) with a percentile bootstrap CI ({N_BOOT} "
            f"resamples, seed {cfg.get('seed', 0)}). ")
    if not r["sections"]:
        return text + "No choices have been made yet, so every figure is undefined. "
    for sec in r["sections"]:
        n = sec["numbers"].get("n_choices", 0)
        checks = sec["tables"].get("checks", [])
        left = checks[0] if checks else None
        decided = left.get("n") if left else None
        shares = "; ".join(f"{x['source']} {kit.fmt(x.get('share'))} (annotators {kit.fmt(x.get('lowest annotator'))}"
                           f" to {kit.fmt(x.get('highest annotator'))})"
                           for x in sec["tables"].get("preference share", []))
        text += (f"{sec['title'].removeprefix('Preference: ')}: {n} choices"
                 + (f", {n - decided} ties" if isinstance(decided, int) else "") + f"; win shares {shares}; "
                 + (f"the left side's share of the {decided} decided choices {kit.fmt(left.get('value'))} (binomial "
                    f"p = {kit.fmt(left.get('p (binomial, vs 1/2)'))}); " if left and left.get("value") is not None
                    else f"position bias undefined ({(left or {}).get('undefined_reason') or 'no decided choice'}); ")
                 + _stat(checks[1] if len(checks) > 1 else None, "alpha") + ". ")
    return text


def _accr_methods(r: dict) -> str:
    cfg = r["config"]
    rows = _table_rows(r, "AccR")
    pool = ("items the model answered correctly (Factual Accuracy: correct for the factual and incorrect for the "
            "counterfactual claim)" if cfg.get("pool") == "correct items"
            else "every item whose two responses start with a verdict")
    text = (_common(r, "atomic knowledge items (a factual and a counterfactual claim, each with a model's answer)")
            + "Accuracy Reliability (AccR; SDAK §4.2.2) is computed per item (factual + counterfactual claim): an "
            "item is reliable when the reason of each of its two answers supports its verdict. Up to "
            f"{cfg.get('per_model')} items per model were sampled whole from {pool} with the stored seed (claims "
            "without their twin left out and counted); annotators saw both claims, the verdicts parsed from the "
            "answers and the answers, and said for each whether its reason supports its verdict (not whether the "
            "claim is true). AccR = reliable items / items, an item reliable by the majority of the annotators who "
            "checked it (ties left out), with a Wilson 95% CI; beside it, over ratings (each annotator's judgement "
            "of an item). ")
    text += ("; ".join(f"{x['model']}: AccR {kit.fmt(x.get('AccR (ratings)'))} over {x.get('ratings')} ratings, "
                       + (f"{kit.fmt(x.get('AccR (items, majority)'))} by majority over the "
                          f"{(x.get('items checked') or 0) - (x.get('items without a majority') or 0)} of "
                          f"{x.get('items checked')} items that have one (95% CI "
                          f"{kit.fmt((x.get('AccR 95% CI (Wilson)') or [None])[0])} to "
                          f"{kit.fmt((x.get('AccR 95% CI (Wilson)') or [None, None])[1])})"
                          if x.get("AccR (items, majority)") is not None
                          else f"undefined by majority (none of the {x.get('items checked')} items checked has one)")
                       + (f", {x['claims without a twin (left out)']} claims without a twin left out"
                          if x.get("claims without a twin (left out)") else "")
                       for x in rows) + ". "
             if rows else "No answers yet: AccR is undefined. ")
    return text + _agreement_text(_table_rows(r, "agreement"), "claim", cfg.get("seed", 0))


def methods_paragraph(r: dict) -> str:
    """A methods paragraph a paper could cite, filled with this campaign's numbers (any task type)."""
    kind = r["campaign"]["kind"]
    text = {"rubric": _rubric_methods, "preference": _preference_methods, "accr": _accr_methods}.get(kind)
    text = text(r) if text else _common(r, "items") + " ".join(f"{s['title']}: {s['text']}" for s in r["sections"]
                                                               if s["text"])
    return " ".join(x for x in (text.strip(), gold_methods(r)) if x)


# ---------------------------------------------------------------- the judge's part (rubric with a judge)


def judge_methods(r: dict, judge: str) -> str:
    """The sentences on the judge: part 2, the overall comparison and, when the judge scored criteria, the
    per-criterion correlations (a criterion the clinicians do not rate: "no clinicians' ratings")."""
    text = (f"In a second part, shown and accepted only after every response of the item was rated "
            f"(AutoMedEval App. D), annotators rated the judge {judge}'s assessment on "
            f"{', '.join(c.name for c in JUDGE_RUBRIC)}. The judge's score of each response was compared with "
            f"the clinicians' score (mean over criteria, then over clinicians): ")
    stats = _table_rows(r, "statistics")
    text += ("; ".join(_stat(x, x["statistic"]) + f" (n = {x.get('n')})" for x in stats) +
             " (Spearman and Pearson with Fisher-z CIs). " if stats else
             "undefined until responses have ratings on every criterion. ")
    crit: dict[str, list[dict]] = {}
    for x in _table_rows(r, "per criterion"):
        crit.setdefault(x["criterion"], []).append(x)
    if not crit:
        return text
    parts = []
    for c, xs in crit.items():
        if xs[0]["n"] == 0 and xs[0]["value"] is None:
            parts.append(f"{c}: {xs[0]['undefined_reason']}")
        else:
            parts.append(f"{c}: " + ", ".join(_stat(x, x["statistic"]) + f" (n = {x['n']})" for x in xs))
    return text + ("As CMB-Clin reports per perspective (App. E.3), the judge's score of a response on each "
                   "criterion it scored was correlated with the clinicians' on the same criterion (the mean over "
                   "the clinicians who rated it; criterion names matched case-insensitively), over the responses "
                   "both scored, and -- since the paper does not say whether its Pearson runs over responses or "
                   "models -- over the models' mean scores (n = models): " + "; ".join(parts) + " (Pearson with "
                   "a Fisher-z CI; Spearman with a Fisher-z CI using the Bonett-Wright variance). ")
