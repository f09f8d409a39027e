"""The shape of the gold package (issue 25 §1): one package ``medeval.annotation.gold`` for both families, its
public names re-exported, the old module paths gone, the tier flow free of the task modules, and the two
families told apart only by their backend."""

from __future__ import annotations

import importlib
import pathlib
import subprocess
import sys

import pytest

from medeval.annotation import gold
from medeval.annotation.gold import backends, task_backend
from tests.conftest import ROOT
from tests.test_architecture import GRAPH

MODULES = ("settings", "items", "task_items", "backends", "task_backend", "qualification", "hidden", "answers",
           "results")


@pytest.mark.parametrize("old", ["medeval.annotation.gold_items", "medeval.annotation.gold_results",
                                 "medeval.annotation.tasks.gold", "medeval.annotation.tasks.gold_items"])
def test_the_old_module_paths_are_gone(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_every_public_name_is_re_exported_from_its_module():
    assert len(gold.__all__) == len(set(gold.__all__))
    homes = {}
    for name in gold.__all__:
        obj = getattr(gold, name)
        home = [m for m in MODULES if getattr(importlib.import_module(f"medeval.annotation.gold.{m}"), name, None)
                is obj]
        assert home, f"gold.{name} comes from none of the package's modules"
        homes[name] = home
    public = {n for m in MODULES for n, v in vars(importlib.import_module(f"medeval.annotation.gold.{m}")).items()
              if callable(v) and not n.startswith("_") and getattr(v, "__module__", "") == f"medeval.annotation.gold.{m}"}
    assert public - set(gold.__all__) == set(), "a public function or class of the package is not re-exported"
    first = {name: home[0] for name, home in homes.items()}  # (the defining module comes first in MODULES' order)
    assert (first["submit_gold"], first["TASK"], first["TIER"], first["review"]) == (
        "answers", "task_backend", "backends", "qualification")


@pytest.mark.parametrize("module", ["settings", "items", "backends", "qualification", "hidden"])
def test_the_tier_flow_imports_nothing_of_the_task_modules(module):
    deps = GRAPH[f"medeval.annotation.gold.{module}"]
    assert not [d for d in deps if d.startswith("medeval.annotation.tasks")], deps
    assert "medeval.annotation.gold.task_backend" not in deps and "medeval.annotation.gold.task_items" not in deps


def test_the_task_modules_reach_gold_only_through_the_package():
    for mod, deps in GRAPH.items():
        if mod.startswith("medeval.annotation.tasks"):
            inner = [d for d in deps if d.startswith("medeval.annotation.gold.")]
            assert not inner, f"{mod} imports {inner}: import the package (`from medeval.annotation import gold`)"


@pytest.mark.slow  # a fresh interpreter per case (the project marks tests that start processes slow)
@pytest.mark.parametrize("first", ["medeval.annotation.gold", "medeval.annotation.campaigns",
                                   "medeval.annotation.tasks", "medeval.annotation.gold.answers",
                                   "medeval.annotation.gold.task_items", "medeval.cli.gold"])
def test_the_package_imports_whichever_module_comes_first(first):
    """The task modules' imports reach ``annotation.campaigns``, which takes the qualification's names from this
    package while it loads: any first import must work in a fresh interpreter."""
    r = subprocess.run([sys.executable, "-c", f"import {first}; from medeval.annotation import gold; "
                        "print(gold.TASK.family, gold.TIER.family)"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-800:]
    assert r.stdout.split() == ["task", "tier"]


def test_the_campaigns_package_takes_no_name_from_gold_while_it_loads():
    """Why any order of gold's own imports works: ``annotation.campaigns`` (reached by the task modules' imports
    while gold loads) imports no name *from* gold at load time -- it offers gold's qualification names through a
    module ``__getattr__`` -- so a half-loaded gold package is never asked for a name it has not defined yet."""
    import ast

    from medeval.annotation import campaigns

    tree = ast.parse(pathlib.Path(campaigns.__file__).read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.ImportFrom)]
    assert not [n.module for n in top if n.module and n.module.startswith("medeval.annotation.gold")]
    assert campaigns.QualificationPending is gold.QualificationPending
    assert campaigns.start_attempt is gold.start_attempt and campaigns.qualification_state is gold.qualification_state
    with pytest.raises(AttributeError, match="no_such_name"):
        campaigns.no_such_name  # noqa: B018


def test_both_families_answer_the_same_interface_with_their_own_tables():
    tier, task = gold.TIER, gold.TASK
    assert isinstance(task, gold.Backend) and type(task) is task_backend.TaskBackend and type(tier) is backends.Backend
    for attr in ("family", "tables", "answers", "action", "stale", "in_order", "closed"):
        assert getattr(tier, attr) != getattr(task, attr), attr
    assert set(tier.tables).isdisjoint(task.tables) and tier.answers not in task.tables
    assert (tier.family, tier.action, tier.answers) == ("tier", "grade", "gold_answers")
    assert (task.family, task.action, task.answers) == ("task", "task.answer", "task_gold_answers")
    for method in ("outcome", "real_counts", "hidden_started", "hidden_skipped", "hidden_rows", "review_rows"):
        assert getattr(type(task), method) is not getattr(gold.Backend, method), f"TaskBackend keeps the tier {method}"
    assert issubclass(tier.stale, Exception) and issubclass(task.stale, Exception)
