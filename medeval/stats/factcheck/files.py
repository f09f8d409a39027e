"""Reading and validating a fact-check file: its lines as claims, paired into items (factual, counterfactual)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from medeval.core.errors import InputError
from medeval.core.limits import NAME_MAX_CHARS, check_text, read_table_limited
from medeval.stats.factcheck.verdict import LABELS, REFUTE, SUPPORT

REQUIRED = ["id", "type", "label", "claim", "response"]
OPTIONAL = ["model"]
_NAMES = ("model", "id", "type", "label")  # names and ids: at most NAME_MAX_CHARS, on one line



@dataclass(frozen=True)
class Claim:
    """One line of the input: a claim and the model's response to it."""

    id: str
    type: str
    label: str
    claim: str
    response: str
    line: int
    model: str = ""



def _text(obj: dict, key: str, file: str, line: int, allow_empty: bool = False) -> str:
    if key not in obj:
        raise InputError(f"field {key!r} is missing on this line", file=file, row=line,
                         fix=f"every line needs {', '.join(REQUIRED)}")
    v = obj[key]
    if v is None or isinstance(v, (dict, list, bool)):
        raise InputError(f"field {key!r} is {'null' if v is None else type(v).__name__}, expected text",
                         file=file, row=line,
                         fix="write an empty string \"\" for an empty model response" if key == "response"
                         else f"give {key!r} as a string")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    s = str(v).strip()
    if not s and not allow_empty:
        raise InputError(f"field {key!r} is empty", file=file, row=line, fix=f"fill in {key!r}")
    if key in _NAMES:
        check_text(s, what=f"field {key!r}", max_chars=NAME_MAX_CHARS, allow_newlines=False, file=file, row=line)
    return s


def _label(raw: str, file: str, line: int) -> str:
    lab = raw.strip().lower()
    if lab in LABELS:
        return lab
    close = difflib.get_close_matches(lab, LABELS, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise InputError(f"unknown label {raw!r}", file=file, row=line,
                     fix=hint + "use 'support' for the factual claim and 'refute' for the counterfactual claim")


def pair_claims(rows: list[tuple[int, dict]], file: str = "<input>") -> dict[str, list[tuple[Claim, Claim]]]:
    """Validate the lines and pair the claims of each item: ``{model: [(factual, counterfactual), ...]}``.

    Every id (per model) needs exactly one ``support`` and one ``refute`` line of
    the same type; a claim may not appear twice. Errors name the file and line.
    """
    claims: dict[str, dict[str, dict[str, Claim]]] = {}
    seen_claim: dict[tuple[str, str], int] = {}
    has_model = any("model" in obj for _, obj in rows)
    for line, obj in rows:
        model = _text(obj, "model", file, line) if has_model else ""
        cid = _text(obj, "id", file, line)
        typ = _text(obj, "type", file, line)
        label = _label(_text(obj, "label", file, line), file, line)
        text = _text(obj, "claim", file, line)
        response = _text(obj, "response", file, line, allow_empty=True)
        key = (model, " ".join(text.split()))
        if key in seen_claim:
            raise InputError(f"the claim {text[:60]!r} appears twice (also on line {seen_claim[key]})"
                             + (f" for model {model!r}" if model else ""), file=file, row=line,
                             fix="keep one line per claim (and per model); each item has two different claims")
        seen_claim[key] = line
        item = claims.setdefault(model, {}).setdefault(cid, {})
        if label in item:
            raise InputError(f"id {cid!r} already has a {label!r} claim (line {item[label].line})"
                             + (f" for model {model!r}" if model else ""), file=file, row=line,
                             fix="each id needs exactly one 'support' and one 'refute' claim; give other items other ids")
        other = next(iter(item.values()), None)
        if other is not None and other.type != typ:
            raise InputError(f"id {cid!r} has type {typ!r} here but {other.type!r} on line {other.line}",
                             file=file, row=line, fix="both claims of an item must have the same atomic type")
        item[label] = Claim(cid, typ, label, text, response, line, model)
    out: dict[str, list[tuple[Claim, Claim]]] = {}
    for model, items in claims.items():
        pairs = []
        for cid, item in items.items():
            if len(item) != 2:
                (have,) = item.values()
                missing = REFUTE if have.label == SUPPORT else SUPPORT
                raise InputError(f"id {cid!r} has only a {have.label!r} claim (line {have.line}), no {missing!r} claim"
                                 + (f" for model {model!r}" if model else ""), file=file, row=have.line,
                                 fix="each item needs one factual ('support') and one counterfactual ('refute') claim")
            pairs.append((item[SUPPORT], item[REFUTE]))
        out[model] = pairs
    return out


def read_factcheck(path: str | Path) -> dict[str, list[tuple[Claim, Claim]]]:
    """Read and validate a fact-check file (JSONL; CSV/JSON also work): ``{model: [(factual, counterfactual)]}``."""
    from medeval.core.tables import require_columns

    header, rows = read_table_limited(path)
    require_columns(path, header, REQUIRED, OPTIONAL)
    return pair_claims(rows, str(path))
