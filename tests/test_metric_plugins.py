"""Metric plugins (issue 25 §2): one registry, loaded from ``MEDEVAL_PLUGINS`` and the ``medeval.metrics`` entry points.

A character-bigram Dice metric written to a temporary module (hand-computed on Chinese and English pairs) is loaded
through ``MEDEVAL_PLUGINS``, scored by ``medeval score --metrics``, calibrated from clinicians' tiers, published, and
then shows in the tier report, the leaderboard, Tune cut-offs and the scorer notes with no other change. A second
metric comes from an entry point of a fake installed distribution. Then the errors: an unknown module, a module that
raises, a duplicate name, bad arguments, scores out of range or NaN.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap

import pytest

import medeval
from medeval.core.errors import MedevalError
from medeval.engine import plugins, registry
from medeval.engine import thresholds as th
from tests.conftest import invoke, write

DICE_MODULE = "medeval_test_dice"
DICE_SOURCE = '''
"""A character-bigram Dice coefficient: 2|A ∩ B| / (|A| + |B|) over the multisets of adjacent character pairs
inside each whitespace-separated token (lower-cased)."""
from collections import Counter

import medeval

CALLS = {"batch": 0, "pair": 0}


def bigrams(text):
    return Counter(t[i:i + 2] for t in text.lower().split() for i in range(len(t) - 1))


def dice(reference, candidate):
    CALLS["pair"] += 1
    a, b = bigrams(reference), bigrams(candidate)
    if not a and not b:
        return 1.0 if reference.strip() == candidate.strip() else 0.0
    return 2 * sum((a & b).values()) / (sum(a.values()) + sum(b.values()))


def dice_batch(references, candidates):
    CALLS["batch"] += 1
    CALLS["pair"] -= len(references)  # counted as one batch, not as pairs
    return [dice(r, c) for r, c in zip(references, candidates)]


medeval.register_metric(name="dice2", label="Dice (char bigrams)", score=dice, score_batch=dice_batch,
                        aspect_types=("enumerated", "declarative"), scorer_id="char-bigram-dice-v1",
                        describe="Dice coefficient of the character bigrams of answer and reference")
'''


def _forget(*names: str, modules: tuple[str, ...] = ()) -> None:
    """Undo a test's plugins: the process-wide registry and the loaded-once record."""
    for n in names:
        if n in registry.METRICS:
            registry.unregister_metric(n)
    for m in modules:
        sys.modules.pop(m, None)
    plugins._loaded.difference_update({k for k in plugins._loaded if any(m in k for m in (*names, *modules))})


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    """A folder on sys.path for plugin modules; every metric and module a test adds is removed afterwards."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    before = set(registry.METRICS)
    yield folder
    _forget(*(set(registry.METRICS) - before), modules=tuple(m for m in sys.modules if m.startswith("medeval_test_")))


@pytest.fixture
def dice(plugin_path, monkeypatch):
    write(plugin_path / f"{DICE_MODULE}.py", textwrap.dedent(DICE_SOURCE))
    monkeypatch.setenv("MEDEVAL_PLUGINS", f" {DICE_MODULE} ,")
    return plugin_path


@pytest.fixture
def scored_dice(dice, db_path, small_files):
    """The small data set imported and scored with dice2 and exact match through the command line."""
    invoke("import", "--db", db_path, "--kb", small_files["kb"], "--responses", small_files["responses"],
           "--models", small_files["models"])
    res = invoke("score", "--db", db_path, "--metrics", "dice2,exact_match", "--no-progress")
    assert "8 responses checked, 8 scores added" in res.output  # 6 text pairs (dice2) + 2 numeric (exact match)
    assert "note: 6 dice2 scores are not graded: threshold set v1 has no dice2 cut-offs" in res.output
    return db_path


# ---------------------------------------------------------------- the registry and the plugin module

def test_builtins_are_registered_with_their_aliases_and_scorer_ids():
    assert tuple(registry.METRICS)[:4] == registry.BUILTINS
    assert registry.report_metrics() == ("bleu1", "rouge1", "cosine")
    assert [registry.get_metric(a).name for a in ("BLEU", "rouge-1", "cos", "EM", "exact-match")] == \
        ["bleu1", "rouge1", "cosine", "exact_match", "exact_match"]
    assert registry.get_metric("exact_match").current_scorer_id() == "first-number-v1"
    assert registry.get_metric("rouge1").score("咳嗽;打喷嚏;流鼻涕;发热", "主要症状为咳嗽、流涕和发烧") == \
        pytest.approx(0.4545, abs=1e-4)
    assert registry.get_metric("cosine").low == -1.0
    with pytest.raises(MedevalError, match="built in"):
        registry.unregister_metric("bleu1")


def test_plugin_from_setting_registers_once_and_scores_by_hand(dice):
    assert "dice2" not in registry.METRICS  # nothing loads on import: load_plugins is explicit
    assert medeval.load_plugins() == [DICE_MODULE]
    assert medeval.load_plugins() == []  # once per process
    m = registry.get_metric("Dice2")
    assert (m.label, m.low, m.high, m.aspect_types) == ("Dice (char bigrams)", 0.0, 1.0, ("enumerated", "declarative"))
    assert m.current_scorer_id() == "char-bigram-dice-v1" and not m.builtin
    assert registry.report_metrics() == ("bleu1", "rouge1", "cosine", "dice2")
    assert registry.metrics_for("numeric") == ["exact_match"]
    # by hand: 咳嗽 嗽发 发热 / 发热 热咳 咳嗽 share 2 of 3+3; cough/coughing share co ou ug gh of 4+7
    assert m.score("咳嗽发热", "发热咳嗽") == pytest.approx(4 / 6)
    assert m.score("cough", "Coughing") == pytest.approx(8 / 11)
    assert m.score("布洛芬", "对乙酰氨基酚") == 0.0
    assert m.score("Fever", "fever") == 1.0
    assert m.score_pairs(["咳嗽发热", "cough"], ["发热咳嗽", "coughing"]) == pytest.approx([4 / 6, 8 / 11])
    # the module imported again registers the same function objects: idempotent; a new function under the name: refused
    mod = sys.modules[DICE_MODULE]
    medeval.register_metric(name="dice2", label="Dice (char bigrams)", score=mod.dice, score_batch=mod.dice_batch,
                            aspect_types=("enumerated", "declarative"), scorer_id="char-bigram-dice-v1",
                            describe="Dice coefficient of the character bigrams of answer and reference")
    with pytest.raises(MedevalError, match="'dice2' is already registered"):
        medeval.register_metric(name="dice2", label="Other", score=lambda r, c: 0.0, aspect_types=("enumerated",),
                                scorer_id="x", describe="another metric")


def test_score_command_scores_the_plugin_through_its_batch_form(scored_dice):
    from medeval.store.db import connect

    mod = sys.modules[DICE_MODULE]
    assert mod.CALLS == {"batch": 1, "pair": 0}  # one chunk, one batch call, no per-pair calls
    with connect(scored_dice) as db:
        got = {(model, aspect): (round(score, 4), scorer) for model, aspect, score, scorer in db.conn.execute(
            "SELECT m.name, k.aspect, s.score, s.scorer FROM scores s JOIN responses r ON r.id = s.response_id "
            "JOIN models m ON m.id = r.model_id JOIN kb_entries k ON k.id = r.kb_id WHERE s.metric = 'dice2'")}
    sid = "char-bigram-dice-v1"
    # processed texts: 咳嗽 打喷嚏 流鼻涕 发热 (6 bigrams) vs 咳嗽 流涕 发烧 (3): 咳嗽 shared -> 2/9;
    # 对乙酰氨基酚 布洛芬 (7) vs 布洛芬 (2): 4/9; 咽部充血,扁桃体无肿大 (10) vs 咽部充血 (3): 6/13; ModelB shares none
    assert got == {("ModelA", "Primary Symptoms"): (0.2222, sid), ("ModelA", "Medications"): (0.4444, sid),
                   ("ModelA", "Physical Examinations"): (0.4615, sid), ("ModelB", "Primary Symptoms"): (0.0, sid),
                   ("ModelB", "Medications"): (0.0, sid), ("ModelB", "Physical Examinations"): (0.0, sid)}
    again = invoke("score", "--db", scored_dice, "--metrics", "dice2", "--no-progress")
    assert "0 scores added" in again.output  # resumable: stored under the same scorer id, nothing scored twice


GRADED = "metric,aspect_type,score,tier,item\n" + "".join(
    f"dice2,{t},{s},{tier},{t}{i}\n" for t in ("enumerated", "declarative")
    for i, (s, tier) in enumerate([(0.0, 0), (0.1, 0), (0.2, 0), (0.25, 0), (0.35, 1), (0.4, 1), (0.5, 1), (0.55, 1),
                                   (0.8, 2), (0.85, 2), (0.9, 2), (0.95, 2)]))


def test_calibrate_publish_and_report_a_plugin_metric(scored_dice, tmp_path):
    from medeval.calibration import tuning
    from medeval.reports import leaderboard as lb
    from medeval.reports import leaderboard_report, scorer_notes
    from medeval.reports.tier_report import build_report
    from medeval.store.db import connect

    graded = write(tmp_path / "graded.csv", GRADED)
    out = invoke("calibrate", "--db", scored_dice, str(graded), "--n-boot", "0", "--publish", "Dice from clinicians")
    cal = {r["aspect_type"]: r for r in json.loads(out.stdout)}
    for t in ("enumerated", "declarative"):
        low, high = cal[t]["cut_offs"]
        assert cal[t]["metric"] == "dice2" and 0.25 < low <= 0.35 and 0.55 < high <= 0.8  # the clinicians' gaps
        assert cal[t]["value"] == pytest.approx(1.0)  # kappa 1: the tiers are reproduced exactly
    with connect(scored_dice) as db:
        ts = th.active(db)
        assert ts.version == 2 and ts.name == "Dice from clinicians"
        assert ts.cutoffs[("dice2", "enumerated")] == pytest.approx(tuple(cal["enumerated"]["cut_offs"]))
        assert ts.scorer_for("dice2") == "char-bigram-dice-v1"
        tiers = dict(db.conn.execute("SELECT r.id, g.tier FROM grades g JOIN responses r ON r.id = g.response_id "
                                     "WHERE g.version = 2 AND g.metric = 'dice2'").fetchall())
        # 2/9 lies below every low cut-off, 4/9 and 6/13 between the cut-offs; ModelB's zeros are completely wrong
        assert tiers == {1: 0, 2: 1, 3: 1, 5: 0, 6: 0, 7: 0}
        rep = build_report(db)
        by_model = {m["model"]: m for m in rep["models"]}
        # ModelA: tiers 0, 1, 1 and its exact Severity Level (tier 2) -> CW 1/4, PC 2/4, BC 1/4, total 5
        a = by_model["ModelA"]["per_metric"]["dice2"]
        assert (a["n"], a["completely_wrong"], a["partially_correct"], a["basically_correct"]) == (4, 0.25, 0.5, 0.25)
        assert a["total_score"] == pytest.approx(5.0)
        assert by_model["ModelB"]["per_metric"]["dice2"]["total_score"] == 0.0  # 0, 0, 0 and level 2 for 4
        assert by_model["ModelA"]["averaged"]["metrics"] == ["dice2"]  # the only text metric scored here
        board = lb.rows(rep, metric="dice2")
        assert [(r["model"], r["rank"], r["total_score"]) for r in board] == [("ModelA", 1, 5.0), ("ModelB", 2, 0.0)]
        with pytest.raises(MedevalError, match="choose averaged, bleu1, rouge1, cosine or dice2"):
            lb.rows(rep, metric="dice3")
        assert leaderboard_report.metrics_of(rep) == ["averaged", "dice2"]
        notes = scorer_notes.scorers(db, ts)
        assert notes["graded_metrics"] == ["dice2"]
        assert notes["metrics"]["dice2"]["scorers"] == [{"scorer": "char-bigram-dice-v1", "n": 6, "graded_by_set": True}]
        # Tune cut-offs: the plugin's strata, its scores indexed, the live leaderboard under draft cut-offs
        assert ("dice2", "enumerated") in tuning.strata() and ("dice2", "declarative") in tuning.strata()
        index = tuning.ScoreIndex.load(db)
        assert list(index.arrays[("dice2", "enumerated", "ModelA")]) == pytest.approx([2 / 9, 4 / 9])
        draft = {("dice2", "enumerated"): (0.2, 0.4), ("dice2", "declarative"): (0.2, 0.4)}
        live = {r["model"]: r for r in tuning.leaderboard(index, draft)}
        # under (0.2, 0.4) ModelA's 2/9 is partially correct, 4/9 and 6/13 basically correct, + its exact match
        assert live["ModelA"]["per_metric"]["dice2"]["total_score"] == pytest.approx((5 * 1 + 10 * 3) / 4)
        # the leaderboard report (HTML): its own figure and table, and the plugin in the methods paragraph
        html = leaderboard_report.render_html(leaderboard_report.build(db))
        assert "Total score, Dice (char bigrams)" in html
        assert ("Dice (char bigrams) (Dice coefficient of the character bigrams of answer and reference; scorer "
                "char-bigram-dice-v1)") in html
        # a grading campaign samples by the plugin's score intervals (its range, its scorer)
        from medeval.annotation.campaigns import sampling

        assert sampling.intervals("dice2", 0.25) == [(0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0)]
        pool = sampling.stratum_pool(db, ts, "dice2", "enumerated")
        assert pool == [(1, pytest.approx(2 / 9)), (2, pytest.approx(4 / 9)), (5, 0.0), (6, 0.0)]


def test_a_published_set_keeps_the_plugin_scorer_it_was_calibrated_for(scored_dice, tmp_path):
    """Like cosine's model: once the plugin scores under another id (another model, a new formula), the set's
    cut-offs do not grade those scores; its report says why."""
    from medeval.engine.scoring import score_db
    from medeval.reports import leaderboard as lb
    from medeval.store.db import connect

    invoke("calibrate", "--db", scored_dice, str(write(tmp_path / "graded.csv", GRADED)), "--n-boot", "0",
           "--publish", "Dice v1")
    old = registry.get_metric("dice2")
    registry.unregister_metric("dice2")
    medeval.register_metric(name="dice2", label=old.label, score=old.score, aspect_types=old.aspect_types,
                            scorer_id="char-bigram-dice-v2", describe=old.describe)
    with connect(scored_dice) as db:
        ts = th.active(db)
        assert ts.provenance["scorers"] == {"dice2": "char-bigram-dice-v1"}
        assert ts.scorer_for("dice2") == "char-bigram-dice-v1"
        assert score_db(db, metrics=["dice2"]).scores_added == 6  # the same pairs again, under the new id
        assert th.grade_db(db)[1] == 0  # nothing new graded: the set is for v1
        assert db.conn.execute("SELECT count(*) FROM grades WHERE metric = 'dice2' AND scorer = "
                               "'char-bigram-dice-v2'").fetchone()[0] == 0
        unrecorded = th.ThresholdSet(name="a file", cutoffs={("dice2", "enumerated"): (0.3, 0.6)})
        assert unrecorded.scorer_for("dice2") == "char-bigram-dice-v2"  # nothing recorded: the loaded plugin's id
        assert lb.why_not_graded(db, ts, "dice2") is None  # its v1 scores are still graded


def test_plugin_from_an_entry_point(plugin_path, db_path, small_files, monkeypatch):
    """A fake installed distribution (a ``*.dist-info`` folder with ``entry_points.txt``) whose entry point is a
    function that registers a length-ratio metric for declarative aspects only."""
    monkeypatch.delenv("MEDEVAL_PLUGINS", raising=False)
    dist = plugin_path / "medeval_lenratio-0.1.dist-info"
    dist.mkdir()
    write(dist / "METADATA", "Metadata-Version: 2.1\nName: medeval-lenratio\nVersion: 0.1\n")
    write(dist / "entry_points.txt", "[medeval.metrics]\nlenratio = medeval_test_lenratio:register\n")
    write(plugin_path / "medeval_test_lenratio.py", textwrap.dedent('''
        import medeval

        def ratio(reference, candidate):
            a, b = len(reference), len(candidate)
            return min(a, b) / max(a, b) if max(a, b) else 1.0

        def register():
            medeval.register_metric(name="lenratio", label="Length ratio", score=ratio, aspect_types=("declarative",),
                                    scorer_id="len-ratio-v1", describe="shorter text's length over the longer's")
        '''))
    assert "lenratio" in plugins.load_plugins()
    invoke("import", "--db", db_path, "--kb", small_files["kb"], "--responses", small_files["responses"],
           "--models", small_files["models"])
    invoke("score", "--db", db_path, "--metrics", "lenratio", "--no-progress")  # per pair: no batch form
    from medeval.store.db import connect

    with connect(db_path) as db:
        got = sorted(db.conn.execute("SELECT response_id, score, scorer FROM scores WHERE metric = 'lenratio'"))
    # declarative only: 咽部充血,扁桃体无肿大 (11 characters) vs 咽部充血 (4) and vs 建议就医 (4)
    assert got == [(3, pytest.approx(4 / 11), "len-ratio-v1"), (7, pytest.approx(4 / 11), "len-ratio-v1")]


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("source, message", [
    (None, "plugin module (from MEDEVAL_PLUGINS) 'medeval_test_missing' could not be imported: No module named"),
    ("raise RuntimeError('no model directory')",
     "'medeval_test_missing' failed on import: RuntimeError: no model directory"),
    ("import medeval\nmedeval.register_metric(name='rouge1', label='R', score=len, aspect_types=('enumerated',), "
     "scorer_id='x', describe='d')", "'medeval_test_missing': metric 'rouge1' is already registered"),
    ("import medeval\nmedeval.register_metric(name='dice9', label='D', score=len, aspect_types=('enumerated',), "
     "scorer_id='x', describe='d', aliases=('bleu',))", "the name or alias 'bleu' already means 'bleu1'"),
])
def test_a_plugin_that_fails_to_load_is_named(plugin_path, monkeypatch, source, message):
    if source is not None:
        write(plugin_path / "medeval_test_missing.py", source + "\n")
    with pytest.raises(MedevalError) as e:
        plugins.load_plugins("medeval_test_missing")
    assert message in str(e.value)
    assert "dice9" not in registry.METRICS


def test_cli_refuses_a_bad_plugin_setting_with_one_line(plugin_path, monkeypatch, db_path):
    from click.testing import CliRunner

    from medeval.cli import main

    for value, message in [("medeval_test_nowhere", "could not be imported"), ("my-lab.dice", "is not a module name")]:
        monkeypatch.setenv("MEDEVAL_PLUGINS", value)
        res = CliRunner().invoke(main, ["init", "--db", str(db_path)])
        assert res.exit_code == 1 and "Error: " in res.output and message in res.output
        assert "Traceback" not in res.output and not db_path.exists()


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="Dice-2"), "use lower-case letters, digits and _"),
    (dict(aspect_types=("enumerated", "free text")), "must be one or more of enumerated, declarative, numeric"),
    (dict(aspect_types=()), "must be one or more of"),
    (dict(low=1.0, high=0.0), "the range needs finite low < high, got [1.0, 0.0]"),
    (dict(low=0.0, high=math.inf), "the range needs finite low < high"),
    (dict(score="dice"), "score must be a function"),
    (dict(scorer_id=""), "scorer_id must be a non-empty string"),
    (dict(describe="two\nlines"), "one-line description"),
    (dict(label=" "), "give a label"),
])
def test_register_metric_checks_its_arguments(kwargs, message):
    args = dict(name="dice5", label="Dice", score=lambda r, c: 0.5, aspect_types=("enumerated",),
                scorer_id="dice-v1", describe="a metric")
    with pytest.raises(MedevalError) as e:
        medeval.register_metric(**{**args, **kwargs})
    assert message in str(e.value)
    assert "dice5" not in registry.METRICS


@pytest.mark.parametrize("bad, shown", [(1.5, "1.5"), (math.nan, "nan"), ("high", "'high'"), (-0.1, "-0.1")])
def test_a_score_out_of_range_or_nan_writes_nothing_of_its_chunk(plugin_path, db_path, small_files, bad, shown):
    from medeval.engine.scoring import score_db
    from medeval.store.db import connect

    def score(reference, candidate):
        return bad if candidate == "布洛芬" else 0.5  # ModelA's Medications answer (response 2)

    medeval.register_metric(name="wobbly", label="Wobbly", score=score, aspect_types=("enumerated", "declarative"),
                            scorer_id="wobbly-v1", describe="a plugin with a bug")
    with connect(db_path) as db:
        from medeval.engine.importer import import_files

        import_files(db, **small_files)
        with pytest.raises(MedevalError) as e:
            score_db(db, metrics=["bleu1", "wobbly"], batch_size=4)
        msg = str(e.value)
        assert f"metric wobbly gave {shown} for response 2 (reference '对乙酰氨基酚 布洛芬', answer '布洛芬')" in msg
        assert "must be numbers in [0.0, 1.0]" in msg
        # responses 1-4 are the failing chunk: nothing of it (its BLEU-1 scores neither); no earlier chunk here
        assert db.conn.execute("SELECT count(*) FROM scores").fetchone()[0] == 0


def test_a_plugin_that_raises_or_miscounts_while_scoring(plugin_path, db_path, small_files):
    from medeval.engine.importer import import_files
    from medeval.engine.scoring import score_db
    from medeval.store.db import connect

    def broken(reference, candidate):
        raise ZeroDivisionError("division by zero")

    medeval.register_metric(name="broken", label="Broken", score=broken, aspect_types=("enumerated",),
                            scorer_id="broken-v1", describe="raises")
    medeval.register_metric(name="short", label="Short", score=lambda r, c: 0.5, aspect_types=("enumerated",),
                            score_batch=lambda refs, cands: [0.5], scorer_id="short-v1", describe="one score a batch")
    with connect(db_path) as db:
        import_files(db, **small_files)
        with pytest.raises(MedevalError, match="metric broken failed while scoring: ZeroDivisionError"):
            score_db(db, metrics=["broken"])
        with pytest.raises(MedevalError, match="metric short: score_batch gave 1 scores for 4 pairs"):
            score_db(db, metrics=["short"])
        assert db.conn.execute("SELECT count(*) FROM scores").fetchone()[0] == 0


def test_an_unknown_metric_names_the_plugin_setting():
    with pytest.raises(MedevalError) as e:
        registry.get_metric("bertscore")
    assert "unknown metric 'bertscore'" in str(e.value) and "MEDEVAL_PLUGINS" in str(e.value)


@pytest.mark.slow  # AppTest runs whole pages
def test_tune_cutoffs_and_leaderboard_pages_offer_a_plugin_metric(dice, db_path, small_files):
    """Tune cut-offs lists dice2, says the active set has no cut-offs for it, publishes the researcher's; the
    Leaderboard then ranks by it. (The web app loads plugins at start; AppTest runs in this process.)"""
    from streamlit.testing.v1 import AppTest

    from medeval.accounts import auth
    from medeval.engine.importer import import_files
    from medeval.engine.scoring import score_db
    from medeval.store.db import connect
    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    plugins.load_plugins()
    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match", "dice2"])
        th.grade_db(db)
        auth.add_user(db, "res", "correct horse battery", "researcher")
        token = auth.create_session(db, auth.authenticate(db, "res", "correct horse battery"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    at.switch_page("app_pages/tuning.py").run()
    assert not at.exception
    # the metrics by their labels (the options' values stay the names)
    assert at.selectbox(key="tune_metric").options == ["BLEU-1", "ROUGE-1", "cosine", "Dice (char bigrams)"]
    at.selectbox(key="tune_metric").set_value("dice2").run()
    assert not at.exception
    assert any("has no cut-offs for Dice (char bigrams) / enumerated" in i.value for i in at.info)
    assert at.slider(key="cut_dice2_enumerated").value == (0.0, 1.0)  # no campaign: the whole range, said so
    at.slider(key="cut_dice2_enumerated").set_value((0.3, 0.45)).run()
    assert not at.exception
    at.text_input(key="publish_name").input("with Dice").run()
    at.button(key="publish").click().run()  # asked once (issue 32 §6)
    at.button(key="publish_ask_yes").click().run()
    assert not at.exception
    with connect(db_path) as db:
        act = th.active(db)
        assert act.name == "with Dice" and act.cutoffs[("dice2", "enumerated")] == (0.3, 0.45)
        assert act.provenance["scorers"] == {"dice2": "char-bigram-dice-v1"}
        # graded now: 2/9 below 0.3, 4/9 between, ModelB's zeros below
        assert dict(db.conn.execute("SELECT response_id, tier FROM grades WHERE version = ? AND metric = 'dice2'",
                                    (act.version,))) == {1: 0, 2: 1, 5: 0, 6: 0}
    at.switch_page("app_pages/leaderboard.py").run()
    assert not at.exception
    assert "Dice (char bigrams)" in at.selectbox(key="lb_metric").options
    at.selectbox(key="lb_metric").set_value("dice2").run()
    assert not at.exception
    board = at.dataframe[0].value
    assert list(board["model"]) == ["ModelA", "ModelB"] and list(board["rank"]) == [1, 2]


@pytest.mark.slow  # a subprocess: the real `python -m medeval` entry point loads MEDEVAL_PLUGINS
def test_python_m_medeval_loads_the_plugin_setting(dice, db_path, small_files):
    import os
    import subprocess

    from tests.conftest import ROOT

    env = {**os.environ, "MEDEVAL_PLUGINS": DICE_MODULE, "PYTHONPATH": str(dice), "PYTHONIOENCODING": "utf-8"}
    run = [sys.executable, "-m", "medeval"]
    imp = subprocess.run([*run, "import", "--db", str(db_path), "--kb", str(small_files["kb"]), "--responses",
                          str(small_files["responses"]), "--models", str(small_files["models"])],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    assert imp.returncode == 0, imp.stderr
    res = subprocess.run([*run, "score", "--db", str(db_path), "--metrics", "dice2", "--no-progress"], cwd=ROOT,
                         env=env, capture_output=True, text=True)
    assert res.returncode == 0 and "6 scores added" in res.stdout, res.stderr
    bad = subprocess.run([*run, "score", "--db", str(db_path), "--metrics", "dice2"], cwd=ROOT,
                         env={**env, "MEDEVAL_PLUGINS": DICE_MODULE + ",medeval_test_absent"}, capture_output=True,
                         text=True)
    assert bad.returncode == 1 and bad.stderr.startswith("Error: plugin module (from MEDEVAL_PLUGINS) "
                                                         "'medeval_test_absent' could not be imported")
    assert "Traceback" not in bad.stderr
