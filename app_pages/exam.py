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
from medeval.stats.exam import details_csv
from medeval.stats.exam.render import SHARES, definitions, display_rows
from medeval.stats.exam.score import LABELS
from webui import page as ui
from webui import tables

user = ui.require_page("exam")
st.title("Exam results")
st.caption("Multiple-choice accuracy (CMB-Exam): the option letters each response chooses, exact match with the key. "
           "A response that does not determine its choice is **ambiguous**: it is never given a guessed letter; "
           "settle it below.")

DEMO = Path(medeval.__file__).parent / "demo" / "data"
source = st.radio("Files", ["The demo's exam", "Upload an answers file and its key"], horizontal=True,
                  key="exam_source")


def _saved(up, folder: str, name: str) -> str:
    path = Path(folder) / (name + Path(up.name).suffix.lower())
    path.write_bytes(up.getvalue())
    return str(path)


try:
    if source.startswith("The demo"):
        exam = er.load(DEMO / "exam_demo_answers.jsonl", DEMO / "exam_demo_key.json")
    else:
        c1, c2 = st.columns(2)
        ans_up = c1.file_uploader("Answers (JSONL: id, response, model)", type=["jsonl", "json", "csv"],
                                  key="exam_answers_upload")
        key_up = c2.file_uploader("Key (CMB-Exam JSON: id, answer, option, exam_type, exam_class)",
                                  type=["json", "jsonl", "csv"], key="exam_key_upload")
        if ans_up is None or key_up is None:
            st.info("Upload both files to see the results.")
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

st.subheader("Results")
for r in results:
    res = r.to_dict()
    if len(results) > 1:
        ui.plain("Model", r.model)
    cols = st.columns(4)
    for col, name in zip(cols, ("accuracy_settled", "accuracy_ambiguous_wrong", "accuracy_cmb_regex", "accuracy_macro")):
        v = res[name]
        col.metric(LABELS[name], "undefined" if v is None else percent(v))
    st.caption(f"{res['n']} questions · {res['ambiguous']} ambiguous ({res['unsettled']} unsettled, counted wrong in "
               f"the settled accuracy) · {res['unanswered']} unanswered")
    # the table's headers short (ten columns fit a laptop's width); each says its figure's full name on hover
    short = {"accuracy_settled": "settled", "accuracy_ambiguous_wrong": "ambiguous as wrong",
             "accuracy_macro": "macro (CMB)"}
    tables.dataframe(display_rows(res), percent=[LABELS[k] for k in SHARES], key=f"exam_table_{r.model}",
                     column_config={LABELS[k]: {"label": v, "help": LABELS[k]} for k, v in short.items()})
with st.expander("How each figure is computed"):
    for name, text in definitions():
        st.markdown(f"**{name}**: {text}")  # our own words; CMB's code names in `code`
st.download_button("Details CSV (one row per question: both readings, status, reason, settled letters)",
                   details_csv(results), file_name="exam_details.csv", mime="text/csv", key="exam_details")

st.subheader("Ambiguous answers to settle")
PAGE_SIZE = 30  # forms drawn at once; the rest follow once these are settled (or with "All")
if not items:
    st.info("No ambiguous answers: every response states its choice.")
else:
    show = st.radio("Show", ["Unsettled", "All"], horizontal=True, key="exam_show")
    shown = [it for it in items if show == "All" or it.decision is None]
    st.caption(f"{sum(it.decision is None for it in items)} unsettled of {len(items)} ambiguous"
               + (f"; the first {PAGE_SIZE} of {len(shown)} shown" if len(shown) > PAGE_SIZE else ""))
    items = shown[:PAGE_SIZE]
for it in items:
    ident = hashlib.sha256(f"{it.model}\x00{it.question}".encode()).hexdigest()[:12]
    with st.container(border=True, key=f"exam_item_{ident}"):
        st.text(f"Model: {it.model or '-'} · question {it.question} · why ambiguous: {it.reason}")
        ui.plain("Response", it.response)
        if it.options:
            st.text("\n".join(f"{k}. {v}" for k, v in sorted(it.options.items())))
        d = it.decision
        st.text("Unsettled" if d is None else
                f"Settled: {d.letters or 'no answer'} by {d.decided_by} at {d.decided_at}")
        with st.form(f"exam_form_{ident}"):
            picked = st.multiselect("Letters the response chooses", list(it.valid),
                                    default=list(d.letters) if d else [], key=f"exam_letters_{ident}")
            none = st.checkbox("The response gives no answer", value=bool(d and not d.letters),
                               key=f"exam_none_{ident}")
            note = st.text_input("Note (why)", key=f"exam_note_{ident}")
            if st.form_submit_button("Settle"):
                try:
                    if not none and not picked:
                        raise MedevalError("pick the letters, or tick 'The response gives no answer'")
                    with ui.db() as dbc:
                        er.settle(dbc, exam, it.model, it.question, "none" if none else "".join(picked), note=note,
                                  actor=user)
                except MedevalError as e:
                    st.session_state["exam_msg"] = ("error", ui.md_escape(str(e)))
                else:
                    st.session_state["exam_msg"] = ("ok", ui.md_escape(
                        f"Settled question {it.question} of {it.model or 'the model'}."))
                st.rerun()

st.subheader("Decisions")
if history:
    ui.safe_table([{"id": h.id, "model": h.model, "question": h.question, "letters": h.letters or "(no answer)",
                    "decided by": h.decided_by, "decided at": h.decided_at, "note": h.note,
                    "supersedes": h.supersedes} for h in history], hide_index=True, width="stretch",
                  key="exam_decisions", file_name="exam-decisions.csv", label="Decisions (CSV)")
else:
    st.caption("No decisions yet for this exam.")
st.caption(f"Exam {exam.exam} (the key file's SHA-256): a decision belongs to this key, the model, the question "
           "and the response read.")
