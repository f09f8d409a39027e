"""The app starts (AppTest) on an empty database and shows no data before login exists."""

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def test_landing_page_starts(db_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DEMO", "1")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value == "medeval"
    assert any("DEMO MODE" in w.value for w in at.warning)
    assert any("Database ready" in s.value for s in at.success)
    assert db_path.exists()  # created on first start


def test_landing_page_reports_a_bad_database_path(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DB", str(tmp_path / "missing" / "x.db"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    assert any("does not exist" in e.value for e in at.error)
