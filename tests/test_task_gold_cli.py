"""`medeval gold ...` on task campaigns (rubric, preference): the candidates with their canonical question ids,
add-task, the task CSV import (good and bad), list, retire, settings (score_tolerance), results (text and JSON),
the dispatch between task and tier-grading campaigns, and bad input refused with one line and nothing stored."""

import json

from click.testing import CliRunner

from medeval.annotation import campaigns as cp
from medeval.annotation import gold as gd
from medeval.annotation import tasks
from medeval.cli import main
from medeval.engine.importer import import_files
from tests.conftest import db_dump, invoke, write
from tests.test_task_gold import _pref, _rubric
from tests.test_tasks import tdb, users  # noqa: F401 (the fixture)


def gold(db_path, cid, *args):
    """A `gold` command that must succeed; its output."""
    return invoke("gold", args[0], "--db", db_path, "--campaign", cid, *args[1:]).output


def refused(db_path, cid, *args) -> str:
    """A `gold` command that must fail with one clear line, storing nothing; its message."""
    before = db_dump(db_path)
    res = CliRunner().invoke(main, ["gold", args[0], "--db", str(db_path), "--campaign", str(cid),
                                    *map(str, args[1:])])
    assert res.exit_code == 1, res.output
    assert res.output.startswith("Error: ") and res.output.count("\n") == 1 and "Traceback" not in res.output
    assert db_dump(db_path) == before
    return res.output


def _tier_campaign(db, tmp_path) -> int:
    """A small random tier-grading campaign (8 scored responses) beside the task data."""
    kb = "disease,aspect,reference\n" + "".join(f"病{d},Medications,参考{d}\n" for d in range(4))
    resp = "model,disease,aspect,response\n" + "".join(f"M{m},病{d},Medications,回答{m}{d}\n"
                                                        for m in "AB" for d in range(4))
    import_files(db, kb=write(tmp_path / "kb.csv", kb), responses=write(tmp_path / "r.csv", resp),
                 models=write(tmp_path / "m.csv", "model,backbone,kind\nMA,,general\nMB,MA,medical\n"))
    with db.conn:
        db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'rouge1', 'rouge1', ?)",
                            [(r, 0.5) for (r,) in db.conn.execute("SELECT id FROM responses")])
    return cp.create_random_campaign(db, "tier", 4, ["doc1", "doc2"], k=2, seed=1, actor=None)


def test_candidates_list_the_items_and_the_questions_to_expect(tdb, db_path, tmp_path):
    res, = users(tdb, "res")
    cid = _pref(tdb, res)
    real = {r[0] for r in tdb.conn.execute("SELECT source FROM task_items WHERE campaign_id = ?", (cid,))}
    cands = gd.candidates(tdb, cid, actor=res)
    out = gold(db_path, cid, "candidates")
    listed = [line.split("\t")[0] for line in out.splitlines() if "\t" in line and "|" in line.split("\t")[0]]
    assert listed == [c.source for c in cands] and not set(listed) & real
    first = cands[0]
    assert f"{first.source}\t{first.payload['question']} (A: {first.payload['a']['source']}, B: " in out
    # the first candidate's questions, canonical ids and the answers they take
    assert f"questions of {first.source}" in out
    assert "  knowledge\tA versus B · Knowledge Correctness: left = A is better, tie = Tie, right = B is better" in out
    # --source: that item, what a researcher reads (A is the data's first output) and its questions
    other = cands[3]
    out = gold(db_path, cid, "candidates", "--source", other.source)
    assert f"questions of {other.source}" in out and f"questions of {first.source}" not in out
    assert f"A\n    {other.payload['a']['text']}" in out and f"B\n    {other.payload['b']['text']}" in out
    # --contains narrows (case-insensitive), --limit cuts
    out = gold(db_path, cid, "candidates", "--contains", "ALPHA|BETA")
    assert all("alpha|beta" in line for line in out.splitlines() if line.startswith("clin/"))
    assert len([line for line in gold(db_path, cid, "candidates", "--limit", "2").splitlines()
                if line.startswith("clin/")]) == 2
    # rubric: responses in the data's order, the judge's part too
    rid = _rubric(tdb, res)
    out = gold(db_path, rid, "candidates")
    assert "  r1:relevancy\tResponse 1 · Relevancy: 1, 2, 3, 4, 5" in out
    assert "  judge:j_knowledge\tThe judge's assessment · Knowledge Correctness: 1, 2, 3, 4, 5" in out
    # refusals: a tier campaign (the library's message), an item that cannot be gold, a bad limit
    tier = _tier_campaign(tdb, tmp_path)
    assert "is a tier-grading campaign" in refused(db_path, tier, "candidates")
    assert "cannot become a gold item" in refused(db_path, cid, "candidates", "--source", min(real))
    assert "--limit" in refused(db_path, cid, "candidates", "--limit", "0")


def test_add_task_marks_with_canonical_ids_and_refuses_bad_input(tdb, db_path):
    res, = users(tdb, "res")
    cid = _pref(tdb, res)
    src = gd.candidates(tdb, cid, actor=res)[0].source
    real = tdb.conn.execute("SELECT source FROM task_items WHERE campaign_id = ?", (cid,)).fetchone()[0]
    for args, msg in ((("--expect", "knowledge"), "write QUESTION=ANSWER"),
                      (("--expect", "safety=left"), "no question 'safety'"),
                      (("--expect", "knowledge=maybe"), "'maybe' is not an answer"),
                      (("--expect", "knowledge=left", "--expect", "knowledge=tie"), "twice"),
                      (("--expect", "knowledge=left", "--reason", " "), "reason")):
        args = (*args, "--reason", "why") if "--reason" not in args else args
        assert msg in refused(db_path, cid, "add-task", "--source", src, *args)
    assert "is a real item" in refused(db_path, cid, "add-task", "--source", real, "--expect", "knowledge=left",
                                       "--reason", "why")
    assert "gold add-task" in refused(db_path, cid, "add", "--response", 1, "--tier", "CW", "--reason", "x")
    out = gold(db_path, cid, "add-task", "--source", src, "--expect", "knowledge=T", "--expect",
               "fluency=A is better", "--reason", "B misses the drug")
    g, = gd.list_task_gold(tdb, cid, actor=res)
    assert g.source == src and g.expected == {"knowledge": "tie", "fluency": "left"}  # key, label -> value
    assert out.splitlines() == [f"gold item {g.id}: {src}",
                                "  expected: A versus B · Knowledge Correctness: Tie (neither is better)",
                                "  expected: A versus B · Fluency: A is better (the output on the left (A))"]
    assert "already gold item" in refused(db_path, cid, "add-task", "--source", src, "--expect", "knowledge=left",
                                          "--reason", "why")


def test_import_takes_the_task_csv_all_or_nothing(tdb, db_path, tmp_path):
    res, = users(tdb, "res")
    cid = _rubric(tdb, res)
    s1, s2 = [c.source for c in gd.candidates(tdb, cid, actor=res)]
    bad = write(tmp_path / "bad.csv", "source,question,expected,reason\n"
                f"{s1},r1:relevancy,5,the reference says so\n{s2},r9:knowledge,1,x\n")
    assert "row 3" in refused(db_path, cid, "import", bad) and "no question 'r9:knowledge'" in refused(
        db_path, cid, "import", bad)
    tier_csv = write(tmp_path / "tier.csv", "disease,aspect,model,expected_tier,reason\n病0,Medications,MA,CW,x\n")
    assert "question" in refused(db_path, cid, "import", tier_csv)  # a task campaign wants the task columns
    good = write(tmp_path / "good.csv", "source,question,expected,reason\n"
                 f"{s1},r1:relevancy,5,the reference says so\n{s1},judge:j_knowledge,2,\n{s2},r2:knowledge,1,wrong drug\n")
    assert gold(db_path, cid, "import", good).strip() == f"imported 2 gold items into campaign {cid}"
    items = gd.list_task_gold(tdb, cid, actor=res)
    assert [g.expected for g in items] == [{"r1:relevancy": "5", "judge:j_knowledge": "2"}, {"r2:knowledge": "1"}]
    # a tier-grading campaign still takes the tier CSV (and refuses the task one)
    tier = _tier_campaign(tdb, tmp_path)
    assert "disease" in refused(db_path, tier, "import", good)
    assert gold(db_path, tier, "import", tier_csv).strip() == f"imported 1 gold items into campaign {tier}"


def test_list_retire_settings_and_results_on_a_task_campaign(tdb, db_path):
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    cands = gd.candidates(tdb, cid, actor=res)
    assert "has no gold items" in gold(db_path, cid, "list")
    gids = [gd.mark_task_gold(tdb, cid, c.source, {"knowledge": "left", "fluency": "tie"}, "A names the drug",
                              actor=res) for c in cands[:4]]
    lines = gold(db_path, cid, "list").splitlines()
    assert lines[0] == (f"{gids[0]}\t{cands[0].source}\tA versus B · Knowledge Correctness: A is better (the output "
                        "on the left (A)); A versus B · Fluency: Tie (neither is better)\tA names the drug")
    assert gold(db_path, cid, "retire", "--gold", gids[3]).strip() == f"gold item {gids[3]} retired"
    assert gold(db_path, cid, "list").splitlines()[3].endswith("\t(retired)")
    assert gd.active_gold_ids(tdb, cid) == gids[:3]
    assert "has no gold item 999" in refused(db_path, cid, "retire", "--gold", 999)
    # settings: shared with tier campaigns, score_tolerance for task ones
    out = gold(db_path, cid, "settings")
    assert "score_tolerance = 1\t# task campaigns" in out and "hidden_share = 0.0" in out
    out = gold(db_path, cid, "settings", "--set", "score_tolerance=0", "--set", "hidden_share=0.5")
    assert "score_tolerance = 0\t" in out and gd.get_settings(tdb, cid)["hidden_share"] == 0.5
    assert "score_tolerance" in refused(db_path, cid, "settings", "--set", "score_tolerance=9")
    assert "NAME=VALUE" in refused(db_path, cid, "settings", "--set", "feedback")
    # results: doc1 answers everything "tie" (hidden gold included: knowledge is not as expected)
    while (s := tasks.task_state(tdb, doc1, cid)).item is not None:
        v = s.item
        tasks.answer(tdb, doc1, cid, v.ref, v.pending.id, "tie", client_token=f"{v.ref}:{v.revision}",
                     revision=v.revision)
    out = gold(db_path, cid, "results")
    assert out.splitlines()[0] == f"campaign {cid}: 3 gold items, alert below 70.0%"
    assert "doc1\tqualification: not_required (none)\thidden: 0/3 = 0.0%\tover time: 0.0%\tFLAGGED" in out
    r = json.loads(gold(db_path, cid, "results", "--json"))
    row = next(a for a in r["annotators"] if a["annotator"] == "doc1")
    assert r["gold_items"] == 3 and r["settings"]["score_tolerance"] == 0
    assert (row["annotator"], row["hidden_answered"], row["hidden_correct"], row["flagged"]) == ("doc1", 3, 0, True)


def test_data_text_is_printed_as_one_plain_line():
    from medeval.cli.gold import _plain, _summary

    assert _plain("a\x1b[31mb\nc\t\x00d") == "a [31mb c d"  # no terminal escapes, no line breaks, no NUL
    assert _plain("x" * 100, 60) == "x" * 59 + "…"
    assert _plain("one\n\x07two", one_line=False) == "one\ntwo"
    assert _summary({"claim": "阿司匹林\n可以 退烧", "model": "m\x1b"}) == "阿司匹林 可以 退烧 (model: m)"


def test_the_readme_csv_example_imports(tdb, db_path, tmp_path):
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = readme.split("```csv\nsource,question,expected,reason\n", 1)[1].split("```", 1)[0]
    res, = users(tdb, "res")
    cid = _rubric(tdb, res)  # (its real item is clin/c1/2: the example's items are both free)
    path = write(tmp_path / "example.csv", "source,question,expected,reason\n" + example)
    assert gold(db_path, cid, "import", path).strip() == f"imported 2 gold items into campaign {cid}"
    assert [g.expected for g in gd.list_task_gold(tdb, cid, actor=res)] == [
        {"r1:knowledge": "5", "judge:j_knowledge": "2"}, {"r2:knowledge": "1"}]
