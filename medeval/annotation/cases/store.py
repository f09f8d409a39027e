"""Writing validated input into the database: cases, responses and judgements, and fact-check claims.

Both imports check everything first, then store all or nothing, and never overwrite stored text.
Everything is grouped in named *datasets* so that several imports can live side by side.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation.cases.formats import read_cases, read_responses
from medeval.annotation.cases.judgements import read_judgements
from medeval.core.errors import InputError, MedevalError
from medeval.core.limits import check_name
from medeval.store.db import transaction

DEFAULT_FACT_MODEL = "default"
"""Model name stored for a fact-check file without a ``model`` column."""


# ================================================================== import

def _dataset_name(dataset: str) -> str:
    name = (dataset or "").strip()
    if not name:
        raise InputError("the dataset name is empty", fix="name the dataset, e.g. --dataset cmb-clin")
    return check_name(name, what="the dataset name")


def _hint(name: str, known) -> str:
    """A "did you mean" hint (case-insensitive) or ''."""
    by_lower = {}
    for k in sorted(known):
        by_lower.setdefault(k.lower(), k)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return f"did you mean {by_lower[close[0]]!r}? " if close else ""


def import_cases(db: sqlite_utils.Database, dataset: str, *, cases: str | Path | None = None,
                 responses: str | Path | None = None, judgements: str | Path | None = None,
                 actor: User | None = None) -> dict:
    """Import cases, responses and judgements into ``dataset`` -- validated first, then all or nothing.

    Responses and judgements may refer to cases stored earlier or in ``cases`` of the
    same call (by case id and 1-based question number); a judgement's models must all
    have a response to its question. Stored text (case title / description, question,
    reference, response, rationale, scores) is never overwritten: importing the same
    files again changes nothing, a different text for something stored is an error. A judge's
    per-criterion scores are stored with its overall scores (``judge_criterion_scores``).
    New questions may be added to a stored case as long as its questions stay numbered
    1..n; a blank title or description in the file leaves the stored one as it is. Returns counts ``{"dataset", "cases_added", "cases_present", "questions_added",
    "questions_present", "responses_added", "responses_present", "judgements_added",
    "judgements_present"}``. With ``actor``, needs the researcher or admin role and is audited.
    """
    authorize(actor, "cases.import", db=db)
    name = _dataset_name(dataset)
    if not (cases or responses or judgements):
        raise MedevalError("nothing to import: give cases, responses and/or judgements")
    case_rows = read_cases(cases) if cases else []
    resp_rows = read_responses(responses) if responses else []
    judge_rows = read_judgements(judgements) if judgements else []
    s = {"dataset": name, "cases_added": 0, "cases_present": 0, "questions_added": 0, "questions_present": 0,
         "responses_added": 0, "responses_present": 0, "judgements_added": 0, "judgements_present": 0}
    conn = db.conn
    never = "stored text is never overwritten"
    with transaction(db):
        # -- cases and questions
        stored = {k: (i, t, d) for i, k, t, d in conn.execute(
            "SELECT id, case_key, title, description FROM cases WHERE dataset = ?", (name,))}
        stored_q: dict[int, dict[int, tuple[str, str]]] = {}
        for cid, p, q, r in conn.execute(
                "SELECT q.case_id, q.position, q.question, q.reference FROM case_questions q JOIN cases c "
                "ON c.id = q.case_id WHERE c.dataset = ?", (name,)):
            stored_q.setdefault(cid, {})[p] = (q, r)
        for c in case_rows:
            old = stored.get(c.key)
            if old is None:
                cid = conn.execute("INSERT INTO cases (dataset, case_key, title, description) VALUES (?, ?, ?, ?)",
                                   (name, c.key, c.title, c.description)).lastrowid
                stored[c.key] = (cid, c.title, c.description)
                s["cases_added"] += 1
                old_q = {}
            else:
                cid = old[0]
                for fld, was, now in (("title", old[1], c.title), ("description", old[2], c.description)):
                    if now and was != now:  # blank in the file: not given, the stored text stands
                        raise InputError(f"case {c.key!r} is already stored in dataset {name!r} with a different "
                                         f"{fld}; {never}", file=c.file, row=c.row,
                                         fix=f"correct the {fld}, or import the changed cases as a new dataset")
                s["cases_present"] += 1
                old_q = stored_q.get(cid, {})
            new = []
            for q in c.questions:
                if q.position in old_q:
                    if old_q[q.position] != (q.question, q.reference):
                        what = "question" if old_q[q.position][0] != q.question else "reference"
                        raise InputError(f"case {c.key!r}, question {q.position} is already stored with a different "
                                         f"{what}; {never}", file=c.file, row=q.row,
                                         fix="correct the file, or import the changed cases as a new dataset")
                    s["questions_present"] += 1
                else:
                    new.append((cid, q.position, q.question, q.reference))
            allpos = sorted(set(old_q) | {q.position for q in c.questions})
            if allpos != list(range(1, len(allpos) + 1)):
                gap = next(i for i in range(1, len(allpos) + 2) if i not in allpos)
                raise InputError(f"case {c.key!r} would have questions {_ranges(allpos)}, without question {gap}",
                                 file=c.file, row=c.row,
                                 fix="number the questions of a case 1, 2, 3 ... without gaps")
            conn.executemany("INSERT INTO case_questions (case_id, position, question, reference) VALUES (?, ?, ?, ?)",
                             new)
            s["questions_added"] += len(new)

        if resp_rows or judge_rows:
            qids = {(k, p): qid for qid, k, p in conn.execute(
                "SELECT q.id, c.case_key, q.position FROM case_questions q JOIN cases c ON c.id = q.case_id "
                "WHERE c.dataset = ?", (name,))}
            npos: dict[str, int] = {}
            for k, p in qids:
                npos[k] = max(npos.get(k, 0), p)

            def question_id(case: str, pos: int, file, row) -> int:
                qid = qids.get((case, pos))
                if qid is not None:
                    return qid
                if case not in npos:
                    raise InputError(f"case {case!r} is not in dataset {name!r}", file=str(file), row=row,
                                     fix=_hint(case, npos) + "import the case first (cases file), or check the case "
                                         "id and the dataset name")
                raise InputError(f"case {case!r} has {npos[case]} question(s); there is no question {pos}",
                                 file=str(file), row=row,
                                 fix="question is the 1-based number of the question in its case")

            stored_resp: dict[tuple[int, str], str] = {(q, m): r for q, m, r in conn.execute(
                "SELECT r.question_id, r.model, r.response FROM case_responses r JOIN case_questions q "
                "ON q.id = r.question_id JOIN cases c ON c.id = q.case_id WHERE c.dataset = ?", (name,))}
            new = []
            for r in resp_rows:
                qid = question_id(r.case, r.position, responses, r.row)
                if (qid, r.model) in stored_resp:
                    if stored_resp[(qid, r.model)] != r.response:
                        raise InputError(f"{r.model}'s response to case {r.case!r}, question {r.position} is already "
                                         f"stored with different text; {never}", file=str(responses), row=r.row,
                                         fix="import the new run under a new model name (e.g. 'model-v2') or as a "
                                             "new dataset")
                    s["responses_present"] += 1
                    continue
                stored_resp[(qid, r.model)] = r.response
                new.append((qid, r.model, r.response))
            conn.executemany("INSERT INTO case_responses (question_id, model, response) VALUES (?, ?, ?)", new)
            s["responses_added"] = len(new)

            answered: dict[int, set] = {}
            for qid, m in stored_resp:
                answered.setdefault(qid, set()).add(m)
            stored_j = {(q, j): (i, rat, mods) for i, q, j, rat, mods in conn.execute(
                "SELECT a.id, a.question_id, a.judge, a.rationale, a.models FROM judge_assessments a "
                "JOIN case_questions q ON q.id = a.question_id JOIN cases c ON c.id = q.case_id "
                "WHERE c.dataset = ?", (name,))}
            for j in judge_rows:
                qid = question_id(j.case, j.position, judgements, j.row)
                have = answered.get(qid, set())
                missing = [m for m in j.models if m not in have]
                if missing:
                    raise InputError(
                        f"{j.judge} assesses {', '.join(missing)} on case {j.case!r}, question {j.position}, but "
                        f"{'that model has' if len(missing) == 1 else 'those models have'} no response to it "
                        f"(responses from: {', '.join(sorted(have)) or 'none'})", file=str(judgements), row=j.row,
                        fix=_hint(missing[0], have) + "import the responses first (responses file), or correct "
                                                      "the model names")
                models_json = json.dumps(list(j.models), ensure_ascii=False)
                old = stored_j.get((qid, j.judge))
                if old is not None:
                    old_scores = dict(conn.execute("SELECT model, score FROM judge_scores WHERE assessment_id = ?",
                                                   (old[0],)).fetchall())
                    old_crit: dict[str, dict[str, float]] = {}
                    for m, c, v in conn.execute("SELECT model, criterion, score FROM judge_criterion_scores "
                                                "WHERE assessment_id = ?", (old[0],)):
                        old_crit.setdefault(m, {})[c] = v
                    if (old[1], old[2], old_scores, old_crit) != (j.rationale, models_json, j.scores, j.criteria):
                        raise InputError(f"{j.judge}'s assessment of case {j.case!r}, question {j.position} is "
                                         f"already stored with different text or (per-criterion) scores; {never}",
                                         file=str(judgements), row=j.row,
                                         fix="import the new assessment under a new judge name or as a new dataset")
                    s["judgements_present"] += 1
                    continue
                aid = conn.execute("INSERT INTO judge_assessments (question_id, judge, rationale, models) "
                                   "VALUES (?, ?, ?, ?)", (qid, j.judge, j.rationale, models_json)).lastrowid
                stored_j[(qid, j.judge)] = (aid, j.rationale, models_json)
                conn.executemany("INSERT INTO judge_scores (assessment_id, model, score) VALUES (?, ?, ?)",
                                 [(aid, m, v) for m, v in j.scores.items()])
                conn.executemany("INSERT INTO judge_criterion_scores (assessment_id, model, criterion, score) "
                                 "VALUES (?, ?, ?, ?)", [(aid, m, c, v) for m, cs in j.criteria.items()
                                                         for c, v in cs.items()])
                s["judgements_added"] += 1
        if actor is not None and any(v for k, v in s.items() if k.endswith("_added")):  # (a no-op: nothing to audit)
            audit(db, actor.username, "cases.import", name,
                  {**{k: v for k, v in s.items() if k != "dataset"},
                   "files": {k: str(v) for k, v in (("cases", cases), ("responses", responses),
                                                    ("judgements", judgements)) if v}})
    return s


def _ranges(nums: list[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``'1-3, 5'``."""
    out, start = [], None
    for i, n in enumerate(nums):
        if start is None:
            start = n
        if i + 1 == len(nums) or nums[i + 1] != n + 1:
            out.append(f"{start}-{n}" if n != start else str(n))
            start = None
    return ", ".join(out)


def import_fact_claims(db: sqlite_utils.Database, dataset: str, path: str | Path, *,
                       actor: User | None = None) -> dict:
    """Import a fact-check file (see :func:`medeval.stats.factcheck.read_factcheck`) into ``dataset``; all or nothing.

    Both claims of every item are stored per model with the model's response. A
    file without a ``model`` column is stored under the model name ``"default"``
    (:data:`DEFAULT_FACT_MODEL`). Importing the same file again changes nothing; a
    stored claim (dataset, model, id, label) with another type, claim or response is
    an error (never overwritten). Returns ``{"dataset", "models", "items_added",
    "items_present", "claims_added", "claims_present"}``. With ``actor``, needs the
    researcher or admin role and is audited.
    """
    from medeval.stats.factcheck import read_factcheck

    authorize(actor, "cases.import", db=db)
    name = _dataset_name(dataset)
    by_model = read_factcheck(path)
    s = {"dataset": name, "models": sorted(m or DEFAULT_FACT_MODEL for m in by_model), "items_added": 0,
         "items_present": 0, "claims_added": 0, "claims_present": 0}
    conn = db.conn
    with transaction(db):
        stored = {(m, k, lab): (t, c, r) for m, k, lab, t, c, r in conn.execute(
            "SELECT model, item_key, label, type, claim, response FROM fact_claims WHERE dataset = ?", (name,))}
        new = []
        for model, pairs in by_model.items():
            model = model or DEFAULT_FACT_MODEL
            for pair in pairs:
                added = 0
                for c in pair:
                    old = stored.get((model, c.id, c.label))
                    if old is not None:
                        if old != (c.type, c.claim, c.response):
                            what = ("type" if old[0] != c.type else "claim" if old[1] != c.claim else "response")
                            raise InputError(f"the {c.label!r} claim of item {c.id!r} (model {model!r}) is already "
                                             f"stored in dataset {name!r} with a different {what}; stored text is "
                                             "never overwritten", file=str(path), row=c.line,
                                             fix="correct the file, or import it as a new dataset or model name")
                        s["claims_present"] += 1
                        continue
                    new.append((name, c.id, c.type, c.label, c.claim, model, c.response))
                    added += 1
                s["claims_added"] += added
                s["items_added" if added else "items_present"] += 1
        conn.executemany("INSERT INTO fact_claims (dataset, item_key, type, label, claim, model, response) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)", new)
        if actor is not None and any(v for k, v in s.items() if k.endswith("_added")):  # (a no-op: nothing to audit)
            audit(db, actor.username, "factcheck.import", name,
                  {k: v for k, v in s.items() if k != "dataset"} | {"file": str(path)})
    return s
