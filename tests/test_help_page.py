"""The Help page (a guide per role, docs/help/), the start-here panels and the page layouts.

The guides' parsing and tables (``webui/help.py``) and the layout choice (``webui.page.page_layout``) are pure and
tested here directly, against the real guides too: every page has its section, every link and picture resolves,
the doctor guide names every key its screens take (read from the code) and no guide speaks to developers. The pages
themselves run under AppTest (marked slow).
"""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
import streamlit

import medeval

from medeval.accounts import auth, policy
from medeval.store.db import connect
from tests.conftest import ROOT
from webui import help as guide
from webui import page as ui
from webui import pages

PW = "correct horse battery"

SAMPLE = """# medeval

Intro text.

## Two commands

```bash
## not a heading: a comment inside a code fence
![not an image](inside/a/fence.png)
```

### A subsection stays in its section

![The grade page](docs/grade.jpg)
Text after the picture.

## Running it in a hospital: 2 cores, TLS & nginx!
Last words.
"""


# ---------------------------------------------------------------- Markdown parsing (pure)

@pytest.mark.parametrize("title, slug", [
    ("The web app", "the-web-app"), ("Two commands", "two-commands"),
    ("Running it in a hospital: 2 cores, TLS & nginx!", "running-it-in-a-hospital-2-cores-tls-nginx"),
    ("  `medeval`  **Settings** ", "medeval-settings"), ("Rate & compare", "rate-compare"),
])
def test_a_slug_is_the_headings_words_in_lowercase_joined_by_dashes(title, slug):
    assert guide.slug(title) == slug


def test_sections_split_at_level_two_headings_outside_code_fences():
    secs = guide.sections(SAMPLE)
    assert [(s.title, s.slug) for s in secs] == [
        ("medeval", "medeval"), ("Two commands", "two-commands"),
        ("Running it in a hospital: 2 cores, TLS & nginx!", "running-it-in-a-hospital-2-cores-tls-nginx")]
    first, two, last = secs
    assert first.parts == [("markdown", "# medeval\n\nIntro text.")]
    kinds = [p[0] for p in two.parts]
    assert kinds == ["markdown", "image", "markdown"]
    assert "## not a heading" in two.parts[0][1] and "![not an image](inside/a/fence.png)" in two.parts[0][1]
    assert "### A subsection stays in its section" in two.parts[0][1]
    assert two.parts[1] == ("image", "The grade page", "docs/grade.jpg")
    assert two.parts[2] == ("markdown", "Text after the picture.")
    assert last.parts == [("markdown", "## Running it in a hospital: 2 cores, TLS & nginx!\nLast words.")]


def test_the_whole_text_survives_the_split():
    # nothing is lost: the sections' markdown and image lines together are every non-blank line of the text
    lines = [line for s in guide.sections(SAMPLE) for p in s.parts
             for line in (p[1].splitlines() if p[0] == "markdown" else [f"![{p[1]}]({p[2]})"])]
    assert [x for x in lines if x.strip()] == [x for x in SAMPLE.splitlines() if x.strip()]


def test_find_a_section_by_slug_else_none():
    secs = guide.sections(SAMPLE)
    assert guide.find(secs, "two-commands").title == "Two commands"
    assert guide.find(secs, "nope") is None and guide.find(secs, None) is None and guide.find(secs, "") is None


def test_a_sections_body_leaves_its_heading_out():
    first, two, last = guide.sections(SAMPLE)
    assert first.body() == [("markdown", "Intro text.")]
    assert two.body()[0][1].startswith("```bash") and two.body()[1:] == two.parts[1:]
    assert last.body() == [("markdown", "Last words.")]
    assert guide.Section("Only a title", "only-a-title", [("markdown", "## Only a title")]).body() == []


def test_an_image_line_is_drawn_only_from_a_picture_inside_the_repository(tmp_path):
    root = tmp_path / "repo"
    (root / "docs" / "help" / "en").mkdir(parents=True)
    (root / "docs" / "help" / "img").mkdir()
    (root / "docs" / "x.png").write_bytes(b"\x89PNG")
    (root / "docs" / "help" / "img" / "a.jpg").write_bytes(b"\xff\xd8")
    (root / "docs" / "notes.md").write_text("not a picture")
    (tmp_path / "secret.png").write_bytes(b"\x89PNG")
    assert guide.image_file("docs/x.png", root) == (root / "docs" / "x.png").resolve()
    base = root / "docs" / "help" / "en"  # a guide's folder: its pictures are one folder up, as on GitHub
    assert guide.image_file("../img/a.jpg", root, base) == (root / "docs" / "help" / "img" / "a.jpg").resolve()
    for bad in ("docs/missing.png", "../secret.png", str(tmp_path / "secret.png"), "https://example.org/x.png",
                "file:///etc/passwd", "docs", "docs/notes.md", "data:image/png;base64,AAAA", r"\\host\x.png"):
        assert guide.image_file(bad, root) is None, bad
    for bad in ("../../../../secret.png", "../../notes.md"):
        assert guide.image_file(bad, root, base) is None, bad


def test_a_missing_translation_falls_back_to_english(tmp_path):
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "doctor.md").write_text("# Help for doctors\n", encoding="utf-8")
    (tmp_path / "en" / "admin.md").write_text("# Help for admins\n", encoding="utf-8")
    (tmp_path / "zh-CN").mkdir()
    (tmp_path / "zh-CN" / "doctor.md").write_text("# 医生帮助\n", encoding="utf-8")
    assert guide.guide_file("doctor", "zh-CN", tmp_path) == tmp_path / "zh-CN" / "doctor.md"
    assert guide.guide_file("admin", "zh-CN", tmp_path) == tmp_path / "en" / "admin.md"
    assert guide.guide_sections("doctor", "zh-CN", tmp_path)[0].title == "医生帮助"


# ---------------------------------------------------------------- the real guides (pure)

def _text(name: str) -> str:
    return guide.guide_file(name).read_text(encoding="utf-8")


def _outside_fences(text):
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            yield line


def test_the_guides_are_read_from_docs_help_in_the_repository():
    assert guide.HELP_DIR == ROOT / "docs" / "help" and (guide.HELP_DIR.parent.parent / "app.py").is_file()
    for name in guide.GUIDES:
        assert guide.guide_file(name) == ROOT / "docs" / "help" / guide.LANGUAGE / f"{name}.md"


@pytest.mark.parametrize("name", list(guide.GUIDES))
def test_each_guide_has_a_title_and_short_sections_with_unique_slugs(name):
    text = _text(name)
    secs = guide.sections(text)
    assert secs[0].title.startswith("Help for "), secs[0].title
    assert len(secs) - 1 == sum(1 for line in _outside_fences(text) if line.startswith("## ")) >= 4
    slugs = [s.slug for s in secs]
    assert all(slugs) and len(set(slugs)) == len(slugs), slugs
    for s in secs[1:]:  # scannable: a section is a screenful or so, not a chapter
        words = sum(len(p[1].split()) for p in s.parts if p[0] == "markdown")
        assert words < 600, (s.title, words)


def test_every_role_reads_its_own_guide_first_and_it_links_the_others():
    assert set(guide.ROLE_GUIDES) == set(policy.ROLES)
    assert [guide.ROLE_GUIDES[r][0] for r in ("annotator", "adjudicator", "researcher", "admin")] == \
        ["doctor", "adjudicator", "researcher", "admin"]
    for role, names in guide.ROLE_GUIDES.items():
        assert set(names) <= set(guide.GUIDES) and len(set(names)) == len(names), role
        own = _text(names[0])
        for other in names[1:]:  # the other guides this role needs are one link away in its own
            assert f"]({guide.link(other)})" in own, (role, other)
    assert "](/help?guide=doctor)" in _text("adjudicator")


def test_every_page_of_every_role_has_a_section_in_that_roles_guides():
    import ast

    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    paths = {k.value.value for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "Page"
             for k in n.keywords if k.arg == "url_path" and isinstance(k.value, ast.Constant)}
    paths |= {p.url_path for p in pages.PAGES}  # app.py builds the navigation from webui.pages
    assert set(guide.PAGE_HELP) == paths - {"help", "home", "signed-out"}
    for role in policy.ROLES:
        for page in pages.for_role(role):
            if page.url_path == "help":
                continue
            here = guide.page_help(page.url_path)
            assert here is not None and here.title == page.title, (role, page.url_path)
            assert here.guide in guide.role_guides(role), (role, page.url_path, here.guide)
            words = sum(len(p[1].split()) for p in here.section.body() if p[0] == "markdown")
            assert words > 40, (page.url_path, words)
            related = guide.PAGE_HELP[page.url_path][2]
            assert [s for _, s in here.related] == list(related), page.url_path  # every related slug exists
    assert guide.page_help("help") is None and guide.page_help(None) is None and guide.page_help("nope") is None
    grade = guide.page_help("grade")
    assert grade.section.title == "Grade" and grade.guide == "doctor"
    assert not grade.section.body()[0][1].startswith("#")  # the page titles it itself: "How to use Grade"


def test_every_start_here_link_opens_its_pages_own_section():
    assert set(ui.TIPS) == {"campaigns", "users", "grade", "annotate"}
    for name, tip in ui.TIPS.items():
        want_guide, want_slug, _ = guide.PAGE_HELP[name]
        assert tip["help_section"] == want_slug, name
        for role in pages.get(name).roles:  # whoever sees the panel lands on the page's own section
            found = guide.locate(tip["help_section"], guide.role_guides(role))
            assert found is not None and found[0] == want_guide and found[1].slug == want_slug, (name, role)
        assert sum(len(tip[k]) for k in ("title", "body", "next_step")) < 300, name  # a short panel


def test_every_help_link_in_the_guides_resolves():
    found = 0
    for name in guide.GUIDES:
        for target in re.findall(r"\]\((/help[^)]*)\)", _text(name)):
            m = re.fullmatch(r"/help\?guide=([a-z]+)(?:&section=([a-z0-9-]+))?", target)
            assert m and m.group(1) in guide.GUIDES, (name, target)
            if m.group(2):
                assert guide.find(guide.guide_sections(m.group(1)), m.group(2)), (name, target)
            found += 1
    assert found >= 6


def test_every_picture_of_the_guides_is_a_small_file_of_docs_help_img_on_its_own_line():
    """The Help page draws a picture only from a line of its own, and the files stay small (they are committed);
    every picture in docs/help/img/ is shown by some guide."""
    img = guide.HELP_DIR / "img"
    used = set()
    for name in guide.GUIDES:
        text = _text(name)
        inline = [line for line in text.splitlines() if "![" in line and not line.strip().startswith("![")]
        assert not inline, (name, inline)
        images = [p for s in guide.sections(text) for p in s.parts if p[0] == "image"]
        assert len(images) >= 2, name
        for _, alt, path in images:
            file = guide.image_file(path, base=guide.guide_file(name).parent)
            assert file is not None and file.parent == img.resolve(), (name, path)
            assert alt and file.suffix == ".jpg" and 10_000 < file.stat().st_size < 150_000, (name, path)
            used.add(file.name)
    assert used == {f.name for f in img.iterdir()}, {f.name for f in img.iterdir()} ^ used


def _screen_keys() -> tuple[set[str], set[str]]:
    """The keys the Grade and the Rate & compare screens take, read from the code: the buttons' shortcuts of both
    pages (and the guidelines button both draw), Grade's key guard and tier keys, the answer keys of every task
    type (medeval.annotation.tasks) and the Rate & compare legend."""
    from medeval.annotation import campaigns as cp
    from medeval.annotation import tasks
    from medeval.annotation.tasks.common import LIKERT
    from medeval.annotation.tasks.registry import Option
    from webui import grade_screen, task_screen

    def shortcuts(*files: str) -> set[str]:
        return {k for f in files for k in re.findall(r'shortcut="([^"]+)"', (ROOT / f).read_text(encoding="utf-8"))}

    both = shortcuts("webui/page.py")  # G: guidelines_button
    grade = both | shortcuts("app_pages/grade.py") | set(grade_screen.GUARD["keys"]) | {k for k, *_ in cp.TIER_GUIDE}
    if grade_screen.GUARD.get("note"):  # the flag note: Enter saves it, Esc cancels it
        grade |= {"Enter", "Escape"}
    task = both | shortcuts("app_pages/annotate.py") | set(LIKERT)
    for m in pkgutil.iter_modules(tasks.__path__):  # every Option a task type module declares
        for value in vars(importlib.import_module(f"{tasks.__name__}.{m.name}")).values():
            options = value if isinstance(value, tuple) else (value,)
            task |= {o.key for o in options if isinstance(o, Option)}
    task |= set(re.findall(r"\b([A-Z])\b", task_screen.LEGEND))
    return grade, task


KEY_NAMES = {"left": "←", "right": "→", "up": "↑", "down": "↓", "escape": "Esc", "enter": "Enter"}


def _shown(key: str) -> str:
    """A key as the guides write it: `1`, `S`, `←`, `Esc`."""
    return f"`{KEY_NAMES.get(key.lower(), key.upper())}`"


def test_the_doctor_guide_names_every_key_of_its_screens():
    """A new key on Grade or Rate & compare fails here until the doctor guide says what it does, in the section of
    that screen (the one "How to use" shows)."""
    grade, task = _screen_keys()
    assert {"1", "2", "3", "S", "F", "Z", "G", "Escape", "Enter"} <= grade  # the reading of the code works
    assert {"1", "5", "left", "right", "t", "y", "n", "E", "S", "F", "G"} <= task
    secs = {s.slug: "\n".join(p[1] for p in s.parts if p[0] == "markdown") for s in guide.guide_sections("doctor")}
    for section, keys in (("grade", grade), ("rate-compare", task)):
        missing = sorted(k for k in keys if _shown(k) not in secs[section])
        assert not missing, f"the doctor guide's {section!r} section does not name the keys {missing}"


def test_the_adjudicator_guide_names_every_key_of_adjudicate():
    from medeval.annotation import campaigns as cp

    page = (ROOT / "app_pages" / "adjudicate.py").read_text(encoding="utf-8")
    keys = {k for k, *_ in cp.TIER_GUIDE} | set(re.findall(r'shortcut="([^"]+)"', page))
    keys |= {k.upper() for k in re.findall(r'key_to_focus\([^,]+,\s*"([^"]+)"', page)}
    assert {"1", "2", "3", "R"} <= keys  # the reading of the code works
    section = " ".join(p[1] for p in guide.find(guide.guide_sections("adjudicator"), "recording-a-final-tier").parts
                       if p[0] == "markdown")
    assert not [k for k in keys if _shown(k) not in section]
    assert "`Ctrl+Enter`" in section  # the reason is a form's text area: Ctrl+Enter submits it


def test_the_doctor_guide_quotes_the_screens_own_words():
    from medeval.annotation import campaigns as cp
    from webui import grade_screen, reading
    from webui.screen import SETTLE_MS

    text = " ".join(_text("doctor").split())  # the guide's lines are wrapped
    for words in (grade_screen.MORE_TEXT, grade_screen.HOLD_TEXT, *grade_screen.CUE_TEXTS.values()):
        assert words in text, words  # what the screen says when a key waits or is dropped, word for word
    for key, _tier, name, meaning in cp.TIER_GUIDE:
        assert f"| `{key}` | {name} | {meaning} |" in text, name  # what each grade means, as the sidebar says it
    assert {500: "half a second"}[SETTLE_MS] in text  # the guard's wait in words
    assert reading.MORE_TEXT == grade_screen.MORE_TEXT


@pytest.mark.parametrize("name", list(guide.GUIDES))
def test_the_guides_speak_to_their_readers_not_to_developers(name):
    text = _text(name)
    for word in (".py", "pytest", "app_pages", "webui", "issue", "session_state", "TODO"):
        assert word not in text, (name, word)
    layers = "|".join(medeval.LAYERS)
    assert not re.search(rf"\b(medeval\.({layers})|st\.[a-z_]+\()", text), name  # no module or function names
    assert not re.search(r"\d+(\.\d+)? ?(ms|s) (for|per) \d", text), name  # no timings of tests or benchmarks
    if name in ("doctor", "adjudicator"):  # clinicians: no settings, commands or files
        for word in ("MEDEVAL_", "python", "bash", "```", ".sh", ".toml", "SQLite", "database"):
            assert word not in text, (name, word)


# ---------------------------------------------------------------- layouts (pure)

@pytest.mark.parametrize("url_path", ["campaigns", "agreement", "tuning", "leaderboard", "task-results", "users",
                                      "new-campaign", "new-task"])
def test_researcher_and_admin_work_pages_are_wide(url_path):
    assert ui.page_layout(url_path) == "wide"


@pytest.mark.parametrize("url_path", ["help", "signed-out", "home", ""])
def test_pages_of_prose_stay_centered(url_path):
    assert ui.page_layout(url_path) == "centered" and ui.sidebar_state(url_path) == "auto"


@pytest.mark.parametrize("url_path", ["grade", "annotate", "adjudicate"])
def test_reading_screens_take_the_width_with_the_sidebar_folded(url_path):
    assert ui.page_layout(url_path) == "wide" and ui.sidebar_state(url_path) == "collapsed"


def test_every_page_of_the_app_has_a_layout_on_purpose():
    # a new page in app.py must be placed in WIDE_PAGES or deliberately left centered here
    paths = set(re.findall(r'url_path="([a-z-]+)"', (ROOT / "app.py").read_text(encoding="utf-8")))
    paths |= {p.url_path for p in pages.PAGES}  # app.py builds the navigation from this table
    centered = {"help", "signed-out", "home"}
    assert paths == set(ui.WIDE_PAGES) | centered, paths ^ (set(ui.WIDE_PAGES) | centered)


# ---------------------------------------------------------------- the pages under AppTest

@pytest.fixture
def people(db_path):
    with connect(db_path) as db:
        for name, role in [("res", "researcher"), ("res2", "researcher"), ("doc", "annotator"), ("adm", "admin"),
                           ("adj", "adjudicator")]:
            auth.add_user(db, name, PW, role)
    return db_path


def _app(path: Path, username: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    with connect(path) as db:
        at.session_state[ui.TEST_TOKEN_KEY] = auth.create_session(db, auth.authenticate(db, username, PW))
    return at


def _panel(at) -> str | None:
    texts = [m.value for m in at.markdown if m.value.startswith("**Start here**")]
    return texts[0] if texts else None


def _shown_text(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _help(at):
    at.switch_page("app_pages/help.py").run()
    assert not at.exception, at.exception
    return at


@pytest.mark.slow  # AppTest runs whole pages
def test_got_it_hides_the_campaigns_panel_for_that_researcher_only(people):
    at = _app(people, "res").run()
    assert not at.exception
    panel = _panel(at)
    assert panel and "Campaigns shows" in panel and "[Read more](/help?section=campaigns)" in panel
    at.button(key="start_here_campaigns_hide").click().run()
    assert not at.exception and _panel(at) is None
    at.run()
    assert _panel(at) is None  # still hidden on the next rerun
    assert _panel(_app(people, "res").run()) is None  # and in a new session (it is in the database)
    other = _app(people, "res2").run()
    assert "Campaigns shows" in _panel(other)


@pytest.mark.slow
@pytest.mark.parametrize("username, first_words", [("doc", "Read the reference and the answer, then press 1, 2 or 3"),
                                                   ("adm", "Add an account for each clinician")])
def test_each_roles_first_page_starts_with_its_panel(people, username, first_words):
    at = _app(people, username).run()
    assert not at.exception and first_words in _panel(at)


@pytest.mark.slow
@pytest.mark.parametrize("username, title, not_title", [
    ("doc", "# Help for doctors", "# Help for researchers"), ("res", "# Help for researchers", "# Help for doctors"),
    ("adm", "# Help for admins", "# Help for researchers"), ("adj", "# Help for adjudicators", "# Help for doctors")])
def test_help_shows_the_signed_in_persons_own_guide(people, username, title, not_title):
    at = _help(_app(people, username))
    text = _shown_text(at)
    assert title in text and not_title not in text
    assert at.segmented_control(key="help_guide").value == guide.role_guides(at.session_state["user"].role)[0]
    assert "Two commands" not in text and "pytest" not in text  # the README is for developers, not here
    assert at.button(key="help_restore_tips")  # the start-here tips can be shown again from every guide


@pytest.mark.slow
def test_help_shows_the_doctor_guide_with_its_pictures_and_the_other_guides_on_request(people):
    at = _help(_app(people, "doc"))
    pictures = [p for s in guide.guide_sections("doctor") for p in s.parts if p[0] == "image"]
    assert len(at.image) == len(pictures) >= 4  # the doctor guide's screenshots, drawn from docs/help/img
    assert not [c.value for c in at.caption if "picture not available" in c.value]
    at.segmented_control(key="help_guide").set_value("adjudicator").run()
    text = _shown_text(at)
    assert not at.exception and "# Help for adjudicators" in text and "# Help for doctors" not in text
    assert at.query_params["guide"] == "adjudicator"  # kept in the address: a reload shows the same guide
    other = _app(people, "res")
    other.query_params["guide"] = "doctor"
    text = _shown_text(_help(other))
    assert "# Help for doctors" in text and "# Help for researchers" not in text


@pytest.mark.slow
def test_the_help_page_shows_one_section_then_the_whole_guide_and_restores_the_tips(people):
    at = _app(people, "doc").run()
    at.button(key="start_here_grade_hide").click().run()
    assert _panel(at) is None
    at.query_params["section"] = "grade"
    _help(at)
    text = _shown_text(at)
    assert "## Grade" in text and "`Z`" in text and "## Rate & compare" not in text and "# Help for doctors" not in text
    at.button(key="help_whole").click().run()
    text = _shown_text(at)
    assert "# Help for doctors" in text and "## Rate & compare" in text and "## Signing in and out" in text
    at.button(key="help_restore_tips").click().run()
    assert [s.value for s in at.success] == ["The start-here tips are shown again."]
    at.switch_page("app_pages/grade.py").run()
    assert "press 1, 2 or 3" in _panel(at)


@pytest.mark.slow
def test_a_section_is_found_in_the_readers_guides_first_then_in_the_others(people):
    at = _app(people, "res")
    at.query_params["section"] = "adjudicate"  # the adjudicator guide's, which a researcher reads too
    assert "## Adjudicate" in _shown_text(_help(at))
    at = _app(people, "doc")
    at.query_params["section"] = "publish"  # not in a doctor's guide, but a link may name it
    assert "## Publish" in _shown_text(_help(at))


@pytest.mark.slow
def test_an_unknown_section_shows_the_whole_guide_with_a_note(people):
    at = _app(people, "res")
    at.query_params["section"] = "no-such-part"
    _help(at)
    assert any("does not exist" in i.value for i in at.info)
    assert "# Help for researchers" in _shown_text(at) and "## Leaderboard" in _shown_text(at)


@pytest.mark.slow
def test_the_layout_switches_per_page(people, monkeypatch):
    # AppTest does not keep the page config, so record the app's calls (the last one of a run wins)
    calls = []
    original = streamlit.set_page_config

    def record(*args, **kwargs):
        calls.append((kwargs.get("layout"), kwargs.get("initial_sidebar_state"), kwargs.get("page_icon")))
        return original(*args, **kwargs)

    monkeypatch.setattr(streamlit, "set_page_config", record)
    at = _app(people, "res").run()  # the hidden home page forwards to Campaigns
    assert not at.exception and calls[-1][0] == "wide"
    for page, layout, sidebar in [("app_pages/grade.py", "wide", "collapsed"), ("app_pages/dashboard.py", "wide", "auto"),
                                  ("app_pages/help.py", "centered", "auto"), ("app_pages/tuning.py", "wide", "auto")]:
        calls.clear()
        at.switch_page(page).run()
        assert not at.exception, page
        # one layout per run, the page's own (issue 22), after the tab's icon, which comes before the navigation
        assert calls == [(None, None, "🩺"), (layout, sidebar, None)], page


# ---------------------------------------------------------------- help for the page the user came from

@pytest.mark.slow
def test_help_opens_with_how_to_use_the_page_the_user_came_from(people):
    at = _app(people, "doc").run()  # an annotator's first page: Grade
    _help(at)
    heads = [h.value for h in at.subheader]
    assert heads[0] == "How to use Grade"
    text = [m.value for m in at.markdown]
    keys = next(i for i, t in enumerate(text) if "| `1` | Completely Wrong |" in t)
    whole = next(i for i, t in enumerate(text) if t.startswith("# Help for doctors"))
    later = next(i for i, t in enumerate(text) if t.startswith("## Rate & compare"))
    assert keys < whole < later  # how to grade first, then the rest of the guide
    assert not [t for t in text[whole:] if t.startswith("## Grade\n")]  # not twice
    assert any("[Changing an answer](/help?guide=doctor&section=changing-an-answer)" in t for t in text)
    # a related link opens its section on its own
    at.query_params["guide"] = "doctor"
    at.query_params["section"] = "changing-an-answer"
    at.run()
    text = _shown_text(at)
    assert text.startswith("## Changing an answer") and "## Rate & compare" not in text


@pytest.mark.slow
def test_help_from_a_named_page_and_without_one(people):
    at = _app(people, "res")
    at.query_params["from"] = "tuning"
    _help(at)
    assert at.subheader[0].value == "How to use Tune cut-offs"
    assert "the two cut-offs that turn a score into a tier" in _shown_text(at)
    at = _app(people, "res")
    at.query_params["from"] = "no-such-page"
    _help(at)  # no page of that name, and none visited before: the guide only
    assert not [h for h in at.subheader if h.value.startswith("How to use")]
    assert at.markdown[0].value.startswith("# Help for researchers")
    at = _app(people, "res")
    at.query_params["from"] = "adjudicate"  # a page another guide explains: its section, from that guide
    _help(at)
    assert at.subheader[0].value == "How to use Adjudicate" and "first item still to settle" in _shown_text(at)
    assert "[Recording a final tier](/help?guide=adjudicator&section=recording-a-final-tier)" in _shown_text(at)
