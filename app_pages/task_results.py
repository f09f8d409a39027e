"""Task results (researchers): progress and the results of any ``medeval.annotation.tasks`` campaign, as the task type
declares them (tables and figures per section); JSON and CSV downloads; close / reopen."""

import json

import streamlit as st

from medeval.annotation import tasks
from medeval.annotation.campaign_text import COLUMN_LABELS, PROGRESS_LABELS, config_rows
from medeval.reports import task_report as task_rep
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _, current, language, ngettext
from webui import page as ui
from webui import tables

user = ui.require_page("task-results")
st.title(_("Task results"))

with ui.db() as d:
    camps = tasks.task_campaigns(d, actor=user)
if not camps:
    st.info(_("No rating, preference or fact-check campaign yet: create one on the New task page "
              "(or `python -m medeval task create`)."))
    st.stop()
camp = ui.campaign_choice(camps, key="task_results_campaign")
cid = camp["id"]


try:
    with ui.db() as d:
        r = task_rep.build(d, cid, actor=user)  # the results, and the gold part the report adds
        rows = tasks.answers(d, cid, actor=user)
except MedevalError as e:
    st.error(ui.md_escape(str(e)))
    st.stop()

def _cell(v):
    """A CI as "0.61 – 0.83"; numbers stay numbers (sortable), undefined stays empty."""
    if isinstance(v, (list, tuple)):
        return " – ".join(f"{x:.3f}" if isinstance(x, float) else str(x) for x in v)
    return v


# short headers of the results tables' long column names (translated where shown)
# the columns whose cells are the task type's words (a statistic's name, what was rated, a built-in criterion, why
# a value is undefined), stored in English, shown in the reader's language
WORDS = ("statistic", "rated", "criterion", "undefined_reason")
SHORT = {"n_items": N_("items"), "n_raters": N_("raters"), "undefined_reason": N_("undefined"), "ci95": N_("95% CI")}
FLAG_LABELS = {"source": N_("source"), "annotator": N_("annotator"), "note": N_("note")}
GOLD_LABELS = {"id": N_("id"), "source": N_("source"), "expected": N_("expected"), "reason": N_("reason"),
               "retired": N_("retired")}


def _fit(table: list[dict]) -> tuple[list[dict], list[str]]:
    """A results table made to fit a 1366-px screen without losing anything: the "how to read" text (one
    sentence per statistic, repeated on its rows) goes under the table, a column empty on every row
    is left out, long headers get short names (every header in the reader's language: the keys as the task type
    names them, through ``_()``)."""
    notes = list(dict.fromkeys(_("{key}: {value}").format(key=task_rep.term(row["statistic"]), value=row["reading"])
                               if row.get("statistic") else row["reading"] for row in table if row.get("reading")))
    empty = {k for k in table[0] if all(row.get(k) in (None, "") for row in table)}
    shown = [{_(SHORT.get(k, k)): _cell(task_rep.term(v) if k in WORDS else v) for k, v in row.items()
              if k != "reading" and k not in empty} for row in table]
    return _turned(shown), notes


def _turned(shown: list[dict]) -> list[dict]:
    """A table of many figures for a few rows (e.g. AccR's twelve per model) turned a quarter: one row per
    figure, one column per row of the table, so it fits the screen instead of scrolling sideways."""
    keys = list(shown[0]) if shown else []
    if len(keys) <= 8 or len(shown) > 6:
        return shown
    head = keys[0]
    names = [str(row[head]) for row in shown]
    if len(set(names)) < len(names):
        return shown
    fmt = lambda v: "" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))  # noqa: E731
    return [{head: _(k), **{name: fmt(row.get(k)) for name, row in zip(names, shown)}} for k in keys[1:]]


prog = r["progress"]
st.caption(_("{task} · {items} items, k = {k} annotators each · {status}").format(
    task=ui.md_escape(r["task"]), items=prog["items"], k=prog["k"],
    status=_(ui.STATUS_NAMES.get(camp["status"], camp["status"]))))
m1, m2 = st.columns(2)
m1.metric(_("Items done by all k"), f"{prog['items_complete']} / {prog['items']}")
m2.metric(_("Answers recorded"), len(rows))
if prog["not_fully_shown"] or prog["not_measured"]:
    st.caption(_("Answers given without the whole text on screen: {partial} · not measured (changed from the list "
                 "below an item, given outside Rate & compare, or before it measured): {unmeasured}").format(
        partial=prog["not_fully_shown"], unmeasured=prog["not_measured"]))
# the reading columns only where they say something (a column that is always 0 is left out)
reading_cols = [c for c in ("not_fully_shown", "not_measured") if prog[c]]
tables.dataframe([{"annotator": a["annotator"], "progress": a["done"] / a["assigned"] if a["assigned"] else 0.0,
                   "done": a["done"], "assigned": a["assigned"], "skipped": a["skipped"], "flagged": a["flagged"],
                   **{c.replace("_", " "): a[c] for c in reading_cols}}
                  for a in prog["annotators"]], progress=("progress",), key="task_progress_table",
                 labels=PROGRESS_LABELS)
if not rows:
    st.info(_("No answers yet: the results appear as soon as annotators start."))

for n, sec in enumerate(r["sections"]):
    st.subheader(ui.md_escape(sec["title"]), anchor=False)  # may carry a rubric's names
    if sec["text"]:
        st.caption(ui.md_escape(sec["text"]))
    for name, table in sec["tables"].items():
        if not table:
            continue
        st.markdown(f"**{ui.md_escape(_(name))}**")
        shown, notes = _fit(table)
        floats = {k for row in shown for k, v in row.items() if isinstance(v, float)}
        tables.dataframe(shown, key=f"sec_{n}_{name}",
                         height=35 * (len(shown) + 1) + 3 if 10 < len(shown) <= 20 else "auto",  # every row in view
                         column_config={k: st.column_config.NumberColumn(format="%.3f") for k in floats})
        for note in notes:
            st.caption(ui.md_escape(note))

if r["flags"]:
    st.subheader(_("Flagged items ({n})").format(n=len(r["flags"])), anchor=False)
    st.caption(_("Notes the annotators left on items (their text, shown as written)."))
    ui.safe_table([{"source": f["source"], "annotator": f["annotator"], "note": f["note"]} for f in r["flags"]],
                  hide_index=True, width="stretch", key="task_flags", file_name=f"task-{cid}-flags.csv",
                  label=_("Flagged items (CSV)"), labels=FLAG_LABELS)


def _english() -> dict:
    """The results again, in English, for the Results (JSON) download: a data file stays English whatever the page's
    language (its words are made as the results are built); the report below is in the researcher's language."""
    with language("en"), ui.db() as d:
        return task_rep.build(d, cid, actor=user)


c1, c2, _c3 = st.columns(3)
c1.download_button(_("Results (JSON)"), lambda: json.dumps(_english(), ensure_ascii=False, indent=2, default=str),
                   file_name=f"task-{cid}-results.json", mime="application/json", key="task_json", width="stretch")
c2.download_button(_("Answers (CSV)"), tasks.answers_csv(rows), file_name=f"task-{cid}-answers.csv", mime="text/csv",
                   key="task_csv", width="stretch")

# the report (HTML, and a zip with the PDF), made when a button is clicked
from medeval.reports import html_kit  # noqa: E402


LANG = current()  # the researcher's own: the report is made on click, in the language of this page


def _task_zip() -> bytes:
    """The report's files (HTML, PDF where Chromium is installed, JSON, CSVs) in the researcher's language, made on
    click (``r`` was built in it: the sections' titles and texts are words of the report too)."""
    pdf = task_rep.chromium_path() is not None
    return html_kit.zip_report(lambda tmp: task_rep.write_report(r, tmp, pdf=pdf, language=LANG))


def _task_html() -> str:
    """The report's HTML page in the researcher's language, made on click."""
    with language(LANG):
        return task_rep.render_html(r)


r1, r2 = st.columns(2)
r1.download_button(_("Report (HTML)"), _task_html, file_name=f"task-{cid}-report.html",
                   mime="text/html", key="task_report_html", width="stretch",
                   help=_("Offline: charts included; a methods paragraph with this campaign's numbers"))
r2.download_button(_("Report (zip: HTML, PDF, …)"), _task_zip, file_name=f"task-{cid}-report.zip",
                   mime="application/zip", key="task_report_zip", width="stretch",
                   help=_("HTML, PDF (printed by Chromium, when installed), the results as JSON and a CSV per table"))

with st.expander(_("Configuration (reproducible from the seed)")):
    tables.dataframe(config_rows(r["config"]), key="task_config", width="content", labels=COLUMN_LABELS)

ui.guidelines_editor(cid, user, "task_guidelines")


def gold_panel(cid: int) -> None:
    """Gold items of a task campaign: the settings (with the score tolerance), marking an item of the campaign's
    data with its expected answers by hand or from a CSV, the list, retiring, and each annotator's results."""
    from medeval.annotation import gold
    from webui import gold as wg

    p = "task_gold"
    with ui.db() as d:
        try:
            gold.require_gold_campaign(d, cid, "task")
        except MedevalError:
            return  # (a campaign that takes no gold items)
        _kind, t = gold.task_type(d, cid)
        s = gold.get_settings(d, cid)
        items = gold.list_task_gold(d, cid, actor=user)
        results = gold.gold_accuracy(d, cid, actor=user, backend=gold.TASK)
    active = [g for g in items if not g.retired]
    with st.expander(_("Gold items ({n})").format(n=len(active))):
        wg.notices(p)
        st.caption(_("Items of this campaign's data (never one of its real items) whose expected answers you set, "
                     "with the guideline's reason: a qualification round before the real items and hidden checks in "
                     "the queue (shown exactly like real items). Gold answers are kept apart from the results: no "
                     "table, statistic, report or export on this page counts them."))
        wg.settings_form(cid, user, s, prefix=p, task=True)

        st.markdown("**{}**".format(_("Mark an item as gold")))  # i18n: not text
        contains = st.text_input(_("Source contains"), key=f"{p}_q_source", max_chars=200)  # NAME_MAX_CHARS
        try:
            with ui.db() as d:
                found = {c.source: c for c in gold.candidates(d, cid, contains=contains, actor=user)}
        except MedevalError as e:
            st.error(ui.md_escape(str(e)))
            found = {}
        none = _("no item's source contains that") if contains else _("no item of the data is left to choose")
        src = st.selectbox(_("Item (its source)"), list(found), key=f"{p}_pick", index=None,
                           placeholder=_("choose an item") if found else none,
                           help=_("Items of the campaign's data that are not real items of it and not gold already; "
                                  "the first 50 are listed: narrow them with Source contains") if len(found) >= 50
                           else _("Items of the campaign's data that are not real items of it and not gold already"))
        expected = {}
        if src is not None:
            payload = found[src].payload
            for n, b in enumerate(gold.gold_blocks(t, payload)):
                ui.plain(b.label, b.text, key=f"{p}_block_{n}")
            st.caption(_("Expected answers: set the questions the item checks (at least one); the others are not "
                         "checked. Responses are numbered in the data's order; A is the data's first output."))
            qs = gold.gold_questions(t, payload)
            for target in dict.fromkeys(q.target for q in qs):
                row = [q for q in qs if q.target == target]
                st.markdown(f"*{ui.md_escape(target)}*")
                cols = st.columns(min(4, max(3, len(row))))
                for n, q in enumerate(row):
                    col = cols[n % len(cols)]
                    opts = {o.value: o.label + (f" · {o.meaning}" if o.meaning and o.meaning != o.label else "")
                            for o in q.options}
                    v = col.selectbox(ui.md_escape(q.criterion), [None, *opts], key=f"{p}_exp_{src}_{q.id}",
                                      format_func=lambda v, o=opts: _("— (not checked)") if v is None else o[v])
                    if v is not None:
                        expected[q.id] = v
        reason = st.text_area(_("Reason (the guideline's one line why)"), key=f"{p}_reason", height=80)
        if st.button(_("Mark as gold"), key=f"{p}_mark", disabled=src is None):
            wg.run(lambda d: gold.mark_task_gold(d, cid, src, expected, reason or "", actor=user),
                   lambda gid: _("Marked as gold item {id}").format(id=gid), prefix=p)

        up = st.file_uploader(_("Or upload a CSV with the columns `source`, `question`, `expected` and `reason`: one "
                                "row per expected answer; the question as in the item's layout (`r1:fluency`, "
                                "`judge:j_knowledge`, `knowledge`), the answer by its value or label"), type=["csv"],
                              key=f"{p}_csv")
        if up is not None and st.button(_("Import the CSV"), key=f"{p}_import"):
            wg.import_upload(up, lambda d, path: gold.import_task_gold_csv(d, cid, path, actor=user),
                             lambda n: ngettext("Imported {n} gold item", "Imported {n} gold items", n).format(n=n),
                             prefix=p)

        if items:
            tables.dataframe([{"id": g.id, "source": g.source,
                               "expected": "; ".join(gold.describe(t, g.payload, g.expected)),
                               "reason": g.reason, "retired": g.retired} for g in items], key=f"{p}_table",
                             labels=GOLD_LABELS,
                         column_config={"id": st.column_config.NumberColumn(width=50),  # fits a 1366-px screen
                                        "source": st.column_config.TextColumn(width=190),
                                        "expected": st.column_config.TextColumn(width=330),
                                        "reason": st.column_config.TextColumn(width=190),
                                        "retired": st.column_config.CheckboxColumn(width=70)})
            c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
            gid = c1.selectbox(_("Retire a gold item"), [g.id for g in active], key=f"{p}_retire_pick", index=None,
                               placeholder=_("choose a gold item"))
            if c2.button(_("Retire…"), key=f"{p}_retire", disabled=gid is None):
                ui.ask_first(f"{p}_retire_ask_{gid}")
            ui.confirm(f"{p}_retire_ask_{gid}",  # i18n: not text
                       question=_("Retire gold item {id}?").format(id=gid),
                       details=_("It is no longer handed out; answers already given to it are kept."),
                       yes=_("Retire it"),
                       on_yes=lambda: wg.run(lambda d: gold.retire_task_gold(d, cid, gid, actor=user),
                                             _("Retired gold item {id}").format(id=gid), prefix=p))

        wg.results_table(results, key=f"{p}_results")


gold_panel(cid)

# closing is asked once, and sits apart from the downloads
ui.open_close_button(st.columns(3)[0], camp, user, key_prefix="task")
