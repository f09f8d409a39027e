"""The task-type registry: what a type declares (settings, items, screen, results), TaskType, register, get."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import sqlite_utils

from medeval.core.errors import MedevalError
from medeval.core.i18n import _
from medeval.core.limits import (
    JSON_MAX_BYTES,
    LIST_MAX_ITEMS,
    NAME_MAX_CHARS,
    TEXT_MAX_CHARS,
    check_depth,
    check_number,
    check_row,
    check_text,
)


@dataclass(frozen=True)
class Option:
    """One answer to a question: the stored value, its label, the key that gives it, what it means."""

    value: str
    label: str
    key: str
    meaning: str = ""


@dataclass(frozen=True)
class Question:
    id: str  # unique within the item, e.g. "r2:fluency"
    part: int  # 1, 2, ...: a part opens once every question of the earlier parts has an answer
    target: str  # what is being rated, as the annotator sees it ("Response 2", "The judge's assessment")
    criterion: str  # "Fluency"
    prompt: str  # the question in full
    options: tuple[Option, ...]

    def option(self, value: str) -> Option:
        for o in self.options:
            if o.value == value:
                return o
        raise MedevalError(_("{value} is not an answer to {criterion}; use one of {values}").format(
            value=repr(value), criterion=repr(self.criterion), values=", ".join(o.value for o in self.options)))


@dataclass(frozen=True)
class Block:
    """A block of the screen. ``text`` is untrusted (model output, references): shown as plain text only."""

    label: str
    text: str
    part: int = 1  # shown once this part is open
    target: str = ""  # the question target it belongs to ("Response 2", "A"), if any
    fold: bool = False  # context the annotator may open when needed (earlier questions of a case)


@dataclass(frozen=True)
class Setting:
    """A campaign setting a researcher chooses (the pages and the CLI build their inputs from these)."""

    name: str
    label: str
    kind: str  # "choice" | "multichoice" | "int" | "text" | "json" (free text the type parses)
    default: Any = None
    choices: tuple = ()
    help: str = ""
    low: float | None = None  # "int": the smallest and largest value accepted (None: no bound)
    high: float | None = None
    labels: dict | None = None  # "choice": each choice in words, where its value is a code name ("automedeval")


@dataclass(frozen=True)
class ItemSpec:
    source: str  # unique within the campaign: where the item comes from (dataset, case, question, ...)
    payload: dict


@dataclass
class Section:
    """A part of a campaign's results: a heading, an explanation, tables (lists of rows) and figures."""

    title: str
    text: str = ""
    tables: dict[str, list[dict]] = field(default_factory=dict)
    numbers: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AnswerRow:
    """The latest answer of one annotator to one question of one item (researcher data)."""

    item_id: int
    annotator: str
    question: str
    value: str
    at: float
    guideline_version: int | None = None  # the guidelines on screen when it was given


class TaskType:
    """Base class of a task type; subclasses set the class attributes and override the methods."""

    name: str = ""
    title: str = ""
    description: str = ""  # for researchers: what the task measures
    instructions: str = ""  # for annotators: shown above every item

    def settings(self, db: sqlite_utils.Database) -> list[Setting]:
        return []

    def check_config(self, db: sqlite_utils.Database, config: dict) -> dict:
        """The settings filled in with defaults and validated; MedevalError says what to change."""
        out = {}
        for s in self.settings(db):
            v = config.get(s.name, s.default)
            what = f"{s.label} ({s.name})"
            if s.kind == "choice":
                if isinstance(v, str):
                    check_text(v, what=what, max_chars=NAME_MAX_CHARS, allow_newlines=False)
                if s.choices and v not in s.choices:
                    raise MedevalError(_("{setting}: {value} is not one of {choices}").format(
                        setting=s.label, value=_shown(v), choices=", ".join(map(str, s.choices))))
            if s.kind == "multichoice":
                if isinstance(v, str):
                    v = [v]
                v = list(v or [])
                if len(v) > LIST_MAX_ITEMS:
                    raise MedevalError(_("{setting}: {n} choices; the limit is {limit}").format(
                        setting=what, n=f"{len(v):,}", limit=f"{LIST_MAX_ITEMS:,}"))
                for x in v:
                    if isinstance(x, str):
                        check_text(x, what=what, max_chars=NAME_MAX_CHARS, allow_newlines=False)
                bad = [x for x in v if s.choices and x not in s.choices]
                if bad:
                    raise MedevalError(_("{setting}: {values} not among {choices}").format(
                        setting=s.label, values=", ".join(map(_shown, bad)), choices=", ".join(map(str, s.choices))))
            if s.kind == "int":
                v = check_number(v, what=what, low=s.low, high=s.high, integer=True)
            if s.kind == "text" and v is not None:
                v = check_text(v, what=what, max_chars=TEXT_MAX_CHARS)
            if s.kind == "json" and v is not None:
                if isinstance(v, str):
                    check_text(v, what=what, max_chars=JSON_MAX_BYTES)
                else:
                    check_depth(v, what=what)
                    check_row(v)
            out[s.name] = v
        unknown = set(config) - {s.name for s in self.settings(db)}
        if unknown:
            many = len(unknown) > 1
            raise MedevalError((_("unknown settings {names} for task type {task}; settings: {settings}") if many
                                else _("unknown setting {names} for task type {task}; settings: {settings}")).format(
                names=", ".join(sorted(_shown(u, 40) for u in unknown)), task=self.name,
                settings=", ".join(s.name for s in self.settings(db))))
        return out

    def build_items(self, db: sqlite_utils.Database, config: dict, rng: np.random.Generator) -> list[ItemSpec]:
        raise NotImplementedError

    def layout(self, payload: dict, rng: np.random.Generator) -> dict:
        """What differs per annotator (order of responses, left/right), drawn from the stored seed."""
        return {}

    def blocks(self, payload: dict, layout: dict) -> list[Block]:
        raise NotImplementedError

    def questions(self, payload: dict, layout: dict) -> list[Question]:
        raise NotImplementedError

    def results(self, campaign: dict, items: dict[int, dict], layouts: dict[tuple[int, str], dict],
                answers: list[AnswerRow]) -> list[Section]:
        raise NotImplementedError

    # gold items (medeval.annotation.gold.task_items): expected answers are written in a canonical layout

    def gold_layout(self, payload: dict) -> dict:
        """The canonical layout expected answers are written in (responses in the data's order, A on the left)."""
        return {}

    def canonical(self, payload: dict, layout: dict, question: str, value: str) -> tuple[str, str]:
        """A question id and answer as an annotator gave them under ``layout`` -> the same under
        :meth:`gold_layout` (so an answer can be compared with a gold item's expected one)."""
        return question, value

    def gold_pool(self, db: sqlite_utils.Database, config: dict) -> list[ItemSpec]:
        """Every item the campaign's settings could give, unsampled: where its gold items are chosen from."""
        return self.build_items(db, {**config, "max_items": 0}, np.random.default_rng(0))


def _shown(v, limit: int = NAME_MAX_CHARS) -> str:
    """``repr(v)``, cut short for a message."""
    r = repr(v)
    return r if len(r) <= limit else r[:limit] + "..."


REGISTRY: dict[str, TaskType] = {}  # name -> the type, in the order registered (the pages' order)


def register(cls: type[TaskType]) -> type[TaskType]:
    """Make a task type available to campaigns, the pages and the CLI (the built-in ones:
    :func:`medeval.annotation.tasks.builtin.register_builtin`). Registering the same class again changes
    nothing; another class under a name that is taken, or an empty name, is an error."""
    if not isinstance(cls, type) or not issubclass(cls, TaskType):
        raise MedevalError(f"{cls!r} is not a TaskType subclass")
    have = REGISTRY.get(cls.name)
    if have is not None and type(have) is cls:
        return cls
    if not cls.name or have is not None:
        raise MedevalError(f"task type name {cls.name!r} is empty or taken")
    REGISTRY[cls.name] = cls()
    return cls


def get(name: str) -> TaskType:
    if name not in REGISTRY:
        raise MedevalError(_("unknown task type {name}; task types: {types}").format(name=_shown(name, 60),
                                                                                   types=", ".join(REGISTRY)))
    return REGISTRY[name]


def is_task_kind(kind: str) -> bool:
    return kind in REGISTRY
