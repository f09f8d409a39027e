"""server.py (the web app's start) loads the metric plugins before it serves: a plugin named in MEDEVAL_PLUGINS
is registered in the web app's process, and a missing one stops the start with a message that names it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # starts Python processes

PLUGIN = '''
import medeval

medeval.register_metric(name="charlen", label="Length ratio", score=lambda r, c: min(len(r), len(c)) / max(len(r), len(c), 1),
                        aspect_types=("declarative",), scorer_id="charlen-v1", describe="shorter over longer length")
'''
CHECK = ("import runpy, sys; runpy.run_path('server.py'); from medeval.engine import registry; "
         "print('registered:', 'charlen' in registry.METRICS)")


def _start(tmp_path, plugins: str, **more: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **more, "MEDEVAL_PLUGINS": plugins, "MEDEVAL_DB": str(tmp_path / "a.db"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    return subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_web_app_start_registers_the_plugins(tmp_path):
    (tmp_path / "medeval_test_charlen.py").write_text(PLUGIN, encoding="utf-8")
    out = _start(tmp_path, "medeval_test_charlen")
    assert out.returncode == 0, out.stderr
    assert "registered: True" in out.stdout


def test_a_missing_plugin_stops_the_start_naming_it(tmp_path):
    out = _start(tmp_path, "medeval_test_nosuch")
    assert out.returncode != 0
    assert "'medeval_test_nosuch' could not be imported" in out.stderr
    assert "registered:" not in out.stdout


@pytest.mark.parametrize("name, value, message", [
    ("MEDEVAL_DEMO", "maybe", "MEDEVAL_DEMO must be 1 or 0"),
    ("MEDEVAL_TRUSTED_PROXIES", "*", "MEDEVAL_TRUSTED_PROXIES: '*' is not an IP address"),
    ("MEDEVAL_IDLE_TIMEOUT", "30 min", "MEDEVAL_IDLE_TIMEOUT must be a positive number of seconds"),
])
def test_a_malformed_setting_stops_the_start_naming_it(tmp_path, name, value, message):
    out = _start(tmp_path, "", **{name: value})
    assert out.returncode != 0
    assert message in out.stderr, out.stderr[-2000:]


def test_streamlits_agent_api_stops_the_start(tmp_path):
    # the agent API serves pages and media past the session cookie that the sign-in, websocket and media guards check;
    # set as `streamlit run` sets an option from the command line or STREAMLIT_SERVER_ENABLE_AGENT_API
    check = ("from streamlit import config; config.set_option('server.enableAgentApi', True); "
             "import runpy; runpy.run_path('server.py'); print('started')")
    env = {**os.environ, "MEDEVAL_DB": str(tmp_path / "a.db"), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "server.enableAgentApi is on" in out.stderr, out.stderr[-2000:]
    assert "started" not in out.stdout
