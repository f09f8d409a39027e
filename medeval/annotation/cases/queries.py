"""Reading the database: the datasets with their counts, a dataset's questions, its fact-check claim pairs."""

from __future__ import annotations

import json

import sqlite_utils

# ================================================================== reading the database

def datasets(db: sqlite_utils.Database) -> list[dict]:
    """Every dataset (name in ``cases`` or ``fact_claims``) with its counts, sorted by name.

    Keys: ``dataset, cases, questions, responses, models`` (distinct models with a case
    response or a fact-check claim), ``judges, judgements, fact_items, fact_claims``.
    """
    conn = db.conn
    q = {
        "cases": "SELECT dataset, count(*) FROM cases GROUP BY dataset",
        "questions": "SELECT c.dataset, count(*) FROM case_questions q JOIN cases c ON c.id = q.case_id "
                     "GROUP BY c.dataset",
        "responses": "SELECT c.dataset, count(*) FROM case_responses r JOIN case_questions q ON q.id = r.question_id "
                     "JOIN cases c ON c.id = q.case_id GROUP BY c.dataset",
        "models": "SELECT dataset, count(DISTINCT model) FROM (SELECT c.dataset, r.model FROM case_responses r "
                  "JOIN case_questions q ON q.id = r.question_id JOIN cases c ON c.id = q.case_id "
                  "UNION SELECT dataset, model FROM fact_claims) GROUP BY dataset",
        "judges": "SELECT c.dataset, count(DISTINCT a.judge) FROM judge_assessments a JOIN case_questions q "
                  "ON q.id = a.question_id JOIN cases c ON c.id = q.case_id GROUP BY c.dataset",
        "judgements": "SELECT c.dataset, count(*) FROM judge_assessments a JOIN case_questions q "
                      "ON q.id = a.question_id JOIN cases c ON c.id = q.case_id GROUP BY c.dataset",
        "fact_items": "SELECT dataset, count(DISTINCT model || char(0) || item_key) FROM fact_claims GROUP BY dataset",
        "fact_claims": "SELECT dataset, count(*) FROM fact_claims GROUP BY dataset",
    }
    counts = {k: dict(conn.execute(sql).fetchall()) for k, sql in q.items()}
    names = sorted(set(counts["cases"]) | set(counts["fact_claims"]))
    return [{"dataset": n, **{k: counts[k].get(n, 0) for k in q}} for n in names]


def questions(db: sqlite_utils.Database, dataset: str) -> list[dict]:
    """Every question of ``dataset`` in case (import) order and position order, with responses and judgements.

    Each: ``question_id, case_id, case_key, title, description, position, question,
    reference, responses`` (``[{model, response}]`` sorted by model) and ``judgements``
    (``[{judge, rationale, models, scores}]`` sorted by judge; ``models`` in the order
    the judge saw them, ``scores`` ``{model: score}`` in that order; ``criteria``
    ``{model: {criterion: score}}`` only when the judge scored criteria). An unknown
    dataset gives ``[]``.
    """
    conn = db.conn
    name = (dataset or "").strip()
    out, by_id = [], {}
    for qid, cid, key, title, desc, pos, question, ref in conn.execute(
            "SELECT q.id, c.id, c.case_key, c.title, c.description, q.position, q.question, q.reference "
            "FROM case_questions q JOIN cases c ON c.id = q.case_id WHERE c.dataset = ? ORDER BY c.id, q.position",
            (name,)):
        d = {"question_id": qid, "case_id": cid, "case_key": key, "title": title, "description": desc,
             "position": pos, "question": question, "reference": ref, "responses": [], "judgements": []}
        out.append(d)
        by_id[qid] = d
    if not out:
        return out
    for qid, model, response in conn.execute(
            "SELECT r.question_id, r.model, r.response FROM case_responses r JOIN case_questions q ON q.id = r.question_id "
            "JOIN cases c ON c.id = q.case_id WHERE c.dataset = ? ORDER BY r.model", (name,)):
        by_id[qid]["responses"].append({"model": model, "response": response})
    scores: dict[int, dict] = {}
    for aid, model, score in conn.execute(
            "SELECT s.assessment_id, s.model, s.score FROM judge_scores s JOIN judge_assessments a "
            "ON a.id = s.assessment_id JOIN case_questions q ON q.id = a.question_id JOIN cases c "
            "ON c.id = q.case_id WHERE c.dataset = ?", (name,)):
        scores.setdefault(aid, {})[model] = score
    crit: dict[int, dict] = {}
    for aid, model, criterion, score in conn.execute(
            "SELECT s.assessment_id, s.model, s.criterion, s.score FROM judge_criterion_scores s JOIN judge_assessments a "
            "ON a.id = s.assessment_id JOIN case_questions q ON q.id = a.question_id JOIN cases c "
            "ON c.id = q.case_id WHERE c.dataset = ? ORDER BY s.id", (name,)):
        crit.setdefault(aid, {}).setdefault(model, {})[criterion] = score
    for aid, qid, judge, rationale, models in conn.execute(
            "SELECT a.id, a.question_id, a.judge, a.rationale, a.models FROM judge_assessments a JOIN case_questions q "
            "ON q.id = a.question_id JOIN cases c ON c.id = q.case_id WHERE c.dataset = ? ORDER BY a.judge", (name,)):
        models = json.loads(models)
        sc = scores.get(aid, {})
        cr = crit.get(aid, {})
        by_id[qid]["judgements"].append({"judge": judge, "rationale": rationale, "models": models,
                                         "scores": {m: sc[m] for m in models if m in sc},
                                         **({"criteria": {m: cr[m] for m in models if m in cr}} if cr else {})})
    return out


def fact_claim_pairs(db: sqlite_utils.Database, dataset: str) -> list[dict]:
    """One row per (model, item) of ``dataset``, sorted by model then import order.

    Keys: ``model, item_key, type, factual_claim, factual_response,
    counterfactual_claim, counterfactual_response``.
    """
    rows = db.conn.execute(
        "SELECT f.model, f.item_key, f.type, f.claim, f.response, c.claim, c.response FROM fact_claims f "
        "JOIN fact_claims c ON c.dataset = f.dataset AND c.model = f.model AND c.item_key = f.item_key "
        "AND c.label = 'refute' WHERE f.dataset = ? AND f.label = 'support' ORDER BY f.model, f.id",
        ((dataset or "").strip(),)).fetchall()
    keys = ("model", "item_key", "type", "factual_claim", "factual_response", "counterfactual_claim",
            "counterfactual_response")
    return [dict(zip(keys, r)) for r in rows]
