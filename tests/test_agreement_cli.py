"""`python -m medeval agreement`: the JSON contract, formats and clear errors on bad input."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, write

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers x 12 units, '.' = missing
K2011 = {
    "A": "1 2 3 3 2 1 4 1 2 . . .", "B": "1 2 3 3 2 2 4 1 2 5 . 3",
    "C": ". 3 3 3 2 3 4 2 2 5 1 .", "D": "1 2 3 3 2 4 4 1 2 5 1 .",
}


def _long_csv(path):
    lines = ["item,rater,value"]
    for rater, vals in K2011.items():
        for unit, v in enumerate(vals.split(), start=1):
            lines.append(f"u{unit},{rater},{'' if v == '.' else v}")
    return write(path, "\n".join(lines) + "\n")


def run(*args):
    return subprocess.run([sys.executable, "-m", "medeval", "agreement", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True)


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_json_contract_on_krippendorff_2011(tmp_path):
    f = _long_csv(tmp_path / "k.csv")
    out = {}
    for level in ("nominal", "ordinal", "interval", "ratio"):
        r = run(f, "--level", level, "--n-boot", "200")
        assert r.returncode == 0, r.stderr
        out[level] = json.loads(r.stdout)
    # published values: nominal .743, ordinal .815, interval .849, ratio .797 (Krippendorff 2011)
    assert round(out["nominal"]["krippendorff_alpha"]["value"], 3) == 0.743
    assert round(out["ordinal"]["krippendorff_alpha"]["value"], 3) == 0.815
    assert round(out["interval"]["krippendorff_alpha"]["value"], 3) == 0.849
    assert round(out["ratio"]["krippendorff_alpha"]["value"], 3) == 0.797
    j = out["interval"]
    assert j["n_items"] == 12 and j["n_raters"] == 4 and 0 < j["percent_agreement"] < 1
    lo, hi = j["krippendorff_alpha"]["ci95"]
    assert lo <= j["krippendorff_alpha"]["value"] <= hi
    assert set(j["icc"]) == {"ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"}
    assert all(set(v) >= {"value", "ci95"} for v in j["icc"].values())
    assert "listwise" in j["icc_missing"]  # items with a missing rating dropped for ICC, and said so
    assert "fleiss_kappa" in out["nominal"] and out["nominal"]["fleiss_kappa"]["value"] is None  # missing data
    assert "cohen_kappa" not in j  # four raters


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_two_raters_give_cohen_kappa_and_spearman(tmp_path):
    rows = ["item,rater,value"] + [f"{i},r1,{a}\n{i},r2,{b}" for i, (a, b) in
                                   enumerate([(0, 0), (1, 1), (2, 2), (1, 2), (0, 1), (2, 2), (1, 1), (0, 0)])]
    f = write(tmp_path / "two.csv", "\n".join(rows) + "\n")
    j = json.loads(run(f, "--level", "ordinal", "--categories", "0,1,2", "--n-boot", "0").stdout)
    assert set(j["cohen_kappa"]) == {"unweighted", "linear", "quadratic"}
    assert j["cohen_kappa"]["quadratic"]["value"] > j["cohen_kappa"]["unweighted"]["value"]
    assert set(j["spearman"]) >= {"rho", "p"} and j["spearman"]["rho"] > 0.5
    assert j["fleiss_kappa"]["value"] is not None  # complete ordinal data


@pytest.mark.slow  # runs python -m medeval in a subprocess
@pytest.mark.parametrize("fmt", ["csv", "md"])
def test_other_formats(tmp_path, fmt):
    r = run(_long_csv(tmp_path / "k.csv"), "--level", "nominal", "--format", fmt, "--n-boot", "0")
    assert r.returncode == 0 and "krippendorff_alpha_nominal" in r.stdout and "0.743" in r.stdout


@pytest.mark.slow  # runs python -m medeval in a subprocess
@pytest.mark.parametrize("content,args,expected", [
    ("item,judge,score\n1,a,1\n", ["--level", "nominal"], "column"),
    ("item,rater,value\n1,a,1\n1,a,2\n", ["--level", "nominal"], "twice"),
    ("item,rater,value\n1,a,high\n1,b,low\n", ["--level", "interval"], "not a number"),
    ("item,rater,value\n1,a,7\n1,b,1\n", ["--level", "ordinal", "--categories", "1,2,3"], "not"),
])
def test_bad_input_is_a_clear_error(tmp_path, content, args, expected):
    r = run(write(tmp_path / "bad.csv", content), *args)
    assert r.returncode == 1 and "Error:" in r.stderr and expected in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_undefined_is_said_not_hidden(tmp_path):
    f = write(tmp_path / "same.csv", "item,rater,value\n1,a,2\n1,b,2\n2,a,2\n2,b,2\n")
    j = json.loads(run(f, "--level", "interval", "--n-boot", "0").stdout)
    assert j["krippendorff_alpha"]["value"] is None and j["krippendorff_alpha"]["undefined_reason"]
    assert j["icc"]["ICC2"]["value"] is None and "identical" in j["icc"]["ICC2"]["undefined_reason"]
    assert j["spearman"]["rho"] is None and j["spearman"]["undefined_reason"]
