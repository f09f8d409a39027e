#!/usr/bin/env python
"""Readers of user- and file-supplied text in linear time: the worst inputs found for each, timed at 1k, 4k and 16k
characters and at the length limit (20,000 characters, ``medeval.core.limits.TEXT_MAX_CHARS``).

    .venv/bin/python bench/bench_readers.py            # full run: about a minute on 2 cores
    .venv/bin/python bench/bench_readers.py --quick    # fewer families and repeats: about 20 s
    .venv/bin/python bench/bench_readers.py --json bench/out/readers.json
    .venv/bin/python bench/bench_readers.py --only exam,judge

For every reader (post-processing of each aspect type, the prompt pattern, lead-ins, entity splitting, severity
levels, tokenisation, OpenCC, exam answer extraction, fact-check verdicts, judge scores, the judge's numbers on
screen, safe Markdown) the script generates families of hostile inputs -- a long run of one character (spaces,
brackets, digits, markup), a repeated token (correction phrases 不对 / 等等 / actually, labels, list markers,
mixed scripts), a word + a long run + a word, random mixtures -- plus what a security review reported. It times
every family once at 2,000 characters (safe Markdown: at the limit, each markup token diluted to the densest text
that is still parsed), keeps the slowest few, and times those at 1k, 4k, 16k and 20k characters: best of several
runs, a small input looped until 20 ms have passed. Per reader the table gives the slowest family at the limit, its
times, its growth exponent (the log-log slope of the time from 1k to 16k: 1 is linear, 2 quadratic; the goal is at
most 1.2, judged when 16k characters take a millisecond or more -- below, the slope mostly measures fixed costs and
caches) and whether it meets 0.2 s at the limit.

The second table shows what each reported input reads as now (a Severity Level of 20,000 digits is no level, not
``inf``). Progress goes to stderr; the machine, the load average and the tables to stdout. The exit status is 1
when a reader misses the goal.
"""

from __future__ import annotations

import time

_T_PROCESS = time.perf_counter()  # before the imports: the total includes them

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.benchlib import cpu_model, finish, loadavg, log, table_lines  # noqa: E402
from medeval.annotation.cases.judge_scores import read_judge_scores  # noqa: E402
from medeval.annotation.tasks.mentions import relabel  # noqa: E402
from medeval.core.chinese import parse_int, to_simplified  # noqa: E402
from medeval.core.errors import InputError, MedevalError  # noqa: E402
from medeval.core.limits import TEXT_MAX_CHARS  # noqa: E402
from medeval.core.safe_markdown import WORK_BUDGET, safe_markdown, work  # noqa: E402
from medeval.engine.aspects import BY_NAME, resolve_aspect  # noqa: E402
from medeval.engine.postprocess import (extract_answer, process, severity_level, split_entities,  # noqa: E402
                                        strip_lead_in)
from medeval.engine.tokenize import scoring_tokenizer, tokenize  # noqa: E402
from medeval.stats.exam import cmb_match_choice  # noqa: E402
from medeval.stats.exam import extract_answer as exam_answer  # noqa: E402
from medeval.stats.factcheck.verdict import parse_verdict  # noqa: E402

SIZES = (1000, 4000, 16000)
LIMIT = TEXT_MAX_CHARS
SCREEN = 2000
GOAL_SECONDS, GOAL_SLOPE = 0.2, 1.2
SLOPE_FROM = 0.001  # the slope counts towards the goal when 16k characters take at least this long
SEED = 20240611
SYMPTOMS, EXAMS, SEVERITY = BY_NAME["Primary Symptoms"], BY_NAME["Physical Examinations"], BY_NAME["Severity Level"]
OPTIONS = {"A": "小叶型肺炎", "B": "肺脓肿", "C": "继发性肺结核", "D": "原发性肺结核", "E": "急性阑尾炎"}
MODES = {"full": {"top": 4, "repeats": 3, "fills": 10, "random": 6},
         "quick": {"top": 2, "repeats": 2, "fills": 4, "random": 2}}


def _judge(text: str):
    try:
        return read_judge_scores(text, n_responses=2)
    except InputError as e:  # two scores for one response, or two scales: a reading too
        return e


def _aspect(text: str):
    try:
        return resolve_aspect(text)
    except MedevalError as e:  # an unknown name, with suggestions
        return e


_T2S = scoring_tokenizer(True)
# reader -> (call, the words its own hostile inputs are built from)
READERS = {
    "process: enumerated aspect": (lambda t: process(t, "感冒", SYMPTOMS),
                                   ["感冒的症状为", "主要症状为", "咳嗽", "咳嗽(更正:", "和", "1. ", "等"]),
    "process: declarative aspect": (lambda t: process(t, "感冒", EXAMS), ["感冒的体格检查为", "体格检查：", "查体"]),
    "process: numeric (Severity Level)": (lambda t: process(t, "感冒", SEVERITY), ["危重等级为", "level ", "二级", "3-"]),
    "process: reference": (lambda t: process(t, "感冒", SYMPTOMS, is_reference=True), ["咳嗽", "咳嗽(更正:"]),
    "extract_answer (prompt pattern)": (lambda t: extract_answer(t, "感冒", SYMPTOMS),
                                        ["感冒的", "感冒", "symptoms of 感冒 are", "the main symptoms "]),
    "strip_lead_in (lead-ins)": (lambda t: strip_lead_in(t, SYMPTOMS),
                                 ["主要症状为", "The main symptoms of", "i think", "该病的", "以下是", "我认为，"]),
    "split_entities": (split_entities, ["咳嗽(更正:", "(", "和", "and ", "1. ", "、"]),
    "severity_level": (severity_level, ["1", "level", "level 2 or", "二", "3级", "第", "iv"]),
    "tokenize": (tokenize, ["10⁹/L", "µg", "HbA1c≥", "α", "１２"]),
    "tokenize + OpenCC (scoring)": (_T2S, ["高血壓", "醫生", "說法正確"]),
    "to_simplified (OpenCC)": (to_simplified, ["高血壓", "乾燥", "後"]),
    "parse_int": (parse_int, ["1", "十", "二十五"]),
    "exam extract_answer (letters)": (lambda t: exam_answer(t, "ABCDE"),
                                      ["A", "答案是A", "A或", "A、", "不选A，选", "B超", "选", "the answer is a"]),
    "exam extract_answer (option texts)": (lambda t: exam_answer(t, OPTIONS), ["A型", "原发性肺结核", "不是", "A"]),
    "exam cmb_match_choice": (lambda t: cmb_match_choice(t, True), ["答案是", "A"]),
    "factcheck parse_verdict": (parse_verdict, ["正确", "正确，", "错误", "不，", "嗯，", "这个说法是", "但", "not"]),
    "factcheck parse_verdict (claim)": (lambda t: parse_verdict(t, "尾胰癌会导致腹痛"), ["尾胰癌会导致腹痛", "正确"]),
    "judge scores (rationale)": (_judge, ["医生1：5", "医生1", "Doctor 1:", "给4分", "4分", "| 医生1 | 4 |\n", "2. ",
                                          "两位医生均为", "both get", "第二个回答", "I'd give it"]),
    "relabel (the judge's numbers)": (lambda t: relabel(t, {1: "Response 2", 2: "Response 1"}),
                                      ["医生1", "医生", "Doctor "]),
    "resolve_aspect (aspect names)": (_aspect, ["主要症状", "Primary Symptoms", "症状 ", "a b "]),
    "safe_markdown": (safe_markdown, ["[", "![", "- a\n", "*a", "<", "`", "|a|\n|-|\n", "> ", "[a](", "&#", "a\n",
                                      "0. a\n", "[a]((x)(x)(x)(x)", "# a\n", "**a**", "<a@b.c>"]),
}
# what a security review reported, at the length limit: reader -> (what, input of n characters)
REPORTED = {
    "exam extract_answer (letters)": ('"A" + spaces + "x"', lambda n: "A" + " " * (n - 2) + "x"),
    "process: numeric (Severity Level)": ("a run of digits", lambda n: "7" * n),
    "severity_level": ("a run of digits", lambda n: "7" * n),
    "process: enumerated aspect": ('a run of "("', lambda n: "(" * n),
    "process: declarative aspect": ('a run of "("', lambda n: "(" * n),
    "judge scores (rationale)": ('"医生1：5" + spaces', lambda n: "医生1：5" + " " * (n - 5)),
    "factcheck parse_verdict": ('"正确" + spaces + "但"', lambda n: "正确" + " " * (n - 3) + "但"),
}
CHARS = " \u3000\t\n([（【)]）】|*_-.,，。、:：;；!?？07aAx的分级医和或不对正确"
TOKENS = ["不对", "等等", "actually ", "wait, ", "不，", "((", "(a", "[[", "]]", "1. ", "(1)", "A、", "A ", "level ", "二级",
          "3-", "答案是", "正确，", "医生1", "Doctor 1 and ", "4分", "给", "the ", "i ", "iv", "第", "ⅱ", "⁹", "µ", "高血壓",
          "\n- ", "**", "`", "<", "&", "\\", "http://a", "中文 English ١٢٣ Ελληνικά ", "正确。不，应该是错误的。"]
FILLS = [" ", "(", "1", "\n", "*", "、", "的", "\u3000", "，", "a"]
SUFFIXES = ["", "x", "但", "4分", ")", "级", "吗"]
POOL = list("()[]（）【】*_`<>&\\|#-+=!:：，。、 \n\t01234567") + ["医生1", "4分", "正确", "错误", "A", "B", "和", " and ",
                                                                  "level", "级", "不对", "actually", "Ⅱ", "高血壓"]


def _repeat(token: str):
    return lambda n: (token * (n // len(token) + 1))[:n]


def _around(prefix: str, fill: str, suffix: str):
    return lambda n: prefix + fill * max(0, n - len(prefix) - len(suffix)) + suffix


def _mixture(seed: int):
    def make(n: int) -> str:
        rng, out, size = random.Random(seed), [], 0
        while size < n:
            out.append(rng.choice(POOL))
            size += len(out[-1])
        return "".join(out)[:n]
    return make


def _diluted(token: str):
    """``token`` repeated with as few plain characters between as keeps 20,000 characters within safe_markdown's
    budget: the densest markup that is still parsed (denser text is shown as plain text, cheaply)."""
    k = 0
    while k < 2000 and work(_repeat(token + "a" * k)(LIMIT)) > WORK_BUDGET:
        k = k * 2 + 1
    return _repeat(token + "a" * k), k


def families(name: str, words: list[str], cfg: dict) -> dict:
    """The hostile inputs tried on reader ``name``: family name -> input of n characters."""
    fams = {f"run of {c!r}": _repeat(c) for c in CHARS}
    fams.update({f"repeated {t!r}": _repeat(t) for t in TOKENS + words})
    for w in words + ["A", "正确", "医生1：5", "level", "(", "7"]:
        for f in FILLS[:cfg["fills"]]:
            for s in SUFFIXES:
                fams[f"{w!r} + run of {f!r} + {s!r}"] = _around(w, f, s)
    fams.update({f"random mixture {i}": _mixture(SEED + i) for i in range(cfg["random"])})
    if name == "safe_markdown":
        for w in words:
            make, k = _diluted(w)
            fams[f"repeated {w!r} + {k} plain characters"] = make
    if name in REPORTED:
        what, make = REPORTED[name]
        fams[f"reported: {what}"] = make
    return fams


def timed(call, text: str, repeats: int, loop_for: float = 0.02) -> float:
    """Seconds per call: best of ``repeats`` rounds, each looped until ``loop_for`` seconds have passed (one call
    when slower); ``repeats=0``: the one first call."""
    t0 = time.perf_counter()
    call(text)
    first = time.perf_counter() - t0
    if repeats == 0:
        return first
    loops = 1 if first >= loop_for else min(1000, math.ceil(loop_for / max(first, 1e-7)))
    best = first if loops == 1 else math.inf
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(loops):
                call(text)
            best = min(best, (time.perf_counter() - t0) / loops)
    finally:
        gc.enable()
    return best


def slope(t_small: float, t_large: float, n_small: int = SIZES[0], n_large: int = SIZES[-1]) -> float:
    return math.log(t_large / t_small) / math.log(n_large / n_small)


def bench_reader(name: str, cfg: dict) -> dict:
    call, words = READERS[name]
    fams = families(name, words, cfg)
    screen = LIMIT if name == "safe_markdown" else SCREEN
    call("warm up: 医生1 正确 答案是A 高血壓")
    t0 = time.perf_counter()
    screened = sorted(((timed(call, make(screen), 0), fam) for fam, make in fams.items()), reverse=True)
    log(f"{name}: {len(fams)} families at {screen:,} characters in {time.perf_counter() - t0:.1f} s; slowest "
        f"{screened[0][1]} ({screened[0][0] * 1000:.1f} ms)")
    picked = [fam for _, fam in screened[:cfg["top"]]]
    picked += [fam for fam in fams if fam.startswith("reported:") and fam not in picked]
    measured = []
    for fam in picked:
        times = {}
        for n in SIZES + (LIMIT,):
            times[n] = timed(call, fams[fam](n), cfg["repeats"])
            if times[n] > 5:  # far over the goal: the larger sizes would only take long
                break
        full = len(times) == len(SIZES) + 1
        growth = slope(times[SIZES[0]], times[SIZES[-1]]) if full else None
        # the slope is judged where there is time to grow: under a millisecond it measures fixed costs and caches
        measured.append({"family": fam, "seconds": times, "slope": growth,
                         "meets_goal": full and times[LIMIT] <= GOAL_SECONDS
                         and (growth <= GOAL_SLOPE or times[SIZES[-1]] < SLOPE_FROM)})
    worst = max(measured, key=lambda m: m["seconds"].get(LIMIT, math.inf))
    return {"families": len(fams), "screened_at": screen, "measured": measured, "worst": worst,
            "max_slope": max((m["slope"] for m in measured if m["slope"] is not None), default=None),
            "meets_goal": all(m["meets_goal"] for m in measured)}


def _short(value, width: int = 70) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def reported_readings() -> dict:
    out = {}
    for name, (what, make) in REPORTED.items():
        text = make(LIMIT)
        t0 = time.perf_counter()
        got = READERS[name][0](text)
        out[name] = {"input": what, "seconds": time.perf_counter() - t0, "reads": _short(got)}
    return out


def machine_info() -> dict:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"cpu_count": os.cpu_count(), "cpus_usable": usable, "cpu_model": cpu_model(),
            "python": platform.python_version(), "platform": platform.platform(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "loadavg_start": loadavg()}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def table(res: dict) -> list[tuple[str, str, str]]:
    rows = [(f"1. Slowest input per reader at {LIMIT:,} characters", "", "")]
    for name, r in res["readers"].items():
        w = r["worst"]
        s = w["seconds"]
        sizes = ", ".join(f"{n // 1000}k {_ms(s[n])}" for n in SIZES if n in s)
        slope_text = f"slope {w['slope']:.2f}" if w["slope"] is not None else "slope -"
        mark = "ok" if r["meets_goal"] else f"MISSES THE GOAL ({GOAL_SECONDS:g} s, slope {GOAL_SLOPE:g})"
        rows.append((name, _ms(s[LIMIT]) if LIMIT in s else "> 5 s",
                     f"{mark}; {sizes}, {slope_text}; worst of {r['families']} families: {w['family']}"))
    rows.append(("2. The reported inputs now", "", ""))
    for name, r in res["reported"].items():
        rows.append((f"{name}: {r['input']}", _ms(r["seconds"]), r["reads"]))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer families and repeats (about 20 s)")
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON to PATH")
    ap.add_argument("--only", metavar="WORDS", help="only the readers whose name holds one of these comma-separated "
                                                    "words (e.g. exam,judge)")
    args = ap.parse_args(argv)
    mode = "quick" if args.quick else "full"
    cfg = MODES[mode]
    names = list(READERS)
    if args.only:
        keys = [k.strip().lower() for k in args.only.split(",") if k.strip()]
        names = [n for n in names if any(k in n.lower() for k in keys)]
    info = machine_info()
    print("\n".join([f"medeval readers benchmark ({mode}) -- {info['date']}",
                     f"CPU: {info['cpu_count']} logical CPUs ({info['cpus_usable']} usable), {info['cpu_model']}",
                     f"Python {info['python']} on {info['platform']}",
                     f"load average at start (1/5/15 min): {info['loadavg_start']}",
                     f"each time: best of {cfg['repeats']} runs; sizes {', '.join(f'{n:,}' for n in SIZES)} and "
                     f"{LIMIT:,} characters", ""]), flush=True)
    t_start = time.perf_counter()
    res: dict = {"mode": mode, "machine": info, "sizes": list(SIZES), "limit": LIMIT, "seed": SEED,
                 "goal": {"seconds": GOAL_SECONDS, "slope": GOAL_SLOPE}, "readers": {}}
    for name in names:
        res["readers"][name] = bench_reader(name, cfg)
    res["reported"] = {k: v for k, v in reported_readings().items() if k in names}
    total = time.perf_counter() - t_start
    text = "\n".join(table_lines(table(res)) + [
        f"total benchmark time: {total:.1f} s (process incl. imports: {time.perf_counter() - _T_PROCESS:.1f} s); "
        f"load average at end: {loadavg()}"])
    finish(res, text, total, args.json)
    return 0 if all(r["meets_goal"] for r in res["readers"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
