"""Reading and validating the answer key (CMB-Exam questions) and the answers files of an exam."""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from medeval.core.errors import InputError, MedevalError
from medeval.core.limits import NAME_MAX_CHARS, check_text, read_table_limited

_CATEGORY_FIELDS = (("category", ("exam_type", "category")), ("subcategory", ("exam_class", "subcategory")),
                    ("subject", ("exam_subject", "subject")))


@dataclass(frozen=True)
class Question:
    """A question of the key: the correct option set, the options (may be empty), and where it belongs."""

    id: str
    answer: str
    options: dict = field(default_factory=dict)
    category: str | None = None
    subcategory: str | None = None
    subject: str | None = None
    question_type: str | None = None
    row: int = 0

    @property
    def multi(self) -> bool:
        """Multiple-answer question: CMB's ``question_type`` 多项选择题, else more than one correct letter."""
        if self.question_type:
            return "多" in self.question_type or "multi" in self.question_type.lower()
        return len(self.answer) > 1


def response_sha(text: str) -> str:
    """Identity of one response's text (a settlement applies to the response a person read, not to a later one)."""
    import hashlib

    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()[:32]


def key_fingerprint(path: str | Path) -> str:
    """Identity of an answer key: the SHA-256 of the file's bytes (the exam a settlement belongs to)."""
    import hashlib

    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:32]


def _id(v, file, row, what="id") -> str:
    if v is None or isinstance(v, (dict, list, bool)) or (isinstance(v, str) and not v.strip()):
        raise InputError(f"{what} is missing or empty", file=file, row=row, fix="give every entry an id")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return check_text(str(v).strip(), what=what, max_chars=NAME_MAX_CHARS, allow_newlines=False, file=file, row=row)


def _opt_str(obj: dict, names: tuple, file, row) -> str | None:
    vals = {n: obj[n] for n in names if n in obj and obj[n] is not None}
    texts = {n: str(v).strip() for n, v in vals.items()}
    if len(set(texts.values())) > 1:
        a, b = list(texts)
        raise InputError(f"{a!r} is {texts[a]!r} but {b!r} is {texts[b]!r}", file=file, row=row,
                         fix=f"give one of {' / '.join(names)}, or the same value in both")
    if not texts:
        return None
    v = next(iter(texts.values()))
    if not v:
        raise InputError(f"{next(iter(texts))!r} is empty", file=file, row=row,
                         fix="fill it in or leave the field out on every question")
    return v


def _letters(raw, file, row, options: dict) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise InputError("answer is missing or empty", file=file, row=row,
                         fix='give the correct option letters, e.g. "answer": "BD"')
    compact = re.sub(r"[\s,，、;；/]+", "", unicodedata.normalize("NFKC", raw)).upper()
    if not compact.isascii() or not compact.isalpha():
        raise InputError(f"answer {raw!r} is not a set of option letters", file=file, row=row,
                         fix='write the letters, e.g. "D" or "ABD"')
    if len(set(compact)) != len(compact):
        raise InputError(f"answer {raw!r} repeats a letter", file=file, row=row, fix="give each letter once")
    if options:
        unknown = [c for c in compact if c not in options]
        if unknown:
            raise InputError(f"answer {raw!r} has {', '.join(unknown)}, not among the options "
                             f"{', '.join(sorted(options))}", file=file, row=row,
                             fix="the answer must use the letters of the question's options")
    return "".join(sorted(compact))


def questions_from_rows(rows: list[tuple[int, dict]], file: str = "<key>") -> dict[str, Question]:
    """Validate key entries (CMB-Exam style objects) into ``{id: Question}``."""
    out: dict[str, Question] = {}
    for row, obj in rows:
        if "id" not in obj:
            raise InputError("the question has no 'id'", file=file, row=row,
                             fix="every question needs an id that the answers file refers to")
        qid = _id(obj["id"], file, row)
        if qid in out:
            raise InputError(f"id {qid!r} appears twice (also entry {out[qid].row})", file=file, row=row,
                             fix="give every question its own id")
        raw_opts = obj.get("option", obj.get("options"))
        options: dict = {}
        if raw_opts is not None:
            if not isinstance(raw_opts, dict) or not raw_opts:
                raise InputError("'option' must be an object of letter -> text", file=file, row=row,
                                 fix='write "option": {"A": "...", "B": "..."}')
            for k, v in raw_opts.items():
                key = str(k).strip().upper()
                if len(key) != 1 or not ("A" <= key <= "Z"):
                    raise InputError(f"option key {k!r} is not a single letter", file=file, row=row,
                                     fix='name the options "A", "B", "C", ...')
                if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                    raise InputError(f"option {key} is {type(v).__name__}, expected text", file=file, row=row)
                options[key] = str(v)
        if "answer" not in obj:
            raise InputError("the question has no 'answer'", file=file, row=row,
                             fix='give the correct option letters, e.g. "answer": "BD"')
        answer = _letters(obj["answer"], file, row, options)
        cats = {name: _opt_str(obj, names, file, row) for name, names in _CATEGORY_FIELDS}
        qtype = obj.get("question_type")
        out[qid] = Question(qid, answer, options, cats["category"], cats["subcategory"], cats["subject"],
                            str(qtype).strip() if qtype else None, row)
    if not out:
        raise MedevalError(f"{file}: no questions")
    return out


def read_key(path: str | Path) -> dict[str, Question]:
    """Read the answer key: a JSON list of CMB-Exam questions (or JSONL/CSV with the same fields)."""
    from medeval.core.tables import require_columns

    header, rows = read_table_limited(path)
    require_columns(path, header, ["id", "answer"], ["option", "exam_type", "exam_class", "exam_subject",
                                                     "category", "subcategory", "subject", "question_type"])
    return questions_from_rows(rows, str(path))


def answers_from_rows(rows: list[tuple[int, dict]], key: dict[str, Question],
                      file: str = "<answers>") -> dict[str, dict[str, tuple[int, str]]]:
    """Validate answer lines into ``{model: {id: (line, response)}}``; ids must be in the key."""
    has_model = any("model" in obj for _, obj in rows)
    out: dict[str, dict[str, tuple[int, str]]] = {}
    for line, obj in rows:
        if "id" not in obj:
            raise InputError("field 'id' is missing on this line", file=file, row=line,
                             fix="every line needs id and response")
        qid = _id(obj["id"], file, line)
        if qid not in key:
            close = difflib.get_close_matches(qid, list(key), n=1, cutoff=0.6)
            raise InputError(f"id {qid!r} is not in the answer key", file=file, row=line,
                             fix=(f"did you mean {close[0]!r}? " if close else "")
                             + "answers must refer to the ids of the key file")
        if "response" not in obj:
            raise InputError("field 'response' is missing on this line", file=file, row=line,
                             fix='every line needs id and response ("" for an empty output)')
        resp = obj["response"]
        if resp is None or isinstance(resp, (dict, list, bool)):
            raise InputError(f"field 'response' is {'null' if resp is None else type(resp).__name__}, expected text",
                             file=file, row=line, fix='write "" for an empty model output')
        model = ""
        if has_model:
            m = obj.get("model")
            if m is None or not str(m).strip():
                raise InputError("field 'model' is missing or empty on this line", file=file, row=line,
                                 fix="give the model on every line, or on none")
            model = check_text(str(m).strip(), what="the model name", max_chars=NAME_MAX_CHARS, allow_newlines=False,
                               file=file, row=line)
        per = out.setdefault(model, {})
        if qid in per:
            raise InputError(f"id {qid!r} is answered twice" + (f" by model {model!r}" if model else "")
                             + f" (also line {per[qid][0]})", file=file, row=line,
                             fix="keep one answer per question (and per model)")
        per[qid] = (line, str(resp))
    return out


def read_answers(path: str | Path, key: dict[str, Question]) -> dict[str, dict[str, tuple[int, str]]]:
    from medeval.core.tables import require_columns

    header, rows = read_table_limited(path)
    require_columns(path, header, ["id", "response"], ["model"])
    return answers_from_rows(rows, key, str(path))
