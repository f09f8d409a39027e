"""Media files (``/media/...``: downloads, images) only for the live session that owns them (``webui/media.py``).

Two parts, no server and no browser (``tests/test_browser_downloads.py`` runs every page's downloads for real):

1. ``MediaGuard`` as a real ASGI middleware in front of a stand-in media route, with real sessions in a real
   database: no cookie, a forged cookie, another user's session, another session of the same user, a signed-out,
   idle or disabled session, a role that may no longer open the page: 403 every time; the owner's live session:
   200 with ``Cache-Control: no-store`` and ``Referrer-Policy: no-referrer``.
2. ``install`` on Streamlit's own ``MediaFileManager``: a file put up, a download made on click, Streamlit's
   clean-up and a session's shutdown, each as the registry sees it.
"""

from __future__ import annotations

import asyncio

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from medeval.accounts import auth
from medeval.store.db import connect
from webui import COOKIE_NAME
from webui.media import MediaGuard, MediaOwners, Owner, file_id, install

PW = "correct horse battery"
FILE = "3f2a9c"  # a file id (Streamlit's are a hash of the content)


async def _media(request):
    return Response(b"grade,tier\n1,2\n", media_type="text/csv", headers={"Cache-Control": "max-age=3600"})


async def _elsewhere(request):
    return PlainTextResponse("not media")


def _app(owners: MediaOwners | None, prefix: str = "/media/"):
    path = prefix + "{file_id:path}"
    return Starlette(routes=[Route(path, _media), Route("/{p:path}", _elsewhere)],
                     middleware=[Middleware(MediaGuard, owners=owners, prefix=prefix)])


def get(app, path: str, cookie: str | None = None, method: str = "GET"):
    """(status, headers as a dict of lower-case names, body) of one request through the app."""
    headers = [(b"host", b"testserver")]
    if cookie:
        headers.append((b"cookie", f"{COOKIE_NAME}={cookie}".encode()))
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": headers, "scheme": "http", "server": ("testserver", 80), "client": ("127.0.0.1", 1),
             "root_path": "", "http_version": "1.1", "asgi": {"version": "3.0"}}
    out = {"status": None, "headers": {}, "body": b""}

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = {k.decode().lower(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")

    asyncio.run(app(scope, receive, send))
    return out["status"], out["headers"], out["body"]


class People:
    """Users with signed session cookies, as ``POST /signin`` would set them."""

    def __init__(self, db_path):
        self.db_path = db_path
        with connect(db_path) as db:
            self.users = {name: auth.add_user(db, name, PW, role) for name, role in
                          (("res", "researcher"), ("res2", "researcher"), ("boss", "admin"), ("doc", "annotator"))}

    def sign_in(self, name: str) -> tuple[str, str]:
        """(cookie value, token hash) of a new session of ``name``."""
        with connect(self.db_path) as db:
            token = auth.create_session(db, self.users[name])
            cookie = auth.sign_token(auth.secret_key(db), token)
            return cookie, auth.session_user(db, token).session

    def owner(self, name: str, session: str, page: str = "campaigns", tab: str = "tab-1") -> Owner:
        return Owner(tab, session, self.users[name].id, page)


@pytest.fixture
def people(db_path):
    return People(db_path)


def test_only_the_owners_live_session_gets_the_file(people, db_path):
    owners = MediaOwners()
    app = _app(owners)
    cookie, session = people.sign_in("res")
    owners.claim(FILE, people.owner("res", session))
    path = f"/media/{FILE}.csv"

    status, headers, body = get(app, path, cookie)
    assert status == 200 and body == b"grade,tier\n1,2\n"
    assert headers["cache-control"] == "no-store" and headers["referrer-policy"] == "no-referrer"
    assert get(app, path, cookie, method="HEAD")[0] == 200

    other_user, _ = people.sign_in("res2")  # same role, another person
    same_user_elsewhere, _ = people.sign_in("res")  # the same person, another session (another browser)
    forged = cookie[:-2] + ("AA" if not cookie.endswith("AA") else "BB")
    for who in (None, "", forged, "not-a-cookie", other_user, same_user_elsewhere):
        status, headers, body = get(app, path, who)
        assert status == 403 and b"grade" not in body, who
        assert headers["cache-control"] == "no-store"
    # a file no one claimed, and a name that is no file: the same 403 (a stranger cannot tell them apart)
    assert get(app, "/media/ffff.csv", cookie)[0] == 403
    assert get(app, "/media/", cookie)[0] == 403
    status, _, body = get(app, "/other")
    assert (status, body) == (200, b"not media")  # not media: passed on untouched, without a session

    with connect(db_path) as db:  # signed out: the very cookie that was served a moment ago
        auth.logout(db, auth.unsign_token(auth.secret_key(db), cookie))
    assert get(app, path, cookie)[0] == 403


def test_an_idle_or_disabled_session_and_a_role_that_lost_the_page_are_refused(people, db_path, monkeypatch):
    owners = MediaOwners()
    app = _app(owners)
    path = f"/media/{FILE}.zip"
    cookie, session = people.sign_in("res")
    owners.claim(FILE, people.owner("res", session, page="leaderboard"))
    assert get(app, path, cookie)[0] == 200

    with connect(db_path) as db:  # the role changed while the session stays live: Leaderboard is not theirs now
        auth.set_role(db, "res", "annotator")
    assert get(app, path, cookie)[0] == 403
    with connect(db_path) as db:
        auth.set_role(db, "res", "researcher")
    assert get(app, path, cookie)[0] == 200

    boss, boss_session = people.sign_in("boss")
    owners.claim("audit", people.owner("boss", boss_session, page="users", tab="tab-2"))
    assert get(app, "/media/audit.csv", boss)[0] == 200
    assert get(app, "/media/audit.csv", cookie)[0] == 403  # a researcher's session never owned it
    with connect(db_path) as db:
        auth.add_user(db, "boss2", PW, "admin")
        auth.disable(db, "boss")
    assert get(app, "/media/audit.csv", boss)[0] == 403

    with connect(db_path) as db:
        db.conn.execute("UPDATE sessions SET last_seen = last_seen - 7200")
        db.conn.commit()
    monkeypatch.setenv("MEDEVAL_IDLE_TIMEOUT", "1800")
    assert get(app, path, cookie)[0] == 403


def test_a_page_outside_the_table_or_no_guard_installed_serves_nothing(people):
    owners = MediaOwners()
    cookie, session = people.sign_in("res")
    owners.claim(FILE, people.owner("res", session, page=None))  # a file put up outside any known page
    assert get(_app(owners), f"/media/{FILE}.csv", cookie)[0] == 403
    # the server's guard with no registry (install() did not run): every media request refused
    assert get(_app(None), f"/media/{FILE}.csv", cookie)[0] == 403


def test_a_shared_file_serves_each_of_its_owners(people):
    """Two sessions offered the same content (Streamlit keeps one file for both): each owner gets it."""
    owners = MediaOwners()
    app = _app(owners)
    a, a_session = people.sign_in("res")
    b, b_session = people.sign_in("res2")
    owners.claim(FILE, people.owner("res", a_session, tab="tab-a"))
    owners.claim(FILE, people.owner("res2", b_session, tab="tab-b"))
    assert get(app, f"/media/{FILE}.png", a)[0] == 200 and get(app, f"/media/{FILE}.png", b)[0] == 200
    owners.forget_session("tab-b")  # b's tab shut down
    assert get(app, f"/media/{FILE}.png", b)[0] == 403 and get(app, f"/media/{FILE}.png", a)[0] == 200


def test_under_a_base_url_path(people):
    owners = MediaOwners()
    app = _app(owners, prefix="/medeval/media/")
    cookie, session = people.sign_in("res")
    owners.claim(FILE, people.owner("res", session))
    assert get(app, f"/medeval/media/{FILE}.csv")[0] == 403
    assert get(app, f"/medeval/media/{FILE}.csv", cookie)[0] == 200


# ---------------------------------------------------------------- install() on Streamlit's media manager

def test_install_records_each_files_owner_and_follows_streamlits_clean_up():
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    now = {"owner": Owner("tab-1", "hash-1", 7, "campaigns")}
    owners = install(manager, owner_of=lambda: now["owner"])
    assert install(manager) is owners  # once per manager

    url = manager.add(b"a,b\n1,2\n", "text/csv", "coord-1", file_name="grades.csv", is_for_static_download=True)
    fid = file_id(url)
    assert url == f"/media/{fid}.csv" and owners.owners(fid) == [now["owner"]]

    # a download made on click: the placeholder is put up during the run (with its owner), the file on a worker
    # thread with no page running (owner_of says None there): the file takes the placeholder's owner
    placeholder = manager.add_deferred(lambda: b"zip bytes", "application/zip", "coord-2", file_name="r.zip")
    now["owner"] = None
    made = file_id(manager.execute_deferred(placeholder))
    assert owners.owners(made) == [Owner("tab-1", "hash-1", 7, "campaigns")]
    # a file put up with no signed-in user (no owner) is owned by no one
    nobody = file_id(manager.add(b"x", "text/plain", "coord-3", is_for_static_download=True))
    assert owners.owners(nobody) == []

    # Streamlit's clean-up: a new run forgets which files the session shows, and a download is kept one clean-up
    # longer (so a click during a rerun still works); the claims follow the files
    manager.clear_session_refs()
    manager.remove_orphaned_files()
    assert owners.owners(fid)  # still kept by Streamlit, still owned
    manager.remove_orphaned_files()
    assert manager.read_file(fid) is None and owners.owners(fid) == [] and owners.owners(made) == []
    assert owners.deferred_owner(placeholder) is None  # Streamlit dropped the placeholder: so do we
    assert len(owners) == 0


def test_a_download_made_while_the_page_reruns_keeps_its_owner():
    """The click that asks for a made-on-click file also reruns the page, and the rerun drops the button's
    placeholder while the file is still being made (a report's PDF takes seconds)."""
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    owner = Owner("dontcare", "hash-1", 7, "agreement")
    owners = install(manager, owner_of=lambda: owner)

    def slow_report() -> bytes:
        manager.remove_deferred("coord-zip")  # the rerun draws the button again: its old placeholder goes
        manager.remove_orphaned_files()  # and the run ends with Streamlit's clean-up
        return b"PK zip"

    placeholder = manager.add_deferred(slow_report, "application/zip", "coord-zip", file_name="everything.zip")
    made = file_id(manager.execute_deferred(placeholder))
    assert owners.deferred_owner(placeholder) is None and owners.owners(made) == [owner]


def test_a_session_that_shuts_down_gives_its_claims_up():
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    owner = Owner("dontcare", "hash-1", 7, "users")  # (no script running: Streamlit's session id is "dontcare")
    owners = install(manager, owner_of=lambda: owner)
    fid = file_id(manager.add(b"audit", "text/csv", "c", is_for_static_download=True))
    placeholder = manager.add_deferred(lambda: b"z", "application/zip", "d")
    assert owners.owners(fid) and owners.deferred_owner(placeholder)
    manager.clear_session_refs("dontcare")  # AppSession.shutdown names its session
    assert owners.owners(fid) == [] and owners.deferred_owner(placeholder) is None
