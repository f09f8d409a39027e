"""Issue 23 §7: the guidelines screen says "before your first item" only to someone who has not answered yet.

Before the fix it said so to everyone the gate stopped, also to a doctor who had graded items and was shown a new
version (or guidelines set after they started). The library (``guidelines.gate_state``) says whether the user has
answered in the campaign (grades, skips, task answers, gold answers) and whether they read an earlier version.
"""

import pytest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation import guidelines as gl
from medeval.annotation import tasks
from medeval.store.db import connect
from tests.test_guidelines import PW, _page, page_db  # noqa: F401  (fixture)
from tests.test_tasks import tdb  # noqa: F401  (the task fixture)

FIRST = "before your first item"


def _info(at) -> str:
    return "\n".join(i.value for i in at.info)


def test_gate_state_of_a_grading_campaign(page_db):  # noqa: F811
    with connect(page_db["path"]) as db:
        doc, cid = auth.get_user(db, "doc1"), page_db["campaign"]
        assert gl.gate_state(db, doc, cid) == {"answered": False, "read_earlier": False}
        gl.acknowledge(db, doc, cid, 1)
        assert gl.gate_state(db, doc, cid) == {"answered": False, "read_earlier": True}
        item = db.conn.execute("SELECT min(item_id) FROM assignments WHERE campaign_id = ?", (cid,)).fetchone()[0]
        cp.submit_grade(db, doc, item, tier=None, skipped=True, client_token="s1")  # a skip is an answer too
        assert gl.gate_state(db, doc, cid) == {"answered": True, "read_earlier": True}
        other = db.conn.execute("SELECT id FROM campaigns WHERE id != ?", (cid,)).fetchone()
        assert other is None  # (one campaign: the answer counted is this campaign's)


def test_gate_state_of_a_task_campaign(tdb):  # noqa: F811
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=None)
    doc = auth.get_user(tdb, "doc1")
    assert gl.gate_state(tdb, doc, cid)["answered"] is False
    item = tdb.conn.execute("SELECT min(item_id) FROM task_assignments WHERE campaign_id = ?", (cid,)).fetchone()[0]
    tasks.submit_answer(tdb, doc, item, "", None, client_token="t1", skipped=True)  # an item skipped: an answer
    assert gl.gate_state(tdb, doc, cid)["answered"] is True
    other = tasks.create_campaign(tdb, "rubric", "r2", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=None)
    assert gl.gate_state(tdb, doc, other)["answered"] is False  # answers elsewhere do not count


@pytest.mark.slow  # AppTest runs whole pages
def test_the_first_item_line_only_before_the_first_answer(page_db):  # noqa: F811
    at = _page(page_db["path"], "doc1", "app_pages/grade.py")
    assert FIRST in _info(at) and "changed" not in _info(at)
    at.button(key="guidelines_ack").click().run()
    # the item's key is the screen's business (opaque ids, issue 23 §3): the first "Basically Correct" button
    next(b for b in at.button if b.key and b.key.startswith("grade_") and b.key.endswith("_2")).click().run()
    with connect(page_db["path"]) as db:
        assert db.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == 1
        gl.set_guidelines(db, page_db["campaign"], "新版：劑量錯誤一律算部分正確", actor=None)
    at.run()  # a new version after a grade: asked again, but not "before your first item"
    assert at.button(key="guidelines_ack")
    assert FIRST not in _info(at)
    assert "have changed since you last read them: please read them before your next item" in _info(at)


@pytest.mark.slow  # AppTest runs whole pages
def test_guidelines_set_after_grading_started_say_next_item(db_path, small_files):
    from medeval.engine.importer import import_files

    with connect(db_path) as db:
        import_files(db, **small_files)
        with db.conn:
            db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'rouge1', 't', 0.5)",
                                [(r,) for (r,) in db.conn.execute("SELECT id FROM responses")])
        auth.add_user(db, "doc1", PW, "annotator")
        cid = cp.create_random_campaign(db, "round 1", 4, ["doc1"], k=1, seed=0, actor=None)
        doc = auth.get_user(db, "doc1")
        item = db.conn.execute("SELECT min(item_id) FROM assignments WHERE campaign_id = ?", (cid,)).fetchone()[0]
        cp.submit_grade(db, doc, item, tier=1, client_token="g1")
        gl.set_guidelines(db, cid, "Read me", actor=None)
    at = _page(db_path, "doc1", "app_pages/grade.py")
    assert at.button(key="guidelines_ack")
    assert FIRST not in _info(at) and "has guidelines now: please read them before your next item" in _info(at)
