"""The methods paragraph of a task campaign's report: what was done and what came out, in sentences a paper
could cite, filled with the campaign's numbers -- one function per task type (rubric rating with the judge's part
(AutoMedEval §4.3, CMB-Clin §5.3), double-blind preference, AccR), the sections' own texts for any other type, and
the gold items' sentence (:mod:`medeval.reports.task_report.gold`). A statistic that is undefined says why.

Every sentence is in the current language (:func:`medeval.core.i18n.language`; English by default), whole, with
named placeholders. The words of the results' tables (their columns, the statistics' names, what was rated, why a
value is undefined) are stored in English by the task types; :func:`head` and :func:`term` give them in the reader's
language for the report's tables, figures and this paragraph.
"""

from __future__ import annotations

import inspect

from medeval.annotation.tasks import common
from medeval.annotation.tasks.rubric import JUDGE_RUBRIC, RUBRIC_TITLES, RUBRICS
from medeval.core.i18n import N_, _, ngettext
from medeval.reports import html_kit as kit
from medeval.reports.task_report.gold import gold_methods

N_BOOT = inspect.signature(common.continuous_agreement).parameters["n_boot"].default  # what the task types use


# ---------------------------------------------------------------- the words of the results' tables

# the results tables' heads: the CSV files' (one list of words, html_kit.CSV_HEADERS), and two of their own
HEADS = {key: kit.CSV_HEADERS[key] for key in (
    "ci95", "n_items", "n_raters", "reading", "rated", "statistic", "value", "model", "mean", "ratings", "n",
    "p", "criterion", "versus", "judge win", "judge tie", "clinicians win", "clinicians tie", "cases",
    "judge mean", "judge rank", "clinicians mean", "clinicians rank", "source", "share", "comparisons",
    "lowest annotator", "highest annotator", "sd across annotators", "p (binomial, vs 1/2)", "strength",
    "items", "items checked", "AccR (items, majority)", "AccR 95% CI (Wilson)", "items without a majority",
    "AccR (ratings)", "factual reasons supporting", "counterfactual reasons supporting", "items in the pool",
    "claims without a twin (left out)", "annotator", "assigned", "done", "skipped", "flagged", "answers",
    "item", "note", "at",
)} | {"undefined_reason": N_("undefined because"), "setting": N_("setting")}
"""A results table's column as the report heads it (English: the key itself, a few long keys shortened; the CSVs keep
the keys, for programs). Any other column (a rubric's criterion) by its name, in the reader's language where the
catalogue has it."""

TERMS = (
    # the statistics the task types compute (medeval.annotation.tasks, medeval.stats.judge)
    N_("ICC(1,1), each item by different raters"), N_("ICC(1,k), each item by different raters"),
    N_("Krippendorff's alpha (interval)"), N_("Krippendorff's alpha (nominal)"), N_("Percent agreement (exact)"),
    N_("share of decided choices won by the left side"), N_("Krippendorff's alpha (nominal, over the chosen source)"),
    N_("Spearman (per response)"), N_("Pearson (per response)"), N_("Spearman of the model rankings"),
    N_("Pearson (model means)"),
    # what was rated
    N_("mean over criteria"), N_("reason supports verdict"), N_("item reliable (both reasons support)"),
    # why a value is undefined, as the task types and the judge's statistics store it
    N_("no clinicians' ratings"), N_("no judge scores"), N_("every choice is a tie"),
    N_("no case has responses from both models"), N_("no case with two or more responses"), N_("(undefined)"),
)
"""Texts the task types store in English in the results' cells, marked here so the report can show them in the
reader's language (:func:`term`)."""


def head(key: str) -> str:
    """A results table's column head in the current language (:data:`HEADS`; a criterion by its name)."""
    return _(HEADS[key]) if key in HEADS else term(key)


def term(text):
    """A statistic's name, what was rated, why a value is undefined (:data:`TERMS`), a built-in criterion: in the
    current language where the catalogue has it, anything else (a researcher's own criterion) as stored."""
    return _(text) if isinstance(text, str) and text.strip() else text


def fmt(v, digits=3) -> str:
    """A number with ``digits`` decimals; ``None`` is "undefined" (in the current language)."""
    return _("undefined") if v is None else kit.fmt(v, digits)


def listed(texts) -> str:
    """"a, b, c" ("a、b、c" in Chinese)."""
    return _(", ").join(str(t) for t in texts)


def _semicolons(texts) -> str:
    return _("; ").join(texts)


def sentences(*texts: str) -> str:
    """Sentences one after another (a space between them in English, none in Chinese); empty ones left out."""
    out = ""
    for t in (t.strip() for t in texts if t and t.strip()):
        out = _("{sentence} {next_sentence}").format(sentence=out, next_sentence=t) if out else t
    return out


def _sentence(text: str) -> str:
    """``text`` ended as a sentence ("." in English, "。" in Chinese)."""
    return _("{sentence}.").format(sentence=text)


# ---------------------------------------------------------------- the paragraph


def _table_rows(r: dict, table: str) -> list[dict]:
    return [row for sec in r["sections"] for row in sec["tables"].get(table, [])]


def _stat(row: dict | None, label: str, digits=3) -> str:
    """"label = 0.712 (95% CI ...)", or "label undefined (reason)"."""
    if row is None:
        return _("{statistic} undefined ({reason})").format(statistic=label, reason=_("no ratings"))
    if row.get("value") is None:
        return _("{statistic} undefined ({reason})").format(
            statistic=label, reason=term(row.get("undefined_reason")) or _("no value"))
    ci = row.get("ci95")
    if ci and None not in ci[:2]:
        return _("{statistic} = {value} (95% CI {low} to {high})").format(
            statistic=label, value=kit.fmt(row["value"], digits), low=kit.fmt(ci[0], digits),
            high=kit.fmt(ci[1], digits))
    why = row.get("ci_undefined_reason") or row.get("undefined_reason")  # a defined value's: why it has no CI
    if why:  # e.g. |r| = 1: said, not left out as if the CI had not been computed
        return _("{statistic} = {value} (95% CI undefined: {reason})").format(
            statistic=label, value=kit.fmt(row["value"], digits), reason=term(why))
    return _("{statistic} = {value}").format(statistic=label, value=kit.fmt(row["value"], digits))


def _common(r: dict, counted) -> str:
    """How the items were assigned and answered (``counted(n)``: n items in words, "3 case questions")."""
    p, cfg = r["progress"], r["config"]
    n_ann = len(cfg.get("annotators") or p["annotators"])
    active = sum(1 for a in p["annotators"] if a.get("answers"))
    numbers = dict(items=counted(p["items"]), dataset=cfg.get("dataset"), k=p["k"], annotators=n_ann,
                   seed=cfg.get("seed", 0))
    first = (_("{items} from the data set {dataset} were each assigned to k = {k} of {annotators} annotators, "
               "balanced and in an order of each annotator's own, drawn from seed {seed} and stored with the "
               "campaign.") if cfg.get("dataset") else
             _("{items} were each assigned to k = {k} of {annotators} annotators, balanced and in an order of each "
               "annotator's own, drawn from seed {seed} and stored with the campaign.")).format(**numbers)
    return sentences(first, _("{active} annotators answered; {complete} of {items} items were complete by all k. "
                              "Only each annotator's latest answer counts; skipped items are missing data.").format(
        active=active, complete=p["items_complete"], items=p["items"]))


UNITS = {"response": (N_("response"), N_("responses")), "claim": (N_("claim"), N_("claims"))}
"""The rated unit of the agreement statistics, one and several (shown with ``_()``)."""


def _agreement_text(rows: list[dict], unit: str, seed) -> str:
    if not rows:
        return _("Agreement is undefined: no item has answers from two annotators yet.")
    one, many = (_(w) for w in UNITS[unit])
    icc = [x for x in rows if str(x.get("statistic", "")).startswith("ICC")]
    alpha = next((x for x in rows if "alpha" in str(x.get("statistic", ""))), None)
    alpha_text = (_("Krippendorff's alpha (interval; every pairable rating used, missing ratings allowed)")
                  if alpha is None or "interval" in alpha["statistic"] else
                  _("Krippendorff's alpha (nominal; every pairable rating used, missing ratings allowed)"))
    if not icc:
        how = _("Inter-rater agreement was estimated with {alpha} with a 95% CI by percentile bootstrap over {units} "
                "({boot} resamples, seed {seed}); exact percent agreement is given for orientation.")
    elif "ICC(2" in icc[0]["statistic"]:
        how = _("Inter-rater agreement was estimated with ICC(2,1) and ICC(2,k) (two-way random effects, absolute "
                "agreement: every annotator rated every {unit}), with exact 95% CIs from the F distribution (Shrout "
                "& Fleiss 1979; McGraw & Wong 1996), and {alpha} with a 95% CI by percentile bootstrap over {units} "
                "({boot} resamples, seed {seed}); exact percent agreement is given for orientation.")
    else:
        how = _("Inter-rater agreement was estimated with ICC(1,1) and ICC(1,k) (one-way random effects: each {unit} "
                "rated by a different set of k annotators, over the {units} with the usual number of ratings), with "
                "exact 95% CIs from the F distribution (Shrout & Fleiss 1979; McGraw & Wong 1996), and {alpha} with "
                "a 95% CI by percentile bootstrap over {units} ({boot} resamples, seed {seed}); exact percent "
                "agreement is given for orientation.")
    stats = [_stat(x, _("{statistic} ({rated})").format(statistic=term(x["statistic"]), rated=term(x["rated"])))
             for x in rows if not str(x["statistic"]).startswith("Percent")]
    return sentences(how.format(alpha=alpha_text, unit=one, units=many, boot=N_BOOT, seed=seed),
                     _sentence(_semicolons(stats)) if stats else "")


def _rubric_methods(r: dict) -> str:
    cfg = r["config"]
    crit = [c["name"] for c in cfg["criteria"]] if cfg.get("criteria") else [c.name for c in RUBRICS.get(
        cfg.get("rubric"), ())]
    crit = listed(term(c) for c in crit)
    if cfg.get("criteria"):
        rated = _("Annotators rated each response on a rubric of the researchers' own ({criteria}), each criterion "
                  "on an anchored 1-5 scale.").format(criteria=crit)
    else:
        rated = _("Annotators rated each response on the {rubric} rubric ({criteria}), each criterion on an "
                  "anchored 1-5 scale.").format(
            rubric=RUBRIC_TITLES.get(cfg.get("rubric"), str(cfg.get("rubric"))).split(":")[0], criteria=crit)
    judge = cfg.get("judge") if cfg.get("judge") not in (None, "(none)") else None
    per_model = _table_rows(r, "per model")
    n_ratings = sum(x.get("ratings") or 0 for x in per_model)
    parts = [_common(r, lambda n: ngettext("{n} case question", "{n} case questions", n).format(n=n)),
             _("Each item showed a question with its reference answer and every model's response, as \"Response "
               "1..n\" in an order drawn per annotator (models never named)."),
             rated,
             _("{ratings} ratings of {models} models' responses were analysed.").format(ratings=n_ratings,
                                                                                         models=len(per_model))]
    if per_model:
        parts.append(_("Mean rating over criteria per model: {means}.").format(means=_semicolons(
            f"{x['model']} {fmt(x.get('mean'), 2)}" for x in per_model)))
    agree = next((sec["tables"]["agreement"] for sec in r["sections"] if "agreement" in sec["tables"]), [])
    parts.append(_agreement_text([x for x in agree if x.get("rated") == "mean over criteria"] or agree,
                                 "response", cfg.get("seed", 0)))
    if judge:
        parts.append(judge_methods(r, judge))
    return sentences(*parts)


def _preference_criterion(title: str) -> str:
    """The criterion of a preference section, from its title ("Preference: Fluency", in the current language)."""
    before, _sep, after = _("Preference: {criterion}").partition("{criterion}")
    if title.startswith(before) and title.endswith(after):
        return title[len(before):len(title) - len(after)]
    return title.removeprefix("Preference: ")


def _preference_methods(r: dict) -> str:
    cfg = r["config"]
    what = (_("two judges' assessments of the same responses") if cfg.get("compare") == "judges" else
            _("two models' answers to the same question"))
    text = sentences(
        _common(r, lambda n: ngettext("{n} pairwise comparison", "{n} pairwise comparisons", n).format(n=n)),
        _("Each comparison showed {what}, double-blind: the sources were hidden and which one appeared on the left "
          "(A) was randomised per annotator. On each criterion the annotator chose A, B or tie; a tie counts half to "
          "each side. Position bias was checked with an exact binomial test of the left side's share of decided "
          "choices against 1/2, and agreement with Krippendorff's alpha (nominal, over the chosen source) with a "
          "percentile bootstrap CI ({boot} resamples, seed {seed}).").format(what=what, boot=N_BOOT,
                                                                            seed=cfg.get("seed", 0)))
    if not r["sections"]:
        return sentences(text, _("No choices have been made yet, so every figure is undefined."))
    parts = [text]
    for sec in r["sections"]:
        n = sec["numbers"].get("n_choices", 0)
        checks = sec["tables"].get("checks", [])
        left = checks[0] if checks else None
        decided = left.get("n") if left else None
        crit = _preference_criterion(sec["title"])
        choices = (_("{criterion}: {n} choices, {ties} ties").format(criterion=crit, n=n, ties=n - decided)
                   if isinstance(decided, int) else _("{criterion}: {n} choices").format(criterion=crit, n=n))
        shares = _semicolons(_("{source} {share} (annotators {low} to {high})").format(
            source=x["source"], share=fmt(x.get("share")), low=fmt(x.get("lowest annotator")),
            high=fmt(x.get("highest annotator"))) for x in sec["tables"].get("preference share", []))
        position = (_("the left side's share of the {decided} decided choices {value} (binomial p = {p})").format(
            decided=decided, value=fmt(left.get("value")), p=fmt(left.get("p (binomial, vs 1/2)")))
            if left and left.get("value") is not None else
            _("position bias undefined ({reason})").format(
                reason=term((left or {}).get("undefined_reason")) or _("no decided choice")))
        parts.append(_("{choices}; win shares {shares}; {position}; {alpha}.").format(
            choices=choices, shares=shares, position=position,
            alpha=_stat(checks[1] if len(checks) > 1 else None, "alpha")))
    return sentences(*parts)


def _accr_methods(r: dict) -> str:
    cfg = r["config"]
    rows = _table_rows(r, "AccR")
    pool = (_("items the model answered correctly (Factual Accuracy: correct for the factual and incorrect for the "
              "counterfactual claim)") if cfg.get("pool") == "correct items"
            else _("every item whose two responses start with a verdict"))
    parts = [_common(r, lambda n: ngettext(
                 "{n} atomic knowledge item (a factual and a counterfactual claim, each with a model's answer)",
                 "{n} atomic knowledge items (a factual and a counterfactual claim, each with a model's answer)",
                 n).format(n=n)),
             _("Accuracy Reliability (AccR; SDAK §4.2.2) is computed per item (factual + counterfactual claim): an "
               "item is reliable when the reason of each of its two answers supports its verdict. Up to {per_model} "
               "items per model were sampled whole from {pool} with the stored seed (claims without their twin left "
               "out and counted); annotators saw both claims, the verdicts parsed from the answers and the answers, "
               "and said for each whether its reason supports its verdict (not whether the claim is true). AccR = "
               "reliable items / items, an item reliable by the majority of the annotators who checked it (ties left "
               "out), with a Wilson 95% CI; beside it, over ratings (each annotator's judgement of an item).").format(
                 per_model=cfg.get("per_model"), pool=pool)]

    def model_text(x: dict) -> str:
        checked = x.get("items checked")
        if x.get("AccR (items, majority)") is not None:
            ci = x.get("AccR 95% CI (Wilson)") or [None, None]
            majority = _("{value} by majority over the {have} of {checked} items that have one (95% CI {low} to "
                         "{high})").format(value=fmt(x.get("AccR (items, majority)")),
                                           have=(checked or 0) - (x.get("items without a majority") or 0),
                                           checked=checked, low=fmt(ci[0]), high=fmt(ci[1]))
        else:
            majority = _("undefined by majority (none of the {checked} items checked has one)").format(checked=checked)
        text = _("{model}: AccR {value} over {ratings} ratings, {majority}").format(
            model=x["model"], value=fmt(x.get("AccR (ratings)")), ratings=x.get("ratings"), majority=majority)
        if x.get("claims without a twin (left out)"):
            text = _("{text}, {more}").format(text=text, more=_("{n} claims without a twin left out").format(
                n=x["claims without a twin (left out)"]))
        return text

    parts.append(_sentence(_semicolons(model_text(x) for x in rows)) if rows else
                 _("No answers yet: AccR is undefined."))
    parts.append(_agreement_text(_table_rows(r, "agreement"), "claim", cfg.get("seed", 0)))
    return sentences(*parts)


def methods_paragraph(r: dict) -> str:
    """A methods paragraph a paper could cite, filled with this campaign's numbers (any task type), in the current
    language."""
    kind = r["campaign"]["kind"]
    text = {"rubric": _rubric_methods, "preference": _preference_methods, "accr": _accr_methods}.get(kind)
    text = text(r) if text else sentences(_common(r, lambda n: ngettext("{n} item", "{n} items", n).format(n=n)), *(
        _("{key}: {value}").format(key=s["title"], value=s["text"]) for s in r["sections"] if s["text"]))
    return sentences(text, gold_methods(r))


# ---------------------------------------------------------------- the judge's part (rubric with a judge)


def judge_methods(r: dict, judge: str) -> str:
    """The sentences on the judge: part 2, the overall comparison and, when the judge scored criteria, the
    per-criterion correlations (a criterion the clinicians do not rate: "no clinicians' ratings")."""
    parts = [_("In a second part, shown and accepted only after every response of the item was rated (AutoMedEval "
               "App. D), annotators rated the judge {judge}'s assessment on {criteria}.").format(
        judge=judge, criteria=listed(_(c.name) for c in JUDGE_RUBRIC))]
    stats = _table_rows(r, "statistics")
    if stats:
        parts.append(_("The judge's score of each response was compared with the clinicians' score (mean over "
                       "criteria, then over clinicians): {statistics} (Spearman and Pearson with Fisher-z 95% "
                       "CIs: Pearson with variance 1/(n - 3), Spearman with the Bonett-Wright variance "
                       "(1 + rho^2/2)/(n - 3), as per criterion; no CI at |r| = 1; Spearman's p exact by "
                       "permutation for n <= 9).").format(statistics=_semicolons(
            _("{statistic} (n = {n})").format(statistic=_stat(x, term(x["statistic"])), n=x.get("n"))
            for x in stats)))
    else:
        parts.append(_("The judge's score of each response was compared with the clinicians' score (mean over "
                       "criteria, then over clinicians): undefined until responses have ratings on every criterion."))
    crit: dict[str, list[dict]] = {}
    for x in _table_rows(r, "per criterion"):
        crit.setdefault(x["criterion"], []).append(x)
    if crit:
        per = []
        for c, xs in crit.items():
            if xs[0]["n"] == 0 and xs[0]["value"] is None:
                per.append(_("{key}: {value}").format(key=term(c), value=term(xs[0]["undefined_reason"])))
            else:
                per.append(_("{key}: {value}").format(key=term(c), value=_(", ").join(
                    _("{statistic} (n = {n})").format(statistic=_stat(x, term(x["statistic"])), n=x["n"])
                    for x in xs)))
        parts.append(_("As CMB-Clin reports per perspective (App. E.3), the judge's score of a response on each "
                       "criterion it scored was correlated with the clinicians' on the same criterion (the mean over "
                       "the clinicians who rated it; criterion names matched case-insensitively), over the responses "
                       "both scored, and -- since the paper does not say whether its Pearson runs over responses or "
                       "models -- over the models' mean scores (n = models): {criteria} (Pearson with a Fisher-z CI; "
                       "Spearman with a Fisher-z CI using the Bonett-Wright variance).").format(
            criteria=_semicolons(per)))
    return sentences(*parts)
