"""Rubric rating of several models' responses, then of the judge's assessment (AutoMedEval, CMB-Clin).

One item is one question (of a clinical case, with the case description and the earlier
questions for context) with its reference answer and every model's response, shown as
"Response 1..n" in an order drawn per annotator (models are never named). Part 1: each
response on each criterion of the rubric (anchored 1-5). Part 2, when the campaign uses a
judge: only then is that judge's rationale shown, to be rated on Knowledge Correctness,
Reference Correctness and Fluency (AutoMedEval App. D: "do not refer to the assessment
before completing the first part"). The library enforces the order: part 2 is neither
shown nor accepted before part 1 is complete.

Results: mean rating per model and criterion; agreement among clinicians per criterion
(ICC(2,1), ICC(2,k), interval alpha) and on the mean over criteria; with a judge, the judge
against the clinicians (``medeval.stats.judge``: Spearman / Pearson per response, Accuracy_2-tuple
and _triple, win rates, rankings), per criterion when the judge scored criteria (Pearson and Spearman,
CMB-Clin §5.3) and the clinicians' ratings of the judge's assessments.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np

from medeval.annotation import cases as cs
from medeval.annotation.tasks.common import Criterion, case_label, continuous_agreement, mean
from medeval.annotation.tasks.mentions import relabel
from medeval.annotation.tasks.registry import Block, ItemSpec, Question, Section, Setting, TaskType
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import (COUNT_MAX, LIST_MAX_ITEMS, NAME_MAX_CHARS, NOTE_MAX_CHARS, check_depth,
                                 check_json_text, check_text)
from medeval.stats import judge as jg

# AutoMedEval App. D: responses on Relevancy, Knowledge Correctness, Fluency. (Texts marked N_(): stored in English
# with each item, shown in the reader's language by questions().)
AUTOMEDEVAL = (
    Criterion("relevancy", N_("Relevancy"), N_("How well does the response answer the question that was asked?"),
              (N_("Does not address the question"), N_("Touches the topic but misses what was asked"),
               N_("Answers the question in part"), N_("Answers the question with minor digressions"),
               N_("Answers exactly the question asked"))),
    Criterion("knowledge", N_("Knowledge Correctness"),
              N_("Is the medical knowledge correct, with terminology used appropriately?"),
              (N_("Wrong or dangerous medical content"), N_("Several substantive errors"),
               N_("Mostly correct, some errors"), N_("Correct with minor imprecision"),
               N_("Fully correct and precise"))),
    Criterion("fluency", N_("Fluency"), N_("Is the language fluent and easy to understand?"),
              (N_("Incomprehensible"), N_("Hard to follow"), N_("Understandable with effort"),
               N_("Clear with minor flaws"), N_("Natural and clear"))),
)
# CMB-Clin §5: Fluency, Relevance, Completeness, Proficiency (with a reference answer).
CMB_CLIN = (
    Criterion("fluency", N_("Fluency"), N_("Is the response fluent, coherent and easy to read?"),
              (N_("Incoherent"), N_("Hard to follow"), N_("Readable with effort"), N_("Fluent with minor flaws"),
               N_("Fluent and well organised"))),
    Criterion("relevance", N_("Relevance"), N_("Does the response stay on the question and the patient's case?"),
              (N_("Unrelated to the case or question"), N_("Mostly off the point"), N_("Partly relevant"),
               N_("Relevant with some digression"), N_("Entirely relevant"))),
    Criterion("completeness", N_("Completeness"), N_("Does it cover the key points of the reference answer?"),
              (N_("Covers none of the key points"), N_("Covers few key points"), N_("Covers about half"),
               N_("Covers most key points"), N_("Covers every key point"))),
    Criterion("proficiency", N_("Proficiency"), N_("Does it show sound medical expertise for this case?"),
              (N_("Wrong or unsafe reasoning"), N_("Major errors in reasoning"), N_("Acceptable with notable errors"),
               N_("Sound with minor errors"), N_("Expert-level, correct and safe"))),
)
# AutoMedEval App. D, part 2: the judge's assessment.
JUDGE_RUBRIC = (
    Criterion("j_knowledge", N_("Knowledge Correctness"),
              N_("Is the medical knowledge the judge applies when analysing each response correct?"),
              (N_("Wrong medical reasoning throughout"), N_("Several substantive errors"),
               N_("Mostly correct, some errors"), N_("Correct with minor imprecision"), N_("Fully correct"))),
    Criterion("j_reference", N_("Reference Correctness"),
              N_("Does the judge attribute every quote and point to the right response (no misattribution)?"),
              (N_("Mixes up the responses throughout"), N_("Several misattributions"),
               N_("One clear misattribution"), N_("Minor slips only"), N_("Every attribution is right"))),
    Criterion("j_fluency", N_("Fluency"), N_("Is the judge's analysis fluent and easy to understand?"),
              (N_("Incomprehensible"), N_("Hard to follow"), N_("Understandable with effort"),
               N_("Clear with minor flaws"), N_("Natural and clear"))),
)
RUBRICS = {"automedeval": AUTOMEDEVAL, "cmb-clin": CMB_CLIN}
RUBRIC_TITLES = {"automedeval": N_("AutoMedEval: Relevancy / Knowledge Correctness / Fluency"),
                 "cmb-clin": N_("CMB-Clin: Fluency / Relevance / Completeness / Proficiency")}
NO_JUDGE = "(none)"


def parse_rubric(spec) -> tuple[Criterion, ...]:
    """A rubric by name (``automedeval``, ``cmb-clin``) or as a list of criteria dicts with five anchors each."""
    if isinstance(spec, str):
        if spec not in RUBRICS:
            raise MedevalError(_("unknown rubric {spec}; built in: {names} (or give the criteria)").format(
                spec=repr(spec), names=", ".join(RUBRICS)))
        return RUBRICS[spec]
    if not isinstance(spec, list) or not spec:
        raise MedevalError(_("a rubric is a name or a non-empty list of criteria {key, name, question, anchors}"))
    if len(spec) > LIST_MAX_ITEMS:
        raise MedevalError(_("a rubric has at most {limit} criteria; this one has {n}").format(
            limit=f"{LIST_MAX_ITEMS:,}", n=f"{len(spec):,}"))
    check_depth(spec, what="the rubric criteria")
    out = []
    for n, c in enumerate(spec, start=1):
        if not isinstance(c, dict) or not all(c.get(f) for f in ("key", "name", "question", "anchors")):
            raise MedevalError(_("rubric criterion {n}: needs key, name, question and anchors (five texts, 1 to 5)")
                               .format(n=n))
        key, name, question = (str(c[f]) for f in ("key", "name", "question"))
        check_text(key, what=f"rubric criterion {n}: the key", max_chars=NAME_MAX_CHARS, allow_newlines=False)
        check_text(name, what=f"rubric criterion {n}: the name", max_chars=NAME_MAX_CHARS, allow_newlines=False)
        check_text(question, what=f"rubric criterion {n}: the question", max_chars=NOTE_MAX_CHARS)
        anchors = c["anchors"]
        if not isinstance(anchors, list) or len(anchors) != 5 or not all(isinstance(a, str) and a.strip()
                                                                         for a in anchors):
            raise MedevalError(_("rubric criterion {name}: anchors must be five non-empty texts (1 to 5)").format(
                name=repr(name)))
        for i, a in enumerate(anchors, start=1):
            check_text(a, what=f"rubric criterion {name!r}: anchor {i}", max_chars=NOTE_MAX_CHARS)
        out.append(Criterion(key, name, question, tuple(a.strip() for a in anchors)))
    if len({c.key for c in out}) != len(out):
        raise MedevalError(_("rubric criteria need distinct keys"))
    return tuple(out)


def _label(n: int) -> str:
    """A response as the screen names it (in the reader's language: the judge's text is relabelled to match)."""
    return _("Response {n}").format(n=n)


def _judge_target() -> str:
    return _("The judge's assessment")


def response_of(payload: dict, layout: dict, question: str) -> dict:
    """The response (``{model, response}``) a part-1 question is about.

    Question ids name the response by the number the annotator sees ("r2:fluency" is Response 2 on
    that annotator's screen), never by its place in the data, so nothing sent to the browser orders
    the models; the annotator's layout maps the number back.
    """
    shown = int(question[1:].split(":", 1)[0])
    return payload["responses"][layout["order"][shown - 1]]


class RubricRating(TaskType):
    name = "rubric"
    title = N_("Rate responses (and the judge)")
    description = N_("Clinicians rate each model's response to a case question on an anchored 1-5 rubric; with a "
                     "judge, they then rate the judge's assessment (AutoMedEval, CMB-Clin).")
    instructions = N_("Rate every response on each criterion with the keys 1-5 (the meaning of each score is on its "
                      "button). Models are not named and their order is shuffled. Where a judge's assessment "
                      "follows, it appears only after you have rated all responses.")

    def settings(self, db):
        sets = [d["dataset"] for d in cs.datasets(db) if d["questions"]]
        judges = sorted({j["judge"] for d in sets for q in cs.questions(db, d) for j in q["judgements"]})
        return [
            Setting("dataset", _("Data set"), "choice", sets[0] if sets else None, tuple(sets),
                    _("imported cases (medeval import-cases)")),
            Setting("rubric", _("Rubric"), "choice", "automedeval", tuple(RUBRICS),
                    _("the criteria each response is rated on"), labels={k: _(v) for k, v in RUBRIC_TITLES.items()}),
            Setting("judge", _("Judge to rate afterwards (part 2)"), "choice", NO_JUDGE, (NO_JUDGE, *judges),
                    _("with a judge, only questions that judge assessed are used"), labels={NO_JUDGE: _("(none)")}),
            Setting("max_items", _("Questions (0 = all)"), "int", 0, (),
                    _("a seeded random sample when fewer than all"), low=0, high=COUNT_MAX),
            Setting("criteria", _("Your own criteria instead (optional, JSON)"), "json", "", (),
                    _('a list like `[{"key": "safety", "name": "Safety", "question": "Is the advice safe?", '
                      '"anchors": ["1: ...", "2: ...", "3: ...", "4: ...", "5: ..."]}]`; empty: the rubric above')),
        ]

    def check_config(self, db, config):
        cfg = super().check_config(db, config)
        raw = cfg.pop("criteria", None)
        if isinstance(raw, str) and raw.strip():
            check_json_text(raw, "your own criteria")
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as e:
                raise MedevalError(_("your own criteria are not valid JSON ({error}, line {line}, column {column}); "
                                     "write a list of {{key, name, question, anchors}}").format(
                    error=e.msg, line=e.lineno, column=e.colno)) from None
        if raw not in (None, "", []):  # a rubric of one's own, stored with the campaign
            cfg["criteria"] = [c.to_dict() for c in parse_rubric(raw)]
        return cfg

    def build_items(self, db, config, rng):
        if not config.get("dataset"):
            raise MedevalError(_("no data set: import cases with responses first (medeval import-cases)"))
        crit = [c.to_dict() for c in parse_rubric(config.get("criteria") or config["rubric"])]
        judge = None if config.get("judge") in (None, NO_JUDGE) else config["judge"]
        qs = cs.questions(db, config["dataset"])
        by_case = defaultdict(list)
        for q in qs:
            by_case[q["case_key"]].append(q)
        items = []
        for q in qs:
            if len(q["responses"]) < 2:
                continue
            j = next((j for j in q["judgements"] if j["judge"] == judge), None)
            if judge and j is None:
                continue
            earlier = [{"question": e["question"], "reference": e["reference"]}
                       for e in by_case[q["case_key"]] if e["position"] < q["position"]]
            payload = {"dataset": config["dataset"], "case": q["case_key"], "title": q["title"],
                       "description": q["description"], "position": q["position"], "earlier": earlier,
                       "question": q["question"], "reference": q["reference"], "responses": q["responses"],
                       "criteria": crit, "judge": j, "judge_criteria": [c.to_dict() for c in JUDGE_RUBRIC]}
            items.append(ItemSpec(f"{config['dataset']}/{q['case_key']}/{q['position']}", payload))
        if not items:
            raise MedevalError(_("no question of this data set has two or more responses and an assessment by {name}")
                               .format(name=judge) if judge else
                               _("no question of this data set has two or more responses"))
        n = int(config.get("max_items") or 0)
        if n > len(items):  # bounded by what exists: never a silent "all"
            raise MedevalError(_("Questions (0 = all): {n} asked for, but this data set has {have} questions that can "
                                 "be rated; choose at most {have} (0 takes all)").format(n=f"{n:,}",
                                                                                      have=f"{len(items):,}"))
        if 0 < n < len(items):
            keep = sorted(rng.choice(len(items), size=n, replace=False).tolist())
            items = [items[i] for i in keep]
        return items

    def layout(self, payload, rng):
        return {"order": rng.permutation(len(payload["responses"])).tolist()}

    def gold_layout(self, payload):
        return {"order": list(range(len(payload["responses"])))}

    def canonical(self, payload, layout, question, value):
        if question.startswith("r") and ":" in question:  # "r2:fluency" -> the response's place in the data
            shown, crit = question[1:].split(":", 1)
            return f"r{layout['order'][int(shown) - 1] + 1}:{crit}", value
        return question, value

    def blocks(self, payload, layout):
        out = []
        if payload.get("title") or payload.get("description"):
            out.append(Block(case_label(payload.get("title")), payload.get("description") or ""))
        for n, e in enumerate(payload.get("earlier") or [], start=1):
            out.append(Block(_("Earlier question {n} of this case and its reference answer").format(n=n),
                             f"{e['question']}\n\n{e['reference']}", fold=True))
        out.append(Block(_("Question"), payload["question"]))
        out.append(Block(_("Reference answer"), payload["reference"]))
        for shown, j in enumerate(layout["order"], start=1):
            out.append(Block(_label(shown), payload["responses"][j]["response"], target=_label(shown)))
        jd = payload.get("judge")
        if jd:
            models = [r["model"] for r in payload["responses"]]
            shown_as = {models[j]: _label(n) for n, j in enumerate(layout["order"], start=1)}
            # one numbering on the screen: the judge's own numbers for the responses read as the screen's labels
            labels = {i: shown_as[m] for i, m in enumerate(jd["models"], start=1) if m in shown_as}
            out.append(Block(_judge_target(), relabel(jd["rationale"], labels), part=2, target=_judge_target()))
        return out

    def questions(self, payload, layout):
        # the criteria as stored with the item, in the reader's language (a built-in rubric's; one's own as written)
        crit = [Criterion.from_dict(c).shown() for c in payload["criteria"]]
        qs = []
        for shown in range(1, len(layout["order"]) + 1):
            label = _label(shown)
            for c in crit:
                qs.append(Question(f"r{shown}:{c.key}", 1, label, c.name, c.question, c.options()))
        if payload.get("judge"):
            target = _judge_target()
            for c in (Criterion.from_dict(d).shown() for d in payload["judge_criteria"]):
                qs.append(Question(f"judge:{c.key}", 2, target, c.name, c.question, c.options()))
        return qs

    def results(self, campaign, items, layouts, answers):
        cfg = campaign["config"]
        # response ratings: (item, response index, criterion key) -> [(annotator, value)]
        resp = [a for a in answers if a.question.startswith("r")]
        judge_part = [a for a in answers if a.question.startswith("judge:")]
        crit_names: dict[str, str] = {}
        for p in items.values():
            for c in p["criteria"]:
                crit_names.setdefault(c["key"], c["name"])
        jcrit = {c.key: c.name for c in JUDGE_RUBRIC}

        def model_of(a) -> str:
            return response_of(items[a.item_id], layouts[(a.item_id, a.annotator)], a.question)["model"]

        def crit_of(a) -> str:
            return a.question.split(":", 1)[1]

        # 1. per model and criterion
        acc = defaultdict(list)
        for a in resp:
            acc[(model_of(a), crit_of(a))].append(int(a.value))
        models = sorted({m for m, _ in acc})
        per_model = []
        for m in models:
            row = {"model": m}
            for key, name in crit_names.items():
                row[name] = mean(acc.get((m, key), []))
            vals = [v for (mm, _), vs in acc.items() if mm == m for v in vs]
            row["mean"] = mean(vals)
            row["ratings"] = len(vals)
            per_model.append(row)
        per_model.sort(key=lambda r: -(r["mean"] or 0))
        # (titles and texts in the reader's language; the tables' names stay English, marked N_(): the pages show
        # them with _())
        sections = [Section(_("Ratings per model"),
                            _("Mean rating (1-5) over the clinicians and items, per criterion; models ranked by the "
                              "mean over criteria."), {N_("per model"): per_model})]

        # 2. agreement among clinicians, per criterion and on the mean over criteria
        by_crit = defaultdict(list)
        for a in resp:
            by_crit[crit_names.get(crit_of(a), crit_of(a))].append(((a.item_id, model_of(a)), a.annotator,
                                                                     float(a.value)))
        seed = cfg.get("seed", 0)
        rows = [r for name, rs in by_crit.items() for r in continuous_agreement(name, rs, seed=seed)]
        per_resp = defaultdict(list)
        for a in resp:
            per_resp[(a.item_id, model_of(a), a.annotator)].append(int(a.value))
        n_crit = {iid: len(p["criteria"]) for iid, p in items.items()}
        overall = [((iid, m), who, float(np.mean(v))) for (iid, m, who), v in per_resp.items()
                   if len(v) == n_crit[iid]]
        rows += continuous_agreement("mean over criteria", overall, seed=seed)
        sections.append(Section(_("Agreement among clinicians"),
                                _("Each response is one rated unit. ICC(·,1): how far one clinician's rating can be "
                                  "trusted; ICC(·,k): the mean of the k clinicians. ICC(2,·) when every clinician "
                                  "rated every response; ICC(1,·) when each response went to k of more clinicians "
                                  "(each rated by a different set). Krippendorff's alpha (interval) uses every "
                                  "rating. AutoMedEval reports ICC 0.712 and alpha 0.725 among five doctors."),
                                {N_("agreement"): rows}))

        # 3. the judge against the clinicians (clinician score of a response: mean over criteria, then raters)
        judged = [p for p in items.values() if p.get("judge")]
        if judged:
            records = []
            for (iid, m, who), v in per_resp.items():
                p = items[iid]
                if p.get("judge") and len(v) == n_crit[iid] and m in p["judge"]["scores"]:
                    records.append({"case": f"{p['case']}/{p['position']}", "model": m, "rater": who,
                                    "judge_score": p["judge"]["scores"][m], "human_score": float(np.mean(v))})
            if records:
                s = jg.summarise(jg.from_records(records, source=f"campaign {campaign['id']}"))
                numbers = {"judge": cfg.get("judge"), "n_cases": s["n_cases"], "n_responses": s["n_responses"],
                           "spearman": s["spearman"]["value"], "pearson": s["pearson"]["value"],
                           "accuracy_2tuple": s["accuracy_2tuple"]["value"],
                           "accuracy_triple": s["accuracy_triple"]["value"],
                           "ranking_spearman": s["ranking"]["spearman"]["value"]}
                stats = [{"statistic": k, "value": v["value"], "ci95": v.get("ci95"),
                          "n": v.get("n", v.get("n_pairs", v.get("n_cases"))),
                          "undefined_reason": v.get("undefined_reason") or v.get("ci_undefined_reason")}
                         for k, v in (("Spearman (per response)", s["spearman"]), ("Pearson (per response)", s["pearson"]),
                                      ("Accuracy_2-tuple", s["accuracy_2tuple"]),
                                      ("Accuracy_triple", s["accuracy_triple"]),
                                      ("Spearman of the model rankings", s["ranking"]["spearman"]))]
                win = []
                for a_ in s["win_rate"]["models"]:
                    for b_ in s["win_rate"]["models"]:
                        if a_ != b_:
                            wj, wc = s["win_rate"]["judge"][a_][b_], s["win_rate"]["clinicians"][a_][b_]
                            win.append({"model": a_, "versus": b_, "judge win": wj["win"], "judge tie": wj["tie"],
                                        "clinicians win": wc["win"], "clinicians tie": wc["tie"],
                                        "cases": wj["n_cases"]})
                ranking = [{"model": j["model"], "judge mean": j["mean"], "judge rank": j["rank"],
                            "clinicians mean": c["mean"], "clinicians rank": c["rank"]}
                           for j in s["ranking"]["judge"] for c in s["ranking"]["clinicians"]
                           if c["model"] == j["model"]]
                sec = Section(_("The judge against the clinicians"),
                              _("The clinicians' score of a response is the mean over the rubric's criteria, then "
                                "over clinicians. Accuracy_2-tuple: the share of response pairs of a question the "
                                "judge orders as the clinicians do (a tie agrees only with a tie); Accuracy_triple: "
                                "the share of three-response questions ordered exactly alike."),
                              {N_("statistics"): stats, N_("win rates"): win, N_("model rankings"): ranking}, numbers)
                if s["warnings"]:
                    sec.text += " " + " ".join(s["warnings"])
                sections.append(sec)
            crit_sec = _criterion_section(items, resp, model_of, crit_of, crit_names, cfg.get("judge"))
            if crit_sec is not None:
                sections.append(crit_sec)
            # 4. the clinicians' ratings of the judge's assessments
            jacc = defaultdict(list)
            for a in judge_part:
                jacc[a.question.split(":", 1)[1]].append(int(a.value))
            jrows = [{"criterion": jcrit.get(k, k), "mean": mean(v), "ratings": len(v)} for k, v in jacc.items()]
            by_jc = defaultdict(list)
            for a in judge_part:
                by_jc[jcrit.get(a.question.split(":", 1)[1])].append((a.item_id, a.annotator, float(a.value)))
            sections.append(Section(_("The judge's assessments, as rated by the clinicians"),
                                    _("Part 2 of each item, given after every response was rated."),
                                    {N_("mean rating"): jrows,
                                     N_("agreement"): [r for name, rs in by_jc.items()
                                                   for r in continuous_agreement(name, rs, seed=seed)]}))
        return sections


def _criterion_section(items, resp, model_of, crit_of, crit_names, judge) -> Section | None:
    """The judge against the clinicians on each criterion (CMB-Clin §5.3), when the judge scored criteria."""
    jscores: dict[str, dict] = defaultdict(dict)
    for iid, p in items.items():
        for m, cs_ in ((p.get("judge") or {}).get("criteria") or {}).items():
            for c, v in cs_.items():
                jscores[c][(iid, m)] = v
    if not jscores:
        return None
    ratings = defaultdict(list)
    for a in resp:
        ratings[(crit_names.get(crit_of(a), crit_of(a)), a.item_id, model_of(a))].append(float(a.value))
    experts: dict[str, dict] = defaultdict(dict)
    for (c, iid, m), v in ratings.items():
        experts[c][(iid, m)] = float(np.mean(v))
    names = {jg.criterion_key(k): n for k, n in crit_names.items()}  # the judge may use the rubric's keys
    rows = jg.criterion_agreement({names.get(jg.criterion_key(c), c): v for c, v in jscores.items()}, experts,
                                  model_of=lambda u: u[1])
    return Section(_("The judge against the clinicians, per criterion"),
                   _("CMB-Clin §5.3: on each criterion, the correlation between the judge's score of a response and "
                     "the clinicians' (the mean over the clinicians who rated it), over the responses both scored; "
                     "criterion names matched case-insensitively. Pearson (the paper's statistic; GPT-4 against the "
                     "clinicians: above 0.71 on every perspective) with a Fisher-z 95% CI, Spearman with a Fisher-z "
                     "CI using the Bonett-Wright variance. A criterion only the judge scores has no clinicians' "
                     "ratings. The paper does not say whether its Pearson runs over responses or over models: both "
                     "are given (the models' mean scores over the responses both scored)."),
                   {N_("per criterion"): [r for c in rows for r in c.rows()]},
                   {"judge": judge, "criteria": {c.criterion: {"n": c.n, "status": c.status,
                                                               "pearson": c.pearson.value if c.pearson else None,
                                                               "spearman": c.spearman.value if c.spearman else None}
                                                 for c in rows}})
