"""The interface in Simplified Chinese and English: the catalogue's checks (and that they catch what they should),
the language of the text being made, each account's language, and every page of every role in both languages."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog

from medeval.accounts import auth
from medeval.core import catalogue, i18n
from medeval.core.errors import MedevalError
from medeval.store.db import connect
from tests.conftest import copy_db, run_cli
from tests.i18n_support import (data_text, data_words, english_words, guideline_texts, interface_chinese,
                                 page_texts)

PW = "a-long-password"


# -- the catalogue ---------------------------------------------------------------------------------------------

def test_the_catalogue_is_complete_and_every_page_string_is_marked():
    problems = catalogue.check_all()
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(map(str, problems[:40]))


def test_the_glossary_gives_one_chinese_term_per_concept():
    rows = catalogue.read_glossary()
    assert len(rows) >= 30 and not catalogue.check_glossary(rows)
    by_en = {r["en"]: r["zh-CN"] for r in rows}
    # the terms the issue names, as Chinese clinicians and researchers say them
    assert by_en["agreement"] == "一致性" and by_en["intraclass correlation"] == "组内相关系数"
    assert by_en["gold"] == "金标准" and by_en["qualification"] == "资格测试" and by_en["adjudication"] == "仲裁"
    assert [by_en[t] for t in ("Completely Wrong", "Partially Correct", "Basically Correct")] == \
        ["完全错误", "部分正确", "基本正确"]
    two = rows + [{"en": "agreement", "zh-CN": "协议", "note": ""}]
    assert any("two Chinese terms" in p.what for p in catalogue.check_glossary(two))


def _template(*messages) -> Catalog:
    t = Catalog(locale=None)
    for m in messages:
        t.add(m)
    return t


def test_the_catalogue_check_catches_missing_empty_fuzzy_and_changed_placeholders():
    template = _template("Skip", "Item {n} of {total}", "Save", "Close", ("{n} item", "{n} items"), "Ready")
    zh = Catalog(locale="zh_CN")
    zh.add("Skip", "跳过")  # good
    zh.add("Item {n} of {total}", "第 {n} 条，共 {all} 条")  # a placeholder renamed
    zh.add("Save", "")  # empty
    zh.add("Close", "关闭", flags=["fuzzy"])  # fuzzy
    zh.add(("{n} item", "{n} items"), ("{n} 个条目",))  # one Chinese form, the fields of both English ones
    # "Ready" is missing
    problems = {p.where.split("msgid ")[1]: p.what for p in
                catalogue.check_catalogue("zh-CN", template, glossary=[], catalog=zh)}
    assert set(problems) == {"'Item {n} of {total}'", "'Save'", "'Close'", "'Ready'"}
    assert "placeholders" in problems["'Item {n} of {total}'"] and "no translation" in problems["'Save'"]
    assert "fuzzy" in problems["'Close'"] and "missing" in problems["'Ready'"]


def test_the_catalogue_check_holds_translations_to_the_glossary():
    template = _template("Skip this item", "Gold items answered", "Skipped")
    zh = Catalog(locale="zh_CN")
    zh.add("Skip this item", "跳过此条目")
    zh.add("Gold items answered", "已回答的标准条目")  # 金标准 left out
    zh.add("Skipped", "略过")  # "Skipped" is not the word "skip": no glossary rule applies
    glossary = [{"en": "skip", "zh-CN": "跳过"}, {"en": "gold", "zh-CN": "金标准"}, {"en": "item", "zh-CN": "条目"}]
    problems = catalogue.check_catalogue("zh-CN", template, glossary=glossary, catalog=zh)
    assert [p.where.split("msgid ")[1] for p in problems] == ["'Gold items answered'"]
    assert "金标准" in problems[0].what


def test_placeholders_are_compared_as_fields():
    assert catalogue.placeholders("{n} of {total:,}, %(pct)d%% and {{literal}}") == ["%(pct)d", "{n}", "{total:,}"]


def test_an_unmarked_page_string_is_found_and_a_marked_one_is_not(tmp_path):
    page = tmp_path / "page.py"
    page.write_text(textwrap.dedent('''
        import streamlit as st
        from medeval.core.i18n import _
        st.title("Grade")
        st.button(_("Skip"), help="Skip this item")
        st.caption(f"{n} / {total}")
        st.caption(f"{n} of {total}")
        st.info(f"Saved {n} grades")
        st.tabs([_("One"), "Two"])
        st.markdown("<style>.x {color: red}</style>")
        st.selectbox(_("Model"), ["a", "b"], format_func=str, key="model_choice")
        st.text(text)
        st.markdown("**Not text**")  # i18n: not text
    '''), encoding="utf-8")
    found = catalogue.unmarked_strings([page])
    assert sorted(int(p.where.rsplit(":", 1)[1]) for p in found) == [4, 5, 7, 8, 9]


# -- the language of the text being made -----------------------------------------------------------------------

def test_a_with_block_translates_and_the_command_line_stays_english():
    assert i18n.current() == "en" and i18n._("Skip") == "Skip"
    with i18n.language("zh-CN"):
        assert i18n._("Grade") == "评级" and i18n.current() == "zh-CN"
        with i18n.language("en"):
            assert i18n._("Grade") == "Grade"
        assert i18n._("an English text no one marked") == "an English text no one marked"
    assert i18n._("Grade") == "Grade"
    with pytest.raises(ValueError, match="zh-CN, en"):
        with i18n.language("fr"):
            pass


def test_chinese_has_one_plural_form_and_the_header_carries_it():
    # a fuzzy header is left out of the .mo with its plural rule, and Chinese would fall back to English plurals
    cat = catalogue.read_catalogue("zh-CN")
    assert not cat.fuzzy and cat.num_plurals == 1
    plural = next((m for m in cat if isinstance(m.id, tuple) and m.string and m.string[0]), None)
    if plural is None:
        pytest.skip("no plural message in the catalogue yet")
    with i18n.language("zh-CN"):
        for n in (1, 2, 5):
            assert i18n.ngettext(plural.id[0], plural.id[1], n) == plural.string[0]


def test_a_stale_compiled_catalogue_is_not_used(tmp_path, monkeypatch):
    locale = tmp_path / "locale"
    (locale / "zh_CN" / "LC_MESSAGES").mkdir(parents=True)
    po = locale / "zh_CN" / "LC_MESSAGES" / "medeval.po"
    po.write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n"Plural-Forms: nplurals=1; '
                  'plural=0;\\n"\n\nmsgid "Skip"\nmsgstr "跳过"\n', encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", locale)
    i18n.translations.cache_clear()
    try:
        assert i18n.translations("zh-CN").gettext("Skip") == "跳过"  # no .mo: the .po, compiled in memory
        mo = po.with_suffix(".mo")
        mo.write_bytes(b"")  # an older .mo (a broken one here) is not read
        os.utime(mo, (po.stat().st_mtime - 60,) * 2)
        i18n.translations.cache_clear()
        assert i18n.translations("zh-CN").gettext("Skip") == "跳过"
    finally:
        i18n.translations.cache_clear()


@pytest.mark.parametrize("tag, lang", [("zh-CN", "zh-CN"), ("zh", "zh-CN"), ("zh-Hans-CN", "zh-CN"),
                                       ("zh-TW", None), ("zh-Hant", None), ("en-GB", "en"), ("fr", None)])
def test_language_tags(tag, lang):
    assert i18n.normalize(tag) == lang


@pytest.mark.parametrize("setting, header, lang", [
    ("zh-CN", "en-US,en;q=0.9", "zh-CN"), ("en", "zh-CN", "en"), ("auto", "en-US,en;q=0.9,zh;q=0.5", "en"),
    ("auto", "fr-FR, zh-CN;q=0.8", "zh-CN"), ("auto", "fr-FR", "zh-CN"), ("auto", None, "zh-CN"),
    ("AUTO", "en", "en")])
def test_the_default_language_follows_the_setting_then_the_browser(monkeypatch, setting, header, lang):
    monkeypatch.setenv("MEDEVAL_LANGUAGE", setting)
    from medeval.core import settings

    assert settings.default_language(header) == lang


def test_numbers_and_dates_follow_the_language():
    import time

    t = time.mktime((2026, 3, 4, 14, 5, 0, 0, 0, -1))
    with i18n.language("zh-CN"):
        assert i18n.datetime_text(t) == "2026年3月4日 14:05" and i18n.percent(0.125, 1) == "12.5%"
    with i18n.language("en"):
        assert i18n.datetime_text(t) == "Mar 4, 2026, 2:05 PM" and i18n.number(1234567.891, 1) == "1,234,567.9"


def test_stored_moments_are_shown_in_the_server_zone_and_the_readers_words(monkeypatch):
    """The database keeps ISO 8601 in UTC ("2026-11-27T17:50:11Z"); a page shows it as the reader's language writes a
    date, in the server's zone (Shanghai: UTC+8, so the evening in UTC is the next morning)."""
    import time

    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        with i18n.language("zh-CN"):
            assert i18n.datetime_text("2026-11-27T17:50:11Z") == "2026年11月28日 01:50"
            assert i18n.datetime_text("2026-11-27T17:50:11Z", seconds=True) == "2026年11月28日 01:50:11"
        with i18n.language("en"):
            assert i18n.datetime_text("2026-11-27T17:50:11Z") == "Nov 28, 2026, 1:50 AM"
            assert i18n.datetime_text("2026-11-27T09:05:00") == "Nov 27, 2026, 9:05 AM"  # no zone: as written
            assert i18n.datetime_text("garbled") == "garbled" and i18n.datetime_text(None) == ""
        assert i18n.local_moment("2026-11-27T17:50:11Z").isoformat() == "2026-11-28T01:50:11"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_a_table_of_stored_moments_shows_dates_that_still_sort_in_time_order():
    from streamlit.testing.v1 import AppTest

    def script():
        from medeval.core.i18n import language
        from webui import tables

        with language("zh-CN"):
            tables.dataframe([{"at": "2026-09-01T00:00:00Z"}, {"at": "2026-11-27T17:50:11Z"}], times=("at",), key="t")
            tables.dataframe([{"at": "2026-09-01T00:00:00Z"}, {"at": "not stored by medeval"}], times=("at",),
                             key="u")

    at = AppTest.from_function(script).run()
    assert not at.exception
    shown, kept = at.dataframe
    assert str(shown.value["at"].dtype).startswith("datetime64")  # moments, not text: they sort in time order
    import json

    assert json.loads(shown.proto.columns)["at"]["type_config"] == {"type": "datetime", "format": "YYYY年M月D日 HH:mm"}
    assert list(kept.value["at"]) == ["2026-09-01T00:00:00Z", "not stored by medeval"]  # text left as it is


# -- each account's language -----------------------------------------------------------------------------------

def test_a_person_sets_their_own_language_an_admin_anyones(db):
    admin = auth.add_user(db, "admin", PW, "admin")
    doc = auth.add_user(db, "doc", PW, "annotator", language="zh-CN")
    other = auth.add_user(db, "other", PW, "annotator")
    assert (doc.language, other.language) == ("zh-CN", None)
    doc_s = auth.session_user(db, auth.create_session(db, auth.authenticate(db, "doc", PW)))
    assert doc_s.language == "zh-CN"
    assert auth.set_language(db, "doc", "en", actor=doc_s).language == "en"
    with pytest.raises(auth.PermissionDenied):
        auth.set_language(db, "other", "en", actor=doc_s)  # someone else's: admins only
    assert auth.get_user(db, "other").language is None
    assert auth.set_language(db, "other", "zh-cn", actor=admin).language == "zh-CN"
    with pytest.raises(MedevalError, match="zh-CN, en"):
        auth.set_language(db, "doc", "zh-TW", actor=admin)
    actions = [r["action"] for r in auth.audit_rows(db) if r["action"] == "user.set_language"]
    assert len(actions) == 2


def test_the_command_line_sets_languages(db_path):
    with connect(db_path) as db:
        auth.add_user(db, "admin", PW, "admin")
    import subprocess

    from tests.conftest import PYTHON, ROOT

    res = subprocess.run([PYTHON, "-m", "medeval", "users", "add", "doc", "--role", "annotator", "--language",
                          "zh-cn", "--db", str(db_path)], cwd=ROOT, capture_output=True, text=True,
                         input=PW + "\n" + PW + "\n")
    assert res.returncode == 0, res.stderr
    assert "doc\tannotator\tactive\tzh-CN" in run_cli("users", "list", "--db", str(db_path)).stdout
    res = run_cli("users", "set-language", "doc", "en", "--db", str(db_path))
    assert res.returncode == 0 and "doc now sees the web app in en" in res.stdout
    bad = run_cli("users", "set-language", "doc", "fr", "--db", str(db_path))
    assert bad.returncode != 0 and "zh-CN" in bad.stderr
    with connect(db_path) as db:
        assert auth.get_user(db, "doc").language == "en"
        assert auth.get_user(db, "admin").language is None


def test_the_demo_shows_both_languages_on_first_start(full_demo_template, tmp_path):
    from medeval.demo.build import DEMO_LANGUAGES, build_demo

    assert DEMO_LANGUAGES["doctor1"] == "zh-CN" and DEMO_LANGUAGES["researcher"] == "en"
    assert all(DEMO_LANGUAGES[u] == "zh-CN" for u in ("doctor2", "doctor3", "senior1"))
    assert callable(build_demo)


# -- every page, both languages --------------------------------------------------------------------------------

ROLE_PAGES = {
    "doctor1": ["app_pages/grade.py", "app_pages/annotate.py", "app_pages/help.py"],
    "senior1": ["app_pages/adjudicate.py", "app_pages/help.py"],
    "researcher": ["app_pages/campaigns.py", "app_pages/dashboard.py", "app_pages/adjudicate.py",
                   "app_pages/tuning.py", "app_pages/leaderboard.py", "app_pages/task_results.py",
                   "app_pages/exam.py", "app_pages/new_campaign.py", "app_pages/new_task.py", "app_pages/help.py"],
    "admin": ["app_pages/users.py", "app_pages/help.py"],
}


@pytest.fixture(scope="module")
def language_demo(full_demo_template, tmp_path_factory):
    return copy_db(full_demo_template, tmp_path_factory.mktemp("i18n") / "demo.db")


def _run_as(path, username, lang, page, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from medeval.demo.build import DEMO_ACCOUNTS
    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    monkeypatch.setenv("MEDEVAL_DB", str(path))
    password = {u: p for u, p, _ in DEMO_ACCOUNTS}[username]
    with connect(path) as db:
        auth.set_language(db, username, lang, actor=None)
        token = auth.create_session(db, auth.authenticate(db, username, password))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow
@pytest.mark.parametrize("username, page", [(u, p) for u, pages in ROLE_PAGES.items() for p in pages])
def test_every_page_in_chinese_has_no_english_interface_word(language_demo, monkeypatch, username, page):
    at = _run_as(language_demo, username, "zh-CN", page, monkeypatch)
    theirs = guideline_texts(language_demo)  # a researcher's guidelines, as they wrote them
    texts = [t for t in page_texts(at) if t not in theirs]
    assert any("\u4e00" <= ch <= "\u9fff" for t in texts for ch in t)
    left = english_words(texts, data_words(language_demo))
    assert not left, f"English on the Chinese {page} of {username}: {sorted(left)}"


def test_interface_chinese_is_found_and_data_is_not():
    """The English pages' check: Chinese from the data (an answer, a disease) passes, a Chinese label does not."""
    data = "糖尿病的并发症包括：视网膜病变;肾病"
    assert interface_chinese(["Reference: 糖尿病 · complications", "Model answer: 视网膜病变;肾病"], data) == set()
    assert interface_chinese(["保存 (Ctrl+Enter)", "中文 · English", "**部分正确** 2"], data) == {"保存", "部分正确"}


@pytest.mark.slow
@pytest.mark.parametrize("username, page", [(u, p) for u, pages in ROLE_PAGES.items() for p in pages])
def test_the_same_pages_in_english_carry_no_interface_chinese(language_demo, monkeypatch, username, page):
    at = _run_as(language_demo, username, "en", page, monkeypatch)
    theirs = guideline_texts(language_demo)  # a researcher's guidelines, as they wrote them (Chinese first)
    texts = [t for t in page_texts(at) if t not in theirs]
    # every string the page carries: Chinese in it is data (answers, references, names) or it is the interface's
    left = interface_chinese(texts, data_text(language_demo))
    assert not left, f"Chinese interface words on the English {page} of {username}: {sorted(left)}"
    words = [e.value for e in (*at.title, *at.subheader)] + [b.label for b in at.button]
    assert words and any(english_words([w]) for w in words)  # the page's own words are there, in English


@pytest.mark.slow
def test_after_a_switch_the_choices_are_labelled_in_the_new_language(language_demo, monkeypatch):
    at = _run_as(language_demo, "researcher", "en", "app_pages/tuning.py", monkeypatch)
    keyed = [sb for sb in at.selectbox if sb.key and sb.key != "ui_language"]
    assert keyed
    at.selectbox(key="ui_language").set_value("zh-CN").run()
    assert not at.exception
    for sb in at.selectbox:
        if sb.key in {k.key for k in keyed}:
            assert sb.proto.set_value, sb.key  # the choice is sent again, with its label in Chinese
            assert sb.proto.raw_value in sb.options
