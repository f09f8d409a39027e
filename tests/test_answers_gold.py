"""Gold answers through the one submit path (issue 25 §1): ``answers.submit`` with a gold item's ref runs the
same guard functions as a real answer, in the same order (those that apply: a qualification item needs no
qualification), then the family's one gold write (``gold.submit_gold``, parameterised by the backend)."""

import pathlib

import pytest

from medeval.annotation import answers, gold, tasks
from medeval.annotation import campaigns as cp
from medeval.annotation import guidelines as gl
from medeval.annotation.answers import Answer, guards
from medeval.core.errors import MedevalError, PermissionDenied
from tests.test_answers import GUARDS, both  # noqa: F401 (the fixture)
from tests.test_tasks import tdb  # noqa: F401 (the fixture)

FAMILIES = ("tier", "task")
TABLE = {"tier": "gold_answers", "task": "task_gold_answers"}


def _free(db, cid, n):
    return [r for (r,) in db.conn.execute("SELECT id FROM responses WHERE id NOT IN (SELECT response_id FROM "
                                          "campaign_items WHERE campaign_id = ?) ORDER BY id LIMIT ?", (cid, n))]


def _mark(f, family, n):
    db, cid, res = f["db"], f["cid"], f["res"]
    if family == "tier":
        return [gold.mark_gold(db, cid, r, 1, f"partly right ({r})", actor=res) for r in _free(db, cid, n)]
    return [gold.mark_task_gold(db, cid, c.source, {"knowledge": "left"}, "A names the reference", actor=res)
            for c in gold.candidates(db, cid, actor=res)[:n]]


def _backend(family):
    return gold.TIER if family == "tier" else gold.TASK


def _answer(f, family, gid, mode="hidden", attempt=None) -> Answer:
    """A right answer to gold item ``gid``: the tier 1, or "left" to its first question (in the annotator's
    own layout)."""
    if family == "tier":
        return Answer.tier(1)
    view = gold.gold_view(f["db"], f["user"], f["cid"], gid, mode, attempt)
    return Answer.questions({view.pending.id: "left"})


@pytest.fixture
def hidden(both):  # noqa: F811
    """Each family with hidden gold: (the family's fixture, the gold ids, the first hidden gold id of doc1)."""
    out = {}
    for family in FAMILIES:
        f = both[family]
        gids = _mark(f, family, 2)
        gold.set_settings(f["db"], f["cid"], {"hidden_share": 0.5}, actor=f["res"])
        planned = gold.hidden_plan(f["db"], f["user"], f["cid"], _backend(family))[0]
        assert planned and set(planned) <= set(gids)
        out[family] = (f, gids, planned[0])
    return out


def _rows(f, family) -> int:
    return f["db"].conn.execute(f"SELECT count(*) FROM {TABLE[family]}").fetchone()[0]


def _submit(f, ref, answer, token, **kw):
    return answers.submit(f["db"], f["user"], f["cid"], ref, answer, client_token=token, **kw)


def _count_guards(monkeypatch) -> list:
    calls = []
    for name in GUARDS:
        def counted(*a, _real=getattr(guards, name), _name=name, **kw):
            calls.append(_name)
            return _real(*a, **kw)

        monkeypatch.setattr(guards, name, counted)
    return calls


@pytest.mark.parametrize("family", FAMILIES)
def test_a_hidden_gold_answer_runs_the_same_guards_in_the_same_order_as_a_real_one(hidden, family, monkeypatch):
    f, _gids, gid = hidden[family]
    calls = _count_guards(monkeypatch)
    _submit(f, f["ref"], f["answer"], "real")
    real = list(calls)
    calls.clear()
    rid, feedback = _submit(f, f"h:{gid}", _answer(f, family, gid), "gold")
    assert real == calls == list(GUARDS)  # every guard, once, in the same order
    assert feedback is None and _rows(f, family) == 1
    assert f["db"].conn.execute(f"SELECT gold_id, mode FROM {TABLE[family]} WHERE id = ?", (rid,)).fetchone() == (
        gid, "hidden")
    calls.clear()  # a resubmission stops at the token, as a real one does: the same row, nothing added
    assert _submit(f, f"h:{gid}", _answer(f, family, gid), "gold") == (rid, None)
    assert calls == list(GUARDS[:2]) and _rows(f, family) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_a_qualification_answer_runs_every_guard_but_the_qualification(both, family, monkeypatch):  # noqa: F811
    f = both[family]
    n = 4 if family == "tier" else 2
    _mark(f, family, n)
    gold.set_settings(f["db"], f["cid"], {"qualification_required": True, "qualification_items": n},
                      actor=f["res"])
    assert gold.start_attempt(f["db"], f["user"], f["cid"], _backend(family)) == 1
    s = cp.grading_state(f["db"], f["user"], f["cid"]) if family == "tier" else tasks.task_state(
        f["db"], f["user"], f["cid"])
    ref = s.item.ref
    mode, gid, attempt = gold.parse_ref(ref)
    assert (mode, attempt) == ("qualification", 1)
    calls = _count_guards(monkeypatch)
    _submit(f, ref, _answer(f, family, gid, mode, attempt), "q1")
    assert calls == [g for g in GUARDS if g != "qualified"]
    assert _rows(f, family) == 1 and f["db"].conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == 0
    if family == "tier":  # a qualification answer is final: another token, the item already answered
        with pytest.raises(cp.StaleGrade, match="already has your answer"):
            _submit(f, ref, Answer.tier(2), "q2")
        assert _rows(f, family) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_a_closed_campaign_refuses_a_gold_answer_but_a_resubmission_returns_its_row(hidden, family):
    f, _gids, gid = hidden[family]
    rid, _ = _submit(f, f"h:{gid}", _answer(f, family, gid), "before")
    real_id, _ = _submit(f, f["ref"], f["answer"], "real")
    cp.set_campaign_status(f["db"], f["cid"], "closed", actor=f["res"])
    with pytest.raises(MedevalError, match="this campaign is closed"):
        _submit(f, f"h:{gid}", _answer(f, family, gid), "after", expected=rid if family == "tier" else 1)
    # the same order as a real answer: the token is looked up before the campaign's status
    assert _submit(f, f"h:{gid}", _answer(f, family, gid), "before") == (rid, None)
    assert _submit(f, f["ref"], f["answer"], "real") == (real_id, None)
    assert _rows(f, family) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_a_gold_item_not_on_screen_is_refused(hidden, family):
    f, gids, gid = hidden[family]
    db = f["db"]
    unplanned = [g for g in gids if g not in gold.hidden_plan(db, f["user"], f["cid"], _backend(family))[0]]
    for g in unplanned:  # a gold item not in this annotator's queue
        with pytest.raises(PermissionDenied, match="not assigned to you"):
            _submit(f, f"h:{g}", _answer(f, family, g), f"u{g}")
    with pytest.raises(Exception, match="no longer on your screen"):  # no qualification attempt started
        _submit(f, f"q:{gid}:1", _answer(f, family, gid, "qualification", 1), "q")
    with pytest.raises(PermissionDenied, match="not assigned to you"):  # another annotator's screen
        answers.submit(db, f["other"], f["cid"], f"h:{gid}", _answer(f, family, gid), client_token="o")
    other = _other_campaign(f, family)
    assert other != f["cid"]
    with pytest.raises(PermissionDenied, match="not part of this campaign"):  # another campaign's gold item
        answers.submit(db, f["user"], other, f"h:{gid}", _answer(f, family, gid), client_token="c")
    with pytest.raises(PermissionDenied):  # no such gold item
        _submit(f, "h:99999", _answer(f, family, gid), "none")
    with pytest.raises(MedevalError, match="refers to no item"):
        _submit(f, "h:x", _answer(f, family, gid), "bad")
    assert _rows(f, family) == 0


def _other_campaign(f, family) -> int:
    if family == "tier":
        return cp.create_random_campaign(f["db"], "g2", 4, ["doc1"], k=1, seed=5, actor=f["res"])
    return tasks.create_campaign(f["db"], "preference", "p2", ["doc1"], k=1, seed=5,
                                 config={"dataset": "clin", "compare": "answers", "max_items": 2}, actor=f["res"])


@pytest.mark.parametrize("family", FAMILIES)
def test_guidelines_and_a_stale_screen_refuse_a_gold_answer(hidden, family):
    f, _gids, gid = hidden[family]
    version = gl.set_guidelines(f["db"], f["cid"], "Read the reference first.", actor=f["res"])
    with pytest.raises(gl.GuidelinesPending, match="confirm you have read them"):
        _submit(f, f"h:{gid}", _answer(f, family, gid), "g0")
    gl.acknowledge(f["db"], f["user"], f["cid"], version)
    with pytest.raises(MedevalError, match="guideline"):  # a version that does not exist
        _submit(f, f"h:{gid}", _answer(f, family, gid), "g1", guideline_version=version + 5)
    first, _ = _submit(f, f"h:{gid}", _answer(f, family, gid), "g2", expected=None if family == "tier" else 0)
    stale = cp.StaleGrade if family == "tier" else tasks.StaleAnswer
    with pytest.raises(stale, match="screen changed"):  # typed on the screen from before the first answer
        _submit(f, f"h:{gid}", Answer.tier(2) if family == "tier" else _answer(f, family, gid), "g3",
                expected=None if family == "tier" else 0)
    assert _rows(f, family) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_a_gold_answer_records_the_guidelines_version_on_screen(hidden, family):
    """Like a real answer, a gold answer of either family keeps the version of the guidelines it was given
    under (tier gold since m022), so a reviewer of a missed gold item knows what the annotator had read."""
    f, _gids, gid = hidden[family]
    v1 = gl.set_guidelines(f["db"], f["cid"], "Read the reference first.", actor=f["res"])
    gl.acknowledge(f["db"], f["user"], f["cid"], v1)
    _submit(f, f"h:{gid}", _answer(f, family, gid), "v1", guideline_version=v1)
    (stored,) = f["db"].conn.execute(f"SELECT guideline_version FROM {TABLE[family]} ORDER BY id DESC LIMIT 1")\
        .fetchone()
    assert stored == v1 and v1 is not None


def test_a_flag_on_a_hidden_task_gold_item_goes_to_its_gold_answers(hidden):
    f, _gids, gid = hidden["task"]
    fid, feedback = _submit(f, f"h:{gid}", Answer.flag("  the two answers are identical "), "flag")
    assert feedback is None
    assert f["db"].conn.execute("SELECT question, value, mode FROM task_gold_answers WHERE id = ?", (fid,)).fetchone(
    ) == ("#flag", "the two answers are identical", "hidden")
    assert f["db"].conn.execute("SELECT count(*) FROM task_answers").fetchone()[0] == 0


def test_a_change_to_one_guard_reaches_gold_answers_of_both_families(hidden, monkeypatch):
    def closed_today(store, target):
        raise MedevalError(f"{store.family}: no answers today")

    monkeypatch.setattr(guards, "campaign_open", closed_today)
    for family in FAMILIES:
        f, _gids, gid = hidden[family]
        with pytest.raises(MedevalError, match=f"{family}: no answers today"):
            _submit(f, f"h:{gid}", _answer(f, family, gid), "x")
        assert _rows(f, family) == 0


def test_the_gold_package_does_not_import_the_answers_package():
    """``answers`` imports ``gold``; ``gold`` takes an answer's parts as plain arguments (no import cycle)."""
    imports = [(path.name, ln) for path in pathlib.Path("medeval/annotation/gold").glob("*.py")
               for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith(("from ", "import "))]
    assert len(imports) > 20
    assert [x for x in imports if "annotation.answers" in x[1] or "import answers" in x[1]] == []
