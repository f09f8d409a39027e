"""SQL lives in the library's domain packages: none in the app (``app.py``, ``app_pages/``, ``webui/``) or the CLI
(``medeval/cli/``), which call named functions instead (issue 25 §5). The checker reads the sources with ``ast``: an
SQL statement in a string (f-strings and implicitly joined strings included; docstrings left out) or a call that
runs SQL on a connection (``.execute(``, ``.executemany(``, ``.executescript(``, ``.query(``) fails the test, named
by file and line. Then the named functions that replaced the pages' and commands' queries, each against a database.
"""

from __future__ import annotations

import ast
import re
import uuid
from pathlib import Path

import pytest

from medeval.accounts.auth import add_user, get_user
from medeval.annotation import campaigns as cp
from medeval.annotation import tasks
from medeval.reports import leaderboard as lb
from medeval.store import migrate
from medeval.store.db import connect
from tests.conftest import ROOT
from tests.test_security_input import scored  # noqa: F401  (fixture)
from tests.test_tasks import tdb, users  # noqa: F401  (fixture)

SQL = re.compile(r"\b(SELECT\b.*\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
                 r"(CREATE|DROP)\s+(TEMP\s+)?(TABLE|VIEW|INDEX|TRIGGER)|PRAGMA\s+\w+|WITH\s+\w+\s+AS\s*\()",
                 re.DOTALL)
RUNS_SQL = {"execute", "executemany", "executescript", "query"}
PLACES = ("app.py", "app_pages", "webui", "medeval/cli")


def _docstrings(tree: ast.AST) -> set[int]:
    """``id`` of every docstring node (a module's, a class's or a function's first string)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def sql_in(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each SQL string and each call that runs SQL in ``source``."""
    tree = ast.parse(source)
    skip, found = _docstrings(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            m = SQL.search(node.value)
            if m:
                found.append((node.lineno, f"SQL {m.group(0)[:40]!r}"))
        elif isinstance(node, ast.JoinedStr):  # an f-string's literal parts with a stand-in for each value
            text = "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
            m = SQL.search(text)
            if m:
                found.append((node.lineno, f"SQL {m.group(0)[:40]!r}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RUNS_SQL:
            found.append((node.lineno, f".{node.func.attr}("))
    return sorted(set(found))


def _files() -> list[Path]:
    out = []
    for place in PLACES:
        p = ROOT / place
        out += [p] if p.suffix == ".py" else sorted(p.rglob("*.py"))
    return out


def test_the_places_are_there():
    names = {p.relative_to(ROOT).as_posix() for p in _files()}
    assert {"app.py", "app_pages/tuning.py", "app_pages/leaderboard.py", "webui/page.py", "medeval/cli/campaigns.py",
            "medeval/cli/scoring.py", "medeval/cli/task_campaigns.py"} <= names


def test_no_sql_in_the_app_or_the_cli():
    bad = [f"{p.relative_to(ROOT)}:{line}: {what}" for p in _files()
           for line, what in sql_in(p.read_text(encoding="utf-8"))]
    assert not bad, ("SQL belongs in the domain package's data-access module (a named, tested function); found:\n"
                     + "\n".join(bad))


@pytest.mark.parametrize("source", [
    'n = db.conn.execute("SELECT count(*) FROM scores").fetchone()[0]',
    'q = "SELECT count(*) " \\\n    "FROM campaign_items WHERE campaign_id = ?"',
    'q = f"SELECT {col} FROM {table} WHERE id = ?"',
    'q = """\n  select 1\n"""; db.query(q)',
    'c.executemany(sql, rows)',
    'SQL = "INSERT OR IGNORE INTO users (name) VALUES (?)"',
    'SQL = "UPDATE campaigns SET status = ?"',
    'SQL = "DELETE FROM sessions"',
    'SQL = "PRAGMA journal_mode"',
    'SQL = "CREATE VIEW v AS SELECT 1"',
    'def f():\n    """Counts."""\n    return "WITH t AS (SELECT 1) SELECT * FROM t"',
])
def test_the_checker_finds_sql(source):
    assert sql_in(source)


@pytest.mark.parametrize("source", [
    '"""A page: SELECT nothing FROM here in a docstring."""',
    'st.selectbox("Select a campaign", options)',
    'st.info("Nothing is selected from the list; update the settings and delete the draft.")',
    'msg = f"Delete {name} from the campaign?"',
    'n = cp.item_count(db, cid)',
])
def test_the_checker_leaves_plain_text(source):
    assert sql_in(source) == []


# ---------------------------------------------------------------- the named functions that replaced them

def test_applied_count(tmp_path):
    import sqlite_utils

    bare = sqlite_utils.Database(tmp_path / "bare.db")
    assert migrate.applied_count(bare) == 0  # no _migrations table yet: no error, nothing created
    assert bare.table_names() == []
    with connect(tmp_path / "m.db") as db:
        n = migrate.applied_count(db)
        assert n == len(migrate.migrations()) >= 19
        assert [r[0] for r in db.conn.execute("SELECT name FROM _migrations ORDER BY name")] == \
            [name for name, _ in migrate.migrations()]


def test_campaign_item_count_and_grades_signature(scored):  # noqa: F811
    with connect(scored) as db:
        res = get_user(db, "res")
        a = cp.create_random_campaign(db, "a", 4, ["doc1", "doc2", "doc3"], k=2, seed=3, actor=res)
        b = cp.create_random_campaign(db, "b", 3, ["doc1", "doc2", "doc3"], k=2, seed=4, actor=res,
                                      allow_overlap=True)
        assert (cp.item_count(db, a), cp.item_count(db, b), cp.item_count(db, 999)) == (4, 3, 0)
        assert cp.item_count(db, a) == next(c["items"] for c in cp.list_campaigns(db, actor=res) if c["id"] == a)
        assert cp.grades_signature(db, a) == (0, None, 4)
        doc = get_user(db, "doc1")
        mine = [r[0] for r in db.conn.execute("SELECT item_id FROM assignments WHERE campaign_id = ? AND user_id = ? "
                                              "ORDER BY position", (a, doc.id))]
        g1 = cp.submit_grade(db, doc, mine[0], tier=2, client_token=uuid.uuid4().hex)
        assert cp.grades_signature(db, a) == (1, g1, 4)
        g2 = cp.submit_grade(db, doc, mine[0], tier=1, client_token=uuid.uuid4().hex)  # a change: a new row
        assert cp.grades_signature(db, a) == (2, g2, 4) and g2 > g1
        assert cp.grades_signature(db, b) == (0, None, 3)  # another campaign's grades leave it as it was


def test_task_item_count(tdb):  # noqa: F811
    res, = users(tdb, "res")
    cid = tasks.create_campaign(tdb, "rubric", "r1", ["doc1", "doc2", "doc3"], k=2, seed=5,
                                config={"dataset": "clin", "judge": "judge-x"}, actor=res)
    assert tasks.item_count(tdb, cid) == 3  # the three questions the judge assessed
    assert tasks.item_count(tdb, cid + 1) == 0
    assert [c["items"] for c in tasks.task_campaigns(tdb, actor=res) if c["id"] == cid] == [3]


def _scores_by_metric(db) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for metric, score in db.conn.execute("SELECT metric, score FROM scores"):
        out.setdefault(metric, []).append(score)
    return out


def test_score_count(scored):  # noqa: F811
    with connect(scored) as db:
        n = lb.score_count(db)
        # 2 models x 3 enumerated or declarative aspects x BLEU-1 and ROUGE-1, and exact match for the 2 numeric
        # answers (Severity Level)
        assert n == 2 * 3 * 2 + 2
        assert n == sum(len(v) for v in _scores_by_metric(db).values())


def test_the_cli_prints_the_counts(scored, tmp_path):  # noqa: F811
    from tests.conftest import invoke

    out = invoke("init", "--db", tmp_path / "new.db").output
    with connect(tmp_path / "new.db") as db:
        assert f"({migrate.applied_count(db)} migrations)" in out
    out = invoke("campaign", "create", "--db", scored, "--name", "r", "--annotators", "doc1,doc2,doc3",
                 "--sampling", "active", "--metrics", "rouge1", "--aspect-types", "enumerated").output
    with connect(scored) as db:
        cid = max(c["id"] for c in cp.list_campaigns(db, actor=None))
        assert f"campaign {cid}: seed round of {cp.item_count(db, cid)} items" in out
