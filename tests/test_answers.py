"""The one answer model and the one submit path (issue 25 §1): ``Answer`` validates every value type in one
place; ``answers.submit`` runs the same guards for tier grading and task campaigns (assigned, open, qualified,
acknowledged, not stale, idempotent by client token) and writes to each family's own table."""

import pytest

from medeval.accounts import auth
from medeval.annotation import answers, gold, tasks
from medeval.annotation import campaigns as cp
from medeval.annotation import guidelines as gl
from medeval.annotation.answers import Answer, guards
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.limits import NOTE_MAX_CHARS
from medeval.engine.importer import import_files
from tests.conftest import write
from tests.test_tasks import tdb, users  # noqa: F401 (the fixture)

TIER_TEXT = "a grade is 0"


# ---------------------------------------------------------------- the model


@pytest.mark.parametrize("tier", [0, 1, 2])
def test_a_tier_answer_holds_its_tier(tier):
    a = Answer.tier(tier)
    assert (a.status, a.value, a.kind, a.skipped, a.flagged) == ("submitted", tier, "tier", False, False)
    f = Answer.tier(tier, flagged=True, note="the reference is outdated")
    assert (f.status, f.value, f.note, f.flagged) == ("flagged", tier, "the reference is outdated", True)


@pytest.mark.parametrize("bad", [3, -1, "1", True, None, 1.5, [1]])
def test_a_tier_outside_0_1_2_is_refused_with_the_tiers_named(bad):
    with pytest.raises(MedevalError, match=TIER_TEXT):
        Answer.tier(bad)
    with pytest.raises(MedevalError, match=TIER_TEXT):
        Answer.from_tier_form(bad)


def test_a_map_of_questions_holds_rubric_scores_preferences_and_verdicts():
    for values in ({"r1:accuracy": "4"}, {"knowledge": "left"}, {"claim:3": "supported"}, {"r2:safety": 5}):
        a = Answer.questions(values)
        assert (a.status, a.kind, dict(a.value)) == ("submitted", "questions", values)
    a = Answer.questions({"knowledge": "left"})
    with pytest.raises(TypeError):  # the value cannot change after the checks
        a.value["knowledge"] = "right"


@pytest.mark.parametrize("values, message", [
    ({}, "map of question ids to values"),
    ("knowledge=left", "map of question ids to values"),
    ({"": "left"}, "question id is non-empty text"),
    ({"  ": "left"}, "question id is non-empty text"),
    ({"knowledge": None}, "question 'knowledge' needs a value"),
    ({"knowledge": 2.5}, "question 'knowledge' needs a value"),
    ({"knowledge": True}, "question 'knowledge' needs a value"),
    ({"knowledge": ["left"]}, "question 'knowledge' needs a value"),
])
def test_a_bad_map_says_what_is_wrong(values, message):
    with pytest.raises(MedevalError, match=message):
        Answer.questions(values)


def test_skips_and_flags():
    s = Answer.skip()
    assert (s.status, s.value, s.kind, s.skipped, s.flagged) == ("skipped", None, None, True, False)
    sf = Answer.skip(flagged=True, note="unreadable answer")
    assert (sf.status, sf.skipped, sf.flagged) == ("flagged", True, True)
    f = Answer.flag("wrong reference")
    assert (f.status, f.value, f.note) == ("flagged", None, "wrong reference")
    for note in ("", "   ", None):
        with pytest.raises(MedevalError, match="write a short note"):
            Answer.flag(note)
    with pytest.raises(MedevalError, match="flag note"):
        Answer.flag("x" * (NOTE_MAX_CHARS + 1))
    with pytest.raises(MedevalError, match="flag note"):
        Answer.flag("a\x00b")
    with pytest.raises(MedevalError, match="a skipped answer has no value"):
        Answer("skipped", 1)
    with pytest.raises(MedevalError, match="answer its questions apart"):
        Answer("flagged", {"knowledge": "left"}, "and a note")
    with pytest.raises(MedevalError, match="needs a value"):
        Answer("submitted")
    with pytest.raises(MedevalError, match="status is one of submitted, skipped, flagged"):
        Answer("draft", 1)


# ---------------------------------------------------------------- the two families, one path


ASPECTS = ("Primary Symptoms", "Medications", "Physical Examinations", "Severity Level")


@pytest.fixture
def both(tdb, tmp_path):  # noqa: F811 (tdb: the task data and users doc1, doc2, doc3, res)
    """One database with a tier grading campaign (doc1, doc2; k=2) and a preference task campaign (doc1)."""
    db = tdb
    kb = ["disease,aspect,reference"] + [f"病{d},{a},参考{d}{i}" for d in range(6) for i, a in enumerate(ASPECTS)]
    resp = ["model,disease,aspect,response"] + [f"M{m},病{d},{a},回答{m}{d}{i}" for m in "AB" for d in range(6)
                                                for i, a in enumerate(ASPECTS)]
    import_files(db, kb=write(tmp_path / "kb.csv", "\n".join(kb) + "\n"),
                 responses=write(tmp_path / "r.csv", "\n".join(resp) + "\n"),
                 models=write(tmp_path / "m.csv", "model,backbone,kind\nMA,,general\nMB,MA,medical\n"))
    with db.conn:
        db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'rouge1', 'rouge1', ?)",
                            [(r, (r % 10) / 10) for (r,) in db.conn.execute("SELECT id FROM responses")])
    doc1, doc2, doc3, res = users(db, "doc1", "doc2", "doc3", "res")
    cid = cp.create_random_campaign(db, "g", 10, ["doc1", "doc2"], k=2, seed=3, actor=res)
    t_item = db.conn.execute("SELECT item_id FROM assignments WHERE user_id = ? AND campaign_id = ? ORDER BY position "
                             "LIMIT 1", (doc1.id, cid)).fetchone()[0]
    tcid = tasks.create_campaign(db, "preference", "p", ["doc1"], k=1, seed=3,
                                 config={"dataset": "clin", "compare": "answers", "max_items": 3}, actor=res)
    view = tasks.task_state(db, doc1, tcid).item
    return {
        "tier": dict(db=db, cid=cid, user=doc1, other=doc3, res=res, ref=f"i:{t_item}", answer=Answer.tier(2),
                     table="grade_annotations"),
        "task": dict(db=db, cid=tcid, user=doc1, other=doc2, res=res, ref=view.ref,
                     answer=Answer.questions({view.pending.id: "left"}), table="task_answers", view=view),
    }


FAMILIES = ("tier", "task")


def _rows(f) -> int:
    return f["db"].conn.execute(f"SELECT count(*) FROM {f['table']}").fetchone()[0]


def _submit(f, token="t1", user=None, answer=None, **kw):
    return answers.submit(f["db"], user or f["user"], f["cid"], f["ref"], answer or f["answer"], client_token=token,
                          **kw)


@pytest.mark.parametrize("family", FAMILIES)
def test_an_answer_lands_in_its_familys_table_and_a_resubmission_returns_the_same_id(both, family):
    f = both[family]
    rid, feedback = _submit(f, "tok-1")
    assert feedback is None and _rows(f) == 1
    assert _submit(f, "tok-1") == (rid, None)  # the same token again: the same row, nothing added
    assert _rows(f) == 1
    other = "task_answers" if family == "tier" else "grade_annotations"
    assert f["db"].conn.execute(f"SELECT count(*) FROM {other}").fetchone()[0] == 0


@pytest.mark.parametrize("family", FAMILIES)
def test_closed_campaign_is_refused(both, family):
    f = both[family]
    cp.set_campaign_status(f["db"], f["cid"], "closed", actor=f["res"])
    with pytest.raises(MedevalError, match="this campaign is closed"):
        _submit(f)
    assert _rows(f) == 0


@pytest.mark.parametrize("family", FAMILIES)
def test_an_item_not_assigned_is_refused(both, family):
    f = both[family]
    with pytest.raises(PermissionDenied, match="not assigned to you"):
        _submit(f, user=f["other"])
    assert _rows(f) == 0


@pytest.mark.parametrize("family", FAMILIES)
def test_guidelines_not_acknowledged_are_refused_until_read(both, family):
    f = both[family]
    version = gl.set_guidelines(f["db"], f["cid"], "Read the reference first.", actor=f["res"])
    with pytest.raises(gl.GuidelinesPending, match="confirm you have read them"):
        _submit(f)
    assert _rows(f) == 0
    gl.acknowledge(f["db"], f["user"], f["cid"], version)
    rid, _ = _submit(f, guideline_version=version)
    assert f["db"].conn.execute(f"SELECT guideline_version FROM {f['table']} WHERE id = ?", (rid,)).fetchone() == (
        version,)
    with pytest.raises(MedevalError, match="guideline"):  # a version that does not exist
        _submit(f, "t2", guideline_version=version + 5)


def test_a_pending_qualification_is_refused_in_both_families(both):
    t = both["tier"]
    free = [r for (r,) in t["db"].conn.execute("SELECT id FROM responses WHERE id NOT IN (SELECT response_id FROM "
                                               "campaign_items) ORDER BY id LIMIT 4")]
    for r in free:
        gold.mark_gold(t["db"], t["cid"], r, 1, "partly right", actor=t["res"])
    gold.set_settings(t["db"], t["cid"], {"qualification_required": True, "qualification_items": 4}, actor=t["res"])
    with pytest.raises(gold.QualificationPending):
        _submit(t)
    k = both["task"]
    for c in gold.candidates(k["db"], k["cid"], actor=k["res"])[:2]:
        gold.mark_task_gold(k["db"], k["cid"], c.source, {"knowledge": "left"}, "A is right", actor=k["res"])
    gold.set_settings(k["db"], k["cid"], {"qualification_required": True, "qualification_items": 2}, actor=k["res"])
    with pytest.raises(gold.QualificationPending):
        _submit(k)
    assert _rows(t) == _rows(k) == 0
    # a task flag answers nothing: it needs no qualification (as before)
    fid, _ = answers.submit(k["db"], k["user"], k["cid"], k["ref"], Answer.flag("the pair is identical"),
                            client_token="flag-1")
    assert k["db"].conn.execute("SELECT question, value FROM task_answers WHERE id = ?", (fid,)).fetchone() == (
        "#flag", "the pair is identical")


def test_a_stale_screen_is_refused_in_both_families(both):
    t = both["tier"]
    first, _ = _submit(t, "a", expected=None)  # the screen showed no grade yet
    with pytest.raises(cp.StaleGrade):  # a second key typed on the same screen: that screen has changed
        _submit(t, "b", answer=Answer.tier(0), expected=None)
    with pytest.raises(answers.StaleAnswer):  # one stale type for both families
        _submit(t, "c", answer=Answer.tier(0), expected=None)
    second, _ = _submit(t, "d", answer=Answer.tier(0), expected=first)  # a change from the screen that showed it
    assert t["db"].conn.execute("SELECT supersedes FROM grade_annotations WHERE id = ?", (second,)).fetchone() == (
        first,)
    k = both["task"]
    rev = k["view"].revision
    _submit(k, "a", expected=rev)
    with pytest.raises(tasks.StaleAnswer, match="screen changed"):
        _submit(k, "b", answer=Answer.questions({k["view"].pending.id: "right"}), expected=rev)
    assert issubclass(cp.StaleGrade, tasks.StaleAnswer) and tasks.StaleAnswer is answers.StaleAnswer
    assert _rows(t) == 2 and _rows(k) == 1


def test_a_value_of_the_other_family_or_an_unknown_campaign_is_refused(both):
    t, k = both["tier"], both["task"]
    with pytest.raises(MedevalError, match="tier campaign's answer is a tier 0/1/2"):
        _submit(t, answer=Answer.questions({"knowledge": "left"}))
    with pytest.raises(MedevalError, match="task campaign's answer is a map"):
        _submit(k, answer=Answer.tier(1))
    with pytest.raises(MedevalError, match="no campaign 999"):
        answers.submit(t["db"], t["user"], 999, t["ref"], Answer.tier(1), client_token="x")
    with pytest.raises(MedevalError, match="one question's value at a time"):
        _submit(k, answer=Answer.questions({"knowledge": "left", "fluency": "tie"}))
    with pytest.raises(MedevalError, match="answers.Answer"):
        answers.submit(t["db"], t["user"], t["cid"], t["ref"], 2, client_token="x")
    assert _rows(t) == _rows(k) == 0


GUARDS = ("assigned", "already_saved", "campaign_open", "acknowledged", "qualified", "not_stale")


def test_both_families_and_their_old_functions_go_through_the_same_guard_functions(both, monkeypatch):
    calls = []
    for name in GUARDS:
        def counted(*a, _real=getattr(guards, name), _name=name, **kw):
            calls.append(_name)
            return _real(*a, **kw)

        monkeypatch.setattr(guards, name, counted)
    t, k = both["tier"], both["task"]
    item = int(t["ref"][2:])
    seen = {}
    for what, submit in [
        ("tier: answers.submit", lambda: _submit(t, "w0")),
        ("tier: campaigns.submit_answer", lambda: cp.submit_answer(t["db"], t["user"], t["cid"], t["ref"], tier=1,
                                                                   client_token="w1")),
        ("tier: campaigns.submit_grade", lambda: cp.submit_grade(t["db"], t["user"], item, tier=2, client_token="w2")),
        ("task: answers.submit", lambda: _submit(k, "w3")),
        ("task: tasks.answer", lambda: tasks.answer(k["db"], k["user"], k["cid"], k["ref"], k["view"].pending.id,
                                                    "right", client_token="w4")),
        ("task: tasks.submit_answer", lambda: tasks.submit_answer(k["db"], k["user"], k["view"].item_id,
                                                                  k["view"].pending.id, "tie", client_token="w5")),
    ]:
        calls.clear()
        submit()
        seen[what] = list(calls)
    assert all(v == list(GUARDS) for v in seen.values()), seen  # every guard, once, in the same order
    assert _rows(t) == 3 and _rows(k) == 3
    calls.clear()  # a resubmission stops at the token: the row it saved, no later guard asked
    w2 = t["db"].conn.execute("SELECT id FROM grade_annotations WHERE client_token = 'w2'").fetchone()[0]
    assert cp.submit_grade(t["db"], t["user"], item, tier=2, client_token="w2") == w2
    assert calls == list(GUARDS[:2]) and _rows(t) == 3


def test_a_change_to_one_guard_reaches_both_families(both, monkeypatch):
    class Refused(MedevalError):
        pass

    def closed_today(store, target):
        raise Refused(f"{store.family}: no answers today")

    monkeypatch.setattr(guards, "campaign_open", closed_today)
    t, k = both["tier"], both["task"]
    with pytest.raises(Refused, match="tier: no answers today"):
        cp.submit_answer(t["db"], t["user"], t["cid"], t["ref"], tier=1, client_token="x")
    with pytest.raises(Refused, match="task: no answers today"):
        tasks.answer(k["db"], k["user"], k["cid"], k["ref"], k["view"].pending.id, "left", client_token="x")
    with pytest.raises(Refused, match="task: no answers today"):
        tasks.flag(k["db"], k["user"], k["cid"], k["ref"], "a note", client_token="y")
    assert _rows(t) == _rows(k) == 0
