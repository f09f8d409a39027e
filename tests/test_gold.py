"""Gold items and qualification: marking rules, the CSV import, settings, the qualification gate, hidden gold
(share, determinism, once each, kept out of the grades, statistics unchanged), gold accuracy, roles, the CLI."""

import io

import re

import pytest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation import gold
from medeval.annotation.screen_keys import screen_key
from medeval.annotation.gold import gold_accuracy, methods_sentence
from medeval.core.errors import InputError, MedevalError, PermissionDenied
from medeval.engine.importer import import_files
from tests.conftest import db_dump, write

PW = "correct horse battery"
ASPECTS = ("Primary Symptoms", "Medications", "Physical Examinations", "Severity Level")
REAL_N = 20


def import_scored(db, tmp_path, diseases: int) -> None:
    """``diseases`` x 4 aspects x 2 models responses, each with a ROUGE-1 score (its id's last digit / 10)."""
    kb = ["disease,aspect,reference"] + [f"病{d},{a},参考{d}{i}" for d in range(diseases)
                                         for i, a in enumerate(ASPECTS)]
    resp = ["model,disease,aspect,response"] + [f"M{m},病{d},{a},回答{m}{d}{i}" for m in "AB"
                                                for d in range(diseases) for i, a in enumerate(ASPECTS)]
    import_files(db, kb=write(tmp_path / "kb.csv", "\n".join(kb) + "\n"),
                 responses=write(tmp_path / "r.csv", "\n".join(resp) + "\n"),
                 models=write(tmp_path / "m.csv", "model,backbone,kind\nMA,,general\nMB,MA,medical\n"))
    with db.conn:
        db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'rouge1', 'rouge1', ?)",
                            [(r, (r % 10) / 10) for (r,) in db.conn.execute("SELECT id FROM responses")])


@pytest.fixture
def gdb(db, tmp_path):
    """96 scored responses (12 diseases x 4 aspects x 2 models); a random campaign of 20 for aa and bb (k=2)."""
    import_scored(db, tmp_path, 12)
    for name, role in (("aa", "annotator"), ("bb", "annotator"), ("res", "researcher")):
        auth.add_user(db, name, PW, role)
    cid = cp.create_random_campaign(db, "g", REAL_N, ["aa", "bb"], k=2, seed=3, actor=None)
    return db, cid


def users(db):
    return auth.get_user(db, "aa"), auth.get_user(db, "bb"), auth.get_user(db, "res")


def free_responses(db, cid, n):
    """``n`` scored responses that are not real items of the campaign."""
    return [r for (r,) in db.conn.execute("SELECT id FROM responses WHERE id NOT IN (SELECT response_id FROM "
                                          "campaign_items WHERE campaign_id = ?) ORDER BY id LIMIT ?", (cid, n))]


def add_gold(db, cid, n, tier=1):
    res = users(db)[2]
    return [gold.mark_gold(db, cid, r, tier, f"reason {r}", actor=res) for r in free_responses(db, cid, n)]


def answer_state(db, u, cid, tier):
    """Answer what grading_state puts on screen with ``tier``; returns the state answered."""
    s = cp.grading_state(db, u, cid)
    cp.submit_answer(db, u, cid, s.item.ref, tier=tier, client_token=f"{s.item.ref}:{tier}")
    return s


# ---------------------------------------------------------------- marking


def test_marking_rules_and_refusals(gdb):
    db, cid = gdb
    aa, _bb, res = users(db)
    real = db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ? LIMIT 1", (cid,)).fetchone()[0]
    free = free_responses(db, cid, 3)
    gid = gold.mark_gold(db, cid, free[0], "BC", "the key points are all there", actor=res)
    assert gold.gold_item(db, gid).expected_tier == 2
    with pytest.raises(MedevalError, match="real item of campaign"):
        gold.mark_gold(db, cid, real, 1, "r", actor=res)
    with pytest.raises(MedevalError, match="already gold item"):
        gold.mark_gold(db, cid, free[0], 1, "r", actor=res)
    with pytest.raises(MedevalError, match="not a tier"):
        gold.mark_gold(db, cid, free[1], "great", "r", actor=res)
    with pytest.raises(MedevalError, match="reason"):
        gold.mark_gold(db, cid, free[1], 1, "  ", actor=res)
    with pytest.raises(PermissionDenied):
        gold.mark_gold(db, cid, free[1], 1, "r", actor=aa)
    with db.conn:
        db.conn.execute("DELETE FROM scores WHERE response_id = ?", (free[2],))
    with pytest.raises(MedevalError, match="no scores"):
        gold.mark_gold(db, cid, free[2], 1, "r", actor=res)
    with db.conn:
        db.conn.execute("INSERT INTO campaigns (name, kind, config, report, created_by, created_at) VALUES "
                        "('t', 'rubric', '{}', '{}', 'x', 'now')")
    tid = db.conn.execute("SELECT id FROM campaigns WHERE name = 't'").fetchone()[0]
    with pytest.raises(MedevalError, match=r"campaign \d+ \(rubric\) takes no gold items"):
        gold.mark_gold(db, tid, free[1], 1, "r", actor=res)  # (a task campaign without items: not even task gold)
    with db.conn:
        db.conn.execute("INSERT INTO task_items (campaign_id, source, payload) VALUES (?, 's', '{}')", (tid,))
    with pytest.raises(MedevalError, match="is a task campaign: its gold items are task items"):
        gold.mark_gold(db, tid, free[1], 1, "r", actor=res)
    gold.unmark_gold(db, cid, gid, actor=res)
    assert gold.active_gold_ids(db, cid) == [] and gold.list_gold(db, cid, actor=res)[0].retired
    with pytest.raises(Exception, match="append-only"), db.conn:
        db.conn.execute("UPDATE gold_items SET expected_tier = 0")


GOOD_ROW = "病11,Medications,MB,PC,half of the drugs\n"


@pytest.mark.parametrize("text,message", [
    ("disease,aspect,model,reason\n病11,Medications,MB,r\n", "'expected_tier' is missing"),
    ("disease,aspect,model,expected_tier,reason\n" + GOOD_ROW + "病11,Medications,MX,1,r\n", "row 3: no response"),
    ("disease,aspect,model,expected_tier,reason\n" + GOOD_ROW + GOOD_ROW, "row 3: .* is already on row 2"),
    ("disease,aspect,model,expected_tier,reason\n" + GOOD_ROW + "病10,Medications,MB,4,r\n", "row 3: expected_tier"),
    ("disease,aspect,model,expected_tier,reason\n" + GOOD_ROW + "病10,Medications,MB,1,\n", "row 3: the reason"),
])
def test_csv_import_errors_name_the_row_and_store_nothing(gdb, tmp_path, db_path, text, message):
    db, cid = gdb
    before = db_dump(db_path)
    with pytest.raises(InputError, match=message):
        gold.import_gold_csv(db, cid, write(tmp_path / "gold.csv", text), actor=users(db)[2])
    assert db_dump(db_path) == before


def test_csv_import_refuses_non_utf8_and_real_items_then_imports(gdb, tmp_path, db_path):
    db, cid = gdb
    res = users(db)[2]
    before = db_dump(db_path)
    bad = tmp_path / "gb.csv"
    bad.write_bytes(("disease,aspect,model,expected_tier,reason\n" + GOOD_ROW).encode("gb18030"))
    with pytest.raises(InputError, match="not UTF-8"):
        gold.import_gold_csv(db, cid, bad, actor=res)
    d, a, m = db.conn.execute("SELECT k.disease, k.aspect, mo.name FROM campaign_items ci JOIN responses r ON r.id = "
                              "ci.response_id JOIN kb_entries k ON k.id = r.kb_id JOIN models mo ON mo.id = r.model_id "
                              "WHERE ci.campaign_id = ? LIMIT 1", (cid,)).fetchone()
    real = write(tmp_path / "real.csv", f"disease,aspect,model,expected_tier,reason\n{GOOD_ROW}{d},{a},{m},1,r\n")
    with pytest.raises(InputError, match="row 3: .*real item"):
        gold.import_gold_csv(db, cid, real, actor=res)
    assert db_dump(db_path) == before
    good = write(tmp_path / "ok.csv", "disease,aspect,model,expected_tier,reason\n" + GOOD_ROW)
    if db.conn.execute("SELECT 1 FROM campaign_items ci JOIN responses r ON r.id = ci.response_id JOIN kb_entries k "
                       "ON k.id = r.kb_id JOIN models mo ON mo.id = r.model_id WHERE ci.campaign_id = ? AND "
                       "k.disease = '病11' AND k.aspect = 'Medications' AND mo.name = 'MB'", (cid,)).fetchone():
        pytest.skip("the seeded sample took that response")
    assert gold.import_gold_csv(db, cid, good, actor=res) == 1
    assert [g.expected_tier for g in gold.list_gold(db, cid, actor=res)] == [1]


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize("values,message", [
    ({"pass_mark": 1.5}, "pass_mark"), ({"hidden_share": 0.6}, "hidden_share"), ({"retries": -1}, "retries"),
    ({"qualification_items": 0}, "qualification_items"), ({"feedback": "maybe"}, "feedback"),
    ({"colour": 1}, "unknown gold setting"), ({"qualification_required": True}, "needs at least"),
])
def test_settings_are_validated_and_nothing_is_stored(gdb, values, message):
    db, cid = gdb
    with pytest.raises(MedevalError, match=message):
        gold.set_settings(db, cid, values, actor=users(db)[2])
    assert db.conn.execute("SELECT count(*) FROM gold_settings").fetchone()[0] == 0
    with pytest.raises(PermissionDenied):
        gold.set_settings(db, cid, {"feedback": True}, actor=users(db)[0])


def test_settings_keep_every_version(gdb):
    db, cid = gdb
    res = users(db)[2]
    gold.set_settings(db, cid, {"hidden_share": "0.1"}, actor=res)
    s = gold.set_settings(db, cid, {"feedback": "yes"}, actor=res)
    assert s["hidden_share"] == 0.1 and s["feedback"] is True
    assert db.conn.execute("SELECT count(*) FROM gold_settings WHERE campaign_id = ?", (cid,)).fetchone()[0] == 2


# ---------------------------------------------------------------- qualification


def qualify_setup(db, cid, retries=1, n_gold=8):
    add_gold(db, cid, n_gold, tier=1)
    gold.set_settings(db, cid, {"qualification_required": True, "qualification_items": 4, "pass_mark": 0.75,
                              "retries": retries}, actor=users(db)[2])


def test_no_real_item_before_the_qualification_is_passed(gdb):
    db, cid = gdb
    aa, _bb, _res = users(db)
    real_item = db.conn.execute("SELECT item_id FROM assignments WHERE user_id = ? LIMIT 1", (aa.id,)).fetchone()[0]
    qualify_setup(db, cid)
    with pytest.raises(cp.QualificationPending):
        cp.next_item(db, aa, cid)
    with pytest.raises(cp.QualificationPending):
        cp.submit_grade(db, aa, real_item, tier=1, client_token="x")
    s = cp.grading_state(db, aa, cid)
    assert s.phase == "qualification" and s.item is None and s.qualification.status == "not_started"
    assert cp.start_attempt(db, aa, cid) == 1
    for n in range(4):
        s = cp.grading_state(db, aa, cid)
        assert s.phase == "qualification" and s.item.ref.startswith("q:") and (s.done, s.total) == (n, 4)
        with pytest.raises(cp.QualificationPending):
            cp.next_item(db, aa, cid)
        cp.submit_answer(db, aa, cid, s.item.ref, tier=1, client_token=f"q{n}")
    s = cp.grading_state(db, aa, cid)
    assert s.phase == "items" and s.qualification.status == "passed" and s.item.ref == f"i:{s.item.item_id}"
    assert cp.next_item(db, aa, cid) == s.item.item_id
    assert db.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == 0  # gold answers: not grades


def test_fail_review_retry_pass(gdb):
    db, cid = gdb
    aa = users(db)[0]
    qualify_setup(db, cid, retries=1)
    cp.start_attempt(db, aa, cid)
    first = []
    for n in range(4):
        first.append(answer_state(db, aa, cid, 2 if n < 2 else 1).item)  # 2 of 4 as expected: 50% < 75%
    q = cp.qualification_state(db, aa, cid)
    assert q.status == "failed_retry" and q.results[0]["correct"] == 2 and not q.results[0]["passed"]
    with pytest.raises(cp.QualificationPending):
        cp.next_item(db, aa, cid)
    rows = gold.review(db, aa, cid)
    assert [r["expected"] for r in rows] == [1, 1, 1, 1] and [r["correct"] for r in rows] == [False, False, True, True]
    assert all(r["reason"].startswith("reason ") for r in rows)
    with pytest.raises(cp.StaleGrade):  # a qualification answer is final
        cp.submit_answer(db, aa, cid, f"q:{db.conn.execute('SELECT gold_id FROM gold_answers').fetchone()[0]}:1",
                         tier=1, client_token="again")
    assert cp.start_attempt(db, aa, cid) == 2
    second = [answer_state(db, aa, cid, 1).item for _ in range(4)]
    assert not {i.response for i in first} & {i.response for i in second}  # unseen gold items first
    assert cp.qualification_state(db, aa, cid).status == "passed"
    assert cp.next_item(db, aa, cid) is not None


def test_retries_exhausted(gdb):
    db, cid = gdb
    aa = users(db)[0]
    qualify_setup(db, cid, retries=0)
    cp.start_attempt(db, aa, cid)
    for _ in range(4):
        answer_state(db, aa, cid, 0)
    assert cp.qualification_state(db, aa, cid).status == "failed_final"
    with pytest.raises(MedevalError, match="no attempts left"):
        cp.start_attempt(db, aa, cid)
    with pytest.raises(cp.QualificationPending):
        cp.next_item(db, aa, cid)


# ---------------------------------------------------------------- hidden gold


def hidden_setup(db, cid, share=0.2, n_gold=10, feedback=False):
    gids = add_gold(db, cid, n_gold, tier=1)
    gold.set_settings(db, cid, {"hidden_share": share, "feedback": feedback}, actor=users(db)[2])
    return gids


def work_through(db, u, cid, tier_for_gold=1):
    """Answer every item the grading screen offers; returns the sequence of refs shown."""
    seen = []
    while (s := cp.grading_state(db, u, cid)).item is not None:
        seen.append(s.item.ref)
        cp.submit_answer(db, u, cid, s.item.ref, tier=tier_for_gold if s.item.ref.startswith("h:") else 2,
                         client_token=f"t{len(seen)}")
        assert len(seen) < 100
    return seen, s


def test_hidden_gold_share_once_each_and_out_of_the_grades(gdb):
    db, cid = gdb
    aa = users(db)[0]
    hidden_setup(db, cid, share=0.2)
    plan = gold.hidden_plan(db, aa, cid)
    assert plan == gold.hidden_plan(db, aa, cid)  # deterministic
    seen, end = work_through(db, aa, cid)
    golds = [r for r in seen if r.startswith("h:")]
    assert len(golds) == round(0.2 * REAL_N / 0.8) == 5 and len(set(golds)) == 5  # the share; each once
    assert [int(r[2:]) for r in golds] == plan[0]  # in the planned order
    assert [i for i, r in enumerate(seen) if r.startswith("h:")] == plan[1]  # at the planned positions
    assert (end.done, end.total) == (25, 25)
    gold_responses = {r for (r,) in db.conn.execute("SELECT response_id FROM gold_items")}
    graded = {r for (r,) in db.conn.execute("SELECT ci.response_id FROM grade_annotations g JOIN campaign_items ci "
                                            "ON ci.id = g.item_id")}
    assert len(graded) == REAL_N and not graded & gold_responses
    assert db.conn.execute("SELECT count(*) FROM gold_answers WHERE mode = 'hidden'").fetchone()[0] == 5


def test_hidden_gold_looks_like_a_real_item(gdb):
    db, cid = gdb
    aa, bb, _ = users(db)
    hidden_setup(db, cid, share=0.5)
    s = cp.grading_state(db, aa, cid)
    while not s.item.ref.startswith("h:"):
        cp.submit_answer(db, aa, cid, s.item.ref, tier=1, client_token=s.item.ref)
        s = cp.grading_state(db, aa, cid)
    mine = {i for (i,) in db.conn.execute("SELECT item_id FROM assignments WHERE user_id = ?", (aa.id,))}
    lo, hi = db.conn.execute("SELECT min(id), max(id) FROM campaign_items WHERE campaign_id = ?", (cid,)).fetchone()
    assert s.item.item_id not in mine and lo <= s.item.item_id <= hi + 10  # an id like any other, not a gold range
    assert type(s.item) is cp.BlindItem and s.item.response and s.item.reference  # the same fields
    gid = int(s.item.ref[2:])
    assert gold.display_id(db, aa, cid, gid) == s.item.item_id  # stable
    # what the screen's widgets carry (issue 23 §3): the same form for gold and real items, nothing of an id in it,
    # different for every annotator, the same on every rerun
    real = cp.blind_item(db, aa, sorted(mine)[0])
    assert re.fullmatch(r"k[0-9a-f]{12}", s.item.key) and re.fullmatch(r"k[0-9a-f]{12}", real.key)
    assert s.item.key == cp.grading_state(db, aa, cid).item.key
    assert screen_key(db, aa, s.item.ref) != screen_key(db, bb, s.item.ref)
    shared = db.conn.execute("SELECT a.item_id FROM assignments a JOIN assignments b ON a.item_id = b.item_id "
                             "WHERE a.user_id = ? AND b.user_id = ? LIMIT 1", (aa.id, bb.id)).fetchone()
    if shared:
        assert cp.blind_item(db, aa, shared[0]).key != cp.blind_item(db, bb, shared[0]).key
    recent = cp.recent_grades(db, aa, cid)
    assert all(re.fullmatch(r"k[0-9a-f]{12}", g.key) for g in recent) and len({g.key for g in recent}) == len(recent)
    assert gold.hidden_plan(db, aa, cid) != gold.hidden_plan(db, bb, cid)  # seeded per annotator


def test_hidden_gold_feedback_and_change_from_recent(gdb):
    db, cid = gdb
    aa = users(db)[0]
    hidden_setup(db, cid, share=0.5, feedback=True)
    s = cp.grading_state(db, aa, cid)
    while not s.item.ref.startswith("h:"):
        assert cp.submit_answer(db, aa, cid, s.item.ref, tier=1, client_token=s.item.ref)[1] is None
        s = cp.grading_state(db, aa, cid)
    aid, feedback = cp.submit_answer(db, aa, cid, s.item.ref, tier=0, client_token="g", expected_prior=None)
    assert feedback.startswith("The expected grade was PC · Partially Correct: reason ")
    assert cp.submit_answer(db, aa, cid, s.item.ref, tier=0, client_token="g", expected_prior=None)[0] == aid  # twice
    with pytest.raises(cp.StaleGrade):  # typed ahead onto a gold item already answered
        cp.submit_answer(db, aa, cid, s.item.ref, tier=2, client_token="h", expected_prior=None)
    recent = cp.grading_state(db, aa, cid).recent
    assert recent[0].ref == s.item.ref and recent[0].item_id == s.item.item_id and recent[0].tier == 0
    cp.submit_answer(db, aa, cid, s.item.ref, tier=1, client_token="c", expected_prior=aid)
    assert db.conn.execute("SELECT tier, supersedes FROM gold_answers ORDER BY id DESC LIMIT 1").fetchone() == (1, aid)


def test_gold_answers_change_no_statistic(gdb):
    from medeval.calibration.cutoffs import campaign_rows
    from medeval.reports.dashboard import campaign_agreement

    db, cid = gdb
    aa, bb, res = users(db)
    hidden_setup(db, cid, share=0.2)
    for u in (aa, bb):
        while (i := cp.next_item(db, u, cid)) is not None:  # the real items only
            cp.submit_grade(db, u, i, tier=(i + u.id) % 3, client_token=f"r{i}")
    before = (campaign_agreement(db, cid, actor=res, n_boot=50), campaign_rows(db, cid))
    for u in (aa, bb):
        work_through(db, u, cid, tier_for_gold=0)  # now the hidden gold items
    assert db.conn.execute("SELECT count(*) FROM gold_answers").fetchone()[0] == 10
    after = (campaign_agreement(db, cid, actor=res, n_boot=50), campaign_rows(db, cid))

    def stats(summary: dict) -> dict:  # all but the gold section itself and the time of computing
        return {k: v for k, v in summary.items() if k not in ("gold", "computed_at")}

    assert stats(after[0]) == stats(before[0]) and after[1] == before[1]
    assert after[0]["gold"]["annotators"][0]["hidden_answered"] == 5  # the gold section did see them


# ---------------------------------------------------------------- results


def test_gold_accuracy_on_a_hand_made_case(gdb):
    db, cid = gdb
    aa, bb, res = users(db)
    hidden_setup(db, cid, share=0.2)  # 5 hidden gold items each, expected tier 1
    gold.set_settings(db, cid, {"alert_threshold": 0.5}, actor=res)
    answers = {aa.id: iter([1, 1, 0, 2, 1]), bb.id: iter([1, 1, 1, 1, 1])}
    for u in (aa, bb):
        while (s := cp.grading_state(db, u, cid)).item is not None:
            gold_item = s.item.ref.startswith("h:")
            cp.submit_answer(db, u, cid, s.item.ref, tier=next(answers[u.id]) if gold_item else 2,
                             client_token=s.item.ref)
    r = gold_accuracy(db, cid, actor=res, block=2)
    a, b = r["annotators"]
    assert (a["annotator"], a["hidden_answered"], a["hidden_correct"], a["accuracy"]) == ("aa", 5, 3, 0.6)
    assert [(x["answers"], x["correct"]) for x in a["blocks"]] == [(2, 2), (2, 0), (1, 1)]
    assert a["latest_accuracy"] == 1.0 and not a["flagged"]
    assert b["accuracy"] == 1.0 and not b["flagged"]
    r = gold_accuracy(db, cid, actor=res, block=4)
    assert [x["accuracy"] for x in r["annotators"][0]["blocks"]] == [0.5, 1.0]
    gold.set_settings(db, cid, {"alert_threshold": 0.9}, actor=res)
    r = gold_accuracy(db, cid, actor=res, block=4)
    assert [x["flagged"] for x in r["annotators"]] == [False, False]
    r = gold_accuracy(db, cid, actor=res, block=2)
    assert [x["flagged"] for x in r["annotators"]] == [False, False]
    r = gold_accuracy(db, cid, actor=res, block=3)  # aa: [1,1,0] -> 2/3, then [2,1] -> 1/2 < 0.9
    assert [x["flagged"] for x in r["annotators"]] == [True, False]
    with pytest.raises(PermissionDenied):
        gold_accuracy(db, cid, actor=aa)
    with pytest.raises(PermissionDenied):
        gold.list_gold(db, cid, actor=aa)
    assert "count in no agreement statistic and no calibration" in methods_sentence(db, cid)


def test_the_agreement_summary_and_report_show_gold_accuracy_apart_from_the_statistics(gdb, tmp_path):
    from medeval.reports import agreement_report as rep
    from medeval.reports import dashboard as dash

    db, cid = gdb
    aa, bb, res = users(db)
    assert dash.campaign_agreement(db, cid, actor=res, n_boot=0)["gold"] is None  # no gold: no section
    hidden_setup(db, cid, share=0.2)
    answers = {aa.id: iter([1, 0, 0, 0, 0]), bb.id: iter([1, 1, 1, 1, 1])}
    for u in (aa, bb):
        while (st := cp.grading_state(db, u, cid)).item is not None:
            gold_item = st.item.ref.startswith("h:")
            cp.submit_answer(db, u, cid, st.item.ref, tier=next(answers[u.id]) if gold_item else 2,
                             client_token=st.item.ref)
    s = dash.campaign_agreement(db, cid, actor=res, n_boot=0)
    rows = {r["annotator"]: r for r in rep.gold_rows(s)}
    assert (rows["aa"]["hidden_correct"], rows["aa"]["accuracy"], rows["aa"]["flagged"]) == (1, 0.2, True)
    assert (rows["bb"]["hidden_correct"], rows["bb"]["accuracy"], rows["bb"]["flagged"]) == (5, 1.0, False)
    assert methods_sentence(db, cid) and methods_sentence(db, cid) in s["methods"]
    assert s["n_grades"] == db.conn.execute("SELECT count(*) FROM grade_annotations WHERE skipped = 0").fetchone()[0]
    html = rep.render_html(s)
    assert "<h2>Gold items</h2>" in html and "count in none of the statistics above" in html
    paths = rep.write_report(s, tmp_path / "r", pdf=False)
    assert paths["gold_csv"].read_text(encoding="utf-8").startswith("annotator,qualification")


@pytest.mark.slow  # AppTest runs the whole Agreement page
def test_the_agreement_page_shows_gold_accuracy_and_its_zip_holds_the_gold_table(gdb, db_path, monkeypatch):
    import zipfile

    from tests.test_leaderboard_report import deferred_downloads

    db, cid = gdb
    aa, bb, res = users(db)
    hidden_setup(db, cid, share=0.2)
    for u, gold_tier in ((aa, 0), (bb, 1)):
        work_through(db, u, cid, tier_for_gold=gold_tier)
    dl = deferred_downloads("app_pages/dashboard.py", db_path, "res", monkeypatch)
    names = zipfile.ZipFile(io.BytesIO(dl["Everything (zip: HTML, PDF, JSON, CSV)"]())).namelist()
    assert {"report.html", "summary.json", "gold.csv", "panel.csv"} <= set(names)
    assert "<h2>Gold items</h2>" in dl["Report (HTML)"]()


def test_qualification_attempts_in_the_results(gdb):
    db, cid = gdb
    aa, _bb, res = users(db)
    qualify_setup(db, cid)
    cp.start_attempt(db, aa, cid)
    for _ in range(4):
        answer_state(db, aa, cid, 0)
    r = {a["annotator"]: a for a in gold_accuracy(db, cid, actor=res)["annotators"]}
    assert r["aa"]["qualification"] == "failed_retry" and r["bb"]["qualification"] == "not_started"
    assert r["aa"]["attempts"][0]["correct"] == 0 and r["aa"]["attempts"][0]["complete"]


# ---------------------------------------------------------------- CLI


def test_cli_gold_commands(gdb, db_path, tmp_path):
    from click.testing import CliRunner

    from medeval.cli import main
    from tests.conftest import invoke

    db, cid = gdb
    free = free_responses(db, cid, 1)[0]
    out = invoke("gold", "add", "--db", db_path, "--campaign", cid, "--response", free, "--tier", "CW",
                 "--reason", "wrong drug").output
    assert "CW · Completely Wrong" in out
    assert "wrong drug" in invoke("gold", "list", "--db", db_path, "--campaign", cid).output
    assert "hidden_share = 0.1" in invoke("gold", "settings", "--db", db_path, "--campaign", cid,
                                          "--set", "hidden_share=0.1").output
    assert "aa\tqualification: not_required" in invoke("gold", "results", "--db", db_path, "--campaign", cid).output
    before = db_dump(db_path)
    for args in (("settings", "--set", "pass_mark=2"), ("add", "--response", free, "--tier", "1", "--reason", "x"),
                 ("import", str(write(tmp_path / "x.csv", "disease\nx\n")))):
        res = CliRunner().invoke(main, ["gold", args[0], "--db", str(db_path), "--campaign", str(cid),
                                        *map(str, args[1:])])
        assert res.exit_code == 1 and res.output.startswith("Error: ") and "Traceback" not in res.output
    assert db_dump(db_path) == before


# ---------------------------------------------------------------- pages (AppTest)


def _app(db, username):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state[TEST_TOKEN_KEY] = auth.create_session(db, auth.authenticate(db, username, PW))
    return at


def _grade_keys(at) -> list[str]:
    return [b.key for b in at.button if b.key and b.key.startswith("grade_")]


def _page_texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "text", "info", "success", "warning", "error")
                     for e in getattr(at, kind))


@pytest.mark.slow  # AppTest runs whole pages
def test_grade_page_qualification_fail_review_retry_pass(gdb):
    db, cid = gdb
    qualify_setup(db, cid, retries=1)
    at = _app(db, "aa").run()
    at.switch_page("app_pages/grade.py").run()
    assert not at.exception and not _grade_keys(at)  # the intro: no item yet
    assert "4 items" in _page_texts(at) and "75.0%" in _page_texts(at)  # one decimal, as every percentage
    at.button(key="qualification_start").click().run()
    for n in range(4):
        assert at.get("progress")[0].proto.text == f"Qualification item {n + 1} of 4"
        key = _grade_keys(at)[0]
        item = key.split("_")[1]  # the item's opaque screen key
        at.button(key=f"grade_{item}_0").click().run()  # all wrong (expected: 1)
        assert not at.exception
    assert any("not passed" in e.value for e in at.error)
    review = at.dataframe[0].value
    assert list(review["expected"]) == ["Partially Correct"] * 4 and all(review["why"].str.startswith("reason"))
    assert db.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == 0
    at.button(key="qualification_retry").click().run()
    for _ in range(4):
        at.button(key=f"grade_{_grade_keys(at)[0].split('_')[1]}_1").click().run()
    assert any("Qualification passed" in s.value for s in at.success)
    at.button(key="qualification_continue").click().run()
    assert at.get("progress")[0].proto.text.startswith("Item 1 of ")
    item = _grade_keys(at)[0].split("_")[1]
    aa = auth.get_user(db, "aa")
    assert item == cp.grading_state(db, aa, cid).item.key and cp.grading_state(db, aa, cid).item.ref.startswith("i:")


@pytest.mark.slow
def test_grade_page_hidden_gold_with_feedback(gdb):
    db, cid = gdb
    hidden_setup(db, cid, share=0.5, feedback=True)
    aa = auth.get_user(db, "aa")
    at = _app(db, "aa").run()
    at.switch_page("app_pages/grade.py").run()
    while not cp.grading_state(db, aa, cid).item.ref.startswith("h:"):
        at.button(key=_grade_keys(at)[0]).click().run()
    keys = sorted(b.key for b in at.button if b.key)
    item = _grade_keys(at)[0].split("_")[1]
    at.button(key=f"grade_{item}_2").click().run()
    assert not at.exception
    assert any("The expected grade was" in t.value for t in at.toast)  # hidden-gold feedback is a toast (issue 22)
    assert db.conn.execute("SELECT count(*) FROM gold_answers WHERE mode = 'hidden'").fetchone()[0] == 1
    nxt = _grade_keys(at)[0].split("_")[1]
    real_keys = sorted(k.replace(f"_{nxt}", f"_{item}") for b in at.button if (k := b.key))
    # the item's controls are named alike for gold and real items (the last answers and the sidebar's start-here
    # panel change with what was answered before, whatever the item)
    def item_keys(ks):
        return [k for k in ks if not k.startswith(("reopen_", "recent_", "start_here_", "undo_"))]

    assert item_keys(keys) == item_keys(real_keys)
    for k in keys + sorted(b.key for b in at.button if b.key):
        if k.startswith(("grade_", "skip_", "flag_", "reopen_")):  # an item's controls: its opaque key only
            assert re.fullmatch(r"(grade|skip|flag|reopen)_k[0-9a-f]{12}(_[012])?", k), k


@pytest.mark.slow
def test_campaigns_page_gold_expander(gdb, tmp_path):
    db, cid = gdb
    aa, _bb, res = users(db)
    hidden_setup(db, cid, share=0.2)
    work_through(db, aa, cid, tier_for_gold=0)
    at = _app(db, "res").run()
    assert not at.exception
    assert any(e.label.startswith("Gold items (10)") for e in at.expander)
    results = at.dataframe[-1].value  # the results table closes the gold expander
    row = results[results["annotator"] == "aa"].iloc[0]
    assert row["hidden answered"] == 5 and row["hidden correct"] == 0 and row["flagged"]
    at.slider(key="gold_share").set_value(0.3)
    at.button(key=f"FormSubmitter:gold_settings_{cid}-Save settings").click().run()
    assert not at.exception and gold.get_settings(db, cid)["hidden_share"] == 0.3
    at.text_input(key="gold_q_disease").input("病11").run()
    at.selectbox(key="gold_pick").select_index(0).run()
    at.button(key="gold_mark").click().run()  # no reason yet: a clear message, nothing stored
    assert any("Not saved" in e.value and "reason" in e.value for e in at.error)
    assert len(gold.list_gold(db, cid, actor=res)) == 10
    at.text_area(key="gold_reason").input("<b>bold</b> reason").run()
    at.button(key="gold_mark").click().run()
    assert not at.exception
    assert any("Marked as gold" in s.value for s in at.success)
    assert gold.list_gold(db, cid, actor=res)[-1].reason == "<b>bold</b> reason"  # stored as plain text
    assert at.button(key="gold_mark").disabled  # the response is gold now: no longer offered
