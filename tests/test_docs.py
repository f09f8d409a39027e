"""Project promises: settings documented, library free of Streamlit, CLI help complete."""

import subprocess
import sys
from pathlib import Path

import pytest

from medeval.core.settings import SETTINGS

ROOT = Path(__file__).resolve().parents[1]


def test_every_setting_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for s in SETTINGS:
        assert f"`{s.name}`" in readme, f"setting {s.name} is not documented in README.md"
        if s.option:
            assert s.option in readme, f"option {s.option} is not documented in README.md"


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_library_never_imports_streamlit():
    code = ("import importlib, pkgutil, sys, medeval\n"
            "for m in pkgutil.walk_packages(medeval.__path__, 'medeval.'):\n"
            "    if not m.name.endswith('__main__'):\n"
            "        importlib.import_module(m.name)\n"
            "assert 'streamlit' not in sys.modules, 'a medeval module imported streamlit'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in ci and "bash scripts/test.sh" in readme
    assert "bash scripts/start.sh" in readme


def test_requirements_pin_cpu_torch_and_everything():
    lines = [l for l in (ROOT / "requirements.txt").read_text().splitlines() if l and not l.startswith("#")]
    assert "torch==2.13.0" in lines
    assert all("==" in l for l in lines), [l for l in lines if "==" not in l]


def _names(path: Path) -> dict[str, set[str]]:
    """Top-level names of a Python file ("" key) and the names defined in each class body."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {"": set()}
    for node in tree.body:
        targets = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            targets = [node.name]
        elif isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        out[""].update(targets)
        if isinstance(node, ast.ClassDef):
            body = out.setdefault(node.name, set())
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    body.add(sub.name)
                elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                    body.add(sub.target.id)
                elif isinstance(sub, ast.Assign):
                    body.update(t.id for t in sub.targets if isinstance(t, ast.Name))
    return out


def test_fidelity_page_names_only_code_and_tests_that_exist():
    """docs/FIDELITY.md maps every paper computation to its code and its test: each `module.py:name` must exist under
    medeval/ and each `test_x.py::name` (or `::name`, continuing the last test file named on the line) in tests/."""
    import re

    text = (ROOT / "docs" / "FIDELITY.md").read_text(encoding="utf-8")
    module_re = re.compile(r"^([a-z_]+(?:/[a-z_0-9]+)+\.py)(?::([A-Za-z_]\w*(?:\.\w+)?))?$")
    test_re = re.compile(r"^(?:(test_\w+\.py))?((?:::)?\w+(?:::\w+)*)$")
    checked_modules = checked_tests = 0
    missing = []
    for line in text.splitlines():
        current_file, current_class = None, None
        for span in re.findall(r"`([^`]+)`", line):
            m = module_re.match(span)
            if m and not span.startswith("test_"):
                path = ROOT / "medeval" / m.group(1)
                if not path.exists():
                    missing.append(f"module {span}")
                    continue
                checked_modules += 1
                if m.group(2):
                    names = _names(path)
                    cls, _, attr = m.group(2).partition(".")
                    if cls not in names[""] or (attr and attr not in names.get(cls, set())):
                        missing.append(f"name {span}")
                continue
            t = test_re.match(span)
            if not t or "::" not in span or (t.group(1) is None and current_file is None):
                continue
            if t.group(1):
                current_file, current_class = t.group(1), None
            path = ROOT / "tests" / current_file
            if not path.exists():
                missing.append(f"test file {span}")
                continue
            names = _names(path)
            parts = [p for p in t.group(2).split("::") if p]
            if parts[0].startswith("Test") and parts[0] in names[""]:
                current_class, parts = parts[0], parts[1:]
            elif t.group(1):
                current_class = None
            for name in parts:
                checked_tests += 1
                if name not in names[""] and not (current_class and name in names.get(current_class, set())):
                    missing.append(f"test {current_file}::{name}")
    assert not missing, "docs/FIDELITY.md names what does not exist: " + "; ".join(missing)
    assert checked_modules >= 40 and checked_tests >= 100, (checked_modules, checked_tests)
