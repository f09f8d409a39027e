"""Demo task campaigns: clinical cases rated with a judge, judges compared, fact-check reasons checked.

DEMO DATA -- NOT CLINICAL ADVICE. ``data/cases_demo*.json(l)`` and
``data/factcheck_demo_models.jsonl`` are the project's own writing: five clinical
cases in the CMB-Clin format (12 questions), the answers of three fictional models of
clearly different quality (``DemoGPT-L`` good, ``DemoMed-7B`` mediocre, ``DemoBase-7B``
weak, with errors), the assessments of two fictional judges, both in Chinese and of similar
length so that the blind comparison cannot tell them apart by language or length
(``DemoJudge-A`` careful; ``DemoJudge-B`` lenient and mixing up the responses on three
questions: :data:`MISATTRIBUTED`), and the fact-check answers of the same three models
on 12 atomic items (correct answers with good reasons, correct verdicts with a bad reason
-- :data:`BAD_REASONS` --, sycophancy, safety, an inverted item and NotFollow). The AccR
campaign checks whole knowledge items (factual + counterfactual claim, a question each):
:data:`ACCR_PER_MODEL` of the items each model got right.

:func:`add_demo_tasks` imports them through the normal import path, creates one campaign
per task type for the three demo doctors and then fills in seeded, plausible answers of
``doctor2`` and ``doctor3`` (``doctor3`` leaves a few items open; their rubric ratings are
centred on :data:`TRUE_QUALITY`, not on the judge's scores) so that every results page has
something to show on first start. ``doctor1``'s share is left untouched for a newcomer
to try.
"""

from __future__ import annotations

import json
import zlib
from contextlib import ExitStack
from importlib import resources

import numpy as np

from medeval.accounts.auth import get_user
from medeval.accounts.policy import demo_actor
from medeval.annotation import cases as cs
from medeval.annotation import tasks
from medeval.annotation.tasks import state
from medeval.annotation.tasks.rubric import response_of
from medeval.core.errors import MedevalError
from medeval.demo.generate import DEMO_SEED

CASES_DATASET = "Demo clinical cases"
FACTCHECK_DATASET = "Demo fact-check"
CASES_FILES = {"cases": "cases_demo.json", "responses": "cases_demo_responses.jsonl",
               "judgements": "cases_demo_judgements.jsonl"}
FACTCHECK_FILE = "factcheck_demo_models.jsonl"

RUBRIC_CAMPAIGN = "Demo: rate responses and the judge"
PREFERENCE_CAMPAIGN = "Demo: which judge is better?"
ACCR_CAMPAIGN = "Demo: do the reasons hold?"
RATED_JUDGE = "DemoJudge-A"
DOCTORS = ("doctor1", "doctor2", "doctor3")
SIMULATED = ("doctor2", "doctor3")  # doctor1's items stay open for a newcomer
ACCR_PER_MODEL = 5  # knowledge items (factual + counterfactual claim) per model; DemoBase-7B got 6 right

# (name, task type, k, config, items doctor3 leaves open)
CAMPAIGNS = (
    (RUBRIC_CAMPAIGN, "rubric", 2, {"dataset": CASES_DATASET, "rubric": "automedeval", "judge": RATED_JUDGE}, 2),
    (PREFERENCE_CAMPAIGN, "preference", 3, {"dataset": CASES_DATASET, "compare": "judges"}, 2),
    (ACCR_CAMPAIGN, "accr", 3, {"dataset": FACTCHECK_DATASET, "per_model": ACCR_PER_MODEL}, 3),
)

# Questions (case, position) on which DemoJudge-B attributes a response's content to another response.
MISATTRIBUTED = frozenset({("demo-c1", 3), ("demo-c3", 2), ("demo-c5", 1)})
# Fact-check answers (model, item, label) with the right verdict but a reason that does not support it.
BAD_REASONS = frozenset({("DemoGPT-L", "fc-09", "refute"), ("DemoMed-7B", "fc-03", "support"),
                         ("DemoMed-7B", "fc-05", "refute"), ("DemoBase-7B", "fc-04", "refute"),
                         ("DemoBase-7B", "fc-08", "support"), ("DemoBase-7B", "fc-10", "support")})

# What the simulated clinicians think each response is worth (1-5), per question (case, position) and model:
# the centre of their rubric ratings -- not DemoJudge-A's scores, or the judge-vs-clinician figures would be
# flatteringly perfect. They agree with the judge on most pairs of responses, but they rate the mediocre model's
# short, correct answers as good as or better than the good model's thorough ones (c2/2, c3/1, c4/1), and where
# the mediocre and the weak model both answer poorly they do not always share the judge's view of which is worse
# (ties: c1/2, c1/3, c4/2, c4/3; the other way round: c3/2, where they find a large subcutaneous insulin dose
# aimed at a normal glucose the more dangerous plan, and c5/2). Ordered as the judge orders them on 27 of the
# 36 pairs (AutoMedEval's judge: 74.61% Accuracy_2-tuple). A fraction is a coin per rating: 3.5 is 3 or 4 with
# even odds. Mean per model: good 4.58 > mediocre 2.96 > weak 1.88.
_G, _M, _B = "DemoGPT-L", "DemoMed-7B", "DemoBase-7B"
TRUE_QUALITY = {
    ("demo-c1", 1): {_G: 5, _M: 3.5, _B: 1.5},
    ("demo-c1", 2): {_G: 4.5, _M: 2, _B: 2},
    ("demo-c1", 3): {_G: 4.5, _M: 2, _B: 2},
    ("demo-c2", 1): {_G: 5, _M: 3.5, _B: 1.5},
    ("demo-c2", 2): {_G: 4, _M: 4.5, _B: 1.5},
    ("demo-c3", 1): {_G: 4.5, _M: 4.5, _B: 1},
    ("demo-c3", 2): {_G: 4.5, _M: 1.5, _B: 3},
    ("demo-c4", 1): {_G: 4, _M: 4.5, _B: 1.5},
    ("demo-c4", 2): {_G: 4.5, _M: 2.5, _B: 2.5},
    ("demo-c4", 3): {_G: 5, _M: 2, _B: 2},
    ("demo-c5", 1): {_G: 5, _M: 3, _B: 1.5},
    ("demo-c5", 2): {_G: 4.5, _M: 2, _B: 2.5},
}

# how a simulated doctor strays from the true quality: P(-1), P(0), P(+1) per rating (doctor3 a little severe),
# and per response, for all its criteria at once (the doctor's overall impression of it); with these the two
# doctors agree about as well as AutoMedEval's five (ICC 0.712)
_NOISE = {"doctor2": (0.2, 0.6, 0.2), "doctor3": (0.3, 0.55, 0.15)}
_IMPRESSION = (0.25, 0.5, 0.25)


def _import(db) -> dict:
    actor = demo_actor()
    base = resources.files("medeval.demo").joinpath("data")
    with ExitStack() as stack:
        paths = {k: stack.enter_context(resources.as_file(base.joinpath(v))) for k, v in CASES_FILES.items()}
        fc = stack.enter_context(resources.as_file(base.joinpath(FACTCHECK_FILE)))
        return {CASES_DATASET: cs.import_cases(db, CASES_DATASET, **paths, actor=actor),
                FACTCHECK_DATASET: cs.import_fact_claims(db, FACTCHECK_DATASET, fc, actor=actor)}


def _rng(username: str, source: str, question: str) -> np.random.Generator:
    """One stream per (doctor, item, question): the same answer whatever was answered before."""
    return np.random.default_rng([DEMO_SEED, zlib.crc32(f"{username}|{source}|{question}".encode())])


def _pick(kind: str, who: str, source: str, payload: dict, layout: dict, question: str,
          rng: np.random.Generator) -> str:
    """A plausible answer of a simulated doctor."""
    if kind == "rubric":
        if question.startswith("judge:"):  # part 2: DemoJudge-A's assessments are good
            return str(rng.choice([3, 4, 5], p=[0.1, 0.4, 0.5]))
        crit = question.split(":", 1)[1]
        model = response_of(payload, layout, question)["model"]
        true = TRUE_QUALITY[(payload["case"], int(payload["position"]))][model]
        base = int(true) + int(rng.random() < true - int(true))
        # the doctor's overall impression of the response moves all its criteria together
        base += _rng(who, source, f"impression:{model}").choice([-1, 0, 1], p=_IMPRESSION)
        if crit == "fluency":  # weak answers are wrong, not badly written
            base = max(base, 3)
        return str(int(np.clip(base + rng.choice([-1, 0, 1], p=_NOISE[who]), 1, 5)))
    if kind == "preference":
        left = payload[layout["left"]]["source"]
        mixed_up = (payload["case"], int(source.split("/")[-2])) in MISATTRIBUTED  # source: .../case/position/a|b
        if question == "reference":
            p = (0.9, 0.1, 0.0) if mixed_up else (0.45, 0.4, 0.15)
        elif question == "knowledge":
            p = (0.6, 0.25, 0.15)
        else:  # fluency: both write well
            p = (0.35, 0.4, 0.25)
        choice = rng.choice(["A", "tie", "B"], p=p)
        if choice == "tie":
            return "tie"
        return "left" if (left == RATED_JUDGE) == (choice == "A") else "right"
    if kind == "accr":  # one question per claim of the item: "factual" (label support), "counterfactual" (refute)
        label = {"factual": "support", "counterfactual": "refute"}.get(question, payload.get("label"))
        bad = (payload["model"], payload["item"], label) in BAD_REASONS
        return "no" if rng.random() < (0.85 if bad else 0.07) else "yes"
    raise MedevalError(f"no simulated answers for task type {kind!r}")


def _simulate(db, campaign_id: int, username: str, leave_open: int) -> None:
    """Answer the doctor's items in their own order, leaving ``leave_open`` items unfinished (idempotent)."""
    user = get_user(db, username)
    kind = tasks.campaign(db, campaign_id)["kind"]
    if (pending := tasks.needs_acknowledgement(db, user, campaign_id)) is not None:
        tasks.acknowledge(db, user, campaign_id, pending)  # the guidelines first, like everyone
    shown = db.conn.execute("SELECT max(version) FROM campaign_guidelines WHERE campaign_id = ?",
                            (campaign_id,)).fetchone()[0]

    def answer(view) -> None:
        q = view.pending
        source, payload, layout = _item(db, view.item_id, user.id)
        value = _pick(kind, username, source, payload, layout, q.id, _rng(username, source, q.id))
        tasks.submit_answer(db, user, view.item_id, q.id, value, client_token=f"demo:{view.item_id}:{q.id}",
                           guideline_version=shown)

    while True:
        s = tasks.task_state(db, user, campaign_id)
        p = state.progress(db, user.id, campaign_id)  # real items only (the screen's counts hold hidden gold too)
        if s.item is None or not s.item.ref.startswith("i:") or p["done"] >= p["total"] - leave_open:
            break  # (a hidden gold item on screen: medeval.demo.task_gold_demo answers those)
        answer(s.item)
    s = tasks.task_state(db, user, campaign_id)
    if leave_open and kind == "rubric" and s.item is not None and s.item.ref.startswith("i:") and not s.item.answers:
        # the next item half done: responses rated, the judge's assessment not yet (an item already begun,
        # e.g. by someone signed in as this doctor, is left alone)
        first = s.item.item_id
        while s.item is not None and s.item.item_id == first and s.item.pending and s.item.pending.part == 1:
            answer(s.item)
            s = tasks.task_state(db, user, campaign_id)


def _item(db, item_id: int, user_id: int) -> tuple[str, dict, dict]:
    """Source, payload and this doctor's layout of an item (the simulation knows what the screen hides)."""
    source, payload, layout = db.conn.execute(
        "SELECT ti.source, ti.payload, a.layout FROM task_items ti JOIN task_assignments a ON a.item_id = ti.id "
        "WHERE ti.id = ? AND a.user_id = ?", (item_id, user_id)).fetchone()
    return source, json.loads(payload), json.loads(layout)


def add_demo_tasks(db) -> dict:
    """Import the demo cases and fact-check answers, create the three demo task campaigns, simulate doctor2/3.

    Needs the demo accounts (:func:`medeval.demo.add_demo_accounts_and_campaign`). Idempotent:
    a second call adds nothing. Returns ``{"datasets": {name: import counts}, "campaigns":
    {name: id}, "answers_added": n}``.
    """
    actor = demo_actor()
    missing = [u for u in DOCTORS
               if not db.conn.execute("SELECT 1 FROM users WHERE username = ?", (u,)).fetchone()]
    if missing:
        raise MedevalError(f"the demo accounts {', '.join(missing)} do not exist; create the demo accounts first")
    before = db.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0]
    imported = _import(db)
    ids = {}
    for name, kind, k, config, leave in CAMPAIGNS:
        row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (name,)).fetchone()
        ids[name] = row[0] if row else tasks.create_campaign(db, kind, name, list(DOCTORS), k=k, seed=DEMO_SEED,
                                                             config=dict(config), actor=actor)
        for who in SIMULATED:
            _simulate(db, ids[name], who, leave if who == "doctor3" else 0)
    after = db.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0]
    return {"datasets": imported, "campaigns": ids, "answers_added": after - before}
