"""webui/screen.py without a browser: what its styles and scripts are made of (issue 22 §2; the browser tests are
tests/test_browser_task_screen.py and tests/test_browser_adjudication.py)."""

from __future__ import annotations

import json
import re

import pytest

from webui import grade_screen, screen


@pytest.fixture
def drawn(monkeypatch):
    """What the module hands to ``st.html``: (body, unsafe_allow_javascript) per call."""
    calls: list[tuple[str, bool]] = []
    monkeypatch.setattr(screen.st, "html", lambda body, unsafe_allow_javascript=False: calls.append(
        (body, unsafe_allow_javascript)))
    return calls


def _cfg(body: str) -> dict:
    return json.loads(re.search(r"const cfg = (\{.*?\});", body).group(1))


def test_key_guard_uses_the_grade_pages_timing_and_browser_key_names(drawn):
    screen.key_guard("task", answer="opt_", skip="task_skip_", ready="taskReady", keys=["left", "t", "right", "S"])
    (body, js), = drawn
    assert js and body.startswith("<script>") and body.endswith("</script>")
    cfg = _cfg(body)
    assert cfg["settle"] == grade_screen.SETTLE_MS  # one rule for Grade and Rate & compare
    assert cfg["keys"] == sorted(["ArrowLeft", "ArrowRight", "t", "T", "s", "S"])
    assert (cfg["answer"], cfg["skip"], cfg["ready"]) == ("opt_", "task_skip_", "taskReady")
    assert cfg["note"] is None


def test_the_grade_page_uses_the_same_guard_with_its_flag_note(drawn, monkeypatch):
    monkeypatch.setattr(grade_screen.st, "html", lambda body, unsafe_allow_javascript=False: drawn.append(
        (body, unsafe_allow_javascript)))
    grade_screen.install()
    (guard, js), (css, css_js), (cues, cues_js) = drawn
    assert js and not css_js and not cues_js and "<script" not in css + cues
    cfg = _cfg(guard)
    assert cfg["name"] == "grade" and cfg["settle"] == screen.SETTLE_MS == grade_screen.SETTLE_MS
    assert cfg["keys"] == ["1", "2", "3", "S", "s"] and (cfg["answer"], cfg["skip"]) == ("grade_", "skip_")
    assert cfg["ready"] == "gradeReady"  # <body data-grade-ready="<key>">: the browser tests wait for it
    assert cfg["note"] == {"box": "gradeflag", "save": "Save flag", "cancel": "Cancel"}
    # the grade keys wait while a long text is unread (webui/reading.py); S answers nothing and never waits
    assert (cfg["hold"], cfg["cue"], cfg["free"]) == ("gradeHeld", "gradeCue", ["s"])
    assert 'body[data-grade-held]:not([data-grade-held=""]) .st-key-gradeform::before' in cues
    assert all(f'body[data-grade-cue="{r}"] .st-key-gradeform::before' in cues for r in ("soon", "twice", "held"))


def test_script_arguments_cannot_end_the_script_element(drawn):
    screen.focus('</script><img src=x onerror="alert(1)">')
    screen.keys_after_clicks("</script><b>x</b>")
    for body, _js in drawn:
        assert body.count("</script>") == 1 and body.endswith("</script>"), body  # only the closing tag
        assert "<\\/script>" in body  # the argument's "</" written as "<\/" inside the string literal


def test_styles_are_style_only_and_name_the_boxes_and_the_slot(drawn):
    screen.compact(boxes={"ctx_": screen.BOX_MAX, "side_": screen.SIDE_MAX}, wrap_buttons=("ask_",), slot="task_status")
    (body, js), = drawn
    assert not js and body.startswith("<style>") and body.rstrip().endswith("</style>")
    assert "<script" not in body
    assert '[class*="st-key-ctx_"] {max-height: ' + screen.BOX_MAX in body
    assert '[class*="st-key-side_"] {max-height: ' + screen.SIDE_MAX in body
    assert ".st-key-task_status {height: 2.6rem" in body
    assert "white-space: normal" in body and "text-overflow: clip" in body  # full option labels, wrapped
