import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PYTHON = sys.executable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# argon2 with the smallest parameters for the users the tests create (about 96 ms a hash otherwise; the web app,
# which the browser tests start, always hashes with production: medeval.accounts.auth.use_production_hashing)
os.environ.setdefault("MEDEVAL_PASSWORD_HASH_PROFILE", "test-only")
# The tests' own accounts see the interface in its source language, English, so their checks read the words the
# code writes; tests/test_i18n.py and the Chinese browser tests choose zh-CN where they look at Chinese.
os.environ.setdefault("MEDEVAL_LANGUAGE", "en")


@pytest.fixture(autouse=True)
def _no_language_left_behind():
    """An AppTest run leaves its session's language for Streamlit's reading of select box labels after the run
    (``webui.i18n._last_used``; never used in a server): forget it after each test, so a later test's library
    calls in this process speak English as the command line does."""
    yield
    import sys

    if "webui.i18n" in sys.modules:
        sys.modules["webui.i18n"]._last_used = None


def english_accounts(path) -> None:
    """Every account of the database at ``path`` set to English (the demo gives its clinicians Chinese): for the
    tests that read the English words of the pages. The Chinese tests leave the demo as built."""
    import sqlite3

    with sqlite3.connect(str(path)) as conn:
        conn.execute("UPDATE users SET language = 'en'")


@pytest.fixture
def db_path(tmp_path, monkeypatch):
    """Path of a fresh (not yet created) database file; MEDEVAL_DB points at it."""
    p = tmp_path / "test.db"
    monkeypatch.setenv("MEDEVAL_DB", str(p))
    return p


@pytest.fixture
def db(db_path):
    """An open, migrated database on a temporary file."""
    from medeval.store.db import connect

    with connect(db_path) as d:
        yield d


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_text(text, encoding=encoding)
    return path


KB_CSV = """disease,aspect,reference
感冒,Primary Symptoms,咳嗽;打喷嚏;流鼻涕;发热
感冒,药物,对乙酰氨基酚;布洛芬
感冒,Physical Examinations,咽部充血，扁桃体无肿大
感冒,危重等级,4
"""

RESP_CSV = """model,disease,aspect,response
ModelA,感冒,Primary Symptoms,感冒的主要症状包括：咳嗽、流涕和发烧。
ModelA,感冒,Medications,布洛芬
ModelA,感冒,Physical Examinations,咽部充血
ModelA,感冒,Severity Level,危重等级为4级
ModelB,感冒,Primary Symptoms,骨折
ModelB,感冒,Medications,无
ModelB,感冒,Physical Examinations,建议就医
ModelB,感冒,Severity Level,二级
"""

MODELS_CSV = """model,backbone,kind
ModelA,,general
ModelB,ModelA,medical
"""


@pytest.fixture
def small_files(tmp_path):
    """A tiny valid knowledge base, responses and models file (CSV)."""
    return {
        "kb": write(tmp_path / "kb.csv", KB_CSV),
        "responses": write(tmp_path / "responses.csv", RESP_CSV),
        "models": write(tmp_path / "models.csv", MODELS_CSV),
    }


def db_dump(path) -> list:
    """Every row of every table (for 'the database is unchanged' assertions)."""
    import sqlite3

    conn = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return [(t, sorted(map(repr, conn.execute(f"SELECT * FROM [{t}]")))) for t in tables]
    finally:
        conn.close()


# Property tests are deterministic in CI (same examples every run); explore locally with
# HYPOTHESIS_PROFILE=explore.
from hypothesis import settings as _hsettings  # noqa: E402

_hsettings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
_hsettings.register_profile("explore", deadline=None, max_examples=1000)
_hsettings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def invoke(*args):
    """A medeval command in process (faster than a subprocess); it must succeed."""
    from click.testing import CliRunner

    from medeval.cli import main

    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res


def run_cli(*args):
    """A medeval command in a subprocess from the repository root (UTF-8 output)."""
    import subprocess

    return subprocess.run([PYTHON, "-m", "medeval", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, encoding="utf-8", env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def pytest_collection_modifyitems(items):
    """A test on the demo database is slow: building it loads and runs the real embedding model."""
    for item in items:
        if {"demo_template", "full_demo_template"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory):
    """The demo data set imported, scored and graded (no accounts), built once per test run: copy it, don't write it."""
    from medeval.demo.build import build_demo
    from medeval.store.db import connect

    path = tmp_path_factory.mktemp("demo-template") / "demo.db"
    with connect(path) as db:
        build_demo(db, path.parent / "files", accounts=False)
    return path


@pytest.fixture(scope="session")
def full_demo_template(tmp_path_factory):
    """The whole demo as the README's first command builds it (accounts, campaigns, grades, task answers, gold
    answers of both families), built once per test process: copy it, don't write it."""
    from medeval.demo.build import build_demo
    from medeval.store.db import connect

    path = tmp_path_factory.mktemp("full-demo") / "demo.db"
    with connect(path) as db:
        build_demo(db, path.parent / "files")
    english_accounts(path)
    return path


def copy_db(src, dst) -> Path:
    """A consistent copy of an SQLite database (the backup API, so a WAL file is included)."""
    import sqlite3

    with sqlite3.connect(str(src)) as a, sqlite3.connect(str(dst)) as b:
        a.backup(b)
    return Path(dst)
