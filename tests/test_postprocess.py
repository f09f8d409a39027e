
import pytest

from medeval.engine.aspects import BY_NAME, resolve_aspect
from medeval.core.errors import MedevalError
from medeval.engine.postprocess import extract_answer, first_number, process, split_entities

PS = BY_NAME["Primary Symptoms"]


@pytest.mark.parametrize("response,expected,matched", [
    ("感冒的主要症状包括：咳嗽、流涕和发烧。", "咳嗽、流涕和发烧。", True),
    ("根据资料，感冒的主要症状为咳嗽", "咳嗽", True),
    ("感冒的常见症状有：咳嗽", "咳嗽", True),
    ("The primary symptoms of 感冒 include cough and fever", "cough and fever", True),
    ("咳嗽；流涕", "咳嗽；流涕", False),  # no pattern: unchanged
    ("流感的主要症状包括：高热", "流感的主要症状包括：高热", False),  # another disease: unchanged
])
def test_extract_answer(response, expected, matched):
    assert extract_answer(response, "感冒", PS) == (expected, matched)


@pytest.mark.parametrize("text,entities", [
    ("咳嗽;打喷嚏;流鼻涕;发热", ["咳嗽", "打喷嚏", "流鼻涕", "发热"]),
    ("咳嗽、流涕和发烧等。", ["咳嗽", "流涕", "发烧"]),
    ("1. 阿莫西林\n2) 头孢克肟\n③ 布洛芬", ["阿莫西林", "头孢克肟", "布洛芬"]),
    ("咳嗽，咳嗽，发热", ["咳嗽", "发热"]),  # duplicates removed
    ("缓和疼痛；普及教育", ["缓和疼痛", "普及教育"]),  # no split inside words
    ("cough, runny nose and fever", ["cough", "runny nose", "fever"]),
    ("布洛芬 0.5g", ["布洛芬 0.5g"]),  # decimals are not separators
])
def test_split_entities(text, entities):
    assert split_entities(text) == entities


@pytest.mark.parametrize("text,number", [
    ("3", 3.0), ("危重等级为３级", 3.0), ("属于二级", 2.0), ("1-2级", 1.0), ("白细胞10⁹/L", 10.0),
    ("无法判断", None), ("", None),
])
def test_first_number(text, number):
    assert first_number(text) == number


def test_process_by_type():
    p = process("感冒的主要症状包括：咳嗽、流涕和发烧。", "感冒", PS)
    assert p.text == "咳嗽 流涕 发烧" and p.entities == ("咳嗽", "流涕", "发烧") and p.note == "pattern"
    n = process("评估为二级", "感冒", BY_NAME["Severity Level"])
    assert n.text == "2" and n.number == 2.0
    none = process("无法评估", "感冒", BY_NAME["Severity Level"])
    assert none.text == "" and none.note == "no_number"
    d = process("咽部充血。", "感冒", BY_NAME["Physical Examinations"])
    assert d.text == "咽部充血。"
    assert process("None", "感冒", BY_NAME["Medications"]).text == "无"  # kept as what it is
    assert process("", "感冒", PS).note == "empty"


def test_reference_is_not_pattern_extracted():
    ref = "感冒的主要症状为咳嗽"  # a reference is taken as it is
    assert process(ref, "感冒", PS, is_reference=True).text == "感冒的主要症状为咳嗽"


def test_resolve_aspect_names():
    assert resolve_aspect("药物").name == "Medications"
    assert resolve_aspect("primary symptoms").name == "Primary Symptoms"
    assert resolve_aspect("危重等级").type == "numeric"
    with pytest.raises(MedevalError, match="Did you mean.*Primary Symptoms"):
        resolve_aspect("Primry Symptoms")


def test_eighteen_aspects_fourteen_enumerated():
    from medeval.engine.aspects import ASPECTS

    assert len(ASPECTS) == 18
    types = [a.type for a in ASPECTS]
    assert (types.count("enumerated"), types.count("declarative"), types.count("numeric")) == (14, 3, 1)
