"""Exam results (researchers, admins): CMB-Exam accuracy of an answers file against its key, every figure named;
the ambiguous answers (the extractor never guesses a letter) with a form each to settle them; the decisions with
who took them. The demo's exam is shown until files are uploaded. Responses are untrusted: shown as plain text."""

import hashlib
import tempfile
from pathlib import Path

import streamlit as st

import medeval
from medeval.annotation import exam_review as er
from medeval.core.display import percent
from medeval.core.errors import MedevalError
from medeval.core import i18n
from medeval.core.i18n import N_, _
from medeval.stats.exam import details_csv
from medeval.stats.exam.extract import reason_text
from medeval.stats.exam.render import SHARES, definitions, display_rows, label
from webui import page as ui
from webui import tables

user = ui.require_page("exam")
st.title(_("Exam results"))
st.caption(_("Multiple-choice accuracy (CMB-Exam): the option letters each response chooses, exact match with the "
             "key. A response that does not determine its choice is **ambiguous**: it is never given a guessed "
             "letter; settle it below."))

DEMO = Path(medeval.__file__).parent / "demo" / "data"
SOURCES = {"demo": N_("The demo's exam"), "upload": N_("Upload an answers file and its key")}
source = st.radio(_("Files"), list(SOURCES), horizontal=True, key="exam_source",  # i18n: not text (ids)
                  format_func=lambda v: _(SOURCES[v]))


def _saved(up, folder: str, name: str) -> str:
    path = Path(folder) / (name + Path(up.name).suffix.lower())
    path.write_bytes(up.getvalue())
    return str(path)


try:
    if source == "demo":
        exam = er.load(DEMO / "exam_demo_answers.jsonl", DEMO / "exam_demo_key.json")
    else:
        c1, c2 = st.columns(2)
        ans_up = c1.file_uploader(_("Answers (JSONL: id, response, model)"), type=["jsonl", "json", "csv"],
                                  key="exam_answers_upload")
        key_up = c2.file_uploader(_("Key (CMB-Exam JSON: id, answer, option, exam_type, exam_class)"),
                                  type=["json", "jsonl", "csv"], key="exam_key_upload")
        if ans_up is None or key_up is None:
            st.info(_("Upload both files to see the results."))
            st.stop()
        with tempfile.TemporaryDirectory() as tmp:
            exam = er.load(_saved(ans_up, tmp, "answers"), _saved(key_up, tmp, "key"))
    with ui.db() as d:
        results = er.score(d, exam, actor=user)
        items = er.review_list(d, exam, actor=user)
        history = er.decisions(d, exam.exam, actor=user)
except MedevalError as e:
    st.error(ui.md_escape(str(e)))
    st.stop()

if msg := st.session_state.pop("exam_msg", None):
    (st.error if msg[0] == "error" else st.success)(msg[1])

st.subheader(_("Results"))
for r in results:
    res = r.to_dict()
    if len(results) > 1:
        ui.plain(_("Model"), r.model)
    cols = st.columns(4)
    for col, name in zip(cols, ("accuracy_settled", "accuracy_ambiguous_wrong", "accuracy_cmb_regex", "accuracy_macro")):
        v = res[name]
        col.metric(label(name), _("undefined") if v is None else percent(v))
    st.caption(_("{n} questions · {ambiguous} ambiguous ({unsettled} unsettled, counted wrong in the settled "
                 "accuracy) · {unanswered} unanswered").format(n=res["n"], ambiguous=res["ambiguous"],
                                                                unsettled=res["unsettled"],
                                                                unanswered=res["unanswered"]))
    # the table's headers short (ten columns fit a laptop's width); each says its figure's full name on hover
    short = {"accuracy_settled": N_("settled"), "accuracy_ambiguous_wrong": N_("ambiguous as wrong"),
             "accuracy_macro": N_("macro (CMB)")}
    tables.dataframe(display_rows(res), percent=[label(k) for k in SHARES], key=f"exam_table_{r.model}",
                     column_config={label(k): {"label": _(v), "help": label(k)} for k, v in short.items()})
with st.expander(_("How each figure is computed")):
    for name, text in definitions():
        st.markdown(_("**{name}**: {text}").format(name=name, text=text))  # our own words; CMB's code names in `code`
st.download_button(_("Details CSV (one row per question: both readings, status, reason, settled letters)"),
                   details_csv(results), file_name="exam_details.csv", mime="text/csv", key="exam_details")

st.subheader(_("Ambiguous answers to settle"))
PAGE_SIZE = 30  # forms drawn at once; the rest follow once these are settled (or with "All")
if not items:
    st.info(_("No ambiguous answers: every response states its choice."))
else:
    # the options are their English names (ids, kept as they were), shown in the reader's language
    show = st.radio(_("Show"), [N_("Unsettled"), N_("All")], horizontal=True, key="exam_show", format_func=_)
    shown = [it for it in items if show == "All" or it.decision is None]
    unsettled = sum(it.decision is None for it in items)
    if len(shown) > PAGE_SIZE:
        st.caption(_("{unsettled} unsettled of {n} ambiguous; the first {page} of {shown} shown").format(
            unsettled=unsettled, n=len(items), page=PAGE_SIZE, shown=len(shown)))
    else:
        st.caption(_("{unsettled} unsettled of {n} ambiguous").format(unsettled=unsettled, n=len(items)))
    items = shown[:PAGE_SIZE]
for it in items:
    ident = hashlib.sha256(f"{it.model}\x00{it.question}".encode()).hexdigest()[:12]
    with st.container(border=True, key=f"exam_item_{ident}"):
        st.text(_("Model: {model} · question {question} · why ambiguous: {reason}").format(
            model=it.model or "-", question=it.question, reason=reason_text(it.reason)))
        ui.plain(_("Response"), it.response)
        if it.options:
            st.text("\n".join(f"{k}. {v}" for k, v in sorted(it.options.items())))
        d = it.decision
        st.text(_("Unsettled") if d is None else
                _("Settled: {letters} by {who} at {when}").format(letters=d.letters or _("no answer"),
                                                                  who=d.decided_by, when=i18n.datetime_text(d.decided_at)))
        with st.form(f"exam_form_{ident}"):
            picked = st.multiselect(_("Letters the response chooses"), list(it.valid),
                                    default=list(d.letters) if d else [], key=f"exam_letters_{ident}")
            none = st.checkbox(_("The response gives no answer"), value=bool(d and not d.letters),
                               key=f"exam_none_{ident}")
            note = st.text_input(_("Note (why)"), key=f"exam_note_{ident}")
            if st.form_submit_button(_("Settle")):
                try:
                    if not none and not picked:
                        raise MedevalError(_("pick the letters, or tick 'The response gives no answer'"))
                    with ui.db() as dbc:
                        er.settle(dbc, exam, it.model, it.question, "none" if none else "".join(picked), note=note,
                                  actor=user)
                except MedevalError as e:
                    st.session_state["exam_msg"] = ("error", ui.md_escape(str(e)))
                else:
                    st.session_state["exam_msg"] = ("ok", ui.md_escape(
                        _("Settled question {question} of {model}.").format(question=it.question,
                                                                            model=it.model or _("the model"))))
                st.rerun()

st.subheader(_("Decisions"))
if history:
    tables.with_csv(lambda: [{"id": h.id, "model": h.model, "question": h.question,
                              "letters": h.letters or _("(no answer)"), "decided by": h.decided_by,
                              "decided at": h.decided_at, "note": h.note, "supersedes": h.supersedes}
                             for h in history],
                    labels={"id": N_("id"), "model": N_("model"), "question": N_("question"), "letters": N_("letters"),
                            "decided by": N_("decided by"), "decided at": N_("decided at"), "note": N_("note"),
                            "supersedes": N_("supersedes")},
                    times=("decided at",), key="exam_decisions", file_name="exam-decisions.csv", label=_("Decisions (CSV)"))
else:
    st.caption(_("No decisions yet for this exam."))
st.caption(_("Exam {exam} (the key file's SHA-256): a decision belongs to this key, the model, the question and the "
             "response read.").format(exam=exam.exam))
