"""Double-blind preference between two outputs for the same question (AutoMedEval §4.3, App. E).

The outputs are two judges' assessments of the same responses, or two models' answers. Their
sources are never shown; which one is on the left is drawn per annotator from the campaign's
stored seed and recorded with the assignment. On each criterion the annotator presses ← (A,
left), → (B, right) or T (tie). With more than two sources every pair of them is compared.

Results per criterion (``medeval.stats.preference``): each source's share of preferences (a tie
counts half) with the spread across annotators, a position-bias check (share of left wins,
exact binomial test), Bradley-Terry strengths when there are more than two sources, and the
annotators' agreement (nominal alpha over the chosen source).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from medeval.annotation import cases as cs
from medeval.annotation.tasks.common import case_label, shown
from medeval.annotation.tasks.mentions import relabel
from medeval.annotation.tasks.registry import Block, ItemSpec, Option, Question, Section, Setting, TaskType
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import COUNT_MAX
from medeval.stats import preference as pf

# (texts marked N_(): stored in English with each item, shown in the reader's language by questions())
JUDGE_CRITERIA = (
    ("knowledge", N_("Knowledge Correctness"),
     N_("Which evaluation applies medical knowledge more correctly when analysing each response?")),
    ("reference", N_("Reference Correctness"),
     N_("Which evaluation attributes every point to the right response (fewer misattributions)?")),
    ("fluency", N_("Fluency"), N_("Which evaluation is more fluent and easier to understand?")),
)
ANSWER_CRITERIA = (
    ("relevancy", N_("Relevancy"), N_("Which answer addresses the question better?")),
    ("knowledge", N_("Knowledge Correctness"), N_("Which answer is medically more correct?")),
    ("fluency", N_("Fluency"), N_("Which answer is more fluent and easier to understand?")),
)
OPTIONS = (Option("left", N_("A is better"), "left", N_("the output on the left (A)")),
           Option("tie", N_("Tie"), "t", N_("neither is better")),
           Option("right", N_("B is better"), "right", N_("the output on the right (B)")))


def options() -> tuple[Option, ...]:
    """:data:`OPTIONS` in the reader's language (values and keys unchanged)."""
    return tuple(Option(o.value, _(o.label), o.key, _(o.meaning)) for o in OPTIONS)
COMPARE = ("judges", "answers")


class Preference(TaskType):
    name = "preference"
    title = N_("Double-blind preference")
    description = N_("Two outputs for the same question -- two judges' assessments or two models' answers -- with the "
                     "sources hidden and the sides drawn at random; the annotator picks A, B or tie per criterion.")
    instructions = N_("Read both outputs, then choose for each criterion: ← A (left) is better, → B (right) is better, "
                      "T tie. The sources are hidden and their sides are random.")

    def settings(self, db):
        sets = [d["dataset"] for d in cs.datasets(db) if d["questions"]]
        return [
            Setting("dataset", _("Data set"), "choice", sets[0] if sets else None, tuple(sets),
                    _("imported cases (medeval import-cases)")),
            Setting("compare", _("Compare"), "choice", "judges", COMPARE,
                    _("judges: two judges' assessments of the same responses; answers: two models' answers"),
                    labels={"judges": _("two judges' assessments"), "answers": _("two models' answers")}),
            Setting("max_items", _("Comparisons (0 = all)"), "int", 0, (),
                    _("a seeded random sample when fewer than all"), low=0, high=COUNT_MAX),
        ]

    def build_items(self, db, config, rng):
        if not config.get("dataset"):
            raise MedevalError(_("no data set: import cases first (medeval import-cases)"))
        judges = config["compare"] == "judges"
        crit = JUDGE_CRITERIA if judges else ANSWER_CRITERIA
        items = []
        for q in cs.questions(db, config["dataset"]):
            outputs = ([(j["judge"], j["rationale"], j["models"]) for j in q["judgements"]] if judges
                       else [(r["model"], r["response"], None) for r in q["responses"]])
            outputs.sort(key=lambda o: o[0])
            base = {"dataset": config["dataset"], "case": q["case_key"], "title": q["title"],
                    "description": q["description"], "question": q["question"], "reference": q["reference"],
                    "compare": config["compare"], "criteria": [list(c) for c in crit]}
            if judges:
                base["responses"] = q["responses"]
            for a, b in combinations(outputs, 2):
                items.append(ItemSpec(f"{config['dataset']}/{q['case_key']}/{q['position']}/{a[0]}|{b[0]}", {
                    **base, "a": {"source": a[0], "text": a[1], "models": a[2]},
                    "b": {"source": b[0], "text": b[1], "models": b[2]}}))
        if not items:
            raise MedevalError(_("no question of this data set has two judges' assessments to compare") if judges
                               else _("no question of this data set has two models' answers to compare"))
        n = int(config.get("max_items") or 0)
        if n > len(items):  # bounded by what exists: never a silent "all"
            raise MedevalError(_("Comparisons (0 = all): {n} asked for, but this data set has {have} comparisons; "
                                 "choose at most {have} (0 takes all)").format(n=f"{n:,}", have=f"{len(items):,}"))
        if 0 < n < len(items):
            keep = sorted(rng.choice(len(items), size=n, replace=False).tolist())
            items = [items[i] for i in keep]
        return items

    def layout(self, payload, rng):
        return {"left": "a" if rng.random() < 0.5 else "b"}

    def gold_layout(self, payload):
        return {"left": "a"}

    def canonical(self, payload, layout, question, value):
        if layout.get("left") == "b" and value in ("left", "right"):  # the sides swapped: A was on the right
            return question, {"left": "right", "right": "left"}[value]
        return question, value

    def blocks(self, payload, layout):
        left, right = (payload["a"], payload["b"]) if layout["left"] == "a" else (payload["b"], payload["a"])
        out = []
        if payload.get("title") or payload.get("description"):
            out.append(Block(case_label(payload.get("title")), payload.get("description") or ""))
        out += [Block(_("Question"), payload["question"]), Block(_("Reference answer"), payload["reference"])]
        if payload["compare"] == "judges":
            order = left.get("models") or [r["model"] for r in payload["responses"]]
            text = {r["model"]: r["response"] for r in payload["responses"]}
            for n, m in enumerate(order, start=1):
                out.append(Block(_("Doctor {n} (a response both evaluations discuss)").format(n=n), text.get(m, "")))

            def on_screen(side: dict) -> str:
                """One numbering on the screen: each evaluation's mentions of its own response numbers read as the
                "Doctor n" shown above (B may number them differently from A)."""
                own = side.get("models") or order
                return relabel(side["text"], {i: _("Doctor {n}").format(n=order.index(m) + 1)
                                              for i, m in enumerate(own, start=1) if m in order})

            out += [Block("A", on_screen(left), target="A"), Block("B", on_screen(right), target="B")]
            return out
        out += [Block("A", left["text"], target="A"), Block("B", right["text"], target="B")]
        return out

    def questions(self, payload, layout):
        return [Question(key, 1, _("A versus B"), shown(name), shown(prompt), options())
                for key, name, prompt in payload["criteria"]]

    def results(self, campaign, items, layouts, answers):
        by_crit: dict[str, list[tuple]] = defaultdict(list)
        names = {}
        for a in answers:
            p = items[a.item_id]
            lay = layouts[(a.item_id, a.annotator)]
            left, right = (p["a"], p["b"]) if lay["left"] == "a" else (p["b"], p["a"])
            by_crit[a.question].append((a.item_id, a.annotator, left["source"], right["source"], a.value))
            names.setdefault(a.question, next((c[1] for c in p["criteria"] if c[0] == a.question), a.question))
        sections = []
        seed = campaign["config"].get("seed", 0)
        for key, rows in by_crit.items():
            s = pf.summarise(rows, n_boot=500, rng=seed)
            shares = [{"source": src, "share": v["share"], "comparisons": v["n"],
                       "lowest annotator": v["per_annotator_min"], "highest annotator": v["per_annotator_max"],
                       "sd across annotators": v["per_annotator_sd"]} for src, v in s["shares"].items()]
            shares.sort(key=lambda r: -r["share"])
            pb = s["position_bias"]
            a = s["alpha_nominal"]
            stats = [{"statistic": "share of decided choices won by the left side", "value": pb["left_share"],
                      "p (binomial, vs 1/2)": pb["p"], "n": pb["n_decided"], "undefined_reason": pb["undefined_reason"]},
                     {"statistic": "Krippendorff's alpha (nominal, over the chosen source)", "value": a["value"],
                      "ci95": a["ci95"], "n": a["n_items"], "undefined_reason": a["undefined_reason"]}]
            tables = {N_("preference share"): shares, N_("checks"): stats}  # (names shown with _() by the pages)
            bt = s["bradley_terry"]
            if len(s["shares"]) > 2:
                tables[N_("Bradley-Terry strengths")] = (
                    [{"source": k, "strength": v} for k, v in sorted(bt["strengths"].items(), key=lambda kv: -kv[1])]
                    if bt["strengths"] else [{"source": "(undefined)", "strength": None,
                                              "undefined_reason": bt["undefined_reason"]}])
            sections.append(Section(_("Preference: {criterion}").format(criterion=shown(names[key])),
                                    _("{choices} choices on {comparisons} comparisons by {annotators} annotators. A "
                                      "tie counts half to each side. A left share far from 0.5 (small p) means the "
                                      "side, not the content, swayed the choice.").format(
                                        choices=s["n_choices"], comparisons=s["n_items"], annotators=s["n_annotators"]),
                                    tables, {"n_choices": s["n_choices"]}))
        return sections
