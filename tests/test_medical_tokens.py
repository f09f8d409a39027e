"""Tokens of medical text (cjk-med-v3), OpenCC traditional -> simplified, the scorer ids, m018 and m030.

The golden reference is the first tokenizer (cjk-char-v1) as it was shipped, copied here: on text without
Greek letters, the kept symbols, the polarity and direction markers, superscripts, circled list numbers and digits
glued to letters, the two give the same tokens. The markers' own table and properties: tests/test_symbol_tokens.py.
"""

from __future__ import annotations

import random
import re
import subprocess
import unicodedata
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from rouge_score import rouge_scorer

from medeval.core.chinese import PHRASE_ONLY, to_simplified, traditional_gate
from medeval.core.errors import MedevalError
from medeval.engine import tokenize as tk
from medeval.engine.metrics import bleu1, rouge1
from medeval.engine.tokenize import Tokenizer, describe, scorer_id, scoring_tokenizer, tokenize

# ---------------------------------------------------------------- cjk-char-v1, as shipped (the golden reference)

_V1_RE = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002a6df]|[a-z0-9]+(?:\.[0-9]+)?")
_V1_SUPER = str.maketrans({s: "^" + d for s, d in zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")})


def tokenize_v1(text: str) -> list[str]:
    return _V1_RE.findall(unicodedata.normalize("NFKC", text.translate(_V1_SUPER)).lower()) if text else []


# what cjk-med-v3 reads and cjk-char-v1 did not: the kept symbols, the markers and their variants (any hyphen or
# minus: v3 keeps some of them), a caret (an exponent) and list numbers NFKC leaves alone
_NEW_SYMBOLS = "≥≤<>±%°+\\-−‐↑↓⇧⇩⇑⇓⬆⬇↗↘≧≦⩾⩽➕➖^❶-➓⓫-⓿"


def _special(text: str, glued: bool = True) -> bool:
    """Does ``text`` hold what cjk-med-v3 treats differently (a Greek letter, a kept symbol or marker, a superscript,
    a circled list number, and with ``glued`` a digit glued to a letter)?"""
    if re.search("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻\u2460-\u24ff\u3251-\u325f\u32b1-\u32bf]", text):
        return True
    t = unicodedata.normalize("NFKC", text).lower()
    return re.search(rf"[\u03ac-\u03ce{_NEW_SYMBOLS}]" + (r"|[0-9][a-z]" if glued else ""), t) is not None


def _split_glued(tokens: list[str]) -> list[str]:
    """cjk-char-v1 tokens with a leading number split from the letters after it ("90mmhg" -> "90", "mmhg")."""
    out = []
    for t in tokens:
        m = re.match(r"([0-9]+)([a-z].*)", t)
        out.extend(m.groups() if m else [t])
    return out


def _demo_texts() -> list[str]:
    from medeval.demo.generate import generate_responses, load_kb

    kb = load_kb()
    return [r["reference"] for r in kb] + [r["response"] for r in generate_responses(kb, seed=3)]


VARIED = [
    "主要症状为咳嗽、流涕和发烧", "CRP 升高, WBC 10.5×10⁹/L", "The main symptoms are cough, runny nose and a high fever.",
    "1. 阿莫西林\n2) 头孢克肟\n③ 布洛芬", "心电图：ST段压低；胸片正常", "ＣＲＰ升高，ＷＢＣ１２．３", "血压140/90", "COVID-19 肺炎",
    "T2DM患者", "HbA1c 7", "x²+y³", "10⁻³", "ﬁbrosis", "㎎", "Ⅱ度肿大", "豈更車", "（轻度）；，：", "IL-6、IL-1", "2型糖尿病",
    "体温39.5", "O2 sat", "a.5", "v1.2.3", "", "；、。",
]


def test_same_tokens_as_cjk_char_v1_on_text_without_the_new_symbols():
    texts = _demo_texts() + VARIED
    plain = [t for t in texts if not _special(t)]
    assert len(plain) > 2500  # most of the demo data has none of them: the comparison is not vacuous
    for t in plain:
        assert tokenize(t) == tokenize_v1(t), t


def test_only_numbers_glued_to_units_change_without_symbols():
    """Without Greek letters, kept symbols and markers, v3 = v1 with each leading number split from its letters."""
    texts = _demo_texts() + VARIED + ["90mmHg", "5mg", "3d", "1a.5", "12abc34", "0.5g", "10mmol/L", "2h后"]
    checked = 0
    for t in texts:
        if not _special(t, glued=False):
            checked += 1
            assert tokenize(t) == _split_glued(tokenize_v1(t)), t
    assert checked > 2500


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="咳嗽豈ab1.９ＡＣ；，：（）、。 ⁹²⁻\u0301Ⅱﬁ㎎xz0", max_size=30))
def test_golden_property(text):
    if not _special(text):
        assert tokenize(text) == tokenize_v1(text)
    assert tokenize(text) == _split_glued(tokenize_v1(text)) or _special(text)


@pytest.mark.parametrize("text,tokens", [
    ("TNF-α", ["tnf", "α"]), ("TNF-β", ["tnf", "β"]), ("TNF-Α", ["tnf", "α"]),  # capital alpha lowercased
    ("HbA1c≥6.5%", ["hba1c", "≥", "6.5", "%"]), ("HbA1c<6.5%", ["hba1c", "<", "6.5", "%"]),
    ("HbA1c＜6.5％", ["hba1c", "<", "6.5", "%"]),  # full-width forms fold under NFKC
    ("5μg", ["5", "μg"]), ("5µg", ["5", "μg"]),  # U+00B5 micro sign = U+03BC mu
    ("β受体阻滞剂", ["β", "受", "体", "阻", "滞", "剂"]), ("μ受体", ["μ", "受", "体"]),
    ("90mmHg", ["90", "mmhg"]), ("BP 140/90mmHg", ["bp", "140", "90", "mmhg"]),
    ("37℃", ["37", "°", "c"]), ("37°C", ["37", "°", "c"]), ("３９．５℃", ["39.5", "°", "c"]),
    ("±2SD", ["±", "2", "sd"]), ("≤ 3", ["≤", "3"]), ("> 10%", [">", "10", "%"]),
    ("γ-GT升高", ["γ", "gt", "升", "高"]), ("κ轻链", ["κ", "轻", "链"]), ("Δ值", ["δ", "值"]),
    ("血钾3.5mmol/L", ["血", "钾", "3.5", "mmol", "l"]), ("μmol/L", ["μmol", "l"]), ("0.5g", ["0.5", "g"]),
    ("10⁹/L", ["10", "9", "l"]), ("α1-抗胰蛋白酶", ["α", "1", "抗", "胰", "蛋", "白", "酶"]),
    ("IL-6 >7pg/ml", ["il", "6", ">", "7", "pg", "ml"]), ("SpO₂≤93%", ["spo2", "≤", "93", "%"]),
])
def test_medical_tokens(text, tokens):
    assert tokenize(text) == tokens


def test_the_issue_examples_no_longer_score_one():
    assert rouge1("TNF-α", "TNF-β").fmeasure == 0.5  # was 1.0: the Greek letter was dropped
    assert rouge1("HbA1c≥6.5%", "HbA1c<6.5%").fmeasure == 0.75  # was 1.0
    assert rouge1("β受体", "受体").fmeasure == pytest.approx(0.8)  # β counts
    assert rouge1("5μg", "5mg").fmeasure == 0.5 and rouge1("5µg", "5μg").fmeasure == 1.0


def test_rouge_score_and_nltk_agree_with_the_new_tokens():
    from nltk.translate.bleu_score import sentence_bleu

    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Tokenizer())
    rng = random.Random(5)
    vocab = ["TNF-α", "TNF-β", "≥", "<", "6.5%", "5μg", "5mg", "β受体", "90mmHg", "37℃", "±", "高血壓", "高血压",
             "咳嗽", "发热", "crp", "10.5"]
    for _ in range(1500):
        ref = "、".join(rng.choice(vocab) for _ in range(rng.randint(0, 6)))
        cand = "，".join(rng.choice(vocab) for _ in range(rng.randint(0, 6)))
        want = scorer.score(ref, cand)["rouge1"]
        got = rouge1(ref, cand)
        assert (got.precision, got.recall, got.fmeasure) == (want.precision, want.recall, want.fmeasure)
        r, c = Tokenizer().tokenize(ref), Tokenizer().tokenize(cand)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nltk warns on zero overlap
            want_b = sentence_bleu([r], c, weights=(1,)) if c else 0.0
        assert bleu1(ref, cand) == pytest.approx(want_b, abs=1e-12)


# ---------------------------------------------------------------- OpenCC t2s

@pytest.mark.parametrize("trad,simp", [
    ("高血壓", "高血压"), ("糖尿病腎病", "糖尿病肾病"), ("慢性阻塞性肺疾病（慢阻肺）與哮喘", "慢性阻塞性肺疾病（慢阻肺）与哮喘"),
    ("頭痛、噁心、嘔吐", "头痛、恶心、呕吐"), ("β受體阻滯劑", "β受体阻滞剂"), ("回覆醫師", "回复医师"), ("深沈", "深沉"),
])
def test_traditional_scores_like_simplified(trad, simp):
    assert to_simplified(trad) == simp
    assert rouge1(simp, trad).fmeasure == 1.0 and bleu1(simp, trad) == 1.0
    assert Tokenizer(t2s=False).tokenize(trad) != Tokenizer(t2s=False).tokenize(simp)  # off: scored as written


def test_the_issue_example_hypertension(monkeypatch):
    assert rouge1("高血压", "高血壓").fmeasure == 1.0  # was 0.667
    monkeypatch.setenv("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", "0")
    assert rouge1("高血压", "高血壓").fmeasure == pytest.approx(2 / 3)


def test_gate_is_exact_for_openccs_own_converter():
    """The fast path skips OpenCC only for text OpenCC would leave unchanged."""
    import opencc

    raw = opencc.OpenCC("t2s")
    rng = random.Random(11)
    pool = [chr(c) for c in range(0x4E00, 0xA000)] + list("壓醫體覆沈藉回深答批英哩瞭甦衹坏")
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 12)))
        assert to_simplified(text) == raw.convert(text), text
    for t in _demo_texts()[:2000]:
        assert to_simplified(t) == raw.convert(t)


def test_phrase_only_characters_cover_openccs_dictionaries(tmp_path):
    """Every t2s dictionary entry that changes text holds a character of the gate (checked on OpenCC's own files)."""
    import opencc

    root = Path(opencc.__file__).parent / "clib"
    tool = root / "bin" / "opencc_dict"
    if not tool.exists():
        pytest.skip("this opencc build has no opencc_dict tool to read its dictionaries")
    gate = traditional_gate()
    changed = 0
    for name in ("TSPhrases", "TSCharacters", "TSCharactersExt", "CJK_Compatibility_Ideographs"):
        out = tmp_path / f"{name}.txt"
        subprocess.run([str(tool), "-i", str(root / "share" / "opencc" / f"{name}.ocd2"), "-o", str(out),
                        "-f", "ocd2", "-t", "text"], check=True, capture_output=True,
                       env={"LD_LIBRARY_PATH": str(root / "lib64")})
        for line in out.read_text(encoding="utf-8").splitlines():
            key, values = line.split("\t")
            if values.split(" ")[0] != key:
                changed += 1
                assert gate.search(key), key
    assert changed > 5000 and set(PHRASE_ONLY) <= set(gate.pattern)


# ---------------------------------------------------------------- ids, setting, describe

def test_scorer_ids_and_setting(monkeypatch):
    assert tk.TOKENIZER_BASE == "cjk-med-v3" and tk.TOKENIZER_ID == "cjk-med-v3+t2s"
    assert tk.PREVIOUS_TOKENIZER_IDS == ("cjk-char-v1", "cjk-med-v2")  # the earlier ids, kept for stored scores
    assert scorer_id() == "cjk-med-v3+t2s" and Tokenizer().id == "cjk-med-v3+t2s"
    for off in ("0", "false", "off", "no", " OFF "):
        monkeypatch.setenv("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", off)
        assert scorer_id() == "cjk-med-v3" and scoring_tokenizer() is tokenize
    monkeypatch.setenv("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", "maybe")
    with pytest.raises(MedevalError, match="MEDEVAL_TRADITIONAL_TO_SIMPLIFIED must be 1 or 0"):
        scorer_id()


def test_table12_records_the_default_scorer():
    from medeval.engine.thresholds import TABLE12
    from medeval.store.migrations import m018_table12_tokenizer as m018
    from medeval.store.migrations import m030_table12_symbol_tokens as m030

    assert TABLE12.tokenizer == tk.TOKENIZER_ID == m030.NEW and TABLE12.scorer_for("rouge1") == scorer_id()
    assert m030.OLD == m018.NEW  # the migrations chain: cjk-char-v1 -> cjk-med-v2+t2s -> cjk-med-v3+t2s


def test_describe():
    d = describe("cjk-med-v3+t2s")
    assert "Greek letters" in d and "≥ ≤ < > ± % °" in d and "numbers split from units" in d
    assert "the markers + - ↑ ↓ kept as tokens" in d and "not in a hyphenated name or a range" in d
    assert "converted to simplified with OpenCC (t2s)" in d and d.endswith(".")
    assert "not converted" in describe("cjk-med-v3") and "dropped" in describe("cjk-char-v1")
    old = describe("cjk-med-v2+t2s")  # stored scores of the previous tokenizer are still described as they were
    assert "≥ ≤ < > ± % ° kept as tokens" in old and "markers" not in old and "not converted" in describe("cjk-med-v2")
    assert "not one of medeval's" in describe("jieba-x")
    for tid in tk.PREVIOUS_TOKENIZER_IDS:  # every id a stored score may carry is described by its own rules
        assert "not one of medeval's" not in describe(tid) and "not one of medeval's" not in describe(tid + "+t2s")


# ---------------------------------------------------------------- score_db and m018

def _import_traditional(db, tmp_path):
    from medeval.engine.importer import import_files

    (tmp_path / "kb.csv").write_text("disease,aspect,reference\n高血压,Primary Symptoms,头痛；头晕；心悸\n"
                                     "高血压,Severity Level,3\n", encoding="utf-8")
    (tmp_path / "r.csv").write_text("model,disease,aspect,response\nM,高血压,Primary Symptoms,頭痛、頭暈、心悸\n"
                                    "M,高血压,Severity Level,三至四级\nN,高血压,Primary Symptoms,头痛\n"
                                    "N,高血压,Severity Level,Ⅲ级\n", encoding="utf-8")
    import_files(db, kb=tmp_path / "kb.csv", responses=tmp_path / "r.csv")


def _scores(db):
    return {(m, metric, scorer): round(score, 6) for m, metric, scorer, score in db.conn.execute(
        "SELECT m.name, s.metric, s.scorer, s.score FROM scores s JOIN responses r ON r.id = s.response_id "
        "JOIN models m ON m.id = r.model_id")}


def test_score_db_records_t2s_and_table12_grades_it(db, tmp_path):
    from medeval.engine import thresholds as th
    from medeval.engine.scoring import score_db, severity_ranges

    _import_traditional(db, tmp_path)
    score_db(db, metrics=["rouge1", "bleu1", "exact_match"])
    s = _scores(db)
    assert s[("M", "rouge1", "cjk-med-v3+t2s")] == 1.0  # 頭痛、頭暈、心悸 = 头痛；头晕；心悸
    assert s[("M", "exact_match", "first-number-v1")] == 0.0 and s[("N", "exact_match", "first-number-v1")] == 1.0
    th.grade_db(db)
    graded = db.conn.execute("SELECT count(*) FROM grades WHERE version = 1 AND metric IN ('bleu1','rouge1')").fetchone()
    assert graded == (4,)  # the built-in Table 12 (m002 + m018 + m030) grades the new scorer's scores
    assert severity_ranges(db) == {"M": 1, "N": 0}
    score_db(db, metrics=["rouge1"], t2s=False)  # off: another scorer id, scored as written
    assert _scores(db)[("M", "rouge1", "cjk-med-v3")] < 1.0


def test_m018_moves_table12_and_keeps_calibrated_sets(tmp_path):
    """An old database (scores and grades under cjk-char-v1) after m018 (and m030 after it): Table 12 records the
    current scorer, its old lexical grades are gone (they would block the new ones), a clinician-calibrated set is left
    as it was."""
    import json

    from medeval.engine import thresholds as th
    from medeval.engine.scoring import score_db
    from medeval.store.db import connect
    from medeval.store.migrations import m030_table12_symbol_tokens as m030

    path = tmp_path / "old.db"
    with connect(path) as db:  # a current database, turned back into one from before m018 (so before m030)
        _import_traditional(db, tmp_path)
        conn = db.conn
        conn.execute("UPDATE threshold_sets SET tokenizer = 'cjk-char-v1'")
        conn.execute("INSERT INTO threshold_sets (version, name, tokenizer, embedding_model, provenance, created_at, "
                     "created_by, active) VALUES (2, 'clinicians', 'cjk-char-v1', 'x', ?, 'now', 'ana', 0)",
                     (json.dumps({"campaign": 1}),))
        rid = conn.execute("SELECT min(id) FROM responses").fetchone()[0]
        conn.execute("INSERT INTO scores VALUES (?, 'rouge1', 'cjk-char-v1', 0.5)", (rid,))
        conn.execute("INSERT INTO grades VALUES (?, 'rouge1', 1, 'cjk-char-v1', 1)", (rid,))
        conn.execute("INSERT INTO grades VALUES (?, 'rouge1', 2, 'cjk-char-v1', 1)", (rid,))
        conn.execute("DELETE FROM _migrations WHERE name IN ('m018_table12_tokenizer', 'm030_table12_symbol_tokens')")
        conn.commit()
    with connect(path) as db:
        assert {"m018_table12_tokenizer", "m030_table12_symbol_tokens"} <= {
            n for (n,) in db.conn.execute("SELECT name FROM _migrations")}
        assert [tuple(r) for r in db.conn.execute("SELECT version, tokenizer FROM threshold_sets ORDER BY version")] \
            == [(1, m030.NEW), (2, "cjk-char-v1")]
        assert db.conn.execute("SELECT version FROM grades").fetchall() == [(2,)]  # v1's old grade removed
        assert db.conn.execute("SELECT count(*) FROM scores WHERE scorer = 'cjk-char-v1'").fetchone() == (1,)  # kept
        score_db(db, metrics=["rouge1"])
        th.grade_db(db, 1)
        assert db.conn.execute("SELECT scorer FROM grades WHERE version = 1 AND response_id = ?",
                               (rid,)).fetchone() == ("cjk-med-v3+t2s",)


def test_m030_moves_table12_and_its_provisional_copies_and_keeps_calibrated_sets(tmp_path):
    """A database from before m030 (lexical scores and grades under cjk-med-v2+t2s): the built-in set and a provisional
    copy adopted from it move to cjk-med-v3+t2s and lose their old lexical grades (which would block the new ones); a
    clinician-calibrated set keeps cjk-med-v2+t2s and its grades; every stored score stays, none is rescored; scoring
    then adds cjk-med-v3+t2s scores, which the moved sets grade."""
    import json

    from medeval.engine import thresholds as th
    from medeval.engine.scoring import score_db
    from medeval.store.db import connect
    from medeval.store.migrations import m030_table12_symbol_tokens as m030

    old = "cjk-med-v2+t2s"
    path = tmp_path / "v2.db"
    with connect(path) as db:  # a current database, turned back into one from before m030
        _import_traditional(db, tmp_path)
        conn = db.conn
        conn.execute("UPDATE threshold_sets SET tokenizer = ?", (old,))
        for version, name, by, prov in (
                (2, "clinicians", "ana", {"campaign": 1}),
                (3, "MedDisKEval Table 12 (bge)", "ana", {"adopted_from": "MedDisKEval Table 12", "calibrated": False}),
                (4, "recalibrated copy", "ana", {"adopted_from": "MedDisKEval Table 12", "calibrated": True})):
            conn.execute("INSERT INTO threshold_sets (version, name, tokenizer, embedding_model, provenance, created_at, "
                         "created_by, active) VALUES (?, ?, ?, 'x', ?, 'now', ?, 0)",
                         (version, name, old, json.dumps(prov), by))
        rid = conn.execute("SELECT min(id) FROM responses").fetchone()[0]
        conn.execute("INSERT INTO scores VALUES (?, 'rouge1', ?, 0.5)", (rid, old))
        conn.execute("INSERT INTO scores VALUES (?, 'cosine', 'x', 0.5)", (rid,))
        for version in (1, 2, 3, 4):
            conn.execute("INSERT INTO grades VALUES (?, 'rouge1', ?, ?, 1)", (rid, version, old))
        conn.execute("INSERT INTO grades VALUES (?, 'cosine', 1, 'x', 1)", (rid,))
        conn.execute("DELETE FROM _migrations WHERE name = 'm030_table12_symbol_tokens'")
        conn.commit()
    with connect(path) as db:
        conn = db.conn
        assert [tuple(r) for r in conn.execute("SELECT version, tokenizer FROM threshold_sets ORDER BY version")] \
            == [(1, m030.NEW), (2, old), (3, m030.NEW), (4, old)]
        assert conn.execute("SELECT version, metric FROM grades ORDER BY version, metric").fetchall() \
            == [(1, "cosine"), (2, "rouge1"), (4, "rouge1")]  # only the moved sets' lexical grades went
        assert conn.execute("SELECT scorer, score FROM scores ORDER BY scorer").fetchall() == [(old, 0.5), ("x", 0.5)]
        score_db(db, metrics=["rouge1"])
        th.grade_db(db, 1)
        assert conn.execute("SELECT scorer FROM grades WHERE version = 1 AND metric = 'rouge1' AND response_id = ?",
                            (rid,)).fetchone() == (m030.NEW,)
        assert conn.execute("SELECT score FROM scores WHERE response_id = ? AND scorer = ?", (rid, old)).fetchone() \
            == (0.5,)  # the old score is history, not overwritten


def test_cosine_embeds_the_simplified_text(db, tmp_path, monkeypatch):
    """With OpenCC on, the texts are converted before embedding: a traditional answer embeds as its simplified form."""
    from medeval.engine import embeddings
    from medeval.engine.scoring import score_db
    from tests.test_scoring import CountingBackend

    backend = CountingBackend()
    monkeypatch.setitem(embeddings.backends().loaded, "counting", backend)
    _import_traditional(db, tmp_path)
    score_db(db, metrics=["cosine"], embedding_model="counting")
    assert "头痛 头晕 心悸" in backend.encoded and not any("頭" in t for t in backend.encoded)
    cos = {m: s for (m, metric, _), s in _scores(db).items() if metric == "cosine"}
    assert cos["M"] == 1.0  # 頭痛、頭暈、心悸 embeds exactly as the reference 头痛；头晕；心悸


def test_cosine_scorer_id_records_the_conversion_and_the_models_set_still_grades_it(db, tmp_path, monkeypatch):
    """The cosine id says whether the texts were converted (``+t2s``), as the lexical ids do; a set calibrated for the
    embedding model grades the converted scores (the conversion does not change the model)."""
    from medeval.engine import embeddings
    from medeval.engine import thresholds as th
    from medeval.engine.scoring import score_db
    from tests.test_scoring import CountingBackend

    backend = CountingBackend()
    monkeypatch.setitem(embeddings.backends().loaded, "counting", backend)
    _import_traditional(db, tmp_path)
    score_db(db, metrics=["cosine"], embedding_model="counting")
    score_db(db, metrics=["cosine"], embedding_model="counting", t2s=False)
    ids = {sc for (_, metric, sc) in _scores(db) if metric == "cosine"}
    assert ids == {backend.model_id + "+t2s", backend.model_id}
    v = th.adopt(db, 1, backend.model_id, created_by="test")
    th.grade_db(db, v)
    graded = {r[0] for r in db.conn.execute("SELECT scorer FROM grades WHERE version = ? AND metric = 'cosine'", (v,))}
    assert backend.model_id + "+t2s" in graded
    assert th.embedding_matches(backend.model_id, backend.model_id + "+t2s")
    assert not th.embedding_matches("moka-ai/m3e-base", backend.model_id + "+t2s")
