"""The metric registry: every metric is one :class:`Metric`, registered here by name.

A metric is its name, label, score range, the aspect types it applies to, a per-pair
``score(reference, candidate) -> float`` (and optionally a batch form), the scorer id stored with
its scores for provenance, and a one-line description -- the shape of rouge-score's scorers. The
four built-ins (:data:`BUILTINS`: bleu1, rouge1, cosine, exact_match) are registered here through
the same :func:`register`; plugins call :func:`register_metric` (exported as
``medeval.register_metric``) when :func:`medeval.engine.plugins.load_plugins` imports them.

Everything that lists metrics asks the registry: :func:`get_metric` (with aliases and "did you
mean"), :func:`metrics_for` (per aspect type), :func:`report_metrics` (the metrics of the tier
report, the leaderboard, Tune cut-offs: those of the enumerated and declarative aspects).
:data:`METRICS` is the live name -> :class:`Metric` mapping (registration order).
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.engine import tokenize as tok
from medeval.engine.aspects import ASPECT_TYPES, DECLARATIVE, ENUMERATED, NUMERIC
from medeval.engine.metrics import EXACT_SCORER_ID, bleu1, cosine, exact_match, rouge1

NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,39}")
"""A metric's name: lower-case letters, digits and ``_``, starting with a letter, at most 40 characters."""
BUILTINS = ("bleu1", "rouge1", "cosine", "exact_match")


@dataclass(frozen=True)
class Metric:
    """One metric. ``scorer_id`` is a string, or a function of no arguments that returns it (called once per
    scoring run: e.g. the id of a model directory that is only known once it is loaded)."""

    name: str
    label: str
    low: float  # range of the score
    high: float
    aspect_types: tuple[str, ...]
    describe: str
    score: Callable[[str, str], float] = field(repr=False)
    scorer_id: str | Callable[[], str] = field(repr=False)
    score_batch: Callable[[Sequence[str], Sequence[str]], Sequence[float]] | None = field(default=None, repr=False)
    aliases: tuple[str, ...] = ()
    lexical: bool = False
    builtin: bool = False

    def current_scorer_id(self) -> str:
        """The scorer id stored with this metric's scores now (checked: a non-empty string)."""
        sid = self.scorer_id() if callable(self.scorer_id) else self.scorer_id
        if not isinstance(sid, str) or not sid.strip():
            raise MedevalError(f"metric {self.name}: its scorer id must be a non-empty string, got {sid!r}")
        return sid

    def score_pairs(self, references: Sequence[str], candidates: Sequence[str]) -> list[float]:
        """Every pair's score, through ``score_batch`` when there is one; the plugin's own failure as a
        :class:`MedevalError` naming the metric (a value's range is checked by :func:`check_score`)."""
        try:
            if self.score_batch is not None:
                out = list(self.score_batch(list(references), list(candidates)))
            else:
                out = [self.score(r, c) for r, c in zip(references, candidates)]
        except MedevalError:
            raise
        except Exception as e:  # a plugin's bug: one line naming it, not a traceback
            raise MedevalError(f"metric {self.name} failed while scoring: {type(e).__name__}: {e}") from e
        if len(out) != len(references):
            raise MedevalError(f"metric {self.name}: score_batch gave {len(out)} scores for {len(references)} pairs")
        return out

    def check_score(self, value, where: str) -> float:
        """``value`` as a float in [low, high], or an error naming the metric and ``where`` (the pair)."""
        try:
            x = float(value)
        except (TypeError, ValueError):
            x = math.nan
        if isinstance(value, bool) or math.isnan(x) or not (self.low <= x <= self.high):
            raise MedevalError(f"metric {self.name} gave {value!r} for {where}: its scores must be numbers in "
                               f"[{self.low}, {self.high}]; nothing of this chunk was written")
        return x


METRICS: dict[str, Metric] = {}
_KEYS: dict[str, str] = {}  # normalised name or alias -> name


def _key(name: str) -> str:
    return str(name).strip().lower().replace("-", "").replace("_", "")


def register(metric: Metric) -> Metric:
    """Add ``metric`` to the registry. Registering the same (equal) metric again does nothing; another metric
    under a name or alias already taken is refused."""
    old = METRICS.get(metric.name)
    if old is not None:
        if old == metric:
            return old
        raise MedevalError(f"metric {metric.name!r} is already registered ({old.label}: {old.describe}); "
                           f"give the new metric another name")
    for k in {_key(metric.name), *(_key(a) for a in metric.aliases)}:
        if k in _KEYS:
            raise MedevalError(f"metric {metric.name!r}: the name or alias {k!r} already means {_KEYS[k]!r}")
    METRICS[metric.name] = metric
    for k in {_key(metric.name), *(_key(a) for a in metric.aliases)}:
        _KEYS[k] = metric.name
    return metric


def register_metric(*, name: str, label: str, score: Callable[[str, str], float], aspect_types: Sequence[str],
                    scorer_id: str | Callable[[], str], describe: str, low: float = 0.0, high: float = 1.0,
                    score_batch: Callable[[Sequence[str], Sequence[str]], Sequence[float]] | None = None,
                    aliases: Sequence[str] = ()) -> Metric:
    """Register a metric (a plugin calls this on import); returns its :class:`Metric`.

    ``score(reference, candidate) -> float`` scores one pair (the knowledge-base reference and the model's
    post-processed answer); ``score_batch(references, candidates) -> list[float]``, when given, scores a chunk
    at once and is what ``medeval score`` uses. ``aspect_types``: some of enumerated, declarative, numeric.
    ``scorer_id``: the tokenizer / model id stored with every score (a string, or a function returning one).
    Every argument is checked; registering the same metric twice (a module imported again) does nothing.
    """
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise MedevalError(f"metric name {name!r}: use lower-case letters, digits and _, starting with a letter "
                           f"(at most 40 characters), e.g. 'dice2'")
    if not isinstance(label, str) or not label.strip():
        raise MedevalError(f"metric {name}: give a label (the name readers see, e.g. 'Dice')")
    if not isinstance(describe, str) or not describe.strip() or "\n" in describe:
        raise MedevalError(f"metric {name}: give a one-line description (describe=...)")
    if not callable(score):
        raise MedevalError(f"metric {name}: score must be a function score(reference, candidate) -> float")
    if score_batch is not None and not callable(score_batch):
        raise MedevalError(f"metric {name}: score_batch must be a function score_batch(references, candidates)")
    if not (isinstance(scorer_id, str) and scorer_id.strip()) and not callable(scorer_id):
        raise MedevalError(f"metric {name}: scorer_id must be a non-empty string (the tokenizer or model id stored "
                           f"with its scores) or a function returning one")
    if isinstance(aspect_types, str):
        aspect_types = (aspect_types,)
    types = tuple(str(t).strip().lower() for t in aspect_types or ())
    unknown = [t for t in types if t not in ASPECT_TYPES]
    if not types or unknown or len(set(types)) != len(types):
        raise MedevalError(f"metric {name}: aspect_types {tuple(aspect_types or ())!r} must be one or more of "
                           f"{', '.join(ASPECT_TYPES)}, each once")
    try:
        lo, hi = float(low), float(high)
    except (TypeError, ValueError):
        raise MedevalError(f"metric {name}: low and high must be numbers, got {low!r}, {high!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise MedevalError(f"metric {name}: the range needs finite low < high, got [{low}, {high}]")
    if isinstance(aliases, str):
        aliases = (aliases,)
    return register(Metric(name=name, label=label.strip(), low=lo, high=hi, aspect_types=types,
                           describe=describe.strip(), score=score, scorer_id=scorer_id, score_batch=score_batch,
                           aliases=tuple(aliases)))


def unregister_metric(name: str) -> None:
    """Remove a plugin metric (tests; a built-in stays)."""
    m = get_metric(name)
    if m.builtin:
        raise MedevalError(f"metric {m.name} is built in and cannot be removed")
    del METRICS[m.name]
    for k in [k for k, v in _KEYS.items() if v == m.name]:
        del _KEYS[k]


def get_metric(name: str) -> Metric:
    """The metric called ``name`` (or one of its aliases; case, ``-`` and ``_`` ignored), or an error with "did you
    mean"."""
    key = _key(name)
    if key in _KEYS:
        return METRICS[_KEYS[key]]
    close = difflib.get_close_matches(str(name), list(METRICS), n=2, cutoff=0.4)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    raise MedevalError(f"unknown metric {name!r}.{hint} Known metrics: {', '.join(METRICS)}. (A plugin metric is "
                       f"known once its module is named in MEDEVAL_PLUGINS or installed as a medeval.metrics "
                       f"entry point: docs/metrics.md.)")


def metrics_for(aspect_type: str) -> list[str]:
    """The names of the metrics that apply to ``aspect_type``."""
    return [m.name for m in METRICS.values() if aspect_type in m.aspect_types]


def report_metrics() -> tuple[str, ...]:
    """The metrics a tier report, the leaderboard and Tune cut-offs show: those of the enumerated and declarative
    aspects, built-ins first (bleu1, rouge1, cosine), then plugins in the order they registered. The numeric
    aspect's exact match counts under each of them."""
    return tuple(m.name for m in METRICS.values() if ENUMERATED in m.aspect_types or DECLARATIVE in m.aspect_types)


def label(name: str) -> str:
    """A metric's label in the reader's language (a built-in's words translated; "BLEU-1" and a plugin's label as
    they are; a name no longer registered, e.g. from an old database, as it is)."""
    m = METRICS.get(name)
    if m is None:
        return name
    return _(m.label) if m.builtin else m.label


def _rouge1_f1(reference: str, candidate: str) -> float:
    return rouge1(reference, candidate).fmeasure


def _cosine_scorer_id() -> str:
    from medeval.engine.embeddings import get_backend

    return get_backend().model_id + (tok.T2S_SUFFIX if tok.traditional_to_simplified() else "")


def _register_builtins() -> None:
    lex = (ENUMERATED, DECLARATIVE)
    for m in (
        Metric("bleu1", "BLEU-1", 0.0, 1.0, lex, "brevity penalty x clipped unigram precision of the answer",
               bleu1, tok.scorer_id, aliases=("bleu",), lexical=True, builtin=True),
        Metric("rouge1", "ROUGE-1", 0.0, 1.0, lex, "F1 of unigram overlap between answer and reference",
               _rouge1_f1, tok.scorer_id, aliases=("rouge",), lexical=True, builtin=True),
        Metric("cosine", N_("cosine"), -1.0, 1.0, lex, "cosine similarity of sentence embeddings",
               cosine, _cosine_scorer_id, aliases=("cos",), builtin=True),
        Metric("exact_match", N_("exact match"), 0.0, 1.0, (NUMERIC,), "1 if the first number equals the reference, else 0",
               exact_match, lambda: EXACT_SCORER_ID, aliases=("em",), builtin=True),
    ):
        register(m)


_register_builtins()
