"""Settings declared once (issue 25 §3): each typed, parsed by its type's one parser with a clear error; the CLI
options built from the declarations (option > environment > default); the README's table generated from them."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from medeval.cli import main
from medeval.core import settings
from medeval.core.errors import MedevalError
from medeval.core.settings import SETTINGS, TYPES, Setting

ROOT = Path(__file__).resolve().parents[1]
MARK_START, MARK_END = "<!-- settings-table:start", "<!-- settings-table:end -->"


def refused(name: str, raw: str, monkeypatch) -> str:
    monkeypatch.setenv(name, raw)
    with pytest.raises(MedevalError) as e:
        settings.value(name)
    message = str(e.value)
    assert name in message and repr(raw) in message, message  # names the variable and what it got
    return message


# ---------------------------------------------------------------- one parser per type

def test_every_declaration_is_typed_and_its_default_is_valid():
    assert {s.type for s in SETTINGS} >= {"str", "int", "bool", "choice", "seconds", "path", "list"}
    for s in SETTINGS:
        assert s.type in TYPES, s.name
        assert s.help and "\n" not in s.help, f"{s.name}: one line of help (the README's meaning)"
        s.parse(s.default)  # raises if a default does not pass its own check
    assert len({s.name for s in SETTINGS}) == len(SETTINGS)
    assert len({s.option for s in SETTINGS if s.option}) == len([s for s in SETTINGS if s.option])


def test_a_declaration_with_an_unknown_type_or_stray_choices_is_refused():
    with pytest.raises(ValueError, match="unknown type 'number'"):
        Setting("MEDEVAL_NEW", "1", "a new one", type="number")
    with pytest.raises(ValueError, match="choices go with type 'choice'"):
        Setting("MEDEVAL_NEW", "a", "a new one", choices=("a", "b"))
    with pytest.raises(ValueError, match="choices go with type 'choice'"):
        Setting("MEDEVAL_NEW", "a", "a new one", type="choice")


def test_an_unknown_name_is_a_programming_error_with_close_names():
    with pytest.raises(KeyError, match="did you mean MEDEVAL_BATCH_SIZE"):
        settings.value("MEDEVAL_BATCHSIZE")


@pytest.mark.parametrize("raw", ["30 min", "-5", "0", "1e400", "yes", "nan", "inf"])
def test_seconds_refuse_what_is_not_a_positive_finite_number(monkeypatch, raw):
    message = refused("MEDEVAL_IDLE_TIMEOUT", raw, monkeypatch)
    assert message == ("MEDEVAL_IDLE_TIMEOUT must be a positive number of seconds (e.g. 1800 for 30 minutes), "
                       f"not {raw!r}")


def test_seconds_parse(monkeypatch):
    monkeypatch.setenv("MEDEVAL_SESSION_LIFETIME", " 90.5 ")
    assert settings.session_lifetime() == 90.5
    monkeypatch.setenv("MEDEVAL_IDLE_TIMEOUT", "600")
    assert settings.idle_timeout() == 600.0 and isinstance(settings.idle_timeout(), float)


@pytest.mark.parametrize("raw", ["30 min", "-5", "0", "1e400", "yes", "2.5", "2,000"])
def test_int_refuses_fractions_words_and_out_of_range(monkeypatch, raw):
    message = refused("MEDEVAL_BATCH_SIZE", raw, monkeypatch)
    assert "must be a whole number of at least 1 (e.g. 500)" in message


def test_int_parses_and_keeps_its_upper_bound(monkeypatch):
    monkeypatch.setenv("MEDEVAL_BATCH_SIZE", " 500 ")
    assert settings.value("MEDEVAL_BATCH_SIZE") == 500
    monkeypatch.setenv("MEDEVAL_PORT", "443")
    assert settings.value("MEDEVAL_PORT") == 443
    assert "from 1 to 65535" in refused("MEDEVAL_PORT", "65536", monkeypatch)


@pytest.mark.parametrize("raw", ["1e400", "-5", "nan", "30 min", "yes", "1.5"])
def test_float_refuses_infinite_and_out_of_range(raw):
    share = Setting("MEDEVAL_SHARE", "0.1", "a share", type="float", low=0, high=1)
    with pytest.raises(MedevalError, match=r"MEDEVAL_SHARE must be a number from 0 to 1 \(e\.g\. 0\.1\), not "):
        share.parse(raw)


def test_float_parses():
    share = Setting("MEDEVAL_SHARE", "0.1", "a share", type="float", low=0, high=1)
    assert share.parse("0.25") == 0.25 and share.parse("") == 0.1 and share.parse(None) == 0.1


@pytest.mark.parametrize("raw, expected", [("yes", True), ("1", True), ("ON", True), (" true ", True),
                                           ("no", False), ("0", False), ("off", False), ("False", False)])
def test_bool_parses_the_usual_words(monkeypatch, raw, expected):
    monkeypatch.setenv("MEDEVAL_DEMO", raw)
    assert settings.value("MEDEVAL_DEMO") is expected


@pytest.mark.parametrize("raw", ["30 min", "-5", "1e400", "maybe", "2"])
def test_bool_refuses_anything_else(monkeypatch, raw):
    assert refused("MEDEVAL_DEMO", raw, monkeypatch) == f"MEDEVAL_DEMO must be 1 or 0 (on or off), not {raw!r}"


def test_choice_takes_its_choices_exactly_and_names_them(monkeypatch):
    monkeypatch.setenv("MEDEVAL_PASSWORD_HASH_PROFILE", " test-only ")
    assert settings.password_hash_profile() == "test-only"
    assert refused("MEDEVAL_PASSWORD_HASH_PROFILE", "Test-Only", monkeypatch) == \
        "MEDEVAL_PASSWORD_HASH_PROFILE must be one of production, test-only, not 'Test-Only'"
    assert refused("MEDEVAL_EMBEDDING_DEVICE", "gpu", monkeypatch) == \
        "MEDEVAL_EMBEDDING_DEVICE must be one of cpu, cuda, mps, auto, not 'gpu'"
    assert "one of production, test-only" in refused("MEDEVAL_PASSWORD_HASH_PROFILE", "yes", monkeypatch)


def test_path_refuses_a_nul_byte(monkeypatch):
    monkeypatch.setenv("MEDEVAL_DB", "/srv/medeval/prod.db")
    assert settings.db_path() == "/srv/medeval/prod.db"
    db = Setting("MEDEVAL_DB2", "a.db", "a file", type="path", example="/srv/x.db")
    with pytest.raises(MedevalError, match=r"MEDEVAL_DB2 must be a file or folder path \(no NUL byte\) "
                                           r"\(e\.g\. /srv/x\.db\), not 'a\\x00b\.db'"):
        db.parse("a\x00b.db")


@pytest.mark.parametrize("raw", ["3.5, x", "1e400", "3.5,,yes", "30 min"])
def test_a_list_of_numbers_refuses_a_word_or_an_infinity(monkeypatch, raw):
    message = refused("MEDEVAL_LEVEL_BANDS", raw, monkeypatch)
    assert "must be numbers separated by commas (e.g. 3.5,3.0,2.0)" in message


def test_lists_parse_and_check_each_item(monkeypatch):
    monkeypatch.setenv("MEDEVAL_LEVEL_BANDS", "4, 2.5,")
    assert settings.value("MEDEVAL_LEVEL_BANDS") == (4.0, 2.5)
    monkeypatch.setenv("MEDEVAL_PLUGINS", " mylab.dice , mylab.bertscore")
    assert settings.value("MEDEVAL_PLUGINS") == ("mylab.dice", "mylab.bertscore")
    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", "10.0.8.0/24, ::1")
    assert settings.trusted_proxies() == ("10.0.8.0/24", "::1")
    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", "10.0.8.5, proxy.hospital.lan")
    with pytest.raises(MedevalError, match="'proxy.hospital.lan' is not an IP address or network"):
        settings.trusted_proxies()


# ---------------------------------------------------------------- environment over default, given over both

def test_the_environment_overrides_the_default_and_empty_means_unset(monkeypatch):
    monkeypatch.delenv("MEDEVAL_BATCH_SIZE", raising=False)
    assert settings.value("MEDEVAL_BATCH_SIZE") == 2000
    monkeypatch.setenv("MEDEVAL_BATCH_SIZE", "250")
    assert settings.value("MEDEVAL_BATCH_SIZE") == 250
    assert settings.value("MEDEVAL_BATCH_SIZE", "75") == 75  # given (an option) over the environment
    for empty in ("", "   "):
        monkeypatch.setenv("MEDEVAL_BATCH_SIZE", empty)
        assert settings.value("MEDEVAL_BATCH_SIZE") == 2000
    monkeypatch.setenv("MEDEVAL_PASSWORD_HASH_PROFILE", "")
    assert settings.password_hash_profile() == "production"
    assert settings.value("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", False) is False  # a flag's bool is taken as it is


# ---------------------------------------------------------------- CLI options from the declarations

def _commands(group=main, prefix=""):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # (the top level imports each command's module here)
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", cmd


# options that share a setting's name on purpose but are not that setting
NOT_THE_SETTING = {
    ("thresholds adopt", "--embedding-model"): "the model id the copied set is for: required, never the setting",
    ("exam-score", "--db"): "optional: without it no database is opened (no fallback to MEDEVAL_DB)",
}


def test_every_option_that_mirrors_a_setting_is_built_from_its_declaration():
    by_option = {}
    for s in SETTINGS:
        if s.option:
            for opt in s.option.split("/"):
                by_option[opt] = s
    seen = set()
    for name, cmd in _commands():
        for p in cmd.params:
            s = next((by_option[o] for o in (*p.opts, *p.secondary_opts) if o in by_option), None)
            if (name, p.opts[0]) in NOT_THE_SETTING:
                continue
            if s is None:
                assert not (p.envvar or "").startswith("MEDEVAL_"), f"{name} {p.opts}: reads {p.envvar}, not declared"
                continue
            seen.add(s.name)
            assert p.envvar == s.name, f"`medeval {name}` {p.opts[0]} does not read {s.name}"
            assert p.help == settings.plain(s.help), f"`medeval {name}` {p.opts[0]}: help written by hand"
            assert p.show_envvar and p.show_default, f"`medeval {name}` {p.opts[0]}"
    assert seen >= {"MEDEVAL_DB", "MEDEVAL_BATCH_SIZE", "MEDEVAL_EMBEDDING_DEVICE", "MEDEVAL_EMBEDDING_MODEL",
                    "MEDEVAL_EMBEDDING_WORKERS", "MEDEVAL_TRADITIONAL_TO_SIMPLIFIED"}


def test_an_options_help_says_its_variable_and_default():
    res = CliRunner().invoke(main, ["score", "--help"], terminal_width=400)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert ("responses scored and committed per chunk by score [env var: MEDEVAL_BATCH_SIZE; default: 2000]"
            in text)
    assert "[env var: MEDEVAL_DB; default: annotations.db]" in text


@pytest.fixture
def score_calls(monkeypatch):
    """`medeval score` with score_db replaced by a recorder: what the command hands the library."""
    from medeval.engine import scoring

    calls = []

    def fake(db, **kwargs):
        calls.append(kwargs)
        return scoring.ScoreSummary()

    monkeypatch.setattr(scoring, "score_db", fake)
    return calls


def _score(tmp_path, *args, **env):
    env = {"MEDEVAL_BATCH_SIZE": None, "MEDEVAL_TRADITIONAL_TO_SIMPLIFIED": None, **env}
    return CliRunner().invoke(main, ["score", "--db", str(tmp_path / "s.db"), "--metrics", "bleu1", "--no-grade",
                                     "--no-progress", *args], env=env, catch_exceptions=False)


def test_score_takes_the_option_over_the_environment_over_the_default(tmp_path, score_calls):
    assert _score(tmp_path).exit_code == 0
    assert _score(tmp_path, MEDEVAL_BATCH_SIZE="300", MEDEVAL_TRADITIONAL_TO_SIMPLIFIED="0").exit_code == 0
    assert _score(tmp_path, "--batch-size", "40", "--traditional-to-simplified",
                  MEDEVAL_BATCH_SIZE="300", MEDEVAL_TRADITIONAL_TO_SIMPLIFIED="0").exit_code == 0
    assert [(c["batch_size"], c["t2s"]) for c in score_calls] == [(2000, True), (300, False), (40, True)]


def test_a_bad_batch_size_keeps_its_one_line_error(tmp_path, score_calls):
    res = _score(tmp_path, MEDEVAL_BATCH_SIZE="0")
    assert res.exit_code == 1 and "--batch-size must be a whole number in [1, inf); got 0" in res.stderr
    assert score_calls == [] and not (tmp_path / "s.db").exists()


def test_demo_takes_the_device_as_a_parameter_not_through_the_environment(tmp_path, monkeypatch):
    import os

    from medeval.demo import build

    seen = []

    def fake_build(db, folder, **kwargs):
        seen.append((kwargs["device"], kwargs["embedding_model"], os.environ.get("MEDEVAL_EMBEDDING_DEVICE")))
        return {"import": [], "scores_added": 0, "threshold_version": 1, "embedding_model": "x", "campaign": 1}

    monkeypatch.setattr(build, "build_demo", fake_build)
    runner = CliRunner()
    args = ["demo", "--db", str(tmp_path / "d.db")]
    assert runner.invoke(main, args, env={"MEDEVAL_EMBEDDING_DEVICE": None, "MEDEVAL_EMBEDDING_MODEL": None},
                         catch_exceptions=False).exit_code == 0
    assert runner.invoke(main, [*args, "--device", "cpu", "--embedding-model", "minilm"],
                         env={"MEDEVAL_EMBEDDING_DEVICE": "auto", "MEDEVAL_EMBEDDING_MODEL": "use-multilingual"},
                         catch_exceptions=False).exit_code == 0
    first, second = seen
    assert first[0] in ("cpu", "cuda") and first[1:] == ("use-multilingual", None)  # auto, resolved
    assert second == ("cpu", "minilm", "auto")  # the option wins; the environment is left as it was


# ---------------------------------------------------------------- `medeval settings`

def test_the_settings_command_checks_values_and_never_shows_the_secret(monkeypatch):
    runner = CliRunner()
    res = runner.invoke(main, ["settings"], env={"MEDEVAL_SECRET_KEY": "s3cret-value", "MEDEVAL_PORT": "8600",
                                                "MEDEVAL_IDLE_TIMEOUT": None})
    assert res.exit_code == 0, res.output
    assert "s3cret-value" not in res.output and "MEDEVAL_SECRET_KEY=(set)\t# environment" in res.output
    assert "MEDEVAL_PORT=8600\t# environment; option --server.port" in res.output
    assert "MEDEVAL_IDLE_TIMEOUT=1800\t# default" in res.output
    res = runner.invoke(main, ["settings"], env={"MEDEVAL_IDLE_TIMEOUT": "30 min"})
    assert res.exit_code == 1
    assert "Error: 1 setting(s) not valid: MEDEVAL_IDLE_TIMEOUT must be a positive number of seconds" in res.stderr


# ---------------------------------------------------------------- the README's table, and no second declaration

def test_the_readme_settings_table_is_the_generated_one():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(MARK_START) == 1 and readme.count(MARK_END) == 1, "the table's markers are missing"
    start = readme.index("\n", readme.index(MARK_START)) + 1
    table = readme[start:readme.index(MARK_END)]
    assert table == settings.markdown_table(), (
        "README.md's settings table differs from medeval/core/settings.py: regenerate it with "
        "`python -m medeval settings --markdown` and paste it between the settings-table markers")
    res = CliRunner().invoke(main, ["settings", "--markdown"])
    assert res.exit_code == 0 and res.output == table


WRITES = re.compile(r"os\.environ\[\s*['\"]MEDEVAL_\w+['\"]\s*\]\s*=(?!=)"
                    r"|environ\.(?:setdefault|update|pop)\(\s*['\"]?MEDEVAL_|os\.putenv\(\s*['\"]MEDEVAL_"
                    r"|environ\.update\([^)]*MEDEVAL_")


def test_the_write_check_catches_the_old_demo_code():
    old = ('    os.environ["MEDEVAL_EMBEDDING_DEVICE"] = device  # build_demo scores with the setting\'s device\n'
           '            os.environ.pop("MEDEVAL_EMBEDDING_DEVICE", None)\n')
    assert len(WRITES.findall(old)) == 2
    assert not WRITES.findall('if os.environ["MEDEVAL_DB"] == x:\n    settings.get("MEDEVAL_DB")\n')


def test_the_library_never_sets_a_medeval_setting_in_the_environment():
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in sorted((ROOT / "medeval").rglob("*.py"))
             for m in WRITES.finditer(p.read_text(encoding="utf-8"))]
    assert not found, "settings are passed as parameters, not through os.environ: " + "; ".join(found)


def test_every_variable_the_code_reads_is_declared():
    """MEDEVAL_TEST_* are the test suite's hooks (scripts/test.sh's workers, the browser tests' slow server)."""
    declared = {s.name for s in SETTINGS}
    files = [*(ROOT / "medeval").rglob("*.py"), *(ROOT / "webui").rglob("*.py"), *(ROOT / "app_pages").rglob("*.py"),
             *(ROOT / "scripts").rglob("*.sh"), *(ROOT / "scripts").rglob("*.py"), ROOT / "app.py", ROOT / "server.py"]
    used = {}
    for p in files:
        for name in re.findall(r"\bMEDEVAL_[A-Z0-9_]*[A-Z0-9]\b", p.read_text(encoding="utf-8")):
            if not name.startswith("MEDEVAL_TEST_"):
                used.setdefault(name, str(p.relative_to(ROOT)))
    missing = {n: where for n, where in used.items() if n not in declared}
    assert not missing, f"read but not declared in medeval/core/settings.py: {missing}"
    assert set(used) >= {"MEDEVAL_DB", "MEDEVAL_RUN_DIR", "MEDEVAL_SERVE_WAIT_S", "MEDEVAL_IDLE_TIMEOUT"}


@pytest.mark.parametrize("raw", ["3.5,3.0,2.0", "4, 2.5", "4, 2.5,", " 10 ", "9,8,7,6,5,4,3,2,1", "3.5,,2", ",3.5,2",
                                 "3.5, 3.5", "3.0,3.5", "11,2", "-1", "3.5, x", "1e400", "nan", "９,８",
                                 "10,9,8,7,6,5,4,3,2,1", "3.5;3.0", ""])
def test_the_start_check_and_the_leaderboard_read_the_level_bands_alike(monkeypatch, raw):
    """One parser for ``MEDEVAL_LEVEL_BANDS``: what the web app's start check (``settings.value``) lets through, the
    leaderboard (``totals.level_bands``) uses, and what one refuses the other refuses too (issue 25 §3)."""
    from medeval.engine import totals

    monkeypatch.setenv("MEDEVAL_LEVEL_BANDS", raw)
    totals.parse_level_bands.cache_clear()
    try:
        started = settings.value("MEDEVAL_LEVEL_BANDS")
    except MedevalError as e:
        started = e
    try:
        used = totals.level_bands()
    except MedevalError as e:
        used = e
    assert isinstance(started, MedevalError) == isinstance(used, MedevalError), (started, used)
    if isinstance(used, MedevalError):
        assert "MEDEVAL_LEVEL_BANDS must be" in str(started) and repr(raw) in str(started)
        assert "must be decreasing total scores" in str(used)
    else:
        assert started == used and list(used) == sorted(used, reverse=True)
