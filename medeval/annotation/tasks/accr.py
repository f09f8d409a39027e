"""Accuracy Reliability of fact-check answers (SDAK §4.2.2): does the stated reason support the verdict?

A model that answers "correct" for the right reason and one that answers "correct" while its
explanation argues the opposite get the same Factual Accuracy; AccR separates them. Clinicians
see a claim, the verdict parsed from the model's answer and the answer itself (its reason), and
press Y (the reason supports the verdict) or N. The sample is drawn per model from the stored
seed, by default among the claims of items the model got right (as SDAK: reliability of the
accurate answers), 100 per model.

Results: AccR per model (share of "yes" over all ratings, and over items by majority), with the
annotators' agreement (nominal alpha, percent agreement).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from medeval.annotation import cases as cs
from medeval.annotation.tasks.common import nominal_agreement
from medeval.annotation.tasks.registry import Block, ItemSpec, Option, Question, Section, Setting, TaskType, register
from medeval.core.errors import MedevalError
from medeval.core.limits import COUNT_MAX
from medeval.stats.factcheck import REFUTE, SUPPORT, parse_verdict

OPTIONS = (Option("yes", "Yes, it supports the verdict", "y", "the reason given justifies the verdict"),
           Option("no", "No", "n", "the reason is wrong, irrelevant, missing or argues the opposite"))
VERDICT_TEXT = {SUPPORT: "Correct (the model says the claim is true)",
                REFUTE: "Incorrect (the model says the claim is false)"}
POOLS = ("correct items", "followed claims")


@register
class AccuracyReliability(TaskType):
    name = "accr"
    title = "Fact-check reasons (AccR)"
    description = ("Clinicians check whether a model's reason supports its verdict on an atomic medical claim; "
                   "the share of 'yes' is the model's Accuracy Reliability (SDAK).")
    instructions = ("Read the claim, the model's verdict and its answer. Does the reason it gives support its "
                    "verdict? Y yes, N no. You are not asked whether the claim itself is true.")

    def settings(self, db):
        sets = [d["dataset"] for d in cs.datasets(db) if d["fact_claims"]]
        return [
            Setting("dataset", "Data set", "choice", sets[0] if sets else None, tuple(sets),
                    "imported fact-check answers (medeval import-factcheck)"),
            Setting("per_model", "Claims per model", "int", 100, (), "SDAK checked 100 per model",
                    low=1, high=COUNT_MAX),
            Setting("pool", "Sample from", "choice", POOLS[0], POOLS,
                    "correct items: claims of items the model answered right (as SDAK); followed claims: every "
                    "claim with a verdict"),
        ]

    def build_items(self, db, config, rng):
        if not config.get("dataset"):
            raise MedevalError("no data set: import fact-check answers first (medeval import-factcheck)")
        if config["per_model"] < 1:
            raise MedevalError("claims per model must be at least 1")
        pools: dict[str, list[dict]] = defaultdict(list)
        for p in cs.fact_claim_pairs(db, config["dataset"]):
            fv = parse_verdict(p["factual_response"], p["factual_claim"])
            cv = parse_verdict(p["counterfactual_response"], p["counterfactual_claim"])
            correct = fv.label == SUPPORT and cv.label == REFUTE
            for label, side, v in ((SUPPORT, "factual", fv), (REFUTE, "counterfactual", cv)):
                if not v.followed or (config["pool"] == POOLS[0] and not correct):
                    continue
                pools[p["model"]].append({"model": p["model"], "item": p["item_key"], "type": p["type"],
                                          "label": label, "claim": p[f"{side}_claim"],
                                          "response": p[f"{side}_response"], "verdict": v.label})
        items = []
        for model in sorted(pools):
            pool = pools[model]
            take = min(config["per_model"], len(pool))
            for j in sorted(rng.choice(len(pool), size=take, replace=False).tolist()):
                c = pool[j]
                items.append(ItemSpec(f"{config['dataset']}/{model}/{c['item']}/{c['label']}",
                                      {"dataset": config["dataset"], **c}))
        if not items:
            raise MedevalError("no claim to check: no model answered with a verdict"
                               + (" on an item it got right" if config["pool"] == POOLS[0] else ""))
        return items

    def gold_pool(self, db, config):
        return self.build_items(db, {**config, "per_model": COUNT_MAX}, np.random.default_rng(0))

    def blocks(self, payload, layout):
        return [Block("Claim", payload["claim"]), Block("The model's verdict", VERDICT_TEXT[payload["verdict"]]),
                Block("The model's answer (verdict and reason)", payload["response"], target="reason")]

    def questions(self, payload, layout):
        return [Question("supports", 1, "The model's reason", "Reason supports verdict",
                         "Does the reason the model gives support its verdict?", OPTIONS)]

    def results(self, campaign, items, layouts, answers):
        per_model = defaultdict(list)
        per_item = defaultdict(list)
        for a in answers:
            per_model[items[a.item_id]["model"]].append(a.value == "yes")
            per_item[a.item_id].append(a.value)
        rows = []
        for model in sorted(per_model):
            votes = [v for iid, vs in per_item.items() if items[iid]["model"] == model for v in [vs]]
            majority = [Counter(vs).most_common(1)[0][0] == "yes" for vs in votes
                        if Counter(vs)["yes"] != Counter(vs)["no"]]
            rows.append({"model": model, "AccR (ratings)": sum(per_model[model]) / len(per_model[model]),
                         "ratings": len(per_model[model]), "claims": len(votes),
                         "AccR (claims, majority)": (sum(majority) / len(majority)) if majority else None,
                         "claims without a majority": len(votes) - len(majority)})
        agree = nominal_agreement("reason supports verdict", [(a.item_id, a.annotator, a.value) for a in answers],
                                  ("yes", "no"), seed=campaign["config"].get("seed", 0))
        return [Section("Accuracy Reliability per model",
                        "AccR: the share of checked answers whose reason supports the verdict. Over ratings: every "
                        "clinician's answer counts; over claims: the majority of the clinicians who checked it "
                        "(ties left out and counted).", {"AccR": rows}),
                Section("Agreement among clinicians", "Whether the clinicians agree on the same claims.",
                        {"agreement": agree})]
