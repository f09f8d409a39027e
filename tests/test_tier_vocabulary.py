"""One tier vocabulary (issue 22): the names in every export and in the audit log, the numeric code documented
once (README "Tier codes": 0 = Completely Wrong, 1 = Partially Correct, 2 = Basically Correct)."""

import csv
import io
import json
from pathlib import Path

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports.tier_report import build_report, render

PW = "correct horse battery"
README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_names_are_one_table():
    assert auth.TIER_WORDS == th.TIERS == {0: "Completely Wrong", 1: "Partially Correct", 2: "Basically Correct"}


def test_the_readme_documents_the_codes_once():
    text = README.read_text(encoding="utf-8")
    assert text.count("**Tier codes.**") == 1
    assert "0 = Completely Wrong,\n1 = Partially Correct, 2 = Basically Correct" in text


def test_grades_csv_and_audit_log_name_the_tiers(db, small_files):
    import_files(db, **small_files)
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    res = auth.add_user(db, "res", PW, "researcher")
    doc = auth.add_user(db, "doc", PW, "annotator")
    cid = cp.create_random_campaign(db, "names", 2, ["doc"], k=1, seed=0, actor=res)
    item = cp.next_item(db, doc, cid)
    cp.submit_grade(db, doc, item, tier=0, client_token="a")
    cp.submit_grade(db, doc, item, tier=2, client_token="b")  # a change: audited with both tiers named
    rows = list(csv.DictReader(io.StringIO(cp.grades_csv(cp.current_grades(db, cid, actor=res)))))
    assert [(r["tier"], r["tier_name"]) for r in rows if r["item"] == str(item)] == [("2", "Basically Correct")]
    change = [json.loads(r["detail"]) for r in auth.audit_rows(db) if r["action"] == "annotation.change"]
    assert change == [{"from": 0, "to": 2, "flagged": False, "from_name": "Completely Wrong",
                       "to_name": "Basically Correct"}]
    # a skip has no tier and no name
    cp.submit_grade(db, doc, item, tier=None, skipped=True, client_token="c")
    last = [json.loads(r["detail"]) for r in auth.audit_rows(db) if r["action"] == "annotation.change"][-1]
    assert last["from"] == 2 and last["from_name"] == "Basically Correct" and last["to"] == "skipped"
    assert "to_name" not in last
    skipped = [r for r in csv.DictReader(io.StringIO(cp.grades_csv(cp.current_grades(db, cid, actor=res))))
               if r["item"] == str(item)]
    assert skipped[0]["tier"] == "" and skipped[0]["tier_name"] == ""


def test_audit_names_only_tier_fields_of_tier_actions(db):
    auth.audit(db, "x", "adjudication.record", "7", {"tier": 1, "from": None})
    auth.audit(db, "x", "gold.mark", "campaign:1", {"gold": 2, "tier": 0})
    auth.audit(db, "x", "campaign.create", "1", {"tier": 1})  # not a tier action: untouched
    details = [json.loads(r["detail"]) for r in auth.audit_rows(db)]
    assert details[-3] == {"tier": 1, "from": None, "tier_name": "Partially Correct"}
    assert details[-2] == {"gold": 2, "tier": 0, "tier_name": "Completely Wrong"}
    assert details[-1] == {"tier": 1}


def test_the_markdown_report_gives_the_legend_before_cw_pc_bc(db, small_files):
    import_files(db, **small_files)
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    th.grade_db(db)
    md = render(build_report(db), "md")
    legend = md.index("CW, PC, BC: the shares of Completely Wrong, Partially Correct and Basically Correct")
    assert legend < md.index("| CW | PC | BC |")


def test_the_agreement_report_names_each_annotators_tier():
    from medeval.reports.agreement_report import disagreement_rows

    s = {"disagreements": [{"item": 3, "range": 2, "sd": 0.9, "tiers": {"ann_a": 0, "ann_b": 2}}]}
    assert disagreement_rows(s) == [{"item": 3, "range": 2, "sd": 0.9,
                                     "tiers": "ann_a: Completely Wrong; ann_b: Basically Correct"}]
