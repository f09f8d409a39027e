"""What produced the scores a model report shows, in words (the reports' header and methods paragraph).

A threshold set names the embedding model and tokenizer its cut-offs were calibrated for; the scores in the
database name the scorer that produced them (``scores.scorer``: an embedding model id for cosine, a tokenizer id
for BLEU-1 and ROUGE-1). A score is graded only under a set calibrated for its scorer
(:func:`medeval.engine.thresholds.embedding_matches`), so the report must say which model actually produced the
cosine scores it grades -- and, when none matches (a fresh import scored with the default model under Table 12,
calibrated for M3E), that cosine is not graded and why, instead of "cosine from moka-ai/m3e-base".
"""

from __future__ import annotations

import sqlite_utils

from medeval.core.i18n import _, ngettext
from medeval.engine import thresholds as th
from medeval.engine import registry
from medeval.engine.registry import report_metrics

LABELS = {m: registry.label(m) for m in ("bleu1", "rouge1", "cosine")}
"""The built-in report metrics as everything names them (their registered labels)."""


def label(metric: str) -> str:
    """How a page or report names ``metric``: its registered label ("BLEU-1", "ROUGE-1", "cosine", a plugin's)."""
    return registry.label(metric)


def made_for(ts: th.ThresholdSet, metric: str) -> str:
    """What a set's cut-offs for ``metric`` were calibrated for, in words (the current language's)."""
    if metric == "cosine":
        return ts.embedding_model
    if metric in ("bleu1", "rouge1"):
        return _("tokenizer {id}").format(id=ts.tokenizer)
    return _("scorer {id}").format(id=ts.scorer_for(metric))


def embedding_name(scorer: str) -> str:
    """A cosine scorer id in words: ``st:m3e-base:1a2b3c`` -> "m3e-base (local model directory, fingerprint 1a2b3c)"."""
    from medeval.engine.tokenize import T2S_SUFFIX

    t2s = scorer.endswith(T2S_SUFFIX)
    if t2s:
        scorer = scorer[: -len(T2S_SUFFIX)]
    name = scorer
    if scorer.startswith("st:"):
        parts = scorer.split(":")
        if len(parts) >= 3:
            name = _("{model} (local model directory, fingerprint {fingerprint})").format(model=parts[1],
                                                                                        fingerprint=parts[2])
    if t2s:
        return _("{model}, texts converted from traditional to simplified Chinese with OpenCC").format(model=name)
    return name


def tokenizer_text(tokenizer_id: str) -> str:
    """The tokenizer in one sentence (``medeval.engine.tokenize.describe`` where it exists), else its id."""
    from medeval.engine import tokenize

    describe = getattr(tokenize, "describe", None)
    if describe is not None:
        try:
            text = describe(tokenizer_id)
        except Exception:  # noqa: BLE001 - an unknown id: the id itself says what was stored
            text = None
        if text:
            return str(text)
    return tokenizer_id


def scorers(db: sqlite_utils.Database, ts: th.ThresholdSet, *, graded_metrics: set[str] | None = None) -> dict:
    """Per report metric: the scorers of its stored scores (with counts), the ones ``ts`` grades, and why not.

    ``graded_metrics``: the metrics with tiers where the caller counted them without stored grades (a set that is
    not active, counted in memory by the Leaderboard); default: the metrics ``ts`` has stored grades of.

    Returns ``{"graded_metrics": [...], "metrics": {metric: {"scorers": [{"scorer", "n", "graded_by_set"}],
    "graded": bool, "reason": str | None}}, "cosine_models": [...], "tokenizers": [...]}``; ``cosine_models``
    names the models whose cosine scores are graded (none graded: the models that produced the scores).
    """
    metrics = report_metrics()
    stored: dict[str, list[dict]] = {m: [] for m in metrics}
    marks = ",".join("?" * len(metrics))
    for metric, scorer, n in db.conn.execute(
            f"SELECT metric, scorer, count(*) FROM scores WHERE metric IN ({marks}) GROUP BY 1, 2 ORDER BY 1, 2",
            metrics):
        stored[metric].append({"scorer": scorer, "n": n, "graded_by_set": ts.grades(metric, scorer)})
    name = f"v{ts.version}" if ts.version is not None else ts.name
    out: dict = {"metrics": {}, "graded_metrics": []}
    for m in metrics:
        graded = (m in graded_metrics) if graded_metrics is not None else ts.version is not None and db.conn.execute(
            "SELECT 1 FROM grades WHERE version = ? AND metric = ? LIMIT 1", (ts.version, m)).fetchone() is not None
        reason = None
        if not graded:
            target = made_for(ts, m)
            came = [embedding_name(s["scorer"]) if m == "cosine" else s["scorer"] for s in stored[m]]
            if not stored[m]:
                reason = _("{label} not scored").format(label=label(m))
            elif not any(s["graded_by_set"] for s in stored[m]):
                reason = _("{label} not graded: set {name}'s cut-offs are for {target}, the scores come from "
                           "{scorers}").format(label=label(m), name=name, target=target, scorers=", ".join(came))
            else:
                reason = _("{label} not graded under set {name} (no grades stored: run `medeval grade`)").format(
                    label=label(m), name=name)
        else:
            out["graded_metrics"].append(m)
        out["metrics"][m] = {"scorers": stored[m], "graded": graded, "reason": reason}
    cos = out["metrics"]["cosine"]
    used = [s["scorer"] for s in cos["scorers"] if s["graded_by_set"]] if cos["graded"] else \
        [s["scorer"] for s in cos["scorers"]]
    out["cosine_models"] = [embedding_name(s) for s in used]
    # responses scored by two ids that fit the set equally (two fingerprints of a local model): not graded, said
    cos["undetermined"] = th.cosine_undetermined(db, ts) if len(cos["scorers"]) > 1 else {"responses": 0,
                                                                                         "scorers": []}
    lex = {s["scorer"] for m in ("bleu1", "rouge1") for s in out["metrics"][m]["scorers"]
           if s["graded_by_set"] or not out["metrics"][m]["graded"]}
    out["tokenizers"] = sorted(lex)
    return out


def metrics_text(info: dict) -> str:
    """ "BLEU-1, ROUGE-1, cosine": the metrics with tiers under the set, in words (or "no metric")."""
    return ", ".join(label(m) for m in info["graded_metrics"]) or _("no metric")


def cosine_text(info: dict) -> str:
    """ "cosine from use-multilingual-v3@1.0" or the reason cosine is not graded."""
    c = info["metrics"]["cosine"]
    if c["graded"]:
        return _("cosine from {models}").format(models=", ".join(info["cosine_models"]) or _("an unrecorded model"))
    return c["reason"]


def tokenizer_sentence(info: dict, ts_tokenizer: str) -> str:
    """The tokenizer of the stored BLEU-1/ROUGE-1 scores, described (falls back to the set's id if none stored)."""
    ids = info["tokenizers"] or [ts_tokenizer]
    out = []
    for t in ids:
        text = tokenizer_text(t).rstrip(". ")
        out.append(t if text == t else f"{t} ({text})")
    return "; ".join(out)


def ungraded_notes(info: dict) -> list[str]:
    """One sentence per report metric without tiers under the set, and one for cosine scores of responses that two
    equally fitting scorer ids scored (left ungraded rather than graded by whichever came first)."""
    notes = [v["reason"] for v in info["metrics"].values() if v["reason"]]
    und = info["metrics"].get("cosine", {}).get("undetermined") or {}
    if und.get("responses"):
        notes.append(ngettext(
            "cosine of {n} response not graded: it was scored by {scorers}, which fit the set's embedding model "
            "equally well; record the exact scorer id in a set (`medeval thresholds adopt VERSION ID`) to grade it",
            "cosine of {n} responses not graded: each was scored by {scorers}, which fit the set's embedding model "
            "equally well; record the exact scorer id in a set (`medeval thresholds adopt VERSION ID`) to grade them",
            und["responses"]).format(n=und["responses"],
                                     scorers=", ".join(embedding_name(s) for s in und["scorers"])))
    return notes
