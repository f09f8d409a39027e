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
