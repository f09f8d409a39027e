"""Issue 33: the sign-in pages, the media guard's refusals and the Help guides in Simplified Chinese and English.

The sign-in routes run in Starlette, outside any Streamlit session, so each request chooses its own language
(``webui.routes._language``): ``?lang=`` (the page's "中文 · English" links, remembered in ``LANGUAGE_COOKIE``), else
that cookie, else ``MEDEVAL_LANGUAGE`` (``auto``: ``Accept-Language``; zh-CN by default). The routes are called as
a real ASGI app (``tests.test_routes.request``). The Help guides of docs/help/zh-CN/ keep every English section's
slug (``## 评级 {#grade}``), so each link opens the same section in both languages.
"""

import re
import sqlite3
from http.cookies import SimpleCookie

import pytest
from argon2 import PasswordHasher
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import Response as StarletteResponse
from starlette.routing import Route

from medeval.accounts import auth, throttle
from medeval.core import i18n, runtime
from medeval.store.db import connect
from tests.test_routes import PW, _app_page, request
from webui import COOKIE_NAME, LANGUAGE_COOKIE
from webui import help as guide
from webui import routes as web
from webui.media import REFUSED, MediaGuard, MediaOwners

YEAR = 365 * 24 * 3600


@pytest.fixture
def app(db_path):
    with connect(db_path) as db:
        auth.add_user(db, "doc1", PW, "annotator")  # no language of its own
        auth.add_user(db, "res1", PW, "researcher", language="en")
    return Starlette(routes=web.routes() + [Route("/{path:path}", _app_page)], middleware=web.middleware())


@pytest.fixture
def cheap_hasher(monkeypatch):
    monkeypatch.setattr(runtime.current(), "hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))
    auth._dummy_hash.cache_clear()
    yield
    auth._dummy_hash.cache_clear()


def _default(monkeypatch, value: str | None) -> None:
    """MEDEVAL_LANGUAGE as a server would have it (None: not set, zh-CN)."""
    if value is None:
        monkeypatch.delenv("MEDEVAL_LANGUAGE", raising=False)
    else:
        monkeypatch.setenv("MEDEVAL_LANGUAGE", value)


def _html_lang(r) -> str:
    return re.search(r'<html lang="([^"]+)"', r.body).group(1)


def _language_cookie(r):
    jar = SimpleCookie()
    for v in r.header("set-cookie"):
        if v.startswith(f"{LANGUAGE_COOKIE}="):
            jar.load(v)
            return jar[LANGUAGE_COOKIE], v
    return None, None


def _with_language(lang: str) -> dict:
    return {"cookie": f"{LANGUAGE_COOKIE}={lang}"}


def _sign_in(app, username="doc1", password=PW, *, headers=None, client=("127.0.0.1", 1234)):
    return request(app, "POST", "/signin", form={"username": username, "password": password, "next": "/"},
                   headers=headers, client=client)


CHINESE_FORM = ("用户名", "密码", "在这台电脑上保持登录", ">登录</button>")
ENGLISH_FORM = ("Username", "Password", "Keep me signed in on this computer", ">Sign in</button>")


# ---------------------------------------------------------------- the sign-in page's language

def test_the_sign_in_page_is_chinese_by_default(app, monkeypatch):
    _default(monkeypatch, None)
    r = request(app, "GET", "/signin", headers={"accept-language": "en-US,en;q=0.9"})
    assert r.status == 200 and _html_lang(r) == "zh-CN"
    assert all(w in r.body for w in CHINESE_FORM) and "Username" not in r.body
    # the switch: each language named in itself, the one shown not a link, the other one a link that chooses it
    assert '<strong aria-current="true">中文</strong>' in r.body
    assert '<a href="/signin?lang=en" lang="en" hreflang="en">English</a>' in r.body
    assert _language_cookie(r) == (None, None)  # nothing chosen, nothing remembered


@pytest.mark.parametrize("asked, default, lang, words", [("en", None, "en", ENGLISH_FORM),
                                                         ("zh-CN", "en", "zh-CN", CHINESE_FORM),
                                                         ("zh_cn", "en", "zh-CN", CHINESE_FORM)])
def test_lang_in_the_address_chooses_and_is_remembered_for_a_year(app, monkeypatch, asked, default, lang, words):
    _default(monkeypatch, default)
    r = request(app, "GET", f"/signin?lang={asked}")
    assert r.status == 200 and _html_lang(r) == lang and all(w in r.body for w in words)
    cookie, raw = _language_cookie(r)
    assert cookie.value == lang and cookie["path"] == "/" and int(cookie["max-age"]) == YEAR
    assert cookie["httponly"] and cookie["samesite"].lower() == "lax" and not cookie["secure"]
    assert raw.lower().count("httponly") == 1


def test_the_cookie_chooses_when_the_address_does_not_and_the_address_beats_it(app, monkeypatch):
    _default(monkeypatch, "zh-CN")
    r = request(app, "GET", "/signin", headers=_with_language("en"))
    assert _html_lang(r) == "en" and all(w in r.body for w in ENGLISH_FORM)
    assert _language_cookie(r) == (None, None)  # already remembered
    assert '<a href="/signin?lang=zh-CN" lang="zh-CN" hreflang="zh-CN">中文</a>' in r.body
    r = request(app, "GET", "/signin?lang=zh-CN", headers=_with_language("en"))
    assert _html_lang(r) == "zh-CN" and _language_cookie(r)[0].value == "zh-CN"
    for junk in ("fr", "zh-TW", ""):  # not one of ours: ignored, never stored
        r = request(app, "GET", f"/signin?lang={junk}", headers=_with_language("en"))
        assert _html_lang(r) == "en" and _language_cookie(r) == (None, None), junk


@pytest.mark.parametrize("header, lang", [("en-US,en;q=0.9", "en"), ("zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"),
                                          ("en;q=0.5, zh-Hans;q=0.8", "zh-CN"), ("fr-FR, de;q=0.5", "zh-CN"),
                                          (None, "zh-CN")])
def test_auto_follows_the_browsers_accept_language(app, monkeypatch, header, lang):
    _default(monkeypatch, "auto")
    r = request(app, "GET", "/signin", headers={"accept-language": header} if header else None)
    assert _html_lang(r) == lang
    _default(monkeypatch, "en")  # not auto: the setting, whatever the browser prefers
    assert _html_lang(request(app, "GET", "/signin", headers={"accept-language": "zh-CN"})) == "en"


def test_the_switch_keeps_where_the_reader_was_going(app, monkeypatch):
    _default(monkeypatch, "zh-CN")
    r = request(app, "GET", "/signin?next=/grade%3Fcampaign%3D2")
    assert 'href="/signin?lang=en&amp;next=%2Fgrade%3Fcampaign%3D2"' in r.body
    r = request(app, "GET", "/signin?next=https://evil.example/")  # only a path of this server, as before
    assert 'href="/signin?lang=en"' in r.body


def test_the_messages_of_the_sign_in_page_in_both_languages(app, monkeypatch):
    _default(monkeypatch, "zh-CN")
    r = request(app, "GET", "/signin?signed_out=1&expired=1")
    assert "您已退出登录。" in r.body and "您的会话已结束。请重新登录，从上次的位置继续。" in r.body
    r = request(app, "GET", "/signin?signed_out=1&expired=1", headers=_with_language("en"))
    assert "You are signed out." in r.body and "Your session ended." in r.body
    monkeypatch.setenv("MEDEVAL_DEMO", "1")
    assert "演示模式" in request(app, "GET", "/signin").body


# ---------------------------------------------------------------- refusals in the reader's language

def test_a_wrong_password_in_chinese_and_in_english(app, db_path, monkeypatch):
    _default(monkeypatch, "zh-CN")
    r = _sign_in(app, password="wrong password")
    assert r.status == 401 and _html_lang(r) == "zh-CN"
    assert '<div class="msg err" role="alert">用户名或密码错误。</div>' in r.body
    assert 'value="doc1"' in r.body  # the form as it was sent
    r = _sign_in(app, password="wrong password", headers=_with_language("en"))
    assert r.status == 401 and "Wrong username or password." in r.body and _html_lang(r) == "en"
    with connect(db_path) as db:  # the library (and the command line) stays English
        with pytest.raises(auth.AuthError, match="^wrong username or password$"):
            auth.authenticate(db, "doc1", "wrong password")


def test_too_many_attempts_from_an_address_is_429_in_chinese(db_path, monkeypatch):
    _default(monkeypatch, "zh-CN")
    with connect(db_path) as db:
        auth.add_user(db, "doc1", PW, "annotator")
    app = Starlette(routes=web.routes(limiter=throttle.AddressLimiter(1, 60.0)))
    assert _sign_in(app, password="wrong password").status == 401
    r = _sign_in(app, password="wrong password")
    assert r.status == 429 and r.header("retry-after") == ["60"] and _html_lang(r) == "zh-CN"
    assert "此地址的登录尝试过多，请等待 60 秒后重试。" in r.body
    r = _sign_in(app, headers=_with_language("en"))
    assert r.status == 429 and "Too many sign-in attempts from this address; wait 60 seconds and try again." in r.body


def test_too_many_sign_ins_at_once_is_429_in_chinese(app, monkeypatch):
    _default(monkeypatch, "zh-CN")

    class Full(throttle.SigninPool):
        def submit(self, fn, *args, known=False):
            raise throttle.Busy("(the pool's own words are not shown)", 7)

    app = Starlette(routes=web.routes(pool=Full(1, 0)))
    r = _sign_in(app)
    assert r.status == 429 and r.header("retry-after") == ["7"]
    assert "同一时间的登录请求过多，请等待 7 秒后重试。" in r.body


def test_the_back_off_is_said_in_chinese_though_it_is_made_on_a_sign_in_thread(app, monkeypatch, cheap_hasher):
    _default(monkeypatch, "zh-CN")
    for _ in range(throttle.BACKOFF_AFTER):
        assert _sign_in(app, password="wrong password", client=("198.51.100.7", 1)).status == 401
    r = _sign_in(app, client=("198.51.100.7", 1))  # even the right password waits
    assert r.status == 429 and int(r.header("retry-after")[0]) >= 1
    message = re.search(r'role="alert">([^<]*)<', r.body).group(1)
    assert message.startswith("此地址对该用户名的登录失败次数过多：请等待 ") and message.endswith("秒，或请管理员重置密码。")
    r = _sign_in(app, client=("198.51.100.7", 1), headers=_with_language("en"))
    assert "Too many failed sign-ins for this username from this address: wait " in r.body


def test_a_full_disk_is_said_in_chinese(app, monkeypatch):
    _default(monkeypatch, "zh-CN")

    def full(db, user):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(auth, "create_session", full)
    r = _sign_in(app)
    assert r.status == 503 and "登录暂不可用：服务器磁盘已满，请告知管理员。" in r.body


def test_the_sign_out_page_speaks_the_language_of_the_sign_in(app, monkeypatch):
    _default(monkeypatch, "en")
    cookie = _sign_in(app).cookie()[COOKIE_NAME].value
    headers = {"cookie": f"{COOKIE_NAME}={cookie}; {LANGUAGE_COOKIE}=zh-CN"}
    r = request(app, "GET", "/signout", headers=headers)
    assert r.status == 200 and _html_lang(r) == "zh-CN" and ">退出登录</button>" in r.body
    r = request(app, "POST", "/signout", headers={**headers, "origin": "https://evil.example"})
    assert r.status == 403 and "此退出登录请求来自其他网站，已被拒绝。" in r.body


# ---------------------------------------------------------------- the account's own language after sign-in

def test_an_accounts_own_language_is_remembered_at_sign_in_and_none_is_not_invented(app, db_path, monkeypatch):
    _default(monkeypatch, "zh-CN")
    r = _sign_in(app, "res1")  # an account in English, on a Chinese sign-in page
    assert r.status == 303
    cookie, _ = _language_cookie(r)
    assert cookie.value == "en" and int(cookie["max-age"]) == YEAR  # the pages after it (signed out) speak English
    r = _sign_in(app, "doc1", headers=_with_language("en"))  # an account that has not chosen: left so
    assert r.status == 303 and _language_cookie(r) == (None, None)
    with connect(db_path) as db:
        assert auth.get_user(db, "doc1").language is None and auth.get_user(db, "res1").language == "en"


# ---------------------------------------------------------------- the media guard's refusals

async def _file(request):
    return StarletteResponse(b"data", media_type="text/csv")


def _media_get(app, headers=None):
    return request(app, "GET", "/media/3f2a.csv", headers=headers)


def test_a_refused_download_is_said_in_the_readers_language(db_path, monkeypatch):
    _default(monkeypatch, None)
    app = Starlette(routes=[Route("/media/{f:path}", _file)],
                    middleware=[Middleware(MediaGuard, owners=MediaOwners(), prefix="/media/")])
    r = _media_get(app)
    assert r.status == 403 and r.body.startswith("此文件只提供给打开其页面的那个会话")
    assert "charset=utf-8" in r.header("content-type")[0]
    assert _media_get(app, _with_language("en")).body == REFUSED
    with connect(db_path) as db:  # a signed-in reader: the account's own language
        user = auth.add_user(db, "res1", PW, "researcher", language="en")
        cookie = auth.sign_token(auth.secret_key(db), auth.create_session(db, user))
    r = _media_get(app, {"cookie": f"{COOKIE_NAME}={cookie}; {LANGUAGE_COOKIE}=zh-CN"})
    assert r.status == 403 and r.body == REFUSED


# ---------------------------------------------------------------- the Help guides in Chinese

def test_an_explicit_anchor_gives_a_heading_its_slug_and_is_not_shown():
    secs = guide.sections("# 医生使用说明 {#help-for-doctors}\n\n导言\n\n## 评级 {#grade}\n正文\n\n"
                          "```\n## 代码里的 {#not-a-heading}\n```\n\n## Rate & compare\n")
    assert [(s.title, s.slug) for s in secs] == [("医生使用说明", "help-for-doctors"), ("评级", "grade"),
                                                 ("Rate & compare", "rate-compare")]
    assert secs[1].parts[0][1].startswith("## 评级\n正文") and "{#not-a-heading}" in secs[1].parts[0][1]
    assert secs[1].body()[0][1].startswith("正文")
    assert guide.find(secs, "grade") is secs[1]
    assert guide.heading("Tune cut-offs") == ("Tune cut-offs", "tune-cut-offs")


@pytest.mark.parametrize("name", list(guide.GUIDES))
def test_every_chinese_guide_is_whole_and_keeps_the_english_slugs(name):
    en, zh = guide.guide_sections(name, "en"), guide.guide_sections(name, "zh-CN")
    assert guide.guide_file(name, "zh-CN") == guide.HELP_DIR / "zh-CN" / f"{name}.md"
    assert [s.slug for s in zh] == [s.slug for s in en]  # every link opens the same section in both languages
    text = guide.guide_file(name, "zh-CN").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if re.match(r"#{1,2} ", line)]
    assert len(headings) == len(zh) and all(re.search(r" \{#[a-z0-9-]+\}$", h) for h in headings), headings
    for e, z in zip(en, zh):
        assert re.search(r"[\u4e00-\u9fff]", z.title) and e.title != z.title, z.title
        assert not [p for p in z.parts if p[0] == "markdown" and "{#" in p[1]], z.slug  # shown without its slug
        # the same pictures (from the same files) and the same links to other guides, section by section
        assert [p[2] for p in z.parts if p[0] == "image"] == [p[2] for p in e.parts if p[0] == "image"], z.slug
        for p in z.parts:
            if p[0] == "image":
                assert p[1] and guide.image_file(p[2], base=guide.guide_file(name, "zh-CN").parent), p
        assert sorted(re.findall(r"\]\((/help[^)]*)\)", " ".join(p[1] for p in z.parts if p[0] == "markdown"))) == \
            sorted(re.findall(r"\]\((/help[^)]*)\)", " ".join(p[1] for p in e.parts if p[0] == "markdown")))
        words = " ".join(p[1] for p in z.parts if p[0] == "markdown")
        assert len(words) > 0.2 * len(" ".join(p[1] for p in e.parts if p[0] == "markdown")), z.slug  # not a stub
    # code stays code: the commands of the admin guide, word for word
    fences = re.findall(r"```bash\n(.*?)```", text, re.S)
    english = re.findall(r"```bash\n(.*?)```", guide.guide_file(name, "en").read_text(encoding="utf-8"), re.S)
    strip = lambda block: [line.split("#")[0].rstrip() for line in block.splitlines()]  # noqa: E731
    assert [strip(b) for b in fences] == [strip(b) for b in english]


def test_the_chinese_guides_name_the_keys_and_the_tiers():
    from tests.test_help_page import _screen_keys, _shown

    grade, task = _screen_keys()
    secs = {s.slug: "\n".join(p[1] for p in s.parts if p[0] == "markdown")
            for s in guide.guide_sections("doctor", "zh-CN")}
    for section, keys in (("grade", grade), ("rate-compare", task)):
        assert not sorted(k for k in keys if _shown(k) not in secs[section]), section
    for tier in ("完全错误", "部分正确", "基本正确"):
        assert f"| {tier} |" in secs["what-the-tiers-mean"]
    adjudicate = "\n".join(p[1] for p in guide.find(guide.guide_sections("adjudicator", "zh-CN"),
                                                    "recording-a-final-tier").parts if p[0] == "markdown")
    assert all(f"`{k}`" in adjudicate for k in ("1", "2", "3", "R", "Ctrl+Enter"))


@pytest.mark.parametrize("name", ["doctor", "adjudicator"])
def test_the_chinese_guides_for_clinicians_have_no_commands_or_settings(name):
    text = guide.guide_file(name, "zh-CN").read_text(encoding="utf-8")
    for word in ("MEDEVAL_", "python", "bash", "```", ".sh", ".toml", "SQLite", "database", "数据库"):
        assert word not in text, (name, word)


def test_the_help_tables_follow_the_readers_language():
    with i18n.language("zh-CN"):
        assert guide.guide_file("doctor") == guide.HELP_DIR / "zh-CN" / "doctor.md"
        here = guide.page_help("grade")
        assert here.section.title == "评级" and here.title == "Grade"  # the page's title: shown as _(title)
        assert ("修改答案", "changing-an-answer") in here.related
        found = guide.locate("users-audit", guide.role_guides("admin"))
        assert found[0] == "admin" and found[1].title == "用户与审计"
        assert i18n._(guide.GUIDES["adjudicator"]) == "仲裁医师"
    assert guide.guide_file("doctor") == guide.HELP_DIR / "en" / "doctor.md"  # English outside (tests, CLI)
    assert guide.page_help("grade").section.title == "Grade"


@pytest.mark.slow  # AppTest runs the whole Help page
def test_the_help_page_in_chinese(db_path):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui import page as ui

    with connect(db_path) as db:
        auth.add_user(db, "doc", PW, "annotator", language="zh-CN")
        token = auth.create_session(db, auth.authenticate(db, "doc", PW))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state[ui.TEST_TOKEN_KEY] = token
    at.run()
    at.switch_page("app_pages/help.py").run()
    assert not at.exception, at.exception
    text = "\n".join(m.value for m in at.markdown)
    assert at.title[0].value == "帮助" and at.subheader[0].value == "如何使用“评级”"
    assert "# 医生使用说明" in text and "## 评分与比较" in text and "{#" not in text
    assert "[修改答案](/help?guide=doctor&section=changing-an-answer)" in text
    assert len(at.image) == sum(1 for s in guide.guide_sections("doctor", "zh-CN") for p in s.parts if p[0] == "image")
    at.query_params["section"] = "rate-compare"  # a start-here panel's link, the same in both languages
    at.run()
    text = "\n".join(m.value for m in at.markdown)
    assert text.startswith("## 评分与比较") and "## 评级\n" not in text
    assert at.button(key="help_whole").label == "显示完整说明"
