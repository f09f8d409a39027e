"""The 18 disease-knowledge aspects of MedDisKEval (Table 1) and their types.

Each aspect has an English canonical name, the Chinese name used in the paper's
prompts (Tables 9-10), a short definition, and a type that decides how it is
post-processed and scored:

* ``enumerated`` -- a list of entities (split, joined with spaces, then scored),
* ``declarative`` -- free text,
* ``numeric`` -- one number, scored by exact match (Severity Level, 1-4).

The mapping is data: :func:`aspect_types` returns it and
:func:`resolve_aspect` accepts English or Chinese names (and a few common
variants), so a knowledge base can use either.
"""

from __future__ import annotations

import difflib
import unicodedata
from dataclasses import dataclass

from medeval.core.errors import MedevalError

ENUMERATED = "enumerated"
DECLARATIVE = "declarative"
NUMERIC = "numeric"
ASPECT_TYPES = (ENUMERATED, DECLARATIVE, NUMERIC)


@dataclass(frozen=True)
class Aspect:
    name: str  # English canonical name
    name_zh: str
    type: str
    definition: str
    definition_zh: str
    aliases: tuple[str, ...] = ()


ASPECTS: tuple[Aspect, ...] = (
    Aspect("Patient Population", "常见患病人群", ENUMERATED,
           "The most group of individuals affected by the disease.",
           "该疾病最常累及的人群，如高发年龄段、有某病史的人群或特定性别人群。",
           ("人群", "患病人群", "Population")),
    Aspect("Prevalence Ages", "好发年龄", ENUMERATED,
           "The ages at which the disease commonly occurs.",
           "该疾病常见的发病年龄段。", ("Prevalence Age",)),
    Aspect("Onset Ages", "特发年龄", ENUMERATED,
           "The ages at which the disease occurs exclusively.",
           "该疾病只在这一年龄段发生、在其他年龄段不发生的年龄段。", ("Onset Age",)),
    Aspect("Primary Symptoms", "主要症状", ENUMERATED,
           "The most prominent clinical symptoms of the disease.",
           "该疾病最突出的临床症状。", ("症状", "常见症状", "Symptoms")),
    Aspect("Associated Symptoms", "伴随症状", ENUMERATED,
           "Other clinical symptoms accompanying the primary symptoms.",
           "伴随主要症状出现的其他临床症状。"),
    Aspect("Differential Symptoms", "鉴别性症状", ENUMERATED,
           "Specific symptoms differentiating the disease from others.",
           "可将该疾病与其他疾病区分开的特异性症状。", ("鉴别症状",)),
    Aspect("Physical Examinations", "体格检查", DECLARATIVE,
           "Physical examination results specific to the disease.",
           "该疾病特有的体格检查所见。", ("Physical Examination",)),
    Aspect("Anatomical Sites", "解剖部位", ENUMERATED,
           "Specific locations or regions on or within the body identified based on the anatomy of the disease.",
           "按解剖学确定的该疾病在体表或体内的具体部位。", ("Anatomical Site",)),
    Aspect("Affected Sites", "受累部位", ENUMERATED,
           "The area of the body damaged or affected by the disease.",
           "被该疾病损害或影响的身体部位。", ("累及部位", "Affected Site")),
    Aspect("Affected Body Systems", "人体系统", ENUMERATED,
           "The body systems that are damaged or affected by the disease.",
           "被该疾病损害或影响的人体系统。", ("累及系统", "受累系统", "Affected Body System", "Body Systems")),
    Aspect("Treatment Principles", "治疗原则", ENUMERATED,
           "The clinical principles for developing a treatment to the disease.",
           "制定该疾病治疗方案时遵循的临床原则，如护肝、止泻、止痛。", ("Treatment Principle",)),
    Aspect("Secondary Diseases", "继发疾病", ENUMERATED,
           "Possible additional diagnosis to the disease.",
           "与原发疾病有直接因果关系、可能同时诊断的疾病。", ("Secondary Disease",)),
    Aspect("Medications", "药物", ENUMERATED,
           "Prescribed drug(s) used to treat the disease.",
           "治疗该疾病的常用药物。", ("常见药物", "Medication", "Drugs")),
    Aspect("Surgical Procedures", "手术", ENUMERATED,
           "Medical procedures that treat the disease, involving the cutting, repairing, or removal of tissue or organs.",
           "治疗该疾病的手术，涉及组织或器官的切开、修复或切除。", ("手术治疗", "Surgical Procedure", "Surgery")),
    Aspect("Laboratory Examinations", "实验室检查", DECLARATIVE,
           "Abnormal laboratory examination results to the disease.",
           "该疾病在实验室检查中的异常结果。", ("实验室检查异常结果", "Laboratory Examination")),
    Aspect("Auxiliary Examinations", "辅助检查", DECLARATIVE,
           "Abnormal auxiliary examination results to this disease.",
           "该疾病在辅助检查（影像、心电图等，实验室化验除外）中的异常结果。",
           ("辅助检查异常结果", "Auxiliary Examination")),
    Aspect("Departments", "科室", ENUMERATED,
           "The specific medical departments responsible for the disease.",
           "负责诊治该疾病的临床科室。", ("就诊科室", "Department")),
    Aspect("Severity Level", "危重等级", NUMERIC,
           "The severity level of the disease (1 = immediately life-threatening ... 4 = potentially serious, chronic or very mild).",
           "该疾病的危重等级（1级最危重，4级为潜在严重、慢性或非常轻微）。", ("危重程度", "Severity")),
)

BY_NAME: dict[str, Aspect] = {a.name: a for a in ASPECTS}


def _key(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).strip().lower().split())


_LOOKUP: dict[str, Aspect] = {}
for _a in ASPECTS:
    for _n in (_a.name, _a.name_zh, *_a.aliases):
        _LOOKUP[_key(_n)] = _a


def resolve_aspect(name: str) -> Aspect:
    """Return the aspect for an English or Chinese name (case and width insensitive).

    Raises :class:`MedevalError` with close matches when the name is unknown.
    """
    a = _LOOKUP.get(_key(str(name)))
    if a is None:
        close = difflib.get_close_matches(_key(str(name)), list(_LOOKUP), n=6, cutoff=0.5)
        names = list(dict.fromkeys(_LOOKUP[c].name for c in close))[:3]
        hint = f" Did you mean: {', '.join(repr(n) for n in names)}?" if names else ""
        raise MedevalError(
            f"unknown aspect {name!r}.{hint} Known aspects: "
            + ", ".join(f"{a.name} ({a.name_zh})" for a in ASPECTS)
            + ". Or give an explicit aspect_type column (enumerated, declarative, numeric)."
        )
    return a


def aspect_types() -> dict[str, str]:
    """English aspect name -> type."""
    return {a.name: a.type for a in ASPECTS}
