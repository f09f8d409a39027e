"""Build the demo database: import, score and grade the demo data, then add accounts and campaigns.

DEMO DATA -- NOT CLINICAL ADVICE. Everything goes through the same import, scoring and grading
path as a user's data (``medeval.demo.generate`` writes the files); the simulated clinicians'
answers of the task campaigns come from ``medeval.demo.tasks``, the simulated clinicians' grades of two
tier-grading campaigns and the threshold set calibrated on them from ``medeval.demo.clinicians``.
"""

from __future__ import annotations

from pathlib import Path

from medeval.accounts.policy import demo_actor
from medeval.demo.clinicians import add_simulated_clinicians
from medeval.demo.generate import DEMO_SEED, write_demo_files
from medeval.demo.tasks import add_demo_tasks

# Demo accounts (username, password, role): printed in the README; created only by `medeval demo`.
DEMO_ACCOUNTS: tuple[tuple[str, str, str], ...] = (
    ("admin", "demo-admin-pass", "admin"),
    ("researcher", "demo-researcher-pass", "researcher"),
    ("doctor1", "demo-doctor-pass", "annotator"),
    ("doctor2", "demo-doctor-pass", "annotator"),
    ("doctor3", "demo-doctor-pass", "annotator"),
    ("senior1", "demo-senior-pass", "adjudicator"),  # adjudication (issue 15): medeval.demo.adjudications
)
# Each demo account's interface language: the clinicians read Chinese, the researcher English (papers are written
# in English), so a first start shows both; the admin gets MEDEVAL_LANGUAGE's (zh-CN unless set).
DEMO_LANGUAGES = {"doctor1": "zh-CN", "doctor2": "zh-CN", "doctor3": "zh-CN", "senior1": "zh-CN",
                  "researcher": "en"}
DEMO_CAMPAIGN = "Demo calibration round"


def add_demo_accounts_and_campaign(db) -> int:
    """The demo accounts and a small bucket-grading campaign for the three demo doctors; returns its id.

    Idempotent: existing accounts are left alone and the campaign is created once.
    """
    from medeval.accounts import auth
    from medeval.annotation import campaigns as cp

    actor = demo_actor()
    for username, password, role in DEMO_ACCOUNTS:
        if not db.conn.execute("SELECT 1 FROM users WHERE username = ?", (username,)).fetchone():
            auth.add_user(db, username, password, role, actor=actor, language=DEMO_LANGUAGES.get(username))
    row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (DEMO_CAMPAIGN,)).fetchone()
    if row:
        return row[0]
    doctors = [u for u, _, r in DEMO_ACCOUNTS if r == "annotator"]
    cfg = cp.BucketConfig(metrics=("bleu1", "rouge1", "cosine"), per_interval=1, k=3, seed=DEMO_SEED)
    return cp.create_bucket_campaign(db, DEMO_CAMPAIGN, cfg, doctors, actor=actor)


def bilingual(zh: str, en: str) -> str:
    """One guideline text for doctors who read Chinese and for those who read English: the Chinese first, then the
    English after a rule (a campaign's guidelines are one text, whatever each reader's interface language)."""
    return f"{zh.strip()}\n\n---\n\n{en.strip()}"


def add_demo_guidelines(db) -> dict:
    """The demo's guidelines (``demo/data/guidelines.json``) on every demo campaign; returns {campaign id: version}.

    Tier-grading campaigns get MedDisKEval's tier definitions with two worked examples per aspect type (each
    example's reason in Chinese, then in English), each task campaign a short text of its own. Every text is the
    Chinese (the file's ``zh``) first, then the English (:func:`bilingual`): the demo's clinicians read Chinese.
    Idempotent: the same text again adds no version.
    """
    import json
    from importlib import resources

    from medeval.annotation import guidelines as gl
    from medeval.demo.clinicians import CALIBRATION_CAMPAIGN, VALIDATION_CAMPAIGN
    from medeval.demo.tasks import CAMPAIGNS

    actor = demo_actor()
    data = json.loads(resources.files("medeval.demo").joinpath("data", "guidelines.json").read_text("utf-8"))
    zh = data["zh"]
    grading = bilingual(zh["grading"], data["grading"]["text"])
    wanted = [(name, grading, data["grading"]["examples"])
              for name in (DEMO_CAMPAIGN, VALIDATION_CAMPAIGN, CALIBRATION_CAMPAIGN)]
    wanted += [(name, bilingual(zh["tasks"][kind], data["tasks"][kind]), []) for name, kind, *_ in CAMPAIGNS]
    out = {}
    for name, text, examples in wanted:
        row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (name,)).fetchone()
        if row:
            out[row[0]] = gl.set_guidelines(db, row[0], text, examples=examples, actor=actor)
    return out


def build_demo(db, folder: str | Path, *, embedding_model: str | None = None, device: str | None = None,
               progress=None, accounts: bool = True) -> dict:
    """Import, score and grade the demo data into ``db``; returns a summary.

    The cosine cut-offs of Table 12 were calibrated for M3E; the demo adopts them,
    marked provisional, for the configured embedding model so every metric is graded
    (``threshold_version``; ``embedding_model`` and ``device`` are passed to
    :func:`medeval.engine.scoring.score_db`, default: their settings). With ``accounts`` (the default) it
    also adds the demo accounts and the demo campaign, the demo task campaigns with simulated answers
    (:func:`medeval.demo.tasks.add_demo_tasks`) and the simulated clinicians with their two graded
    campaigns and the threshold set calibrated on them, which becomes the active set
    (:func:`medeval.demo.clinicians.add_simulated_clinicians`, summary ``clinicians``), and the guidelines
    of every demo campaign (:func:`add_demo_guidelines`, summary ``guidelines``), and gold items on the demo
    AccR campaign (:func:`medeval.demo.task_gold_demo.add_demo_task_gold`, summary ``task_gold``).
    Building again adds nothing and keeps the active set if it is one for this embedding model.
    """
    from medeval.engine import thresholds as th
    from medeval.engine.importer import import_files
    from medeval.engine.scoring import score_db

    actor = demo_actor()
    paths = write_demo_files(folder)
    summary = import_files(db, kb=paths["kb"], models=paths["models"], responses=paths["responses"])
    s = score_db(db, embedding_model=embedding_model, device=device, progress=progress)
    sets = [t for t in th.list_sets(db) if t.embedding_model == s.embedding_model]
    adopted = [t for t in sets if t.provenance.get("adopted_from_version") == 1]
    if adopted or sets:  # the demo's adopted set, or Table 12 itself when the model is the paper's
        version = (adopted or sets)[0].version
    else:
        version = th.adopt(db, 1, s.embedding_model, created_by="medeval demo")
    current = next((t for t in sets if t.active), None)  # e.g. the set calibrated on the simulated clinicians
    th.activate(db, current.version if current else version, actor=actor)
    campaign = add_demo_accounts_and_campaign(db) if accounts else None
    demo_tasks = None
    if accounts:  # the task campaigns (cases, judges, fact-check reasons) with doctor2/3's simulated answers
        demo_tasks = add_demo_tasks(db)
    clinicians = None
    if accounts:  # after the tasks: the newest campaigns; the active-rounds campaign (issue 15) before the
        from medeval.demo.active_demo import add_active_demo  # calibration campaign, which the pages open first

        clinicians = add_simulated_clinicians(db, before_calibration=add_active_demo)
        clinicians["active_rounds"] = clinicians.pop("before_calibration")
    # adjudication (issue 15): senior1 settles a few of the simulated clinicians' disagreements
    if accounts:
        from medeval.demo.adjudications import add_demo_adjudications

        clinicians["adjudications"] = add_demo_adjudications(db)
    # gold items (issue 15): doctor1-3's qualification round, the simulated clinicians' hidden gold answers
    if accounts:
        from medeval.demo.gold_demo import add_demo_gold

        clinicians["gold"] = add_demo_gold(db, campaign)
    task_gold = None
    if accounts:  # gold items (issue 15) on the demo AccR campaign, doctor2/3's hidden gold answers
        from medeval.demo.task_gold_demo import add_demo_task_gold

        task_gold = add_demo_task_gold(db)
    guidelines = add_demo_guidelines(db) if accounts else None  # on every demo campaign
    return {"import": summary.lines(), "scores_added": s.scores_added, "threshold_version": version,
            "embedding_model": s.embedding_model, "campaign": campaign, "tasks": demo_tasks,
            "clinicians": clinicians, "guidelines": guidelines, "task_gold": task_gold}
