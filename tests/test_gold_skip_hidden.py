"""Hidden gold stays hidden through skipping: a skipped hidden gold item counts as skipped (the end screen, the
progress, the list of one's answers and its skipped filter) and comes back when the skipped items are revisited,
in the queue's own order, exactly like a skipped real item -- on Grade (tier grading) and on Rate & compare (task
campaigns). Gold answers still go to the gold answers only, and a gold item answered is not shown again."""

import pytest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation import gold, tasks
from tests.test_gold import PW, _app, _grade_keys, import_scored
from tests.test_task_gold import _pref, _set
from tests.test_tasks import tdb, users  # noqa: F401 (the fixture)

REAL_N = 10
SHARE = 0.3  # round(0.3 * 10 / 0.7) = 4 hidden gold items among the 10 real ones


@pytest.fixture
def tier(db, tmp_path):
    """A random campaign of ``REAL_N`` items for aa alone (k=1), with hidden gold at ``SHARE``; (db, campaign, aa)."""
    import_scored(db, tmp_path, 6)
    auth.add_user(db, "aa", PW, "annotator")
    auth.add_user(db, "res", PW, "researcher")
    res = auth.get_user(db, "res")
    cid = cp.create_random_campaign(db, "g", REAL_N, ["aa"], k=1, seed=3, actor=None)
    free = [r for (r,) in db.conn.execute("SELECT id FROM responses WHERE id NOT IN (SELECT response_id FROM "
                                          "campaign_items WHERE campaign_id = ?) ORDER BY id LIMIT 8", (cid,))]
    for r in free:
        gold.mark_gold(db, cid, r, 1, f"reason {r}", actor=res)
    gold.set_settings(db, cid, {"hidden_share": SHARE}, actor=res)
    return db, cid, auth.get_user(db, "aa")


def _skip_tier(db, u, cid, keep=lambda n, ref: False) -> list[str]:
    """Go through the queue, skipping every item (but those ``keep(n, ref)`` says to grade); the refs skipped."""
    skipped, n = [], 0
    while (s := cp.grading_state(db, u, cid)).item is not None:
        ref, n = s.item.ref, n + 1
        graded = keep(n, ref)
        cp.submit_answer(db, u, cid, ref, tier=1 if graded else None, skipped=not graded, client_token=f"p{n}",
                         expected_prior=None)
        if not graded:
            skipped.append(ref)
        assert n < 100
    return skipped


def test_tier_every_skipped_item_comes_back_gold_too_in_the_queues_order(tier):
    db, cid, aa = tier
    order, slots = gold.hidden_plan(db, aa, cid)
    assert len(order) == 4
    skipped = _skip_tier(db, aa, cid)
    assert len(skipped) == REAL_N + 4 and sum(r.startswith("h:") for r in skipped) == 4
    assert [i for i, r in enumerate(skipped) if r.startswith("h:")] == slots  # at the planned places
    end = cp.grading_state(db, aa, cid)
    # the end screen's counts: every skip, gold or real ("0 of 14 answered · 14 skipped")
    assert end.item is None and (end.done, end.total, end.skipped) == (14, 14, 14)
    assert [c["done"] for c in cp.my_campaigns(db, aa) if c["id"] == cid] == [14]
    listed = cp.my_answers(db, aa, cid, status="skipped")  # the list's skipped filter holds them all
    assert {g.ref for g in listed} == set(skipped) and len(listed) == len(skipped)

    back = []
    while (s := cp.grading_state(db, aa, cid, revisit_skipped=True)).item is not None:
        ref = s.item.ref
        assert s.prior is not None and s.skipped == len(skipped) - len(back)  # "Revisiting — n skipped left"
        # skipped again, it stays first: for a gold item as for a real one
        cp.submit_answer(db, aa, cid, ref, tier=None, skipped=True, client_token=f"again{ref}",
                         expected_prior=s.prior)
        s = cp.grading_state(db, aa, cid, revisit_skipped=True)
        assert s.item.ref == ref
        cp.submit_answer(db, aa, cid, ref, tier=2, client_token=f"r{ref}", expected_prior=s.prior)
        back.append(ref)
        assert len(back) < 100
    assert back == skipped  # every skipped item, real and gold, in the order they were first given
    end = cp.grading_state(db, aa, cid)
    assert end.item is None and (end.done, end.total, end.skipped) == (14, 14, 0)
    assert cp.my_answers(db, aa, cid, status="skipped") == []
    # gold answers went to the gold answers only; each gold item answered once more, and not shown again
    assert db.conn.execute("SELECT count(*) FROM gold_answers WHERE mode = 'hidden' AND skipped = 0").fetchone()[0] == 4
    assert db.conn.execute("SELECT count(DISTINCT item_id) FROM grade_annotations").fetchone()[0] == REAL_N
    # in the accuracy figures as answered now (2 given, 1 expected), no longer as skips
    assert [ok for ok, _at in gold.TIER.hidden_rows(db, aa.id, cid)] == [False] * 4


def test_tier_some_skipped_the_revisit_interleaves_gold_and_real_by_the_queue(tier):
    db, cid, aa = tier
    skipped = _skip_tier(db, aa, cid, keep=lambda n, ref: n % 3 == 0)  # every third item graded
    assert any(r.startswith("h:") for r in skipped) and any(r.startswith("i:") for r in skipped)
    s = cp.grading_state(db, aa, cid)
    assert s.item is None and s.skipped == len(skipped) and s.done == s.total
    back = []
    while (s := cp.grading_state(db, aa, cid, revisit_skipped=True)).item is not None:
        back.append(s.item.ref)
        cp.submit_answer(db, aa, cid, s.item.ref, tier=0, client_token=f"r{len(back)}", expected_prior=s.prior)
        assert len(back) < 100
    assert back == skipped


def _skip_task(db, u, cid) -> list[str]:
    skipped = []
    while (s := tasks.task_state(db, u, cid)).item is not None:
        v = s.item
        assert s.position == len(skipped) + 1
        tasks.answer(db, u, cid, v.ref, None, None, skipped=True, client_token=f"s{v.ref}", revision=v.revision)
        skipped.append(v.ref)
        assert len(skipped) < 100
    return skipped


def test_task_every_skipped_item_comes_back_gold_too_in_the_queues_order(tdb):  # noqa: F811
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    for c in gold.candidates(tdb, cid, actor=res)[:4]:
        gold.mark_task_gold(tdb, cid, c.source, {"fluency": "tie"}, "equally fluent", actor=res)
    _set(tdb, cid, res, hidden_share=0.5)  # 3 real items, round(0.5 * 3 / 0.5) = 3 hidden gold items
    order, slots = gold.hidden_plan(tdb, doc1, cid, gold.TASK)
    skipped = _skip_task(tdb, doc1, cid)
    # every item is given while skipping -- a gold item is not held back behind the skipped real ones
    assert len(skipped) == 6 and sum(r.startswith("h:") for r in skipped) == 3
    assert [i for i, r in enumerate(skipped) if r.startswith("h:")] == slots
    end = tasks.task_state(tdb, doc1, cid)
    # the end screen: "0 of 6 answered · 6 skipped" (the page shows done + skipped passed, skipped apart)
    assert end.item is None and (end.done, end.total, end.skipped) == (0, 6, 6)
    assert [c["done"] for c in tasks.my_task_campaigns(tdb, doc1) if c["id"] == cid] == [0]
    listed = tasks.my_answers(tdb, doc1, cid, status="skipped")
    assert {g.ref for g in listed} == set(skipped) and len(listed) == 6

    back = []
    while (s := tasks.task_state(tdb, doc1, cid, revisit_skipped=True)).item is not None:
        v = s.item
        assert v.revisiting and s.skipped == 6 - len(back)
        back.append(v.ref)
        while v is not None and v.ref == back[-1] and v.pending is not None:
            # a skipped item answered in part stays on screen until it is complete, gold or real
            tasks.answer(tdb, doc1, cid, v.ref, v.pending.id, "tie", client_token=f"{v.ref}:{v.revision}",
                         revision=v.revision)
            v = tasks.task_state(tdb, doc1, cid, revisit_skipped=True).item
        assert len(back) < 100
    assert back == skipped
    end = tasks.task_state(tdb, doc1, cid)
    assert end.item is None and (end.done, end.total, end.skipped) == (6, 6, 0)
    assert tasks.task_state(tdb, doc1, cid, revisit_skipped=True).item is None  # a gold item done is not shown again
    assert tdb.conn.execute("SELECT count(DISTINCT item_id) FROM task_answers").fetchone()[0] == 3  # the real ones
    assert len(gold.TASK.hidden_rows(tdb, doc1.id, cid)) == 3


def test_task_counts_while_skipping_treat_gold_like_real(tdb):  # noqa: F811
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    for c in gold.candidates(tdb, cid, actor=res)[:4]:
        gold.mark_task_gold(tdb, cid, c.source, {"fluency": "tie"}, "equally fluent", actor=res)
    _set(tdb, cid, res, hidden_share=0.5)
    n = 0
    while (s := tasks.task_state(tdb, doc1, cid)).item is not None:
        assert (s.done, s.skipped, s.position) == (0, n, n + 1)
        tasks.answer(tdb, doc1, cid, s.item.ref, None, None, skipped=True, client_token=f"s{n}",
                     revision=s.item.revision)
        n += 1
    assert n == 6  # the gold items were given too, among the real ones
    row = next(c for c in tasks.my_task_campaigns(tdb, doc1) if c["id"] == cid)
    assert (row["done"], row["total"]) == (0, 6)


# ---------------------------------------------------------------- the Grade page (AppTest)


@pytest.mark.slow  # AppTest runs whole pages
def test_grade_page_end_screen_counts_every_skip_and_revisits_them_all(tier):
    db, cid, aa = tier
    at = _app(db, "aa").run()
    at.switch_page("app_pages/grade.py").run()
    presses = 0
    while _grade_keys(at):
        item = _grade_keys(at)[0].split("_")[1]
        at.button(key=f"skip_{item}").click().run()
        assert not at.exception
        presses += 1
        assert presses < 100
    assert presses == REAL_N + 4
    texts = [i.value for i in at.info]
    assert any(f"{presses} skipped: they wait for you" in t for t in texts), texts
    assert at.get("progress")[0].proto.text == f"0 of {presses} answered · {presses} skipped"
    at.button(key="revisit").click().run()
    revisited = 0
    while _grade_keys(at):
        assert at.get("progress")[0].proto.text.startswith("Revisiting a skipped item")
        item = _grade_keys(at)[0].split("_")[1]
        at.button(key=f"grade_{item}_2").click().run()
        assert not at.exception
        revisited += 1
        assert revisited < 100
    assert revisited == presses  # the gold items came back with the real ones
    assert any(f"All {presses} items are graded" in s.value for s in at.success)
    assert db.conn.execute("SELECT count(*) FROM gold_answers WHERE mode = 'hidden' AND skipped = 0").fetchone()[0] == 4


@pytest.mark.slow
def test_rate_and_compare_end_screen_counts_every_skip_and_revisits_them_all(tdb):  # noqa: F811
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    for c in gold.candidates(tdb, cid, actor=res)[:4]:
        gold.mark_task_gold(tdb, cid, c.source, {"fluency": "tie"}, "equally fluent", actor=res)
    _set(tdb, cid, res, hidden_share=0.5)  # 3 real items and 3 hidden gold items
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state[TEST_TOKEN_KEY] = auth.create_session(tdb, auth.authenticate(tdb, "doc1", "a-long-password"))
    at.run()
    at.switch_page("app_pages/annotate.py").run()
    presses = 0
    while skip := [b for b in at.button if (b.key or "").startswith("task_skip_")]:
        skip[0].click().run()
        assert not at.exception
        presses += 1
        assert presses < 100
    assert presses == 6
    assert at.get("progress")[0].proto.text == "0 of 6 answered · 6 skipped"
    assert any("6 skipped: they wait for you" in i.value for i in at.info)
    at.button(key="task_revisit").click().run()
    n = 0
    while opts := [b for b in at.button if (b.key or "").startswith("opt_")]:
        opts[0].click().run()
        assert not at.exception
        n += 1
        assert n < 100
    assert n == 6 * 3  # every question of every item, the gold ones with the real ones
    assert at.get("progress")[0].proto.text == "6 of 6 answered"
    assert any("All 6 items are done" in s.value for s in at.success)


# ---------------------------------------------------------------- the demo, as the review found it


def test_the_demo_doctor1_skips_everything_and_gets_every_item_back(full_demo_template, tmp_path):
    from medeval.annotation import guidelines as gl
    from medeval.demo.build import DEMO_CAMPAIGN
    from medeval.demo.tasks import ACCR_CAMPAIGN
    from medeval.store.db import connect
    from tests.conftest import copy_db

    with connect(copy_db(full_demo_template, tmp_path / "demo.db")) as db:
        d1 = auth.get_user(db, "doctor1")
        cid, tid = (db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (n,)).fetchone()[0]
                    for n in (DEMO_CAMPAIGN, ACCR_CAMPAIGN))
        for c in (cid, tid):
            if (v := gl.needs_acknowledgement(db, d1, c)) is not None:
                gl.acknowledge(db, d1, c, v)
        gold.start_attempt(db, d1, cid)  # the tier round's qualification, passed
        while (s := cp.grading_state(db, d1, cid)).phase == "qualification":
            expected = gold.gold_item(db, int(s.item.ref.split(":")[1])).expected_tier
            cp.submit_answer(db, d1, cid, s.item.ref, tier=expected, client_token=s.item.ref)
        skipped = _skip_tier(db, d1, cid)
        n_gold = sum(r.startswith("h:") for r in skipped)
        s = cp.grading_state(db, d1, cid)
        assert n_gold and s.item is None and s.skipped == len(skipped) == s.total == s.done
        back = []
        while (s := cp.grading_state(db, d1, cid, revisit_skipped=True)).item is not None:
            back.append(s.item.ref)
            cp.submit_answer(db, d1, cid, s.item.ref, tier=1, client_token=f"r{len(back)}", expected_prior=s.prior)
            assert len(back) <= len(skipped)
        assert back == skipped and cp.grading_state(db, d1, cid).skipped == 0

        skipped = _skip_task(db, d1, tid)
        s = tasks.task_state(db, d1, tid)
        assert any(r.startswith("h:") for r in skipped)
        assert s.item is None and (s.done, s.skipped, s.total) == (0, len(skipped), len(skipped))
        assert {g.ref for g in tasks.my_answers(db, d1, tid, status="skipped")} == set(skipped)
        back = []
        while (s := tasks.task_state(db, d1, tid, revisit_skipped=True)).item is not None:
            v = s.item
            if not back or back[-1] != v.ref:
                back.append(v.ref)
            tasks.answer(db, d1, tid, v.ref, v.pending.id, v.pending.options[0].value,
                         client_token=f"{v.ref}:{v.revision}", revision=v.revision)
            assert len(back) <= len(skipped)
        assert back == skipped
        s = tasks.task_state(db, d1, tid)
        assert (s.done, s.skipped) == (s.total, 0)
