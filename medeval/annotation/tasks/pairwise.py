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
from medeval.annotation.tasks.mentions import relabel
from medeval.annotation.tasks.registry import Block, ItemSpec, Option, Question, Section, Setting, TaskType
from medeval.core.errors import MedevalError
from medeval.core.limits import COUNT_MAX
from medeval.stats import preference as pf

JUDGE_CRITERIA = (
    ("knowledge", "Knowledge Correctness",
     "Which evaluation applies medical knowledge more correctly when analysing each response?"),
    ("reference", "Reference Correctness",
     "Which evaluation attributes every point to the right response (fewer misattributions)?"),
    ("fluency", "Fluency", "Which evaluation is more fluent and easier to understand?"),
)
ANSWER_CRITERIA = (
    ("relevancy", "Relevancy", "Which answer addresses the question better?"),
    ("knowledge", "Knowledge Correctness", "Which answer is medically more correct?"),
    ("fluency", "Fluency", "Which answer is more fluent and easier to understand?"),
)
OPTIONS = (Option("left", "A is better", "left", "the output on the left (A)"),
           Option("tie", "Tie", "t", "neither is better"),
           Option("right", "B is better", "right", "the output on the right (B)"))
COMPARE = ("judges", "answers")


class Preference(TaskType):
    name = "preference"
    title = "Double-blind preference"
    description = ("Two outputs for the same question -- two judges' assessments or two models' answers -- with the "
                   "sources hidden and the sides drawn at random; the annotator picks A, B or tie per criterion.")
    instructions = ("Read both outputs, then choose for each criterion: ← A (left) is better, → B (right) is better, "
                    "T tie. The sources are hidden and their sides are random.")

    def settings(self, db):
        sets = [d["dataset"] for d in cs.datasets(db) if d["questions"]]
        return [
            Setting("dataset", "Data set", "choice", sets[0] if sets else None, tuple(sets),
                    "imported cases (medeval import-cases)"),
            Setting("compare", "Compare", "choice", "judges", COMPARE,
                    "judges: two judges' assessments of the same responses; answers: two models' answers"),
            Setting("max_items", "Comparisons (0 = all)", "int", 0, (), "a seeded random sample when fewer than all",
                    low=0, high=COUNT_MAX),
        ]

    def build_items(self, db, config, rng):
        if not config.get("dataset"):
            raise MedevalError("no data set: import cases first (medeval import-cases)")
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
            raise MedevalError("no question of this data set has two " + ("judges' assessments" if judges
                                                                             else "models' answers") + " to compare")
        n = int(config.get("max_items") or 0)
        if n > len(items):  # bounded by what exists: never a silent "all"
            raise MedevalError(f"Comparisons (0 = all): {n:,} asked for, but this data set has {len(items):,} comparisons; "
                               f"choose at most {len(items):,} (0 takes all)")
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
            out.append(Block("Case" + (f": {payload['title']}" if payload.get("title") else ""),
                             payload.get("description") or ""))
        out += [Block("Question", payload["question"]), Block("Reference answer", payload["reference"])]
        if payload["compare"] == "judges":
            order = left.get("models") or [r["model"] for r in payload["responses"]]
            text = {r["model"]: r["response"] for r in payload["responses"]}
            for n, m in enumerate(order, start=1):
                out.append(Block(f"Doctor {n} (a response both evaluations discuss)", text.get(m, "")))

            def on_screen(side: dict) -> str:
                """One numbering on the screen: each evaluation's mentions of its own response numbers read as the
                "Doctor n" shown above (B may number them differently from A)."""
                own = side.get("models") or order
                return relabel(side["text"], {i: f"Doctor {order.index(m) + 1}" for i, m in enumerate(own, start=1)
                                              if m in order})

            out += [Block("A", on_screen(left), target="A"), Block("B", on_screen(right), target="B")]
            return out
        out += [Block("A", left["text"], target="A"), Block("B", right["text"], target="B")]
        return out

    def questions(self, payload, layout):
        return [Question(key, 1, "A versus B", name, prompt, OPTIONS) for key, name, prompt in payload["criteria"]]

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
            tables = {"preference share": shares, "checks": stats}
            bt = s["bradley_terry"]
            if len(s["shares"]) > 2:
                tables["Bradley-Terry strengths"] = (
                    [{"source": k, "strength": v} for k, v in sorted(bt["strengths"].items(), key=lambda kv: -kv[1])]
                    if bt["strengths"] else [{"source": "(undefined)", "strength": None,
                                              "undefined_reason": bt["undefined_reason"]}])
            sections.append(Section(f"Preference: {names[key]}",
                                    f"{s['n_choices']} choices on {s['n_items']} comparisons by {s['n_annotators']} "
                                    "annotators. A tie counts half to each side. A left share far from 0.5 (small "
                                    "p) means the side, not the content, swayed the choice.", tables,
                                    {"n_choices": s["n_choices"]}))
        return sections
