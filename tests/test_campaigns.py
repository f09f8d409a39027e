"""Bucket-grading campaigns: reproducible interval sampling, exactly k per item under concurrency, blind items."""

import threading
import uuid

import pytest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.store.db import connect
from medeval.core.errors import MedevalError, PermissionDenied

from tests.conftest import copy_db

PW = "correct horse battery"


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory, demo_template):
    path = copy_db(demo_template, tmp_path_factory.mktemp("campaign") / "demo.db")
    with connect(path) as db:
        auth.add_user(db, "admin", PW, "admin")
        auth.add_user(db, "res", PW, "researcher")
        for i in range(24):
            auth.add_user(db, f"doc{i:02d}", PW, "annotator")
    return path


def _cfg(**kw):
    return cp.BucketConfig(**{"metrics": ("rouge1",), "aspect_types": ("enumerated",), "per_interval": 10, "k": 3,
                              "seed": 7, **kw})


def test_intervals_cover_the_range():
    assert cp.intervals("rouge1", 0.1)[0] == (0.0, 0.1) and len(cp.intervals("rouge1", 0.1)) == 10
    assert len(cp.intervals("cosine", 0.1)) == 20
    with pytest.raises(MedevalError, match="does not divide"):
        cp.intervals("bleu1", 0.3)


def test_sampling_is_reproducible_and_reports_short_intervals(demo_db):
    with connect(demo_db) as db:
        a, rep = cp.sample_buckets(db, _cfg())
        b, _ = cp.sample_buckets(db, _cfg())
        c, _ = cp.sample_buckets(db, _cfg(seed=8))
        assert a == b and a != c
        assert len(rep) == 10 and all(r["sampled"] == min(10, r["available"]) for r in rep)
        assert all(r["short"] == (r["available"] < 10) for r in rep)
        # every sampled response's score lies in its interval, by the comparison rule (a score on an end reaches it:
        # 0.19999999999999998, a ROUGE-1 F1 of exactly 0.2, is in [0.2, 0.3))
        from medeval.engine.thresholds import reaches

        for rid, strata in a.items():
            s = db.conn.execute("SELECT score FROM scores WHERE response_id = ? AND metric = 'rouge1'", (rid,)).fetchone()[0]
            lo, hi = strata[0]["interval"]
            assert (reaches(s, lo) and not reaches(s, hi)) or (hi == 1.0 and reaches(s, 1.0))


def test_exactly_k_per_item_and_role_checks(demo_db):
    with connect(demo_db) as db:
        res, doc = auth.get_user(db, "res"), auth.get_user(db, "doc00")
        with pytest.raises(PermissionDenied):
            cp.create_bucket_campaign(db, "x", _cfg(), ["doc00", "doc01", "doc02"], actor=doc)
        with pytest.raises(MedevalError, match="needs at least 3"):
            cp.create_bucket_campaign(db, "x", _cfg(), ["doc00", "doc01"], actor=res)
        cid = cp.create_bucket_campaign(db, "calib", _cfg(), [f"doc{i:02d}" for i in range(5)], actor=res)
        per_item = db.conn.execute("SELECT count(*) FROM assignments WHERE campaign_id = ? GROUP BY item_id",
                                   (cid,)).fetchall()
        assert per_item and {n for (n,) in per_item} == {3}
        loads = [n for (n,) in db.conn.execute("SELECT count(*) FROM assignments WHERE campaign_id = ? GROUP BY user_id",
                                               (cid,))]
        assert max(loads) - min(loads) <= 1  # balanced
        item = cp.next_item(db, doc, cid) or cp.next_item(db, auth.get_user(db, "doc01"), cid)
        owner = db.conn.execute("SELECT u.username FROM assignments a JOIN users u ON u.id = a.user_id "
                                "WHERE a.item_id = ? LIMIT 1", (item,)).fetchone()[0]
        other = next(f"doc{i:02d}" for i in range(5, 24))
        with pytest.raises(PermissionDenied):
            cp.blind_item(db, auth.get_user(db, other), item)  # not assigned: refused in the data layer
        with pytest.raises(PermissionDenied):
            cp.current_grades(db, cid, actor=doc)  # researcher data
        b = cp.blind_item(db, auth.get_user(db, owner), item)
        assert b.reference and b.definition and not hasattr(b, "score") and not hasattr(b, "model")


def test_twenty_annotators_at_once_no_lost_or_duplicated_grade(demo_db):
    names = [f"doc{i:02d}" for i in range(4, 24)]
    with connect(demo_db) as db:
        res = auth.get_user(db, "res")
        cid = cp.create_bucket_campaign(db, "load", _cfg(metrics=("bleu1", "rouge1"), seed=3), names, actor=res)
    errors, barrier = [], threading.Barrier(len(names))

    def annotate(name):
        try:
            with connect(demo_db) as db:
                u = auth.get_user(db, name)
            barrier.wait()
            while True:
                with connect(demo_db) as db:  # a new connection per operation, as the app does
                    item = cp.next_item(db, u, cid)
                if item is None:
                    return
                token = uuid.uuid4().hex
                for _ in range(2):  # a double click: the same token twice
                    with connect(demo_db) as db:
                        cp.submit_grade(db, u, item, tier=hash(name) % 3, client_token=token)
        except Exception as e:  # noqa: BLE001 - asserted below
            errors.append(repr(e))

    threads = [threading.Thread(target=annotate, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with connect(demo_db) as db:
        n_assign = db.conn.execute("SELECT count(*) FROM assignments WHERE campaign_id = ?", (cid,)).fetchone()[0]
        rows = db.conn.execute("SELECT g.item_id, count(*), count(DISTINCT g.user_id) FROM grade_annotations g "
                               "JOIN assignments a ON a.item_id = g.item_id AND a.user_id = g.user_id "
                               "WHERE a.campaign_id = ? GROUP BY g.item_id", (cid,)).fetchall()
        assert sum(n for _, n, _ in rows) == n_assign  # every assignment graded exactly once, no duplicate
        assert {n for _, n, _ in rows} == {3} and {d for _, _, d in rows} == {3}
        assert len(cp.current_grades(db, cid, actor=None)) == n_assign


def test_changing_a_grade_keeps_history(demo_db):
    with connect(demo_db) as db:
        res = auth.get_user(db, "res")
        cid = cp.create_bucket_campaign(db, "history", _cfg(seed=11, per_interval=2), ["doc00", "doc01", "doc02"],
                                        actor=res)
        u = auth.get_user(db, "doc00")
        item = cp.next_item(db, u, cid)
        first = cp.submit_grade(db, u, item, tier=0, client_token="t1")
        second = cp.submit_grade(db, u, item, tier=2, client_token="t2")
        rows = db.conn.execute("SELECT id, tier, supersedes FROM grade_annotations WHERE item_id = ? AND user_id = ? "
                               "ORDER BY id", (item, u.id)).fetchall()
        assert rows == [(first, 0, None), (second, 2, first)]
        assert [g["tier"] for g in cp.current_grades(db, cid, actor=res) if g["item"] == item and g["annotator"] == "doc00"] == [2]
        assert cp.progress(db, u, cid)[0] == 1
        with pytest.raises(Exception, match="append-only"):
            db.conn.execute("UPDATE grade_annotations SET tier = 1")
        with pytest.raises(MedevalError):
            cp.submit_grade(db, u, item, tier=5, client_token="t3")


def test_a_grade_from_a_screen_that_has_moved_on_is_refused(demo_db):
    """A key typed ahead of the next item can reach the previous item's button: it must not regrade that item."""
    with connect(demo_db) as db:
        res = auth.get_user(db, "res")
        cid = cp.create_bucket_campaign(db, "stale", _cfg(seed=12, per_interval=2), ["doc00", "doc01", "doc02"],
                                        actor=res)
        u = auth.get_user(db, "doc01")
        item = cp.next_item(db, u, cid)
        first = cp.submit_grade(db, u, item, tier=1, client_token="s1", expected_prior=None)
        with pytest.raises(cp.StaleGrade):  # the old screen (no prior answer) pressed again with another key
            cp.submit_grade(db, u, item, tier=2, client_token="s2", expected_prior=None)
        # the same press again is harmless (same token), and a deliberate change names what it changes
        assert cp.submit_grade(db, u, item, tier=1, client_token="s1", expected_prior=None) == first
        second = cp.submit_grade(db, u, item, tier=2, client_token="s3", expected_prior=first)
        rows = db.conn.execute("SELECT id, tier FROM grade_annotations WHERE item_id = ? AND user_id = ? ORDER BY id",
                               (item, u.id)).fetchall()
        assert rows == [(first, 1), (second, 2)]


def test_progress_per_annotator_and_bucket(demo_db):
    with connect(demo_db) as db:
        res = auth.get_user(db, "res")
        cid = cp.create_bucket_campaign(db, "progress", _cfg(seed=21, per_interval=3, k=2), ["doc00", "doc01"],
                                        actor=res)
        u = auth.get_user(db, "doc00")
        item = cp.next_item(db, u, cid)
        cp.submit_grade(db, u, item, tier=1, client_token="p1")
        second = cp.next_item(db, u, cid)
        cp.submit_grade(db, u, second, tier=None, skipped=True, client_token="p2")
        p = cp.campaign_progress(db, cid, actor=res)
        mine = next(a for a in p["annotators"] if a["annotator"] == "doc00")
        assert (mine["done"], mine["skipped"]) == (2, 1) and mine["assigned"] == sum(b["items"] for b in p["buckets"])
        assert sum(b["complete"] for b in p["buckets"]) == 0  # k = 2: nothing has both grades yet
        with pytest.raises(PermissionDenied):
            cp.campaign_progress(db, cid, actor=u)
        assert [c["name"] for c in cp.list_campaigns(db, actor=res)][-1] == "progress"


def test_progress_counts_grades_given_without_the_whole_text(demo_db):
    """A grade records what the screen showed (m026): the report counts those given while a text was not whole on
    screen, and those nothing measured; a change replaces what its grade counted."""
    from medeval.annotation import answers
    from medeval.annotation.answers import Answer

    with connect(demo_db) as db:
        res = auth.get_user(db, "res")
        cid = cp.create_random_campaign(db, "reading", 4, ["doc02"], k=1, seed=5, actor=res)
        u = auth.get_user(db, "doc02")
        given = []
        for n, shown in enumerate((True, False, None)):
            item = cp.next_item(db, u, cid)
            rid, _ = answers.submit(db, u, cid, f"i:{item}", Answer.from_tier_form(1, fully_shown=shown),
                                    client_token=f"r{n}")
            given.append((item, rid))
        item = cp.next_item(db, u, cid)
        answers.submit(db, u, cid, f"i:{item}", Answer.from_tier_form(None, skipped=True, fully_shown=False),
                       client_token="r-skip")  # a skip grades nothing: not counted
        stored = [r[0] for r in db.conn.execute("SELECT fully_shown FROM answers WHERE user_id = ? ORDER BY id",
                                                (u.id,))]
        assert stored == [1, 0, None, 0]
        p = cp.campaign_progress(db, cid, actor=res)
        mine = next(a for a in p["annotators"] if a["annotator"] == "doc02")
        assert (mine["not_fully_shown"], mine["not_measured"]) == (1, 1) == (p["not_fully_shown"], p["not_measured"])
        # the grade given unread is changed after reading the whole text: it no longer counts
        item, rid = given[1]
        answers.submit(db, u, cid, f"i:{item}", Answer.from_tier_form(2, fully_shown=True), client_token="r-change",
                       expected=rid)
        p = cp.campaign_progress(db, cid, actor=res)
        assert (p["not_fully_shown"], p["not_measured"]) == (0, 1)
        with pytest.raises(MedevalError, match="fully_shown"):
            Answer.from_tier_form(1, fully_shown=1)  # a measure is a bool, said as one


def test_my_answers_list_and_reopening_an_item_to_answer_it_again(demo_db):
    """History (issue 32 §4): every answered item with a snippet of the model's answer, filterable; any of them can
    be reopened -- the same item, the latest answer as ``prior`` -- and answered anew (append-only)."""
    with connect(demo_db) as db:
        res = auth.get_user(db, "res")
        cid = cp.create_random_campaign(db, "my answers list", 6, ["doc03"], k=1, seed=9, actor=res)
        u = auth.get_user(db, "doc03")
        given = []
        for n, how in enumerate(("grade", "skip", "flag", "grade")):
            s = cp.grading_state(db, u, cid)
            cp.submit_answer(db, u, cid, s.item.ref, tier=None if how == "skip" else 1, skipped=how == "skip",
                             flagged=how == "flag", note="the reference is outdated" if how == "flag" else None,
                             client_token=f"h{n}")
            given.append(s.item)
        mine = cp.my_answers(db, u, cid)
        assert [g.ref for g in mine] == [i.ref for i in reversed(given)]  # newest first, all of them
        assert [g.status for g in mine] == ["answered", "flagged", "skipped", "answered"]
        assert [g.ref for g in cp.my_answers(db, u, cid, status="skipped")] == [given[1].ref]
        assert mine[0].snippet == cp.snippet(given[3].response) and len(mine[0].snippet) <= cp.SNIPPET_CHARS + 1
        assert cp.snippet("a\n  b\tc") == "a b c" and cp.snippet("x" * 70).endswith("…")
        with pytest.raises(MedevalError, match="answered, skipped or flagged"):
            cp.my_answers(db, u, cid, status="done")

        # undo the last answer: its item again, with the answer it had
        s = cp.grading_state(db, u, cid, reopen=mine[0].ref)
        assert s.item.ref == given[3].ref and s.item.response == given[3].response
        assert s.prior == mine[0].annotation_id and s.reopened.tier == 1
        new = cp.submit_answer(db, u, cid, s.item.ref, tier=2, client_token="undo", expected_prior=s.prior)[0]
        rows = db.conn.execute("SELECT tier, supersedes FROM grade_annotations WHERE item_id = ? ORDER BY id",
                               (given[3].item_id,)).fetchall()
        assert rows == [(1, None), (2, mine[0].annotation_id)]
        assert cp.grading_state(db, u, cid).item.ref not in {i.ref for i in given}  # on with the queue
        # the skipped item, reopened from the list, and graded
        s = cp.grading_state(db, u, cid, reopen=given[1].ref)
        assert s.reopened.skipped and s.item.ref == given[1].ref
        cp.submit_answer(db, u, cid, s.item.ref, tier=0, client_token="from-list", expected_prior=s.prior)
        assert [g.ref for g in cp.my_answers(db, u, cid, status="skipped")] == []
        assert new in {g.annotation_id for g in cp.my_answers(db, u, cid)}
        # an item not answered (the next one), or one of another campaign, cannot be reopened
        nxt = cp.grading_state(db, u, cid).item
        with pytest.raises(MedevalError, match="no answer of yours"):
            cp.grading_state(db, u, cid, reopen=nxt.ref)
        cp.set_campaign_status(db, cid, "closed", actor=res)
        with pytest.raises(MedevalError, match="closed"):
            cp.grading_state(db, u, cid, reopen=given[0].ref)


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_campaign(demo_db):
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    def run(*a):
        return subprocess.run([sys.executable, "-m", "medeval", "campaign", *a, "--db", str(demo_db)], cwd=ROOT,
                              capture_output=True, text=True)

    r = run("create", "--name", "cli", "--annotators", "doc00,doc01,doc02", "--metrics", "cosine",
            "--aspect-types", "declarative", "--per-interval", "2", "--seed", "5")
    assert r.returncode == 0, r.stderr
    assert "short interval cosine/declarative" in r.stderr  # negative cosines are rare: reported, not skipped
    cid = int(r.stdout.split()[1].rstrip(":"))
    p = json.loads(run("progress", str(cid)).stdout)
    assert p["k"] == 3 and len(p["annotators"]) == 3
    assert "cli" in run("list").stdout
    assert json.loads(run("machine-agreement", str(cid)).stdout) == []  # nothing graded yet
    r2 = run("create-random", "--name", "v", "--annotators", "doc00,doc01", "--n", "20", "--k", "2")
    assert r2.returncode == 0 and "20 items, 2 annotators each" in r2.stdout
    bad = run("create", "--name", "x", "--annotators", "nobody", "--k", "1")
    assert bad.returncode == 1 and "not an active user" in bad.stderr
    assert run("close", str(cid)).stdout.strip() == f"campaign {cid} closed"
    assert json.loads(run("progress", str(cid)).stdout)["campaign"] == cid
    assert f"{cid}\tcli\tbucket_grading" in run("list").stdout and "\tclosed\t" in run("list").stdout
    assert run("reopen", str(cid)).returncode == 0
    missing = run("close", "999")
    assert missing.returncode == 1 and "no campaign 999" in missing.stderr


def test_clinicians_vs_machine_spearman(demo_db):
    """Simulated clinicians who mostly agree with the automated ROUGE-1 tier: the Spearman rows equal scipy
    on the same vectors, and the consensus is the median of the annotators' tiers."""
    import numpy as np
    from scipy import stats

    from medeval.engine import thresholds as th
    from medeval.calibration.validation import consensus_tiers, machine_agreement

    with connect(demo_db) as db:
        res = auth.get_user(db, "res")
        cid = cp.create_bucket_campaign(db, "validation", _cfg(metrics=("rouge1", "cosine"), seed=31, per_interval=5),
                                        ["doc00", "doc01", "doc02"], actor=res)
        version = th.active(db).version
        rng = np.random.default_rng(0)
        for name in ("doc00", "doc01", "doc02"):
            u = auth.get_user(db, name)
            while (item := cp.next_item(db, u, cid)) is not None:
                rid = db.conn.execute("SELECT response_id FROM campaign_items WHERE id = ?", (item,)).fetchone()[0]
                auto = db.conn.execute("SELECT tier FROM grades WHERE response_id = ? AND metric = 'rouge1' AND "
                                       "version = ?", (rid, version)).fetchone()[0]
                tier = int(np.clip(auto + rng.choice([-1, 0, 0, 0, 1]), 0, 2))
                cp.submit_grade(db, u, item, tier=tier, client_token=f"{name}-{item}")
        cons = consensus_tiers(db, cid)
        rows = machine_agreement(db, cid, actor=res)
        with pytest.raises(PermissionDenied):
            machine_agreement(db, cid, actor=auth.get_user(db, "doc00"))
        r = next(x for x in rows if x["metric"] == "rouge1" and x["aspect_type"] == "enumerated" and x["against"] == "score")
        ids = sorted(cons)
        score = {rid: s for rid, s in db.conn.execute(
            f"SELECT response_id, score FROM scores WHERE metric = 'rouge1' AND response_id IN ({','.join('?' * len(ids))})", ids)}
        want = stats.spearmanr([cons[i] for i in ids], [score[i] for i in ids])
        assert r["n"] == len(ids) and r["spearman"] == pytest.approx(want.statistic, abs=1e-12)
        assert r["spearman"] > 0.6 and r["ci95"][0] < r["spearman"] < r["ci95"][1]
        # enumerated items only: every row (the average of the metric tiers too) is on them; no numeric, no "all"
        assert any(x["metric"] == "average" and x["aspect_type"] == "enumerated" for x in rows)
        assert {x["aspect_type"] for x in rows} == {"enumerated"} and all(x["n"] > 0 for x in rows)


def test_random_validation_campaign(demo_db):
    with connect(demo_db) as db:
        res = auth.get_user(db, "res")
        a = cp.create_random_campaign(db, "val", 150, ["doc00", "doc01", "doc02", "doc03"], k=3, seed=9, actor=res)
        b = cp.create_random_campaign(db, "val2", 150, ["doc00", "doc01", "doc02", "doc03"], k=3, seed=9, actor=res)
        items = lambda c: sorted(r for (r,) in db.conn.execute(  # noqa: E731
            "SELECT response_id FROM campaign_items WHERE campaign_id = ?", (c,)))
        assert len(items(a)) == 150 and items(a) == items(b)  # reproducible from the stored seed
        per_item = {n for (n,) in db.conn.execute(
            "SELECT count(*) FROM assignments WHERE campaign_id = ? GROUP BY item_id", (a,))}
        assert per_item == {3}
        p = cp.campaign_progress(db, a, actor=res)
        assert p["buckets"][0]["items"] == 150
        with pytest.raises(MedevalError, match="asked for"):
            cp.create_random_campaign(db, "big", 10**5, ["doc00"], k=1, actor=res)
        with pytest.raises(MedevalError, match=r"--n \(responses drawn\) must be a whole number in \[1, 100000\]"):
            cp.create_random_campaign(db, "big", 10**5 + 1, ["doc00"], k=1, actor=res)
        with pytest.raises(PermissionDenied):
            cp.create_random_campaign(db, "x", 5, ["doc00"], k=1, actor=auth.get_user(db, "doc00"))


def test_grading_state_skips_revisits_and_closing(demo_db):
    with connect(demo_db) as db:
        res, a, b = (auth.get_user(db, u) for u in ("res", "doc10", "doc11"))
        cid = cp.create_random_campaign(db, "state", 4, ["doc10", "doc11"], k=2, seed=3, actor=res)
        s = cp.grading_state(db, a, cid)
        assert (s.done, s.total, s.position, s.skipped, s.recent) == (0, 4, 1, 0, ())
        first = s.item.item_id
        cp.submit_grade(db, a, first, tier=None, skipped=True, client_token="s1")
        for i in range(3):
            cp.submit_grade(db, a, cp.grading_state(db, a, cid).item.item_id, tier=i, client_token=f"g{i}")
        s = cp.grading_state(db, a, cid)
        assert s.item is None and (s.done, s.skipped) == (4, 1)
        assert [g.tier for g in s.recent] == [2, 1, 0, None] and s.recent[-1].skipped
        again = cp.grading_state(db, a, cid, revisit_skipped=True)
        assert again.item.item_id == first and again.prior == s.recent[-1].annotation_id
        cp.submit_grade(db, a, first, tier=1, client_token="late")
        assert cp.grading_state(db, a, cid, revisit_skipped=True).item is None
        assert [c["done"] for c in cp.my_campaigns(db, a) if c["id"] == cid] == [4]
        with pytest.raises(PermissionDenied):
            cp.set_campaign_status(db, cid, "closed", actor=a)
        cp.set_campaign_status(db, cid, "closed", actor=res)
        assert not cp.grading_state(db, b, cid).open
        with pytest.raises(MedevalError, match="closed"):
            cp.submit_grade(db, b, cp.next_item(db, b, cid), tier=1, client_token="x")
        # a resubmission of an answer saved before closing is still harmless
        assert cp.submit_grade(db, a, first, tier=1, client_token="late")
        cp.set_campaign_status(db, cid, "open", actor=res)
        cp.submit_grade(db, b, cp.next_item(db, b, cid), tier=1, client_token="x")
        actions = [r["action"] for r in auth.audit_rows(db) if r["target"] == str(cid)]
        assert actions.count("campaign.close") == 1 and actions.count("campaign.reopen") == 1
        with pytest.raises(PermissionDenied):
            cp.grading_state(db, auth.get_user(db, "doc12"), cid)  # nothing assigned to doc12 here
        with pytest.raises(PermissionDenied):
            cp.annotator_choices(db, actor=a)
        assert {"username": "doc10", "role": "annotator"} in cp.annotator_choices(db, actor=res)
