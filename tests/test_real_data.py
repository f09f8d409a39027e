"""Real public data (CMB-Clin, Apache-2.0, read from ../shared/data, never copied in): long Chinese
clinical answers go through import, post-processing, scoring and the metrics' reference implementations."""

import json

import pytest
from rouge_score import rouge_scorer

from medeval.engine.importer import import_files
from medeval.engine.metrics import rouge1
from medeval.engine.scoring import score_db
from medeval.engine.tokenize import Tokenizer
from tests.conftest import SHARED

CMB = SHARED / "data" / "cmb-clin-qa.json"
pytestmark = pytest.mark.skipif(not CMB.exists(), reason="../shared/data/cmb-clin-qa.json is not available")


def _flatten(tmp_path):
    cases = json.loads(CMB.read_text(encoding="utf-8"))
    kb, responses = [], []
    for case in cases:
        for i, qa in enumerate(case["QA_pairs"], start=1):
            kb.append({"disease": case["title"], "aspect": f"Q{i}", "aspect_type": "declarative",
                       "reference": qa.get("answer") or qa.get("solution")})
            # a "model" that answers with the case description: real text, mostly wrong
            responses.append({"model": "echo-description", "disease": case["title"], "aspect": f"Q{i}",
                              "response": case["description"]})
            responses.append({"model": "echo-answer", "disease": case["title"], "aspect": f"Q{i}",
                              "response": qa.get("answer") or qa.get("solution")})
    (tmp_path / "kb.json").write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in responses), encoding="utf-8")
    return tmp_path / "kb.json", tmp_path / "r.jsonl", kb


def test_cmb_clin_imports_and_scores(db, tmp_path):
    kb_file, resp_file, kb = _flatten(tmp_path)
    titles = [r["disease"] for r in kb]
    assert len(kb) == 208
    s = import_files(db, kb=kb_file, responses=resp_file)
    # some case titles repeat in CMB-Clin; each (title, question) is one entry
    assert s.kb_added == len({(r["disease"], r["aspect"]) for r in kb}) and len(set(titles)) <= 74
    score_db(db, metrics=["bleu1", "rouge1"])
    by_model = dict(db.conn.execute(
        "SELECT m.name, avg(s.score) FROM scores s JOIN responses r ON r.id = s.response_id "
        "JOIN models m ON m.id = r.model_id WHERE s.metric = 'rouge1' GROUP BY m.name").fetchall())
    assert by_model["echo-answer"] == pytest.approx(1.0)  # the reference itself
    assert 0.05 < by_model["echo-description"] < 0.6  # real, partly overlapping text: not 0 (CJK tokenised)


def test_long_chinese_answers_equal_rouge_score(tmp_path):
    cases = json.loads(CMB.read_text(encoding="utf-8"))
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Tokenizer())
    for case in cases[:40]:
        for qa in case["QA_pairs"]:
            ref = qa.get("answer") or qa.get("solution")
            want = scorer.score(ref, case["description"])["rouge1"]
            got = rouge1(ref, case["description"])
            assert (got.precision, got.recall, got.fmeasure) == (want.precision, want.recall, want.fmeasure)
