"""The Help page (README.md by section), the start-here panels and the page layouts.

The parsing (``webui/help.py``) and the layout choice (``webui.page.page_layout``) are pure and tested
here directly; the pages themselves run under AppTest (marked slow).
"""

import re
from pathlib import Path

import pytest
import streamlit

from medeval.accounts import auth
from medeval.store.db import connect
from tests.conftest import ROOT
from webui import help as guide
from webui import page as ui

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


# ---------------------------------------------------------------- README parsing (pure)

@pytest.mark.parametrize("title, slug", [
    ("The web app", "the-web-app"), ("Two commands", "two-commands"),
    ("Running it in a hospital: 2 cores, TLS & nginx!", "running-it-in-a-hospital-2-cores-tls-nginx"),
    ("  `medeval`  **Settings** ", "medeval-settings"), ("Five minutes with the demo", "five-minutes-with-the-demo"),
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


def test_every_level_two_section_of_the_real_readme_has_a_unique_slug():
    text = guide.README.read_text(encoding="utf-8")
    secs = guide.sections(text)
    headings = [s for s in secs[1:]]
    assert len(headings) == sum(1 for line in _outside_fences(text) if line.startswith("## ")) >= 5
    slugs = [s.slug for s in secs]
    assert all(slugs) and len(set(slugs)) == len(slugs), slugs


def _outside_fences(text):
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            yield line


def test_every_start_here_link_points_at_a_section_of_the_real_readme():
    slugs = {s.slug for s in guide.sections(guide.README.read_text(encoding="utf-8"))}
    assert set(ui.TIPS) == {"campaigns", "users", "grade", "annotate"}
    for name, tip in ui.TIPS.items():
        assert tip["help_section"] in slugs, name
        assert sum(len(tip[k]) for k in ("title", "body", "next_step")) < 300, name  # a short panel


def test_every_picture_of_the_real_readme_is_a_small_committed_file_on_its_own_line():
    """The walkthrough's screenshots: the Help page draws a picture only from a line of its own, and the
    files stay small (they are committed)."""
    text = guide.README.read_text(encoding="utf-8")
    # a picture (``![alt](docs/...)``) anywhere but at the start of its own line; a link to docs/ is no picture
    inline = [line for line in text.splitlines() if re.search(r"!\[[^\]]*\]\(docs/", line)
              and not line.strip().startswith("![")]
    assert not inline, inline
    images = [p for s in guide.sections(text) for p in s.parts if p[0] == "image"]
    assert len(images) >= 6
    for _, alt, path in images:
        file = guide.image_file(path)
        assert file is not None, path
        assert alt and file.stat().st_size < 150_000, path


def test_an_image_line_is_drawn_only_from_a_file_inside_the_repository(tmp_path):
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "x.png").write_bytes(b"\x89PNG")
    (tmp_path / "secret.png").write_bytes(b"\x89PNG")
    assert guide.image_file("docs/x.png", root) == (root / "docs" / "x.png").resolve()
    for bad in ("docs/missing.png", "../secret.png", str(tmp_path / "secret.png"), "https://example.org/x.png",
                "file:///etc/passwd", "docs"):
        assert guide.image_file(bad, root) is None, bad


def test_the_readme_is_read_from_the_repository_root_next_to_app_py():
    assert guide.README == ROOT / "README.md" and (guide.README.parent / "app.py").is_file()


# ---------------------------------------------------------------- layouts (pure)

@pytest.mark.parametrize("url_path", ["campaigns", "agreement", "tuning", "leaderboard", "task-results", "users",
                                      "new-campaign", "new-task"])
def test_researcher_and_admin_work_pages_are_wide(url_path):
    assert ui.page_layout(url_path) == "wide"


@pytest.mark.parametrize("url_path", ["help", "signed-out", "home", ""])
def test_pages_of_prose_stay_centered(url_path):
    assert ui.page_layout(url_path) == "centered" and ui.sidebar_state(url_path) == "auto"


@pytest.mark.parametrize("url_path", ["grade", "annotate"])
def test_reading_screens_take_the_width_with_the_sidebar_folded(url_path):
    assert ui.page_layout(url_path) == "wide" and ui.sidebar_state(url_path) == "collapsed"


def test_every_page_of_the_app_has_a_layout_on_purpose():
    # a new page in app.py must be placed in WIDE_PAGES or deliberately left centered here
    import re

    from webui import pages

    paths = set(re.findall(r'url_path="([a-z-]+)"', (ROOT / "app.py").read_text(encoding="utf-8")))
    paths |= {p.url_path for p in pages.PAGES}  # app.py builds the navigation from this table
    centered = {"help", "signed-out", "home"}
    assert paths == set(ui.WIDE_PAGES) | centered, paths ^ (set(ui.WIDE_PAGES) | centered)


# ---------------------------------------------------------------- the pages under AppTest

@pytest.fixture
def people(db_path):
    with connect(db_path) as db:
        for name, role in [("res", "researcher"), ("res2", "researcher"), ("doc", "annotator"), ("adm", "admin")]:
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


@pytest.mark.slow  # AppTest runs whole pages
def test_got_it_hides_the_campaigns_panel_for_that_researcher_only(people):
    at = _app(people, "res").run()
    assert not at.exception
    panel = _panel(at)
    assert panel and "Campaigns shows" in panel and "[Read more](/help?section=" in panel
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
def test_the_help_page_shows_one_section_then_the_whole_guide_and_restores_the_tips(people):
    at = _app(people, "doc").run()
    at.button(key="start_here_grade_hide").click().run()
    assert _panel(at) is None
    at.query_params["section"] = "the-web-app"
    at.switch_page("app_pages/help.py").run()
    assert not at.exception
    text = "\n".join(m.value for m in at.markdown)
    assert "## The web app" in text and "## Command line" not in text and "## Two commands" not in text
    at.button(key="help_whole").click().run()
    text = "\n".join(m.value for m in at.markdown)
    assert "## The web app" in text and "## Command line" in text and "## Two commands" in text
    at.button(key="help_restore_tips").click().run()
    assert [s.value for s in at.success] == ["The start-here tips are shown again."]
    at.switch_page("app_pages/grade.py").run()
    assert "press 1, 2 or 3" in _panel(at)


@pytest.mark.slow
def test_an_unknown_section_shows_the_whole_guide_with_a_note(people):
    at = _app(people, "res")
    at.query_params["section"] = "no-such-part"
    at.switch_page("app_pages/help.py").run()
    assert not at.exception
    assert any("does not exist" in i.value for i in at.info)
    assert "## Command line" in "\n".join(m.value for m in at.markdown)


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


# ---------------------------------------------------------------- help for the page the user came from (issue 22)

def test_subsections_split_at_level_three_headings_outside_fences():
    subs = guide.subsections(SAMPLE)
    assert [s.title for s in subs] == ["A subsection stays in its section"]
    assert subs[0].slug == "a-subsection-stays-in-its-section"
    assert subs[0].parts[-1] == ("markdown", "Text after the picture.")  # it ends at the next "## " heading


def test_every_page_of_the_app_has_its_help_in_the_real_readme():
    import ast

    from webui import pages

    text = guide.README.read_text(encoding="utf-8")
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    paths = {k.value.value for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "Page"
             for k in n.keywords if k.arg == "url_path" and isinstance(k.value, ast.Constant)}
    paths |= {p.url_path for p in pages.PAGES}  # app.py builds the navigation from webui.pages
    assert set(guide.PAGE_HELP) == paths - {"help", "home", "signed-out"}
    slugs = {s.slug for s in [*guide.sections(text), *guide.subsections(text)]}
    for url_path, (title, _, related) in guide.PAGE_HELP.items():
        here = guide.page_help(text, url_path)
        assert here is not None and here.title == title and len(here.body) > 100, url_path
        assert set(related) <= slugs, url_path
    grade = guide.page_help(text, "grade")
    assert grade.body.startswith("**Grading**") and "**1 / 2 / 3**" in grade.body and "**Campaigns**" not in grade.body
    assert "Completely Wrong" in grade.body and [s for _, s in grade.related] == ["guidelines",
                                                                                  "gold-items-and-qualification"]
    assert guide.page_help(text, "help") is None and guide.page_help(text, None) is None
    using, setup = guide.ordered(guide.sections(text))
    assert [s.slug for s in setup] == [s for s in guide.SETUP_SECTIONS if s in slugs]
    assert using[0].title == "medeval" and "two-commands" not in [s.slug for s in using]


@pytest.mark.slow
def test_help_opens_with_how_to_use_the_page_the_user_came_from(people):
    at = _app(people, "doc").run()  # an annotator's first page: Grade
    at.switch_page("app_pages/help.py").run()
    assert not at.exception
    heads = [h.value for h in at.subheader]
    assert heads[0] == "How to use Grade"
    text = [m.value for m in at.markdown]
    first = next(i for i, t in enumerate(text) if t.startswith("**Grading**"))
    install = next(i for i, t in enumerate(text) if t.startswith("## Two commands"))
    web = next(i for i, t in enumerate(text) if t.startswith("## The web app"))
    assert first < web < install  # how to grade first; install commands far down
    assert "Installing and running medeval" in heads
    assert any("[Guidelines](/help?section=guidelines)" in t for t in text)
    # a related link opens its "### " section on its own
    at.query_params["section"] = "guidelines"
    at.run()
    text = "\n".join(m.value for m in at.markdown)
    assert text.startswith("### Guidelines") and "## Two commands" not in text


@pytest.mark.slow
def test_help_from_a_named_page_and_without_one(people):
    at = _app(people, "res")
    at.query_params["from"] = "tuning"
    at.switch_page("app_pages/help.py").run()
    assert not at.exception and at.subheader[0].value == "How to use Tune cut-offs"
    at = _app(people, "res")
    at.query_params["from"] = "no-such-page"
    at.switch_page("app_pages/help.py").run()  # no page of that name, and none visited before: the guide only
    assert not at.exception
    assert not [h for h in at.subheader if h.value.startswith("How to use")]
    assert at.markdown[0].value.startswith("# medeval")
