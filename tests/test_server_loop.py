"""The web app's event loop is uvloop (issue 22 §4): requirements.txt pins it, and uvicorn picks it by itself
because Streamlit passes no ``loop`` option. With asyncio's own loop, one process served 30 annotators at 11 %
more CPU a grade, and a lone annotator grading back to back waited a median 44 ms instead of 7 ms
(bench/README.md, "Round three")."""

from __future__ import annotations

from pathlib import Path

import uvloop
from streamlit.web.server.starlette import starlette_server
from uvicorn.config import Config
from uvicorn.loops.auto import auto_loop_factory

from tests.conftest import ROOT


def test_uvicorn_serves_the_web_app_on_uvloop():
    assert "loop" not in starlette_server._get_uvicorn_config_kwargs()  # Streamlit leaves the choice to uvicorn
    assert Config(app=None).loop == "auto"
    loop = auto_loop_factory()()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()


def test_uvloop_is_a_pinned_requirement():
    pins = Path(ROOT, "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert f"uvloop=={uvloop.__version__}" in pins
