"""Issue 23 §7: bad numbers on the command line end in the project's one-line error (exit 1), never click's usage
error (exit 2) or a traceback; and an empty required text says "give the reason", not "give a the reason".

Every count option of the commands whose counts click used to check (``--k``, ``--n``, ``--per-interval``,
``--n-boot``) is tried with 0 and a negative value, plus the widths that overflowed (``5e-324``).
"""

from __future__ import annotations

import pytest

from medeval.core import limits
from medeval.core.errors import InputError
from tests.test_security_input import CREATE, fails, scored  # noqa: F401  (fixture)

RANDOM = ("campaign", "create-random", "--name", "v", "--annotators", "doc1,doc2,doc3")
ACTIVE = (*CREATE, "--sampling", "active")


@pytest.mark.parametrize("args, says", [
    ((*CREATE, "--width", "5e-324"), "--width 4.94066e-324 makes more than 1,000 intervals of rouge1; the limit is "
                                     "1,000 -- use a width of at least 0.001"),
    ((*CREATE, "--width", "2.2250738585072014e-308"), "makes more than 1,000 intervals of rouge1"),
    ((*CREATE, "--width", "0.0009"), "--width 0.0009 makes 1,111 intervals of rouge1; the limit is 1,000 -- use a "
                                     "width of at least 0.001"),
    ((*ACTIVE, "--width", "5e-324"), "makes more than 1,000 intervals of rouge1"),
    ((*CREATE, "--k", "0"), "--k must be a whole number in [1, 1000]; got 0"),
    ((*CREATE, "--k", "-3"), "--k must be a whole number in [1, 1000]; got -3"),
    ((*CREATE, "--per-interval", "0"), "--per-interval must be a whole number in [1, 100000]; got 0"),
    ((*ACTIVE, "--k", "0"), "--k must be a whole number in [1, 1000]; got 0"),
    ((*ACTIVE, "--per-interval", "-1"), "--per-interval must be a whole number in [1, 100000]; got -1"),
    ((*ACTIVE, "--round-size", "0"), "--round-size"),
    ((*ACTIVE, "--budget", "-5"), "--budget"),
    ((*RANDOM, "--k", "0"), "--k (annotators per item) must be a whole number in [1, 1000]; got 0"),
    ((*RANDOM, "--n", "0"), "--n (responses drawn) must be a whole number in [1, 100000]; got 0"),
    ((*RANDOM, "--n", "-150"), "--n (responses drawn) must be a whole number in [1, 100000]; got -150"),
], ids=["width-denormal", "width-min-normal", "width-below-0.001", "active-width-denormal", "k-0", "k-negative",
        "per-interval-0", "active-k-0", "active-per-interval-negative", "active-round-size-0",
        "active-budget-negative", "random-k-0", "random-n-0", "random-n-negative"])
def test_bad_counts_and_widths_are_one_line_errors(scored, args, says):  # noqa: F811
    assert says in fails(scored, *args)


def test_the_smallest_width_still_works(scored, tmp_path):  # noqa: F811
    """0.001 (1,000 intervals, the limit) is accepted: the minimum is the limit, not below it."""
    from click.testing import CliRunner

    from medeval.cli import main

    res = CliRunner().invoke(main, [*CREATE, "--width", "0.001", "--per-interval", "1", "--k", "2"],
                             env={"MEDEVAL_DB": str(scored)}, catch_exceptions=False)
    assert res.exit_code == 0 and "annotators each" in res.output, res.output


def test_score_batch_size_0_is_the_projects_error(scored):  # noqa: F811
    """It used to be click's usage error; and 0 must not fall back to the default silently."""
    assert "--batch-size must be a whole number in [1, inf); got 0" in fails(scored, "score", "--batch-size", "0")


def test_calibrate_n_boot_negative_is_the_projects_error(scored, tmp_path):  # noqa: F811
    from tests.conftest import write

    g = write(tmp_path / "g.csv", "metric,aspect_type,score,tier\nrouge1,enumerated,0.1,0\nrouge1,enumerated,0.9,2\n")
    assert "--n-boot must be a whole number in [0, 10000]; got -1" in fails(scored, "calibrate", g, "--n-boot", "-1")


@pytest.mark.parametrize("what, fix", [
    ("the reason (the guideline's one-line why)", "give the reason (the guideline's one-line why)"),
    ("the reason", "give the reason"),
    ("campaign name", "give a campaign name"),
    ("answer", "give an answer"),
    ("A rater's note", "give A rater's note"),
    ("病名", "give a 病名"),
])
def test_an_empty_required_text_says_what_to_give_without_a_second_article(what, fix):
    with pytest.raises(InputError) as e:
        limits.check_text("  \n ", what=what, required=True)
    assert str(e.value).endswith(f"-- {fix}") and "a the" not in str(e.value)
