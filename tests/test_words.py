"""Words a reader understands: every page, for every role, on the demo, says things in words.

The demo database is built once; each role signs in and opens each of its pages under AppTest (the main selections
a researcher makes too: each campaign, each task campaign, each metric), and every text on screen is collected --
headings, prose, captions, alerts, metrics, buttons and other widgets' labels, options, and each table's column
names and cells as Streamlit shows them (its column configuration applied). The rules (:func:`problems`):

* no Python value on screen: a cell or an option that is ``None``, ``nan``, ``NaT``, ``[]``, ``{}``, ``True`` or
  ``False``, a raw dict, or such a word in prose; no ``st.json`` (a raw dict);
* no identifier of the code (``not_required``, ``aspect_type``, ``bleu1``): the metrics by their labels;
* "clinicians", never "experts", for the people who grade;
* percentages with one decimal, as ``medeval.core.display.percent`` writes them ("32.7%"): a confidence level
  ("95% CI") is a name, not a measurement;
* no table column that is empty in every row.

Not checked as prose: someone's text (answers, references, the demo's Chinese cases: a "10%" there is theirs) and
text in code formatting (a command or a file's column to type). The downloadable reports -- every agreement, task and
leaderboard report's HTML, which the PDF prints -- follow the same rules (``test_every_report_says_it_in_words``),
and a report's header names the threshold set its body is computed under
(``test_the_report_header_and_body_name_the_same_threshold_set``). CSV and JSON exports are for programs: they keep
the code's field names and values (``not_required``, ``bleu1``), documented and stable.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from html.parser import HTMLParser

import pytest

from medeval.accounts import auth
from medeval.core.display import percent
from medeval.engine import registry
from medeval.store.db import connect
from tests.conftest import ROOT, copy_db

# doctor1 has work left to try, doctor2 has answered every task: both states of the work screens
PASSWORDS = {"doctor1": "demo-doctor-pass", "doctor2": "demo-doctor-pass", "researcher": "demo-researcher-pass",
             "admin": "demo-admin-pass", "senior1": "demo-senior-pass"}

# Identifiers a user must type, shown as such: none outside code formatting so far. Text in code formatting
# (`medeval grade`) is exempt from the identifier rule: it is something to type, or a name in a file to edit.
TYPED = frozenset()

RAW_VALUES = {"None", "none", "nan", "NaN", "NaT", "null", "[]", "{}", "True", "False", "true", "false"}
# a Python or JSON word in prose, unless it opens a sentence ("None, or mostly wrong items: 1.")
RAW_WORD = re.compile(r"(?<![\w'-])(None|True|False|NaN|nan|NaT)(?![\w'-])")
SENTENCE_START = re.compile(r"(^|[.!?]\s+|\n)\s*(?:[-*]\s+|\d+\.\s+)?$|\(\s*$")
IDENTIFIER = re.compile(r"(?<![\w./@:-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/-])")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
EXPERT = re.compile(r"\bexperts?\b", re.I)
PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?%")
ONE_DECIMAL = re.compile(r"\d+\.\d")
CONFIDENCE = re.compile(r"^\s?(CIs?|confidence|intervals?|credible)\b")
CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class Seen:
    """One text on screen: where (role · page · selection), which element, what kind of text, the text."""

    where: str
    element: str
    kind: str  # "prose", "cell", "column", "option", "value", "data" (someone's text: answers, references)
    text: str


def _metric_ids() -> re.Pattern:
    """A metric's name where its label differs (``bleu1`` is "BLEU-1")."""
    names = [m.name for m in registry.METRICS.values() if m.name != m.label]
    return re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")


def problems(seen: Seen, allowed: frozenset[str] = frozenset()) -> list[str]:
    """What is wrong with one text on screen, in words (empty: nothing). ``allowed``: names that are data (the
    usernames a researcher chose, ``sim_clin_a``) and may look like identifiers."""
    text, out = seen.text, []
    if seen.kind != "prose" and text.strip() in RAW_VALUES:
        return [f"a raw value {text.strip()!r}"]
    if seen.kind in ("cell", "value", "option") and re.match(r"^\s*[\[{][\"'\[{]", text):
        out.append(f"a raw list or dict {text[:60]!r}")
    if seen.kind == "data":
        return out
    plain = CODE.sub(" ", text)
    for m in RAW_WORD.finditer(plain):
        if not (m.group(1) in ("None", "True", "False") and SENTENCE_START.search(plain[:m.start()])):
            out.append(f"a raw value {m.group(1)!r} in {_around(plain, m)!r}")
    for m in IDENTIFIER.finditer(plain):
        if m.group(0) not in allowed and m.group(0) not in TYPED:
            out.append(f"an identifier {m.group(0)!r} in {_around(plain, m)!r}")
    for m in _metric_ids().finditer(plain):
        if m.group(0) not in allowed:
            out.append(f"a metric's name {m.group(0)!r} for its label {registry.label(m.group(0))!r}")
    for m in EXPERT.finditer(plain):
        out.append(f"{m.group(0)!r} for the clinicians in {_around(plain, m)!r}")
    if not CJK.search(plain):
        for m in PERCENT.finditer(plain):
            if not ONE_DECIMAL.fullmatch(m.group(1)) and not CONFIDENCE.match(plain[m.end():]):
                out.append(f"a percentage {m.group(0)!r} not written as {percent(float(m.group(1)) / 100)!r}")
    return out


def _around(text: str, m: re.Match) -> str:
    return text[max(0, m.start() - 40):m.end() + 40].replace("\n", " ")


# ---------------------------------------------------------------- the checks themselves (fast)

@pytest.mark.parametrize("kind, text", [
    ("cell", "None"), ("cell", "nan"), ("cell", "[]"), ("cell", "{}"), ("cell", "False"), ("option", "True"),
    ("cell", '{"address": "local"}'), ("prose", "Fully shown: True."), ("prose", "the score is None"),
    ("prose", "qualification not_required"), ("column", "aspect_type"), ("option", "bleu1"),
    ("prose", "ROUGE-1 and rouge1"), ("prose", "as the experts said"), ("prose", "29.28% of the answers"),
    ("value", "70%"), ("prose", "mean agreement 0.5 (exact_match row)"),
])
def test_each_rule_catches_what_it_is_for(kind, text):
    assert problems(Seen("here", "there", kind, text))


@pytest.mark.parametrize("kind, text", [
    ("prose", "None, or mostly wrong items: 1."), ("prose", "- None of the models"), ("prose", "32.7% of answers"),
    ("prose", "a 95% CI by bootstrap"), ("prose", "95% intervals"), ("prose", "run `medeval grade --set bleu_1`"),
    ("cell", "BLEU-1"), ("cell", "not required"), ("data", "体重下降10%以上"), ("prose", "Chosen: none yet"),
    ("cell", "Demo calibration (simulated clinicians)"), ("prose", "sim_clin_a, sim_clin_b"), ("value", "62.5%"),
    ("prose", "use-multilingual-v3@0.2.1 and moka-ai/m3e-base"), ("cell", "0.1 – 0.3"), ("prose", "100.0%"),
])
def test_each_rule_leaves_words_alone(kind, text):
    assert not problems(Seen("here", "there", kind, text), frozenset({"sim_clin_a", "sim_clin_b"}))


# ---------------------------------------------------------------- the formatting the pages and reports share (fast)

def test_one_rule_for_percentages():
    from medeval.core import display

    assert [display.percent(x) for x in (0.327, 0.29284, 0.8, 1, 0, 0.00049)] == [
        "32.7%", "29.3%", "80.0%", "100.0%", "0.0%", "0.0%"]
    assert display.percent(None) == display.percent(float("nan")) == display.MISSING
    # a table column shows the same: percentage points through the one printf format
    assert display.PERCENT_FORMAT % display.percent_points(0.29284) == display.percent(0.29284)
    assert all(not problems(Seen("", "", "value", display.percent(x / 997))) for x in range(0, 998, 7))


def test_code_names_and_python_values_in_words():
    from medeval.accounts.audit_text import display_rows
    from medeval.annotation.campaign_text import config_rows, kind_label
    from medeval.core import display
    from medeval.reports import html_kit as kit

    assert display.words("not_required") == "not required" and display.words("gold.mark") == "gold: mark"
    assert display.value_text([True, None, [], "x"]) == "yes, —, —, x"
    assert display.drop_empty_columns([{"a": 1, "b": None, "c": []}, {"a": None, "b": "", "c": [1]}]) == [
        {"a": 1, "c": []}, {"a": None, "c": [1]}]
    assert kind_label("bucket_grading") == "Score-interval buckets (calibration)"
    rows = config_rows({"metrics": ["bleu1", "rouge1"], "aspect_types": ["enumerated"], "calibration_campaigns": [],
                        "allow_overlap": False, "threshold_version": 2})
    assert rows == [{"setting": "metrics", "value": "BLEU-1, ROUGE-1"},
                    {"setting": "aspect types", "value": "enumerated"},
                    {"setting": "calibration campaigns kept apart", "value": "—"},
                    {"setting": "may share items with calibration", "value": "no"},
                    {"setting": "active threshold set when created", "value": "v2"}]
    (row,) = display_rows([{"id": 1, "action": "thresholds.publish", "detail": '{"kind": "random_validation", '
                                                                               '"base_version": null, "ok": true}'}])
    assert row["action"] == "thresholds: publish"
    assert row["detail"] == "kind: random validation; base version: —; ok: yes"
    for v, shown in ((None, "—"), (float("nan"), "—"), ([], "—"), (True, "yes"), ([0.5, 1.0], "0.500, 1.000")):
        assert kit.cell(v) == shown
    html = kit.table([{"a": 1, "never": None}, {"a": 2, "never": ""}])
    assert "never" not in html and "<th>a</th>" in html  # a column empty in every row is left out


def test_every_metric_has_one_name():
    """One label per metric, wherever it is named: the registry's (the reports' helpers are the same function)."""
    from medeval.reports import leaderboard, leaderboard_report, scorer_notes

    for name in registry.METRICS:
        assert scorer_notes.label(name) == leaderboard.metric_label(name) == leaderboard_report.metric_label(name) \
            == registry.label(name)
    assert [registry.label(m) for m in ("bleu1", "rouge1", "cosine", "exact_match")] == [
        "BLEU-1", "ROUGE-1", "cosine", "exact match"]


# ---------------------------------------------------------------- what a page shows

def _unescape(text: str) -> str:
    """Markdown's escapes taken out (``sim\\_clin\\_a`` is read as ``sim_clin_a``)."""
    return re.sub(r"\\([\\`*_{}\[\]()#+\-.!|:=<>~&])", r"\1", text)


def _empty(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()) or \
        (v.__class__.__name__ in ("NaTType", "NAType"))


def _shown(v, cfg: dict, placeholder: str) -> str:
    """A cell as Streamlit's table shows it: a missing value reads as the table's placeholder ("None" unless it
    has one), a number in its column's format."""
    if _empty(v):
        return placeholder if not isinstance(v, str) else v
    fmt = (cfg.get("type_config") or {}).get("format")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and fmt:
        if fmt == "percent":  # Streamlit's own percent format: two decimals
            return f"{v * 100:.2f}%"
        if "%" in fmt and fmt not in ("percent",):
            try:
                return fmt % v
            except (TypeError, ValueError):
                return str(v)
    return str(v)


def _table(where: str, element: str, df, config: dict, *, checkboxes: bool, placeholder: str = "None",
           order: list[str] | None = None) -> list[Seen]:
    """A table's column names and cells as shown; an empty column is a finding of its own."""
    out = []
    for col in df.columns:
        cfg = config.get(str(col), {})
        if cfg.get("hidden") or (order and str(col) not in order):
            continue
        kind = (cfg.get("type_config") or {}).get("type")
        name = cfg.get("label") or str(col)
        out.append(Seen(where, element, "column", name))
        values = list(df[col])
        if len(values) and all(_empty(v) for v in values):
            out.append(Seen(where, f"{element} column {name!r}", "empty column", name))
        if kind in ("line_chart", "bar_chart", "area_chart", "image", "link"):
            continue  # drawn, not read
        is_box = kind == "checkbox" or (checkboxes and df[col].dtype == bool)
        for v in values:
            if is_box and (isinstance(v, bool) or v.__class__.__name__ == "bool_"):
                continue  # a check box, not the word
            text = _shown(v, cfg, placeholder)
            data = kind == "text" and cfg.get("width", 0) >= 300 or name in ("answer", "reference", "response")
            out.append(Seen(where, f"{element} column {name!r}", "data" if data else "cell", text))
    return out


def collect(at, where: str) -> list[Seen]:
    """Every text the user sees on the page AppTest last ran."""
    out: list[Seen] = []
    heading = "page"
    for node in at._tree:
        t = getattr(node, "type", None)
        el = f"{t} under {heading!r}"
        if t in ("title", "header", "subheader"):
            heading = _unescape(str(node.value))[:60]
            out.append(Seen(where, t, "prose", _unescape(str(node.value))))
        elif t in ("markdown", "caption", "info", "warning", "error", "success", "latex"):
            out.append(Seen(where, el, "prose", _unescape(str(node.value))))
        elif t == "text":  # st.text: the pages draw someone's text with it (answers, references)
            out.append(Seen(where, el, "data", str(node.value)))
        elif t == "progress":  # its text: "12 of 60 answered"
            out.append(Seen(where, el, "prose", _unescape(node.proto.text)))
        elif t == "exception":
            out.append(Seen(where, el, "exception", str(node.value)))
        elif t == "metric":
            out.append(Seen(where, el, "prose", node.label))
            out.append(Seen(where, f"metric {node.label!r}", "value", str(node.value)))
            if node.help:
                out.append(Seen(where, f"metric {node.label!r} help", "prose", node.help))
        elif t in ("dataframe", "table"):
            if t == "dataframe":
                p = node.proto
                out += _table(where, el, node.value, json.loads(p.columns or "{}"), checkboxes=True,
                              placeholder=p.placeholder if p.HasField("placeholder") else "None",
                              order=list(p.column_order))
            else:
                out += _table(where, el, node.value, {}, checkboxes=False)
        elif t == "json":
            out.append(Seen(where, el, "json", str(node.value)[:80]))
        elif t in ("selectbox", "radio", "multiselect", "select_slider"):
            out.append(Seen(where, el, "prose", node.label))
            out += [Seen(where, f"{t} {node.label!r}", "option", str(o)) for o in node.options]
        elif t in ("button", "download_button", "form_submit_button", "checkbox", "toggle", "text_input",
                   "text_area", "number_input", "slider", "date_input", "file_uploader", "page_link"):
            out.append(Seen(where, el, "prose", str(getattr(node, "label", ""))))
            if getattr(node, "help", None):
                out.append(Seen(where, f"{t} {node.label!r} help", "prose", node.help))
        elif t in ("expander", "tab"):
            out.append(Seen(where, t, "prose", _unescape(node.label)))
            heading = _unescape(node.label)[:60]
    return out


def findings(seen: list[Seen], allowed: frozenset[str]) -> list[tuple[str, str, str]]:
    """(where, element, what is wrong) for each text on screen that breaks a rule."""
    out = []
    for s in seen:
        if s.kind == "empty column":
            out.append((s.where, s.element, "empty in every row"))
        elif s.kind == "json":
            out.append((s.where, s.element, f"a raw dict on screen (st.json) {s.text!r}"))
        elif s.kind == "exception":
            out.append((s.where, s.element, f"an exception {s.text[:200]!r}"))
        else:
            out += [(s.where, s.element, p) for p in problems(s, allowed)]
    return out


# ---------------------------------------------------------------- every page, every role

@pytest.fixture(scope="module")
def demo(full_demo_template, tmp_path_factory):
    return copy_db(full_demo_template, tmp_path_factory.mktemp("words") / "annotations.db")


def _signed_in(path, username: str):
    from streamlit.testing.v1 import AppTest

    from webui import page as ui

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    with connect(path) as db:
        at.session_state[ui.TEST_TOKEN_KEY] = auth.create_session(
            db, auth.authenticate(db, username, PASSWORDS[username]))
    return at.run()


def _choice(at, label: str):
    """The select box or radio labelled ``label`` on the page, or None."""
    return next((w for w in [*at.selectbox, *at.radio] if w.label == label), None)


def _options(at, label: str) -> list[int]:
    """The positions of the options of the select box or radio labelled ``label`` (none if there is none)."""
    w = _choice(at, label)
    return list(range(len(w.options))) if w is not None else []


def _values() -> list:
    """What the pages' select boxes and radios take as values (AppTest lists their labels; ``set_value`` takes a
    value): ids and versions, metrics, campaign kinds, task types, the pages' own choices."""
    from medeval.annotation.tasks import registry as task_types

    return [*range(1, 100), None, *registry.METRICS, "averaged", "bucket_grading", "random_validation", "interval",
            "active", *task_types.REGISTRY]


def _label(w, v):
    try:
        return str(w.format_func(v))
    except Exception:  # noqa: BLE001  (not one of this widget's values)
        return None


def _pick(at, label: str, i: int) -> str:
    """Choose the ``i``-th option of the select box or radio labelled ``label``, as a user does; its label."""
    w = _choice(at, label)
    shown = w.options[i]
    w.set_value(next(v for v in [*_values(), *w.options] if _label(w, v) == shown)).run()
    return shown


# on each page, the select boxes (and radios) whose every choice a researcher makes: every option is opened once
SELECTIONS = {"campaigns": ("Campaign",), "agreement": ("Campaign", "Consensus of the clinicians"),
              "task-results": ("Campaign",), "leaderboard": ("Metric", "Threshold set"),
              "tuning": ("Clinicians' grades from",), "new-campaign": ("Kind", "Sampling"), "new-task": ("Task",),
              "exam": ("Show",)}


def screens(path, username: str):
    """((role · page, choice), AppTest) for each page the user's role opens, and each choice of its main select
    boxes and radios."""
    from webui import pages as site

    at = _signed_in(path, username)
    with connect(path) as db:
        role = auth.get_user(db, username).role
    for page in site.for_role(role):
        at.switch_page(page.script).run()
        where = f"{username} · {page.title}"
        yield (where, ""), at
        for label in SELECTIONS.get(page.url_path, ()):
            for i in _options(at, label):
                shown = _pick(at, label, i)
                yield (where, f" · {label}: {shown}"), at
            if _options(at, label):
                _pick(at, label, 0)
        if page.url_path in ("grade", "annotate"):  # the work screen itself: past the guidelines, into the items
            for step in ("I have read these", "Start the qualification", "Continue to the items"):
                if any(b.label == step for b in at.button):
                    next(b for b in at.button if b.label == step).click().run()
                    yield (where, f" · after {step!r}"), at


def _data_names(path) -> frozenset[str]:
    """Names that are data, not code: usernames, models, campaigns, data sets (someone chose them)."""
    with connect(path) as db:
        rows = [*db.conn.execute("SELECT username FROM users"), *db.conn.execute("SELECT name FROM models"),
                *db.conn.execute("SELECT name FROM campaigns")]
    return frozenset(w for (name,) in rows for w in re.findall(r"[\w-]+", name or ""))


@pytest.mark.slow  # the demo build, then AppTest runs every page of every role
@pytest.mark.parametrize("username", list(PASSWORDS))
def test_every_page_says_it_in_words(demo, username, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DB", str(demo))  # the database the app opens
    allowed = _data_names(demo)
    first: dict[tuple[str, str, str], str] = {}  # (page, element, problem) -> where it was seen first
    for (page, choice), at in screens(demo, username):
        for where, element, problem in findings(collect(at, f"{page}{choice}"), allowed):
            first.setdefault((page, element, problem), where)
    assert not first, "\n".join(f"{where} · {element}: {problem}" for (_, element, problem), where in first.items())


# ---------------------------------------------------------------- the downloadable reports

class _Report(HTMLParser):
    """An HTML report's texts as a reader sees them: prose, table headers and cells (scripts and styles left out)."""

    def __init__(self):
        super().__init__()
        self.texts: list[tuple[str, str]] = []  # (kind, text): "prose", "column", "cell"
        self.tables: list[tuple[list[str], list[list[str]]]] = []
        self._skip = 0
        self._tag: list[str] = []
        self._buf: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "table":
            self.tables.append(([], []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        if tag in ("p", "li", "h1", "h2", "h3", "th", "td", "caption"):
            self._tag.append(tag)
            self._buf = []

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1
        elif self._tag and tag == self._tag[-1]:
            self._tag.pop()
            text = " ".join("".join(self._buf).split())
            if tag == "th":
                self.tables[-1][0].append(text)
                self.texts.append(("column", text))
            elif tag == "td":
                self.tables[-1][1][-1].append(text)
                self.texts.append(("cell", text))
            elif text:
                self.texts.append(("prose", text))
            self._buf = []

    def handle_data(self, data):
        if not self._skip:
            self._buf.append(data)


def report_findings(html: str, where: str, allowed: frozenset[str]) -> list[str]:
    """The rules of the pages, applied to a report's prose, table headers and cells; and no empty column."""
    doc = _Report()
    doc.feed(html)
    out = [f"{where} · {kind}: {p}" for kind, text in doc.texts
           for p in problems(Seen(where, kind, "data" if CJK.search(text) and kind == "cell" else kind, text), allowed)]
    for head, rows in doc.tables:
        rows = [r for r in rows if r]
        for i, name in enumerate(head):
            if rows and all(not (r[i] if i < len(r) else "").strip() or r[i] == "—" for r in rows):
                out.append(f"{where} · table column {name!r}: empty in every row")
    return list(dict.fromkeys(out))


def _sets_named(text: str) -> set[int]:
    return {int(v) for v in re.findall(r"threshold set v(\d+)", text)}


@pytest.mark.slow  # the demo build, then every report of the demo
def test_every_report_says_it_in_words(demo):
    from medeval.annotation import tasks
    from medeval.reports import agreement_report, dashboard, leaderboard_report, task_report

    allowed, found = _data_names(demo), []
    with connect(demo) as db:
        grading = [cid for (cid,) in db.conn.execute(
            "SELECT id FROM campaigns WHERE kind IN ('bucket_grading', 'random_validation', 'active_calibration')")]
        for cid in grading:
            s = dashboard.campaign_agreement(db, cid, actor=None, n_boot=50)
            found += report_findings(agreement_report.render_html(s), f"agreement report #{cid}", allowed)
        data = leaderboard_report.build(db, compare=1)
        found += report_findings(leaderboard_report.render_html(data), "leaderboard report", allowed)
        for c in tasks.task_campaigns(db, actor=None):
            r = task_report.build(db, c["id"], actor=None)
            found += report_findings(task_report.render_html(r), f"task report #{c['id']}", allowed)
    assert not found, "\n".join(found)


@pytest.mark.slow  # the demo build
def test_the_report_header_and_body_name_the_same_threshold_set(demo):
    """The agreement report's header names the set whose tiers its body compares with the clinicians (the demo's
    campaigns were created under v2, their tiers are compared under the active v3); the leaderboard report names
    another set only in its comparison section."""
    from medeval.engine import thresholds as th
    from medeval.reports import agreement_report, dashboard, leaderboard_report

    with connect(demo) as db:
        active = th.active(db).version
        (cid,) = db.conn.execute("SELECT id FROM campaigns WHERE name = 'Demo calibration (simulated clinicians)'"
                                 ).fetchone()
        created_under = json.loads(db.conn.execute("SELECT config FROM campaigns WHERE id = ?", (cid,)).fetchone()[0]
                                   )["threshold_version"]
        assert created_under != active  # the case that once put two sets in the report as one
        html = agreement_report.render_html(dashboard.campaign_agreement(db, cid, actor=None, n_boot=50))
        lb_html = leaderboard_report.render_html(leaderboard_report.build(db, compare=1))
    header, body = html.split("<h2>Methods</h2>", 1)
    assert _sets_named(header) == _sets_named(body) == {active}, (_sets_named(header), _sets_named(body))
    header, body = lb_html.split("<h2>Methods</h2>", 1)
    own, compared = body.split("<h2>Compared with threshold set v1", 1)
    assert _sets_named(header) == _sets_named(own) == {active}
    assert _sets_named(compared.split("<h2>", 1)[0]) <= {1}
