"""The latest grade of each (item, annotator) is defined once, by the view ``latest_grade_annotations`` (m021).

Grades are append-only: a change adds a row, so the answer that counts is the newest row of its (item, annotator).
The view must give exactly that (checked against the rows worked through in Python), stay an index seek per row
(its plan uses ``grade_annotations_item``), and be the only place the subquery is written.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

import medeval
from medeval.accounts.auth import get_user
from medeval.annotation import adjudication as adj
from medeval.annotation import campaigns as cp
from medeval.reports import dashboard as dash
from medeval.store.db import connect
from tests.test_security_input import scored  # noqa: F401  (fixture)

PACKAGE = Path(medeval.__file__).resolve().parent


@pytest.fixture
def graded(scored):  # noqa: F811
    """A campaign of 6 items x 3 annotators: first grades, changes, a skip that is then graded, a grade then
    skipped, a flag; and a second campaign whose grades must stay out of the first's."""
    with connect(scored) as db:
        res = get_user(db, "res")
        cid = cp.create_random_campaign(db, "a", 6, ["doc1", "doc2", "doc3"], k=3, seed=1, actor=res)
        other = cp.create_random_campaign(db, "b", 2, ["doc1", "doc2", "doc3"], k=3, seed=2, actor=res,
                                          allow_overlap=True)
        items = [r[0] for r in db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ? ORDER BY id",
                                               (cid,))]
        docs = [get_user(db, f"doc{i}") for i in (1, 2, 3)]

        def grade(user, item, tier, **kw):
            return cp.submit_grade(db, user, item, tier=tier, client_token=uuid.uuid4().hex, **kw)

        for n, item in enumerate(items):
            for j, doc in enumerate(docs):
                if (n + j) % 4:  # some pairs left ungraded
                    grade(doc, item, (n + j) % 3)
        grade(docs[0], items[1], 0)  # a change
        grade(docs[0], items[1], 2)  # and another: the last one counts
        grade(docs[1], items[2], None, skipped=True)  # a grade, then a skip
        grade(docs[2], items[3], None, skipped=True)
        grade(docs[2], items[3], 1)  # a skip, then a grade
        grade(docs[1], items[5], 2, flagged=True, note="unclear reference")
        for item in [r[0] for r in db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ?", (other,))]:
            grade(docs[0], item, 0)
            grade(docs[0], item, 1)
    return scored, cid


def _latest_in_python(db) -> dict[int, tuple]:
    newest: dict[tuple[int, int], tuple] = {}
    for row in db.conn.execute("SELECT * FROM grade_annotations ORDER BY id"):
        newest[(row[1], row[2])] = row  # id, item_id, user_id, ...: a later row replaces an earlier one
    return {row[0]: row for row in newest.values()}


def test_the_view_holds_each_pairs_newest_row_and_nothing_else(graded):
    path, _ = graded
    with connect(path) as db:
        cols = [r[1] for r in db.conn.execute("PRAGMA table_info(latest_grade_annotations)")]
        assert cols == [r[1] for r in db.conn.execute("PRAGMA table_info(grade_annotations)")]
        view = {row[0]: row for row in db.conn.execute("SELECT * FROM latest_grade_annotations")}
        expected = _latest_in_python(db)
        assert view == expected
        total = db.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0]
        # superseded: 2 changes, a grade then skipped, a grade then skipped then graded (2), a grade then flagged,
        # one change per item of the other campaign (2)
        assert total - len(view) == 2 + 1 + 2 + 1 + 2


def test_reads_through_the_view_give_the_superseding_answer(graded):
    path, cid = graded
    with connect(path) as db:
        items = [r[0] for r in db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ? ORDER BY id",
                                               (cid,))]
        answers = {(a.item_id, a.annotator): a for a in dash.answers(db, cid)}
        assert answers[(items[1], "doc1")].tier == 2
        assert answers[(items[2], "doc2")].skipped and answers[(items[2], "doc2")].tier is None
        assert answers[(items[3], "doc3")].tier == 1 and not answers[(items[3], "doc3")].skipped
        assert len(answers) == len(_latest_in_python(db)) - 2 * 1  # the other campaign's two pairs left out
        latest = adj.latest_grades(db, cid)
        assert "doc2" not in {g["annotator"] for g in latest.get(items[2], [])}  # a skip is no tier
        assert {g["annotator"]: g["note"] for g in latest[items[5]]}["doc2"] == "unclear reference"
        res = get_user(db, "res")
        current = {(g["item"], g["annotator"]): g for g in cp.current_grades(db, cid, actor=res)}
        assert len(current) == len(answers)


def test_a_read_through_the_view_seeks_the_index(graded):
    """Without the index on (item_id, user_id, id) each row's "newest id" would be a scan of every grade.
    Since m023 (one table of answers) the index is ``answers_item``, with (family, gold) before the id."""
    path, cid = graded
    with connect(path) as db:
        idx = [r[2] for r in db.conn.execute("PRAGMA index_info(answers_item)")]
        assert idx == ["item_id", "user_id", "family", "gold", "id"]
        plan = [r[3] for r in db.conn.execute(
            "EXPLAIN QUERY PLAN SELECT g.item_id, g.tier FROM latest_grade_annotations g JOIN campaign_items ci "
            "ON ci.id = g.item_id WHERE ci.campaign_id = ?", (cid,))]
        assert any("COVERING INDEX answers_item (item_id=? AND user_id=? AND family=? AND gold=?)" in p
                   for p in plan), plan
        assert not any(p.startswith(("SCAN g", "SCAN answers")) for p in plan), plan


def test_the_subquery_is_written_once():
    pattern = re.compile(r"max\((g2?\.)?id\)\s+FROM\s+grade_annotations", re.IGNORECASE)
    found = [p.relative_to(PACKAGE).as_posix() for p in sorted(PACKAGE.rglob("*.py"))
             if pattern.search(p.read_text(encoding="utf-8"))]
    assert found == ["store/migrations/m021_latest_grade_annotations.py"]


@pytest.mark.parametrize("read", [lambda db, cid: adj.latest_grades(db, cid), lambda db, cid: dash.answers(db, cid)],
                         ids=["adjudication queue", "agreement dashboard"])
@pytest.mark.parametrize("analyze", [False, True], ids=["no statistics", "analyzed"])
def test_a_campaigns_latest_grades_are_read_from_its_items_not_from_every_answer(graded, read, analyze):
    """One table holds every campaign's answers of every family (m023): reading one campaign's latest grades must
    start from the campaign's items (an index seek), never walk every answer in the database in item order -- the
    plan SQLite chose for the adjudication queue's ``ORDER BY item_id`` until the views' family terms were marked
    ``likely()``. With or without the statistics ``ANALYZE`` gathers (an admin may run it; the bench does)."""
    path, cid = graded
    with connect(path) as db:
        if analyze:
            db.conn.execute("ANALYZE")
        seen = []
        db.conn.set_trace_callback(seen.append)
        read(db, cid)
        db.conn.set_trace_callback(None)
        reads = [s for s in seen if "latest_grade_annotations" in s]
        assert reads
        for sql in reads:
            plan = [r[3] for r in db.conn.execute("EXPLAIN QUERY PLAN " + sql)]
            assert plan[0].startswith("SEARCH ci USING COVERING INDEX sqlite_autoindex_campaign_items_1 "
                                      "(campaign_id=?)"), plan
            assert not any(p.startswith("SCAN") for p in plan), plan
