"""Accuracy Reliability of fact-check answers (SDAK §4.2.2), per knowledge item: do both reasons support their verdicts?

SDAK: "We randomly selected 100 atomic knowledge items and manually checked the model's responses. If the reason
given by LLMs can support the answer 'correct' to a factual claim and the answer 'incorrect' to a counterfactual
claim, we believe that the answers given by LLMs are reliable." So the unit is a *knowledge item*: its factual
claim and its counterfactual claim, each with the model's response (verdict and reason). Clinicians see both and
say, for each, whether the reason supports the verdict (Y/N); the item is reliable when both do.

Items are sampled whole, per model, from the stored seed: by default 100 per model (as SDAK) among the items the
model got right (factual 'correct', counterfactual 'incorrect': the reliability of the accurate answers), or among
every item whose two responses both start with a verdict. Claims are paired by item id (``fact_claims.item_key``,
one ``support`` and one ``refute`` claim per model); a claim without its twin is left out and counted
(the import refuses such files, so this is 0 unless the table was written otherwise).

Results per model: AccR = reliable items / items, an item reliable when the majority of the clinicians who checked
it found both reasons supporting (ties left out and counted), with a Wilson 95% CI; beside it AccR over ratings
(every clinician's judgement of an item counts) and the share of supporting reasons per side; the annotators'
agreement (nominal alpha, percent agreement) per question and on the item's reliability.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from medeval.annotation import cases as cs
from medeval.annotation.tasks.common import nominal_agreement
from medeval.annotation.tasks.registry import Block, ItemSpec, Option, Question, Section, Setting, TaskType
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import COUNT_MAX
from medeval.stats.factcheck import REFUTE, SUPPORT, parse_verdict

# (the screen's texts are marked N_() and shown with _(): the values, keys and sides stay as they are)
OPTIONS = (Option("yes", N_("Yes, it supports the verdict"), "y", N_("the reason given justifies the verdict")),
           Option("no", N_("No"), "n", N_("the reason is wrong, irrelevant, missing or argues the opposite")))
VERDICT_TEXT = {SUPPORT: N_("Correct (the model says the claim is true)"),
                REFUTE: N_("Incorrect (the model says the claim is false)")}
POOLS = ("correct items", "followed items")
POOL_LABELS = {"correct items": N_("items the model answered right"), "followed items": N_("every item with verdicts")}
SIDES = (("factual", SUPPORT, N_("Factual claim")), ("counterfactual", REFUTE, N_("Counterfactual claim")))
# each side's sentences whole (a side's name is not spliced into a sentence: word order differs between languages)
VERDICT_ON = {"factual": N_("The model's verdict on the factual claim"),
              "counterfactual": N_("The model's verdict on the counterfactual claim")}
PROMPTS = {"factual": N_("Does the reason the model gives for the factual claim support its verdict?"),
           "counterfactual": N_("Does the reason the model gives for the counterfactual claim support its verdict?")}
ANSWER = N_("The model's answer (verdict and reason)")
CRITERION = N_("Reason supports verdict")
_LEGACY_POOL = {"followed claims": "followed items"}  # the setting's value before AccR went per item
UNIT = "per item (factual + counterfactual claim)"


def options() -> tuple[Option, ...]:
    """:data:`OPTIONS` in the reader's language (values and keys unchanged)."""
    return tuple(Option(o.value, _(o.label), o.key, _(o.meaning)) for o in OPTIONS)


def _unpaired(db, dataset: str) -> dict[str, int]:
    """Claims of ``dataset`` without their twin (the other label of the same item and model), per model."""
    return dict(db.conn.execute(
        "SELECT f.model, count(*) FROM fact_claims f WHERE f.dataset = ? AND NOT EXISTS (SELECT 1 FROM fact_claims c "
        "WHERE c.dataset = f.dataset AND c.model = f.model AND c.item_key = f.item_key AND c.label != f.label) "
        "GROUP BY f.model", ((dataset or "").strip(),)).fetchall())


def _wilson(k: int, n: int) -> list[float] | None:
    if not n:
        return None
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return [float(ci.low), float(ci.high)]


class AccuracyReliability(TaskType):
    name = "accr"
    title = N_("Fact-check reasons (AccR)")
    description = N_("Clinicians check, for both claims of an atomic knowledge item (factual and counterfactual), "
                     "whether the model's reason supports its verdict; an item is reliable when both do, and the "
                     "share of reliable items is the model's Accuracy Reliability (SDAK), per item (factual + "
                     "counterfactual claim).")
    instructions = N_("Read the two claims of the item (a factual one and its counterfactual twin), the model's "
                      "verdict on each and its answer. For each: does the reason it gives support its verdict? Y yes, "
                      "N no. You are not asked whether the claims themselves are true.")

    def settings(self, db):
        sets = [d["dataset"] for d in cs.datasets(db) if d["fact_claims"]]
        return [
            Setting("dataset", _("Data set"), "choice", sets[0] if sets else None, tuple(sets),
                    _("imported fact-check answers (medeval import-factcheck)")),
            Setting("per_model", _("Items per model"), "int", 100, (),
                    _("knowledge items (factual + counterfactual claim) per model; SDAK checked 100"),
                    low=1, high=COUNT_MAX),
            Setting("pool", _("Sample from"), "choice", POOLS[0], POOLS,
                    _("correct items: items the model answered right (as SDAK); followed items: every item whose two "
                      "responses start with a verdict"), labels={k: _(v) for k, v in POOL_LABELS.items()}),
        ]

    def check_config(self, db, config):
        pool = config.get("pool")
        return super().check_config(db, {**config, "pool": _LEGACY_POOL[pool]} if pool in _LEGACY_POOL else config)

    def build_items(self, db, config, rng):
        if not config.get("dataset"):
            raise MedevalError(_("no data set: import fact-check answers first (medeval import-factcheck)"))
        if config["per_model"] < 1:
            raise MedevalError(_("items per model must be at least 1"))
        pool_name = _LEGACY_POOL.get(config["pool"], config["pool"])
        unpaired = _unpaired(db, config["dataset"])
        pools: dict[str, list[dict]] = defaultdict(list)
        in_data: Counter = Counter()
        for p in cs.fact_claim_pairs(db, config["dataset"]):
            in_data[p["model"]] += 1
            v = {side: parse_verdict(p[f"{side}_response"], p[f"{side}_claim"]) for side, _l, _t in SIDES}
            correct = v["factual"].label == SUPPORT and v["counterfactual"].label == REFUTE
            followed = v["factual"].followed and v["counterfactual"].followed
            if not (correct if pool_name == POOLS[0] else followed):
                continue
            pools[p["model"]].append({"model": p["model"], "item": p["item_key"], "type": p["type"], **{
                side: {"claim": p[f"{side}_claim"], "response": p[f"{side}_response"], "verdict": v[side].label}
                for side, _l, _t in SIDES}})
        items = []
        for model in sorted(pools):
            pool = pools[model]
            take = min(config["per_model"], len(pool))
            info = {"name": pool_name, "items_in_data": in_data[model], "items_in_pool": len(pool),
                    "claims_without_twin": unpaired.get(model, 0)}
            for j in sorted(rng.choice(len(pool), size=take, replace=False).tolist()):
                c = pool[j]
                items.append(ItemSpec(f"{config['dataset']}/{model}/{c['item']}",
                                      {"dataset": config["dataset"], **c, "pool": info}))
        if not items:
            left_out = sum(unpaired.values())
            why = (_("no item to check: no model answered both claims of an item with a verdict and got it right")
                   if pool_name == POOLS[0] else
                   _("no item to check: no model answered both claims of an item with a verdict"))
            if left_out:
                why += " " + _("({n} claims without their twin left out)").format(n=left_out)
            raise MedevalError(why)
        return items

    def gold_pool(self, db, config):
        return self.build_items(db, {**config, "per_model": COUNT_MAX}, np.random.default_rng(0))

    def blocks(self, payload, layout):
        if "label" in payload:  # an item of a campaign made before AccR went per item: one claim
            return [Block(_("Claim"), payload["claim"]),
                    Block(_("The model's verdict"), _(VERDICT_TEXT[payload["verdict"]])),
                    Block(_(ANSWER), payload["response"], target="reason")]
        out = []
        for side, _label, title in SIDES:
            c = payload[side]
            out += [Block(_(title), c["claim"]),  # (the question is asked after the block with its target: the answer)
                    Block(_(VERDICT_ON[side]), _(VERDICT_TEXT[c["verdict"]])),
                    Block(_(ANSWER), c["response"], target=_(title))]
        return out

    def questions(self, payload, layout):
        if "label" in payload:
            return [Question("supports", 1, _("The model's reason"), _(CRITERION),
                             _("Does the reason the model gives support its verdict?"), options())]
        return [Question(side, 1, _(title), _(CRITERION), _(PROMPTS[side]), options()) for side, _label, title in SIDES]

    def results(self, campaign, items, layouts, answers):
        given: dict[tuple[int, str], dict[str, str]] = defaultdict(dict)
        for a in answers:
            given[(a.item_id, a.annotator)][a.question] = a.value
        judged: dict[int, list[bool]] = defaultdict(list)  # item -> per clinician: both reasons support
        sides: dict[str, dict[str, list[bool]]] = defaultdict(lambda: {s: [] for s, _l, _t in SIDES})
        legacy = set()
        for (iid, _who), qa in given.items():
            p = items[iid]
            if "label" in p:
                legacy.add(iid)
                continue
            for side, _l, _t in SIDES:
                if side in qa:
                    sides[p["model"]][side].append(qa[side] == "yes")
            if all(s in qa for s, _l, _t in SIDES):
                judged[iid].append(all(qa[s] == "yes" for s, _l, _t in SIDES))
        per_model: dict[str, list[int]] = defaultdict(list)
        info: dict[str, dict] = {}
        for iid, p in items.items():
            if "label" not in p:
                per_model[p["model"]].append(iid)
                info[p["model"]] = p.get("pool", {})
        rows = []
        for model in sorted(per_model):
            ids = per_model[model]
            votes = [judged[i] for i in ids if judged[i]]
            ratings = [v for vs in votes for v in vs]
            majority = [Counter(vs)[True] > Counter(vs)[False] for vs in votes if Counter(vs)[True] != Counter(vs)[False]]
            s = sides[model]
            rows.append({
                "model": model, "items": len(ids), "items checked": len(votes),
                "AccR (items, majority)": (sum(majority) / len(majority)) if majority else None,
                "AccR 95% CI (Wilson)": _wilson(sum(majority), len(majority)),
                "items without a majority": len(votes) - len(majority),
                "AccR (ratings)": (sum(ratings) / len(ratings)) if ratings else None, "ratings": len(ratings),
                "factual reasons supporting": (sum(s["factual"]) / len(s["factual"])) if s["factual"] else None,
                "counterfactual reasons supporting": (sum(s["counterfactual"]) / len(s["counterfactual"])
                                                      if s["counterfactual"] else None),
                "items in the pool": info[model].get("items_in_pool"),
                "claims without a twin (left out)": info[model].get("claims_without_twin"),
            })
        seed = campaign["config"].get("seed", 0)
        agree = nominal_agreement("reason supports verdict", [(f"{a.item_id}/{a.question}", a.annotator, a.value)
                                                              for a in answers if a.item_id not in legacy],
                                  ("yes", "no"), seed=seed)
        agree += nominal_agreement("item reliable (both reasons support)",
                                   [(iid, who, "yes" if all(qa.get(s) == "yes" for s, _l, _t in SIDES) else "no")
                                    for (iid, who), qa in given.items()
                                    if iid not in legacy and all(s in qa for s, _l, _t in SIDES)],
                                   ("yes", "no"), seed=seed)
        text = _("AccR per item (factual + counterfactual claim): an item is reliable when the reasons of both its "
                 "responses support their verdicts (SDAK §4.2.2); AccR = reliable items / items checked, an item "
                 "reliable by the majority of the clinicians who checked both its claims (ties left out and counted), "
                 "with a Wilson 95% CI. Over ratings: every clinician's judgement of an item counts. Claims without "
                 "their twin are left out and counted.")
        if legacy:
            text += " " + _("{n} single-claim items of this older campaign are not counted in AccR per item.").format(
                n=len(legacy))
        # (titles and texts in the reader's language; the tables' names stay English, marked N_(): the pages show
        # them with _())
        return [Section(_("Accuracy Reliability per model"), text, {N_("AccR"): rows}),
                Section(_("Agreement among clinicians"),
                        _("Whether the clinicians agree on the same claims and items."), {N_("agreement"): agree})]
