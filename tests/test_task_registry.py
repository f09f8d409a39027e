"""Task types are registered by one explicit call (``builtin.register_builtin``), not as a side effect of importing
their modules; the registry holds exactly the built-in types in the pages' order, and registering again is a no-op."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from medeval.annotation import tasks
from medeval.annotation.tasks import builtin, registry
from medeval.annotation.tasks.accr import AccuracyReliability
from medeval.annotation.tasks.pairwise import Preference
from medeval.annotation.tasks.rubric import RubricRating
from medeval.core.errors import MedevalError

TASKS_DIR = Path(tasks.__file__).resolve().parent


@pytest.fixture
def saved_registry():
    """The registry as it was, put back after the test (a test that registers a type must not leak it)."""
    before = dict(registry.REGISTRY)
    yield
    registry.REGISTRY.clear()
    registry.REGISTRY.update(before)


def test_the_registry_holds_exactly_the_builtin_types_in_page_order():
    assert list(tasks.REGISTRY) == ["rubric", "preference", "accr"]
    assert [type(t) for t in tasks.REGISTRY.values()] == [RubricRating, Preference, AccuracyReliability]
    assert builtin.BUILTIN_TYPES == (RubricRating, Preference, AccuracyReliability)
    assert tasks.REGISTRY is registry.REGISTRY
    assert [tasks.get(n).title for n in tasks.REGISTRY] == [
        "Rate responses (and the judge)", "Double-blind preference", "Fact-check reasons (AccR)"]


def test_registering_twice_changes_nothing(saved_registry):
    before = dict(registry.REGISTRY)
    assert builtin.register_builtin() == ("rubric", "preference", "accr")
    assert builtin.register_builtin() == ("rubric", "preference", "accr")
    assert registry.REGISTRY == before  # the same instances, not new ones
    assert all(registry.REGISTRY[k] is before[k] for k in before)
    assert registry.register(Preference) is Preference
    assert list(registry.REGISTRY) == ["rubric", "preference", "accr"]


def test_registration_from_an_empty_registry_gives_the_page_order(saved_registry):
    registry.REGISTRY.clear()
    with pytest.raises(MedevalError, match="unknown task type 'rubric'"):
        tasks.get("rubric")
    assert not tasks.is_task_kind("accr")
    builtin.register_builtin()
    assert list(registry.REGISTRY) == ["rubric", "preference", "accr"]
    assert tasks.is_task_kind("accr") and isinstance(tasks.get("rubric"), RubricRating)


def test_a_name_taken_by_another_class_or_an_empty_name_is_refused(saved_registry):
    class Impostor(RubricRating):
        pass

    class Nameless(tasks.TaskType):
        pass

    with pytest.raises(MedevalError, match="'rubric' is empty or taken"):
        registry.register(Impostor)
    with pytest.raises(MedevalError, match="'' is empty or taken"):
        registry.register(Nameless)
    with pytest.raises(MedevalError, match="not a TaskType subclass"):
        registry.register(dict)
    assert type(tasks.get("rubric")) is RubricRating and len(registry.REGISTRY) == 3


def test_a_new_type_registered_explicitly_comes_after_the_builtins(saved_registry):
    class Echo(tasks.TaskType):
        name = "echo"
        title = "Echo"

    assert registry.register(Echo) is Echo
    assert list(registry.REGISTRY) == ["rubric", "preference", "accr", "echo"]
    assert isinstance(tasks.get("echo"), Echo)


def test_no_type_module_registers_itself_on_import():
    """Only builtin.py calls register; a type module's source holds no call or decorator named register."""
    callers = []
    for path in sorted(TASKS_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Call):
                names.append(node.func)
            if isinstance(node, ast.ClassDef):
                names += node.decorator_list
            for f in names:
                n = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if n in ("register", "register_builtin"):
                    callers.append(path.name)
    assert sorted(set(callers)) == ["__init__.py", "builtin.py"]

