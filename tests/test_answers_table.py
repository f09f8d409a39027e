"""One table of answers (issue 25 §1, m023): every family's answer is a row of ``answers`` with a status and a
typed value; the four old tables are views with the columns they had; the migration keeps every answer of a
database written by the code before it."""

import sqlite3

import pytest

from medeval.annotation import answer_rows, answers, guidelines
from medeval.annotation.answers import Answer
from medeval.core import runtime
from medeval.store import migrate
from medeval.store.db import connect
from tests.conftest import copy_db
from tests.test_answers import both  # noqa: F401 (the fixture)
from tests.test_tasks import tdb  # noqa: F401 (the fixture under ``both``)

OLD = ("grade_annotations", "task_answers", "gold_answers", "task_gold_answers")


def _answers(db, family):
    return db.conn.execute("SELECT campaign_id, family, gold, question, value, typeof(value), status, note, supersedes "
                           "FROM answers WHERE family = ? ORDER BY id", (family,)).fetchall()


def test_every_answer_is_one_row_with_a_status_and_a_typed_value(both):  # noqa: F811
    t, k = both["tier"], both["task"]
    db, doc1 = t["db"], t["user"]
    g1, _ = answers.submit(db, doc1, t["cid"], t["ref"], Answer.tier(2), client_token="a")
    g2, _ = answers.submit(db, doc1, t["cid"], t["ref"], Answer.tier(1, flagged=True, note="参考答案过时 ≥5 μg"),
                           client_token="b")
    g3, _ = answers.submit(db, doc1, t["cid"], t["ref"], Answer.skip(), client_token="c")
    g4, _ = answers.submit(db, doc1, t["cid"], t["ref"], Answer.skip(flagged=True, note="unreadable"),
                           client_token="d")
    assert _answers(db, "tier") == [
        (t["cid"], "tier", 0, "tier", 2, "integer", "submitted", None, None),
        (t["cid"], "tier", 0, "tier", 1, "integer", "flagged", "参考答案过时 ≥5 μg", g1),
        (t["cid"], "tier", 0, "tier", None, "null", "skipped", None, g2),
        (t["cid"], "tier", 0, "tier", None, "null", "flagged", "unreadable", g3)]
    # the old table's columns, as they were
    assert db.conn.execute("SELECT id, tier, skipped, flagged, note, supersedes FROM grade_annotations ORDER BY id"
                           ).fetchall() == [(g1, 2, 0, 0, None, None), (g2, 1, 0, 1, "参考答案过时 ≥5 μg", g1),
                                            (g3, None, 1, 0, None, g2), (g4, None, 1, 1, "unreadable", g3)]
    q = k["view"].pending.id
    a1, _ = answers.submit(db, doc1, k["cid"], k["ref"], Answer.questions({q: "left"}), client_token="e")
    a2, _ = answers.submit(db, doc1, k["cid"], k["ref"], Answer.flag("两个回答都是 <b>空的</b>"), client_token="f")
    assert _answers(db, "task") == [
        (k["cid"], "task", 0, q, "left", "text", "submitted", None, None),
        (k["cid"], "task", 0, "#flag", None, "null", "flagged", "两个回答都是 <b>空的</b>", None)]
    assert db.conn.execute("SELECT id, question, value, skipped FROM task_answers ORDER BY id").fetchall() == [
        (a1, q, "left", 0), (a2, "#flag", "两个回答都是 <b>空的</b>", 0)]
    assert len({g1, g2, g3, g4, a1, a2}) == 6  # one id space: an answer's id names it, whatever the family


def test_answered_in_sees_any_family_in_its_own_campaign_only(both):  # noqa: F811
    t, k = both["tier"], both["task"]
    db, doc1 = t["db"], t["user"]
    assert not answer_rows.answered_in(db, doc1.id, t["cid"]) and not answer_rows.answered_in(db, doc1.id, k["cid"])
    answers.submit(db, doc1, k["cid"], k["ref"], Answer.skip(), client_token="s")
    assert answer_rows.answered_in(db, doc1.id, k["cid"]) and not answer_rows.answered_in(db, doc1.id, t["cid"])
    assert guidelines.gate_state(db, doc1, k["cid"])["answered"] is True
    assert guidelines.gate_state(db, doc1, t["cid"])["answered"] is False


def test_the_old_names_are_views_that_take_inserts_and_refuse_changes(both):  # noqa: F811
    t = both["tier"]
    db, doc1 = t["db"], t["user"]
    kinds = dict(db.conn.execute("SELECT name, type FROM sqlite_master WHERE name IN (?, ?, ?, ?)", OLD).fetchall())
    assert kinds == dict.fromkeys(OLD, "view")
    item = int(t["ref"].split(":")[1])
    with db.conn:  # a researcher's old-style insert goes to answers, with its status
        db.conn.execute("INSERT INTO grade_annotations (item_id, user_id, tier, skipped, flagged, note, client_token, "
                        "created_at) VALUES (?, ?, NULL, 1, 1, 'no reference', 'x', 1.0)", (item, doc1.id))
    assert _answers(db, "tier") == [(t["cid"], "tier", 0, "tier", None, "null", "flagged", "no reference", None)]
    k = both["task"]
    answers.submit(db, doc1, k["cid"], k["ref"], Answer.skip(), client_token="s")
    # (as the old tables' triggers, a view's fire per row: a statement that matches no row changes nothing)
    for sql in ("UPDATE grade_annotations SET tier = 2", "DELETE FROM grade_annotations", "UPDATE answers SET value = 2",
                "DELETE FROM answers", "UPDATE task_answers SET value = 'x'", "DELETE FROM task_answers"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"), db.conn:
            db.conn.execute(sql)
    assert db.conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 2


@pytest.mark.parametrize("row, message", [
    (dict(family="tier", value=3), "CHECK"),  # a tier outside 0/1/2
    (dict(family="tier", value="2"), "CHECK"),  # a tier is an integer, not its text
    (dict(family="tier", value=1, status="skipped"), "CHECK"),  # a skip has no value
    (dict(family="tier", status="draft"), "CHECK"),
    (dict(family="tier", mode="hidden"), "CHECK"),  # a real answer has no gold mode
    (dict(family="tier", mode="qualification"), "CHECK"),
    (dict(family="essay"), "CHECK"),
    (dict(family="tier", item_id=10_000), "not assigned"),  # the old foreign key: an assigned item
    (dict(family="tier", user="doc3"), "not assigned"),  # ... assigned to this annotator
    (dict(family="task"), "not assigned"),  # a tier item's id is not a task item's
    (dict(family="tier", gold=True, mode="hidden"), "not assigned"),  # no such gold item
])
def test_the_table_refuses_a_row_no_family_could_write(both, row, message):  # noqa: F811
    t = both["tier"]
    db = t["db"]
    user = db.conn.execute("SELECT id FROM users WHERE username = ?", (row.pop("user", "doc1"),)).fetchone()[0]
    args = dict(campaign_id=t["cid"], item_id=int(t["ref"].split(":")[1]), user_id=user, question="tier", value=2,
                status="submitted", client_token="z", created_at=1.0)
    with pytest.raises(sqlite3.IntegrityError, match=message), db.conn:
        answer_rows.insert(db, **{**args, **row})
    assert db.conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 0


# ---------------------------------------------------------------- the migration

def _old_database(demo, path):
    """A database as the code before m023 wrote it: every migration up to m022, the demo's rows copied in, each
    answer family numbered from 1 as its own table did, plus the rows the demo has none of (changes, task skips
    and flags, a flagged skip, a gold change)."""
    before = [m for m in migrate.migrations() if m[0] < "m023"]
    with runtime.use(runtime.current().but(migrations=migrate.Migrations(before))), connect(path):
        pass
    conn = sqlite3.connect(str(path))
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("ATTACH DATABASE ? AS demo", (str(demo),))
    tables = [n for (n,) in conn.execute("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT IN "
                                         "('_migrations', 'sqlite_sequence') ORDER BY name")]
    for table in tables:
        cols = ", ".join(f"[{r[1]}]" for r in conn.execute(f"PRAGMA main.table_info([{table}])"))
        if table in OLD:  # renumbered 1..n in the family, supersedes with it
            rows = conn.execute(f"SELECT {cols} FROM demo.[{table}] ORDER BY id").fetchall()
            names = [r[1] for r in conn.execute(f"PRAGMA main.table_info([{table}])")]
            new_id = {r[0]: n for n, r in enumerate(rows, 1)}
            s = names.index("supersedes")
            rows = [(new_id[r[0]], *r[1:s], new_id.get(r[s]), *r[s + 1:]) for r in rows]
            conn.executemany(f"INSERT INTO main.[{table}] ({cols}) VALUES ({', '.join('?' * len(names))})", rows)
        else:
            # (OR REPLACE: the rows the migrations seeded, the demo has too)
            conn.execute(f"INSERT OR REPLACE INTO main.[{table}] ({cols}) SELECT {cols} FROM demo.[{table}]")
    g = conn.execute("SELECT id, item_id, user_id FROM grade_annotations ORDER BY id LIMIT 1").fetchone()
    conn.execute("INSERT INTO grade_annotations (item_id, user_id, tier, skipped, flagged, note, client_token, "
                 "supersedes, created_at, guideline_version) VALUES (?, ?, NULL, 1, 1, '看不清', 'm1', ?, 9.0, 2)",
                 (g[1], g[2], g[0]))
    a = conn.execute("SELECT id, item_id, user_id, question FROM task_answers ORDER BY id LIMIT 1").fetchone()
    conn.executemany("INSERT INTO task_answers (item_id, user_id, question, value, skipped, client_token, supersedes, "
                     "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 9.0)",
                     [(a[1], a[2], a[3], "5", 0, "m2", a[0]), (a[1], a[2], "", None, 1, "m3", None),
                      (a[1], a[2], "#flag", "两个回答相同", 0, "m4", None)])
    h = conn.execute("SELECT id, gold_id, user_id FROM gold_answers WHERE mode = 'hidden' ORDER BY id LIMIT 1"
                     ).fetchone()
    conn.execute("INSERT INTO gold_answers (gold_id, user_id, tier, skipped, flagged, note, mode, client_token, "
                 "supersedes, created_at) VALUES (?, ?, 0, 0, 1, 'α-blocker?', 'hidden', 'm5', ?, 9.0)", (h[1], h[2], h[0]))
    conn.commit()
    assert conn.execute("PRAGMA main.foreign_key_check").fetchall() == []
    conn.close()


def test_the_migration_keeps_every_answer_of_an_old_database(full_demo_template, tmp_path):
    demo = copy_db(full_demo_template, tmp_path / "demo.db")
    old_path = tmp_path / "old.db"
    _old_database(demo, old_path)
    conn = sqlite3.connect(str(old_path))
    cols = {t: [r[1] for r in conn.execute(f"PRAGMA table_info({t})")] for t in OLD}
    old = {t: conn.execute(f"SELECT {', '.join(cols[t])} FROM {t} ORDER BY id").fetchall() for t in OLD}
    # every other table, on the columns it has now (a later migration may add one, as m027 does to adjudications)
    rest_cols = {t: ", ".join(f"[{r[1]}]" for r in conn.execute(f"PRAGMA table_info([{t}])")) for (t,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('_migrations', 'sqlite_sequence') "
        "ORDER BY name") if t not in OLD}
    rest = {t: sorted(map(repr, conn.execute(f"SELECT {c} FROM [{t}]"))) for t, c in rest_cols.items()}
    conn.close()
    assert all(old[t] for t in OLD) and old["task_answers"][0][0] == old["grade_annotations"][0][0] == 1
    with connect(old_path) as db:  # m023 runs
        assert db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        shift = 0
        for t in OLD:
            new = db.conn.execute(f"SELECT {', '.join(cols[t])} FROM {t} ORDER BY id").fetchall()
            s = cols[t].index("supersedes")
            expect = [(r[0] + shift, *r[1:s], None if r[s] is None else r[s] + shift, *r[s + 1:]) for r in old[t]]
            assert new == expect, t
            shift = max(r[0] for r in new)
        assert db.conn.execute("SELECT count(*) FROM answers").fetchone()[0] == sum(map(len, old.values()))
        statuses = set(db.conn.execute("SELECT family, gold, status, typeof(value) FROM answers"))
        assert {("tier", 0, "flagged", "null"), ("task", 0, "skipped", "null"), ("task", 0, "flagged", "null"),
                ("tier", 1, "flagged", "integer"), ("tier", 0, "submitted", "integer"),
                ("task", 1, "submitted", "text")} <= statuses
        for t, rows in rest.items():  # every other table as it was
            assert sorted(map(repr, db.conn.execute(f"SELECT {rest_cols[t]} FROM [{t}]"))) == rows, t
        # the latest grade per annotator reads through the new view as before: the flagged skip replaced a grade
        first = old["grade_annotations"][0]
        latest = db.conn.execute("SELECT tier, skipped, flagged, note FROM latest_grade_annotations WHERE item_id = ? "
                                 "AND user_id = ?", (first[1], first[2])).fetchall()
        assert latest == [(None, 1, 1, "看不清")]


# ---------------------------------------------------------------- assignments (m024)

def test_both_families_assignments_are_one_table_fixed_at_creation(both):  # noqa: F811
    t, k = both["tier"], both["task"]
    db = t["db"]
    rows = db.conn.execute("SELECT family, count(*), count(layout), count(DISTINCT campaign_id) FROM item_assignments "
                           "GROUP BY family ORDER BY family").fetchall()
    assert rows == [("task", 3, 3, 1), ("tier", 20, 0, 1)]  # 10 items x k=2; 3 items x k=1, each with its layout
    assert db.conn.execute("SELECT count(*) FROM assignments").fetchone()[0] == 20
    assert db.conn.execute("SELECT count(*) FROM task_assignments WHERE layout LIKE '{%'").fetchone()[0] == 3
    kinds = dict(db.conn.execute("SELECT name, type FROM sqlite_master WHERE name IN "
                                 "('assignments', 'task_assignments', 'item_assignments')").fetchall())
    assert kinds == {"assignments": "view", "task_assignments": "view", "item_assignments": "table"}
    for sql in ("UPDATE item_assignments SET position = 99", "DELETE FROM item_assignments",
                "UPDATE assignments SET user_id = 3", "DELETE FROM task_assignments"):
        with pytest.raises(sqlite3.DatabaseError, match="fixed when the campaign is created"), db.conn:
            db.conn.execute(sql)
    tier_item = int(t["ref"].split(":")[1])
    doc3 = t["other"].id
    for family, item, cid, layout in (("tier", tier_item, k["cid"], None),  # a tier item under the task campaign
                                      ("task", tier_item + 10_000, k["cid"], "{}"),  # no such task item
                                      ("tier", tier_item, t["cid"], "{}"),  # a tier assignment has no layout
                                      ("essay", tier_item, t["cid"], None)):
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY|CHECK"), db.conn:
            db.conn.execute("INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position, layout) "
                            "VALUES (?, ?, ?, ?, 999, ?)", (family, item, doc3, cid, layout))
    with db.conn:  # an old-style insert through the view lands in the table
        db.conn.execute("INSERT INTO assignments (item_id, user_id, campaign_id, position) VALUES (?, ?, ?, 999)",
                        (tier_item, doc3, t["cid"]))
    assert db.conn.execute("SELECT family, layout FROM item_assignments WHERE user_id = ? AND position = 999",
                           (doc3,)).fetchall() == [("tier", None)]
