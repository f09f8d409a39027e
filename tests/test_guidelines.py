"""Campaign guidelines: safe Markdown, append-only versions, roles, audit, acknowledgement gating, the version
recorded with each grade and answer, the CLI and the demo's guidelines."""

import csv
import io
import json
import re
import sqlite3

import pytest
from markdown_it import MarkdownIt

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation import guidelines as gl
from medeval.annotation import tasks
from medeval.annotation.screen_keys import screen_key
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.engine.importer import import_files
from medeval.store.db import connect
from tests.conftest import db_dump, invoke, run_cli, write
from tests.test_tasks import tdb  # noqa: F401  (the task fixture)

PW = "correct horse battery"


@pytest.fixture
def grading(db, small_files):
    """A random-validation campaign of 4 items for one annotator (scores written directly: no model needed)."""
    import_files(db, **small_files)
    with db.conn:
        db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'rouge1', 't', 0.5)",
                            [(r,) for (r,) in db.conn.execute("SELECT id FROM responses")])
    auth.add_user(db, "aa", PW, "annotator")
    auth.add_user(db, "res", PW, "researcher")
    cid = cp.create_random_campaign(db, "g", 4, ["aa"], k=1, seed=1, actor=None)
    return db, auth.get_user(db, "aa"), auth.get_user(db, "res"), cid


# ---------------------------------------------------------------- safe Markdown

HOSTILE = [  # (text, what must not come out of rendering it)
    ("<script>alert(1)</script>", "<script"),
    ("<img src=x onerror=alert(1)>", "<img"),
    ("[x](javascript:alert(1))", 'href="javascript'),
    ("[x](JaVaScRiPt:alert(1))", 'href="javascript'),
    ("[x](data:text/html;base64,PHNjcmlwdD4=)", 'href="data'),
    ("![tracker](https://evil.example/pixel.png)", "<img"),
    ("![a](data:image/png;base64,AAAA)", "<img"),
    ("<div onclick=\"steal()\">\nraw block\n</div>", "<div"),
    ("<javascript:alert(1)>", 'href="javascript'),
    ("[rel](/signout)", 'href="/signout'),
    ("[m](mailto:a@b.c)", 'href="mailto'),
    ("<a href=\"https://x.org\" target=\"_self\">a</a>", "<a "),
]
# a renderer that lets raw HTML through (Streamlit does not; the sanitizer must not rely on that)
PERMISSIVE = MarkdownIt("commonmark", {"html": True})


@pytest.mark.parametrize("text,forbidden", HOSTILE)
def test_safe_markdown_leaves_no_html_no_images_and_no_unsafe_links(text, forbidden):
    html = PERMISSIVE.render(gl.safe_markdown(text))
    assert forbidden not in html.lower()
    assert not re.search(r"<(script|img|div|iframe|a )", html.replace('<a href="http', ""))
    assert all(h.startswith(("http://", "https://")) for h in re.findall(r'href="([^"]*)"', html))


def test_the_hostile_inputs_are_hostile_without_the_sanitizer():
    # the check above can fail: rendered as written, most of them do produce a tag or an image
    leaked = [t for t, bad in HOSTILE if bad in PERMISSIVE.render(t).lower()]
    assert len(leaked) >= 7


def test_safe_markdown_keeps_harmless_markdown_and_http_links():
    out = gl.safe_markdown("# Title\n\nSome **bold**, *em* and `code`.\n\n- one\n- two\n\n"
                           "[the paper](https://example.org/p?a=1) <https://example.org/auto> ![alt text](http://x/y.png)")
    assert out.startswith("# Title")
    assert "**bold**" in out and "*em*" in out and "`code`" in out and "- one\n- two" in out
    assert "[the paper](<https://example.org/p?a=1>)" in out
    assert "(<https://example.org/auto>)" in out
    assert "alt text" in out and "x/y.png" not in out  # an image: its alt text only


def test_safe_markdown_escapes_streamlit_extras():
    out = gl.safe_markdown(":red[alarm] :material/home: $x^2$")
    assert ":red[" not in out and ":material/" not in out and "$x" not in out.replace("\\$", "")


# ---------------------------------------------------------------- versions, roles, audit


def _audit(db, action):
    return [json.loads(d) for (d,) in db.conn.execute("SELECT detail FROM audit_log WHERE action = ?", (action,))]


def test_versions_are_append_only_and_audited(grading):
    db, aa, res, cid = grading
    ex = [{"aspect_type": "enumerated", "answer": "咳嗽", "tier": "2", "why": "one symptom of four"}]
    assert gl.set_guidelines(db, cid, "v1 text", examples=ex, actor=res) == 1
    assert gl.set_guidelines(db, cid, "v1 text", examples=ex, actor=res) == 1  # the same again: no new version
    assert gl.set_guidelines(db, cid, "v2 text", actor=None) == 2
    h = gl.history(db, cid)
    assert [g.version for g in h] == [1, 2] and h[0].text == "v1 text" and h[1].created_by == "cli"
    assert h[0].examples[0]["tier"] == "Partially Correct"  # a key is stored as the tier's name
    assert [d["name"] for d in h[0].definitions] == [name for _, _, name, _ in cp.TIER_GUIDE]
    assert [a["version"] for a in _audit(db, "guidelines.set")] == [1, 2]
    for sql in ("UPDATE campaign_guidelines SET text = 'x'", "DELETE FROM campaign_guidelines"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.conn.execute(sql)


def test_annotators_cannot_edit_and_bad_input_stores_nothing(grading, db_path):
    db, aa, res, cid = grading
    before = db_dump(db_path)
    with pytest.raises(PermissionDenied):
        gl.set_guidelines(db, cid, "mine", actor=aa)
    with pytest.raises(MedevalError, match="tier 'Great' is not a tier"):
        gl.set_guidelines(db, cid, "t", examples=[{"aspect_type": "enumerated", "answer": "a", "tier": "Great",
                                                   "why": "w"}], actor=res)
    with pytest.raises(MedevalError, match="aspect_type 'organ' is not one of"):
        gl.set_guidelines(db, cid, "t", examples=[{"aspect_type": "organ", "answer": "a", "tier": "1", "why": "w"}],
                          actor=res)
    with pytest.raises(MedevalError, match="limit is 20,000"):
        gl.set_guidelines(db, cid, "x" * 20_001, actor=res)
    with pytest.raises(MedevalError, match="no campaign 999"):
        gl.set_guidelines(db, 999, "t", actor=res)
    assert db_dump(db_path) == before


# ---------------------------------------------------------------- acknowledgement and the version on screen


def test_grading_waits_for_the_acknowledgement_of_each_version(grading, db_path):
    db, aa, res, cid = grading
    item = cp.next_item(db, aa, cid)  # no guidelines: nothing to acknowledge
    assert gl.needs_acknowledgement(db, aa, cid) is None
    gl.set_guidelines(db, cid, "read me", actor=res)
    assert gl.needs_acknowledgement(db, aa, cid) == 1
    before = db_dump(db_path)
    with pytest.raises(cp.GuidelinesPending, match="version 1"):
        cp.next_item(db, aa, cid)
    with pytest.raises(cp.GuidelinesPending):
        cp.grading_state(db, aa, cid)
    with pytest.raises(cp.GuidelinesPending):
        cp.submit_grade(db, aa, item, tier=2, client_token="t1")
    assert db_dump(db_path) == before
    cp.acknowledge(db, aa, cid, 1)
    cp.acknowledge(db, aa, cid, 1)  # twice: once recorded
    assert len(_audit(db, "guidelines.acknowledge")) == 1
    assert cp.next_item(db, aa, cid) == item
    cp.submit_grade(db, aa, item, tier=2, client_token="t1", guideline_version=1)
    gl.set_guidelines(db, cid, "read me again", actor=res)  # a new version: asked again
    assert gl.needs_acknowledgement(db, aa, cid) == 2
    with pytest.raises(cp.GuidelinesPending, match="version 2"):
        cp.next_item(db, aa, cid)
    cp.set_campaign_status(db, cid, "closed", actor=res)  # a closed campaign asks nothing
    assert gl.needs_acknowledgement(db, aa, cid) is None


def test_the_version_on_screen_is_recorded_and_must_exist(grading, db_path):
    db, aa, res, cid = grading
    gl.set_guidelines(db, cid, "v1", actor=res)
    gl.set_guidelines(db, cid, "v2", actor=res)
    gl.acknowledge(db, aa, cid, 2)
    item = cp.next_item(db, aa, cid)
    before = db_dump(db_path)
    for bad in (3, 0, "2", True):
        with pytest.raises(MedevalError, match="does not exist for campaign"):
            cp.submit_grade(db, aa, item, tier=1, client_token=f"bad{bad}", guideline_version=bad)
    with pytest.raises(MedevalError, match="does not exist"):
        gl.acknowledge(db, aa, cid, 7)
    assert db_dump(db_path) == before
    cp.submit_grade(db, aa, item, tier=1, client_token="ok", guideline_version=2)
    assert db.conn.execute("SELECT guideline_version FROM grade_annotations").fetchall() == [(2,)]
    # the researcher's export says which guidelines each grade was given under
    rows = list(csv.reader(io.StringIO(cp.grades_csv(cp.current_grades(db, cid, actor=res)))))
    assert rows[0][-1] == "guideline_version" and rows[1][-1] == "2"
    head = rows[0]  # the numeric tier code and its name beside it (README "Tier codes")
    assert rows[1][head.index("tier")] == "1" and rows[1][head.index("tier_name")] == "Partially Correct"


def test_task_answers_wait_for_the_acknowledgement_and_record_the_version(tdb):  # noqa: F811
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=None)
    doc, res = auth.get_user(tdb, "doc1"), auth.get_user(tdb, "res")
    view = tasks.task_state(tdb, doc, cid).item
    v = gl.set_guidelines(tdb, cid, "rate each response on its own", actor=res)
    defs = gl.current(tdb, cid).definitions
    assert defs and all(d["name"] and d["key"] for d in defs)  # what the task type declares
    with pytest.raises(tasks.GuidelinesPending):
        tasks.task_state(tdb, doc, cid)
    with pytest.raises(tasks.GuidelinesPending):
        tasks.submit_answer(tdb, doc, view.item_id, view.pending.id, view.pending.options[0].value, client_token="a")
    with pytest.raises(tasks.GuidelinesPending):
        tasks.flag_item(tdb, doc, view.item_id, "odd", client_token="f")
    assert tdb.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0] == 0
    tasks.acknowledge(tdb, doc, cid, v)
    view = tasks.task_state(tdb, doc, cid).item
    with pytest.raises(MedevalError, match="does not exist"):
        tasks.submit_answer(tdb, doc, view.item_id, view.pending.id, view.pending.options[0].value,
                            client_token="a", guideline_version=v + 1)
    tasks.submit_answer(tdb, doc, view.item_id, view.pending.id, view.pending.options[0].value, client_token="a",
                        guideline_version=v)
    assert tdb.conn.execute("SELECT guideline_version FROM task_answers").fetchall() == [(v,)]
    rows = list(csv.reader(io.StringIO(tasks.answers_csv(tasks.answers(tdb, cid, actor=res)))))
    assert rows[0][-1] == "guideline_version" and rows[1][-1] == str(v)


# ---------------------------------------------------------------- command line


def test_cli_sets_and_shows_guidelines_and_refuses_a_bad_csv(grading, db_path, tmp_path):
    db, aa, res, cid = grading
    md = write(tmp_path / "g.md", "# Grade by the key points\n\nSee [the method](https://example.org).\n")
    ok = write(tmp_path / "ex.csv", "aspect_type,answer,tier,why\nenumerated,咳嗽;发热,3,all key symptoms\n"
                                     "numeric,二级,1,wrong level\n")
    out = invoke("guidelines", "set", "--db", db_path, "--campaign", cid, "--file", md, "--examples", ok).output
    assert "version 1" in out
    shown = invoke("guidelines", "show", "--db", db_path, "--campaign", cid).output
    assert "Grade by the key points" in shown and "Basically Correct: 咳嗽;发热 -- all key symptoms" in shown
    bad = write(tmp_path / "bad.csv", "aspect_type,answer,tier,why\nenumerated,x,Excellent,because\n")
    before = db_dump(db_path)
    from click.testing import CliRunner

    from medeval.cli import main

    r = CliRunner().invoke(main, ["guidelines", "set", "--db", str(db_path), "--campaign", str(cid),
                                  "--examples", str(bad)])
    assert r.exit_code == 1 and "Error:" in r.output and "bad.csv, row 2" in r.output and "Excellent" in r.output
    missing = write(tmp_path / "missing.csv", "aspect,answer\nx,y\n")
    r = CliRunner().invoke(main, ["guidelines", "set", "--db", str(db_path), "--campaign", str(cid),
                                  "--examples", str(missing)])
    assert r.exit_code == 1 and "missing" in r.output and "aspect_type" in r.output
    assert db_dump(db_path) == before


@pytest.mark.slow  # a subprocess
def test_cli_in_a_subprocess(grading, db_path):
    db, aa, res, cid = grading
    r = run_cli("guidelines", "show", "--db", db_path, "--campaign", 999)
    assert r.returncode == 1 and r.stderr.startswith("Error: no campaign 999") and "Traceback" not in r.stderr


# ---------------------------------------------------------------- the demo


def test_demo_guidelines_fit_a_grading_campaign(grading):
    from importlib import resources

    db, aa, res, cid = grading
    data = json.loads(resources.files("medeval.demo").joinpath("data", "guidelines.json").read_text("utf-8"))
    gl.set_guidelines(db, cid, data["grading"]["text"], examples=data["grading"]["examples"], actor=None)
    g = gl.current(db, cid)
    per_type = {}
    for e in g.examples:
        per_type[e["aspect_type"]] = per_type.get(e["aspect_type"], 0) + 1
    assert per_type == {"enumerated": 2, "declarative": 2, "numeric": 2}
    assert set(data["tasks"]) == {"rubric", "preference", "accr"}


def test_demo_sets_guidelines_on_every_campaign_and_stays_idempotent(demo_template, tmp_path):
    from medeval.demo import build, clinicians
    from medeval.demo import tasks as demo_tasks
    from tests.conftest import copy_db

    path = copy_db(demo_template, tmp_path / "demo.db")
    with connect(path) as db:
        build.add_demo_accounts_and_campaign(db)
        demo_tasks.add_demo_tasks(db)
        clinicians.add_simulated_clinicians(db)
        first = build.add_demo_guidelines(db)
        ids = {c for (c,) in db.conn.execute("SELECT id FROM campaigns")}
        assert set(first) == ids and set(first.values()) == {1}
        # building again: the simulated clinicians read the guidelines first, nothing new is added
        assert demo_tasks.add_demo_tasks(db)["answers_added"] == 0
        assert clinicians.add_simulated_clinicians(db)["grades_added"] == 0
        assert build.add_demo_guidelines(db) == first
        doctor = auth.get_user(db, "doctor1")
        assert gl.needs_acknowledgement(db, doctor, first and min(ids)) == 1  # the demo doctors have to read them


# ---------------------------------------------------------------- the pages (AppTest: slow)

HOSTILE_TEXT = "Read **carefully**. <img src=x onerror=alert(1)> [x](javascript:alert(1)) ![p](https://evil.example/p.png)"


@pytest.fixture
def page_db(db_path, small_files):
    with connect(db_path) as db:
        import_files(db, **small_files)
        with db.conn:
            db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'rouge1', 't', 0.5)",
                                [(r,) for (r,) in db.conn.execute("SELECT id FROM responses")])
        for name, role in (("res", "researcher"), ("doc1", "annotator")):
            auth.add_user(db, name, PW, role)
        cid = cp.create_random_campaign(db, "round 1", 4, ["doc1"], k=1, seed=0, actor=None)
        gl.set_guidelines(db, cid, HOSTILE_TEXT, examples=[{"aspect_type": "numeric", "answer": "二级", "tier": "1",
                                                           "why": "wrong level"}], actor=None)
    return {"path": db_path, "campaign": cid}


def _page(path, username, page):
    from tests.test_app import _app

    at = _app(path, username).run()
    at.switch_page(page).run()
    assert not at.exception
    return at


@pytest.mark.slow
def test_grade_page_asks_for_the_acknowledgement_first_then_records_the_version(page_db):
    at = _page(page_db["path"], "doc1", "app_pages/grade.py")
    assert not [b for b in at.button if b.key and b.key.startswith("grade_")]  # no item yet
    text = "\n".join(m.value for m in at.markdown)
    assert "Guidelines (v1)" in text and "**carefully**" in text
    assert "<img" not in text.replace("\\<img", "") and "](javascript" not in text and "evil.example" not in text
    at.button(key="guidelines_ack").click().run()
    key = next(b.key for b in at.button if b.key and b.key.startswith("grade_")).split("_")[1]  # the screen key
    at.button(key="open_guidelines").click().run()  # G: the guidelines over the item
    assert not at.exception
    assert all(b.disabled for b in at.button if b.key and b.key.startswith("grade_"))
    at.button(key="close_guidelines").click().run()
    assert not at.exception
    assert next(b.key for b in at.button if b.key and b.key.startswith("grade_")).split("_")[1] == key  # same item
    at.button(key=f"grade_{key}_2").click().run()
    with connect(page_db["path"]) as db:
        doc1 = auth.get_user(db, "doc1")
        item = next(i for (i,) in db.conn.execute("SELECT item_id FROM assignments WHERE user_id = ?", (doc1.id,))
                    if screen_key(db, doc1, f"i:{i}") == key)
        assert db.conn.execute("SELECT item_id, tier, guideline_version FROM grade_annotations").fetchall() == [
            (item, 2, 1)]
        gl.set_guidelines(db, page_db["campaign"], "new rules", actor=None)
    at.run()  # a new version: asked again before the next item
    assert at.button(key="guidelines_ack") and not [b for b in at.button if b.key and b.key.startswith("grade_")]


@pytest.mark.slow
def test_campaigns_page_saves_a_new_version(page_db):
    at = _page(page_db["path"], "res", "app_pages/campaigns.py")
    cid = page_db["campaign"]
    assert any(e.label == "Guidelines (v1)" for e in at.expander)
    at.text_area(key=f"campaign_guidelines_text_{cid}").set_value("Shorter rules").run()
    at.button(key=f"campaign_guidelines_save_{cid}").click().run()
    assert not at.exception
    with connect(page_db["path"]) as db:
        g = gl.current(db, cid)
    assert g.version == 2 and g.text == "Shorter rules" and g.examples[0]["why"] == "wrong level"
    assert any(e.label == "Guidelines (v2)" for e in at.expander)


@pytest.mark.slow
def test_annotate_and_task_results_pages(tdb, db_path):  # noqa: F811
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=None)
    auth.reset_password(tdb, "doc1", PW)
    auth.reset_password(tdb, "res", PW)
    gl.set_guidelines(tdb, cid, "Rate each response **on its own**.", actor=None)
    at = _page(db_path, "doc1", "app_pages/annotate.py")
    assert at.button(key="guidelines_ack") and not [b for b in at.button if b.key and b.key.startswith("opt_")]
    at.button(key="guidelines_ack").click().run()
    at.button(key="task_open_guidelines").click().run()
    assert not at.exception and all(b.disabled for b in at.button if b.key and b.key.startswith("opt_"))
    at.button(key="task_close_guidelines").click().run()
    opts = [b for b in at.button if b.key and b.key.startswith("opt_")]
    opts[0].click().run()
    assert tdb.conn.execute("SELECT guideline_version FROM task_answers").fetchall() == [(1,)]
    at = _page(db_path, "res", "app_pages/task_results.py")
    assert any(e.label == "Guidelines (v1)" for e in at.expander)
