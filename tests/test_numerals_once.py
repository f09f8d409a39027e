"""One table of Chinese and Roman numerals (``medeval.core.chinese``, issue 25 §6): every other module reads or
writes numerals through it, and no module outside it spells a numeral table of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import medeval
from medeval.annotation.cases import judge_patterns as jp
from medeval.annotation.cases.judge_scores import parse_judge_scores
from medeval.core.chinese import CHINESE_DIGITS, NUMERALS, chinese_numeral, numeral_value, parse_int

PACKAGE = Path(medeval.__file__).resolve().parent
NUMERAL_CHARS = set(NUMERALS)


def test_chinese_numeral_writes_what_the_table_reads():
    assert [chinese_numeral(n) for n in range(11)] == list("零一二三四五六七八九十")
    assert all(numeral_value(chinese_numeral(n)) == n == parse_int(chinese_numeral(n)) for n in range(11))
    for bad in (-1, 11, 2.5, "3"):
        with pytest.raises(ValueError, match="not an integer from 0 to 10"):
            chinese_numeral(bad)


def test_the_judges_counts_take_their_chinese_values_from_the_table():
    zh = {k: v for k, v in jp.COUNTS.items() if not k.isascii()}
    assert zh == {"两": 2, "二": 2, "三": 3, "四": 4, "五": 5}
    assert all(CHINESE_DIGITS[k] == v for k, v in zh.items())
    assert set(jp.COUNT_ZH) == set(zh)


def test_a_chinese_count_still_covers_that_many_responses():
    assert parse_judge_scores("三位医生均为4分", 3) == {1: 4.0, 2: 4.0, 3: 4.0}
    assert parse_judge_scores("五位医生均为2分", 5) == {n: 2.0 for n in range(1, 6)}
    assert parse_judge_scores("五位医生均为2分", 4) == {}  # the count the judge writes is not what it saw


def _tables(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Dict, ast.Set, ast.List, ast.Tuple)):
            elts = node.keys if isinstance(node, ast.Dict) else node.elts
            keys = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    and e.value and set(e.value) <= NUMERAL_CHARS]
            if len(keys) >= 2:
                found.append((node.lineno, f"a collection of numerals {keys[:5]}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            run = 0
            for ch in node.value:
                run = run + 1 if ch in NUMERAL_CHARS else 0
                if run >= 3:
                    found.append((node.lineno, f"a string of numerals in {node.value[:30]!r}"))
                    break
    return found


def test_no_numeral_table_outside_medeval_core_chinese():
    bad = [f"{p.relative_to(PACKAGE)}:{line}: {what}" for p in sorted(PACKAGE.rglob("*.py"))
           if p.relative_to(PACKAGE).as_posix() != "core/chinese.py" for line, what in _tables(p)]
    assert not bad, "numerals come from medeval.core.chinese:\n" + "\n".join(bad)


def test_the_scan_finds_a_table():
    assert _tables(Path(jp.__file__).with_name("judge_patterns.py")) == []
    assert len(_tables(PACKAGE / "core" / "chinese.py")) >= 2
