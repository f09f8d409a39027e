"""A threshold file (``medeval thresholds import``, ``ThresholdSet.to_dict``'s JSON form) read and checked."""

from __future__ import annotations

import json
import math
from pathlib import Path

from medeval.core.errors import InputError, MedevalError
from medeval.engine.aspects import ASPECT_TYPES
from medeval.engine.registry import METRICS, get_metric


def read_json(path) -> object:
    """A JSON file's value, or InputError naming the file and what is wrong with it."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("the file is not UTF-8", file=str(path), fix="save it as UTF-8") from None
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg} at line {e.lineno}", file=str(path)) from None


def threshold_cutoffs(data, source: str) -> dict[tuple[str, str], tuple[float, float]]:
    """The cut-offs of a threshold set's JSON form (``ThresholdSet.to_dict``), each checked: a known metric, an
    aspect type it applies to, finite ``low <= high`` in the metric's range, given once. InputError otherwise."""
    if not isinstance(data, dict) or "thresholds" not in data:
        raise InputError('expected a JSON object with a "thresholds" list', file=source,
                         fix="export a set with `python -m medeval thresholds export` to see the format")
    rows = data["thresholds"]
    if not isinstance(rows, list) or not rows:
        raise InputError('"thresholds" must be a non-empty list', file=source)
    cutoffs: dict[tuple[str, str], tuple[float, float]] = {}
    for i, r in enumerate(rows, start=1):
        try:
            m = get_metric(r["metric"]).name
            t = str(r["aspect_type"]).strip().lower()
            lo, hi = float(r["low"]), float(r["high"])
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"threshold {i} needs metric, aspect_type, low and high ({e})", file=source) from None
        except MedevalError as e:
            raise InputError(f"threshold {i}: {e}", file=source) from None
        if t not in ASPECT_TYPES or t not in METRICS[m].aspect_types:
            raise InputError(f"threshold {i}: metric {m} does not apply to aspect type {t!r}", file=source,
                             fix=f"{m} applies to {', '.join(METRICS[m].aspect_types)}")
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise InputError(f"threshold {i} ({m}/{t}): low {lo} must be <= high {hi}", file=source)
        info = METRICS[m]
        if lo < info.low or hi > info.high:
            raise InputError(f"threshold {i} ({m}/{t}): cut-offs must lie in [{info.low}, {info.high}]", file=source)
        if (m, t) in cutoffs:
            raise InputError(f"threshold {i}: {m}/{t} is given twice", file=source)
        cutoffs[(m, t)] = (lo, hi)
    return cutoffs
