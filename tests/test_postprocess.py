
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
    ("3", 3.0), ("危重等级为３级", 3.0), ("属于二级", 2.0), ("1-2级", None), ("白细胞10⁹/L", 10.0),
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


def _extract_answer_uncompiled(response, disease, aspect):
    """The pattern search exactly as first written (patterns rebuilt per call), to compare the fast path with."""
    import re
    import unicodedata

    from medeval.engine.postprocess import _aspect_names

    def norm(t):
        return unicodedata.normalize("NFKC", t or "")

    text = norm(response).strip()
    if not text:
        return "", False
    d = re.escape(norm(disease).strip())
    names = "|".join(re.escape(norm(n)) for n in _aspect_names(aspect))
    for p in (rf"{d}\s*的\s*(?:常见|主要)?\s*(?:{names})\s*(?:为|是|包括|有|主要有|主要包括|一般为|通常为)\s*[:：]?\s*(.+)",
              rf"(?i)(?:the\s+)?(?:common\s+|main\s+)?(?:{names})\s+(?:of|for)\s+{d}\s+(?:is|are|includes?|include)\s*:?\s*(.+)"):
        m = re.search(p, text, flags=re.S)
        if m and m.group(1).strip():
            return m.group(1).strip(), True
    return (response or "").strip(), False


def test_compiled_patterns_and_the_substring_shortcut_change_no_answer():
    # the import compiles each (disease, aspect)'s patterns once and skips the search when the disease
    # is not in the answer; over varied answers (restating the disease or not, other case, full-width,
    # English and Chinese, other diseases) the result is the same as the original search
    import random

    from medeval.engine.aspects import ASPECTS

    rng = random.Random(7)
    diseases = ["感冒", "社区获得性肺炎", "Asthma", "COPD", "2型糖尿病", "ＨＩＶ感染", "Crohn's disease (CD)"]
    fillers = ["咳嗽、发热", "cough and fever", "", "  ", "无", "阿莫西林；头孢", "见上文"]
    matched = 0
    for _ in range(3000):
        disease, aspect = rng.choice(diseases), rng.choice(ASPECTS)
        said = rng.choice([disease, disease.upper(), disease.lower(), rng.choice(diseases), ""])
        name = rng.choice([aspect.name, aspect.name_zh, aspect.name.lower(), *aspect.aliases] or [aspect.name])
        shape = rng.choice([f"{said}的{name}为：{{}}", f"{said} 的 主要{name}包括{{}}", f"The {name} of {said} are: {{}}",
                            f"main {name} for {said} include {{}}", "{}", f"关于{said}：{{}}",
                            f"{said}很常见。{said}的{name}为：{{}}", f"{said}{said}的 {name} 是 {{}}",
                            f"THE COMMON {name.upper()} FOR {said} IS: {{0}} {said}的{name}有{{0}}"])
        response = shape.format(rng.choice(fillers))
        got = extract_answer(response, disease, aspect)
        assert got == _extract_answer_uncompiled(response, disease, aspect), (response, disease, aspect.name)
        matched += got[1]
    assert 500 < matched < 2500  # both outcomes are well represented
