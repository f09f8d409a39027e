"""One item model (issue 25 §1, m025): every item of every campaign -- a tier campaign's items and gold items, a
task campaign's items and gold items -- is one row shape of the view ``items``, named by (family, gold, id) as
answers and assignments name it; ``item_rows`` is the one writer; items are fixed once written."""

import json
import pathlib
import re
import sqlite3

import pytest

from medeval.annotation import campaigns as cp
from medeval.annotation import gold, item_rows, tasks
from medeval.store.db import connect, transaction
from tests.conftest import copy_db
from tests.test_answers import both  # noqa: F401 (the fixture)
from tests.test_answers_gold import _mark
from tests.test_tasks import tdb  # noqa: F401 (the fixture under ``both``)

TABLES = {("tier", 0): "campaign_items", ("task", 0): "task_items", ("tier", 1): "gold_items",
          ("task", 1): "task_gold_items"}


def _plan(db, sql, args) -> list[str]:
    return [r[3] for r in db.conn.execute("EXPLAIN QUERY PLAN " + sql, args)]


def test_every_family_is_one_row_shape_of_items(both):  # noqa: F811
    t, k = both["tier"], both["task"]
    db = t["db"]
    (tier_gold, *_), (task_gold, *_) = _mark(t, "tier", 2), _mark(k, "task", 2)
    gold.unmark_gold(db, t["cid"], tier_gold, actor=t["res"])
    counts = {(f, g): n for f, g, n in db.conn.execute("SELECT family, gold, count(*) FROM items GROUP BY 1, 2")}
    assert counts == {("tier", 0): 10, ("task", 0): 3, ("tier", 1): 2, ("task", 1): 2}
    for (family, g), table in TABLES.items():
        assert counts[(family, g)] == db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    # a tier item: its scored response and strata; nothing of a task or a gold item
    row = db.conn.execute("SELECT i.campaign_id, i.response_id, i.strata, i.source, i.payload, i.expected, "
                          "i.retired_at FROM items i WHERE family = 'tier' AND gold = 0 ORDER BY id LIMIT 1").fetchone()
    first = db.conn.execute("SELECT campaign_id, response_id, strata FROM campaign_items ORDER BY id LIMIT 1").fetchone()
    assert row == (*first, None, None, None, None) and json.loads(row[2]) is not None
    # gold items keep their typed expected answer, also when a join materialises the view
    got = db.conn.execute(
        "SELECT i.family, i.expected, typeof(i.expected), i.reason, i.created_by, i.retired_by, c.id FROM items i "
        "JOIN campaigns c ON c.id = i.campaign_id WHERE i.gold = 1 AND i.id IN (?, ?) ORDER BY i.family",
        (tier_gold, task_gold)).fetchall()
    by_family = {r[0]: r for r in got if (r[0] == "tier" and r[6] == t["cid"]) or (r[0] == "task" and r[6] == k["cid"])}
    assert by_family["tier"][1:3] == (1, "integer") and by_family["tier"][5] == "res"  # retired above
    assert by_family["task"][2] == "text" and json.loads(by_family["task"][1]) == {"knowledge": "left"}
    assert by_family["task"][3] == "A names the reference" and by_family["task"][5] is None
    assert item_rows.active_gold_ids(db, "tier", t["cid"]) == [g for g in gold.active_gold_ids(db, t["cid"])]
    assert tier_gold not in item_rows.active_gold_ids(db, "tier", t["cid"])
    assert item_rows.gold_retired(db, "tier", t["cid"], tier_gold) is True
    assert item_rows.gold_retired(db, "task", k["cid"], task_gold) is False
    assert item_rows.gold_retired(db, "task", t["cid"], task_gold) is None  # not a gold item of that campaign


def test_the_one_writer_takes_exactly_a_familys_columns(both):  # noqa: F811
    t, k = both["tier"], both["task"]
    db = t["db"]
    before = db.conn.execute("SELECT count(*) FROM items").fetchone()[0]
    for family, gold_, values, message in (
            ("tier", False, {"response_id": 1}, r"missing \['strata'\]"),
            ("tier", False, {"response_id": 1, "strata": "{}", "source": "x"}, r"not its own \['source'\]"),
            ("task", True, {"source": "s", "payload": "{}"}, "missing"),
            ("essay", False, {}, "no item family 'essay'")):
        with pytest.raises(ValueError, match=message):
            item_rows.add(db, family, t["cid"], gold=gold_, **values)
    with pytest.raises(ValueError, match="no item family"):
        item_rows.active_gold_ids(db, "essay", t["cid"])
    with transaction(db):
        iid = item_rows.add(db, "task", k["cid"], source="extra-1", payload='{"q": "α ≥ 5 μg"}')
    assert db.conn.execute("SELECT family, gold, campaign_id, source, payload FROM items WHERE family = 'task' AND "
                           "gold = 0 AND id = ?", (iid,)).fetchone() == ("task", 0, k["cid"], "extra-1",
                                                                        '{"q": "α ≥ 5 μg"}')
    assert db.conn.execute("SELECT count(*) FROM items").fetchone()[0] == before + 1


def test_items_are_fixed_once_written(both):  # noqa: F811
    db = both["tier"]["db"]
    _mark(both["tier"], "tier", 1)
    _mark(both["task"], "task", 1)
    for table in TABLES.values():
        for sql in (f"UPDATE {table} SET campaign_id = campaign_id", f"DELETE FROM {table}"):
            with pytest.raises(sqlite3.DatabaseError, match="fixed once written|append-only"), db.conn:
                db.conn.execute(sql)
    for sql in ("UPDATE items SET campaign_id = 1", "DELETE FROM items", "INSERT INTO items (family) VALUES ('x')"):
        with pytest.raises(sqlite3.OperationalError, match="cannot modify items because it is a view"), db.conn:
            db.conn.execute(sql)


@pytest.mark.parametrize("sql, args, arms", [
    ("SELECT id FROM items WHERE family = ? AND gold = 1 AND campaign_id = ? AND retired_at IS NULL ORDER BY id",
     ("tier", 1), {"gi": "sqlite_autoindex_gold_items_1 (campaign_id=?)"}),
    ("SELECT retired_at IS NOT NULL FROM items WHERE family = ? AND gold = 1 AND id = ? AND campaign_id = ?",
     ("task", 1, 2), {"tg": "INTEGER PRIMARY KEY (rowid=?)"}),
    ("SELECT source, gold, id, retired_at IS NOT NULL FROM items WHERE family = 'task' AND campaign_id = ?", (2,),
     {"ti": "sqlite_autoindex_task_items_1 (campaign_id=?)", "tg": "sqlite_autoindex_task_gold_items_1 (campaign_id=?)"}),
])
def test_reads_of_items_seek_their_familys_table(both, sql, args, arms):  # noqa: F811
    """The planner pushes a read's terms into each arm of the view: the arms of the family read seek their
    table by its index or key, with or without ``ANALYZE`` statistics, on a database with other campaigns of
    both families (the other arms' family or gold term is false before their loop)."""
    t, k = both["tier"], both["task"]
    db = t["db"]
    _mark(t, "tier", 3)
    _mark(k, "task", 2)
    for n in (2, 3):  # more campaigns of both families, each with gold items
        cid = cp.create_random_campaign(db, f"g{n}", 8, ["doc1", "doc2"], k=2, seed=n, actor=t["res"])
        _mark({**t, "cid": cid}, "tier", 3)
        tcid = tasks.create_campaign(db, "preference", f"p{n}", ["doc1"], k=1, seed=n,
                                     config={"dataset": "clin", "compare": "answers", "max_items": 3}, actor=t["res"])
        _mark({**k, "cid": tcid}, "task", 2)
    assert (t["cid"], k["cid"]) == (1, 2)  # (the ids the parameters name)
    for analyze in (False, True):
        if analyze:
            db.conn.execute("ANALYZE")
        plan = _plan(db, sql, args)
        for alias, how in arms.items():
            seek = [p for p in plan if p.split(" ")[1:2] == [alias]]
            assert len(seek) == 1 and seek[0].startswith("SEARCH") and how in seek[0], (alias, plan)


def test_the_demo_shows_every_item_through_the_view(full_demo_template, tmp_path):
    """On the demo as the README builds it: the view has every row of the four tables, field for field."""
    with connect(copy_db(full_demo_template, tmp_path / "demo.db")) as db:
        c = db.conn
        pairs = {
            ("tier", 0): ("SELECT id, campaign_id, response_id, strata FROM campaign_items",
                          "SELECT id, campaign_id, response_id, strata FROM items"),
            ("task", 0): ("SELECT id, campaign_id, source, payload FROM task_items",
                          "SELECT id, campaign_id, source, payload FROM items"),
            ("tier", 1): ("SELECT g.id, g.campaign_id, g.response_id, g.expected_tier, g.reason, g.created_by, "
                          "g.created_at, x.retired_by FROM gold_items g LEFT JOIN gold_retired x ON x.gold_id = g.id",
                          "SELECT id, campaign_id, response_id, expected, reason, created_by, created_at, retired_by "
                          "FROM items"),
            ("task", 1): ("SELECT g.id, g.campaign_id, g.source, g.payload, g.expected, g.reason, g.created_by, "
                          "g.created_at, x.retired_by FROM task_gold_items g LEFT JOIN task_gold_retired x ON "
                          "x.gold_id = g.id",
                          "SELECT id, campaign_id, source, payload, expected, reason, created_by, created_at, "
                          "retired_by FROM items"),
        }
        for (family, g), (table_sql, view_sql) in pairs.items():
            rows = c.execute(table_sql + " ORDER BY 1").fetchall()
            assert rows, (family, g)  # the demo has items of every family
            assert c.execute(view_sql + " WHERE family = ? AND gold = ? ORDER BY id", (family, g)).fetchall() == rows
        assert c.execute("SELECT DISTINCT typeof(expected) FROM items WHERE gold = 1 AND family = 'tier'").fetchall() \
            == [("integer",)]


def test_items_and_answers_are_written_by_their_one_module_only():
    """Every INSERT into an item, retirement or answer table (or the answers' old names) is in ``item_rows`` or
    ``answer_rows``: the migrations aside, no other module of the product writes them."""
    root = pathlib.Path(__file__).resolve().parents[1]
    tables = ("campaign_items", "task_items", "gold_items", "task_gold_items", "gold_retired", "task_gold_retired",
              "answers", "grade_annotations", "task_answers", "gold_answers", "task_gold_answers")
    insert = re.compile(r"INSERT\s+(?:OR\s+\w+\s+)?INTO\s+(?:main\.)?\[?(" + "|".join(tables) + r")\b", re.I)
    files = [p for p in [*root.glob("medeval/**/*.py"), *root.glob("app_pages/*.py"), *root.glob("webui/*.py"),
                         root / "app.py"] if "migrations" not in p.parts]
    assert len(files) > 100
    writers = {str(p.relative_to(root)) for p in files if insert.search(p.read_text(encoding="utf-8"))}
    assert writers == {"medeval/annotation/answer_rows.py"}  # item_rows names its table by family: f"{table}"
    assert "INSERT INTO {table}" in (root / "medeval/annotation/item_rows.py").read_text(encoding="utf-8")
