"""The 18 disease-knowledge aspects of MedDisKEval (Table 1) and their types.

Each aspect has an English canonical name, the Chinese name used in the paper's
prompts (Tables 9-10), a short definition, and a type that decides how it is
post-processed and scored:

* ``enumerated`` -- a list of entities (split, joined with spaces, then scored),
* ``declarative`` -- free text,
* ``numeric`` -- one number, scored by exact match (Severity Level, 1-4).

The mapping is data: :func:`aspect_types` returns it and
:func:`resolve_aspect` accepts English or Chinese names and the variants a knowledge base
or a prompt uses (影响部位 and 累及部位 for Affected Sites, 并发症 for Secondary Diseases, 严重程度 for
Severity Level, ...; every alias names one aspect only, checked at import), so a knowledge base can use
any of them. Names that could mean two aspects (发病年龄: prevalence or onset?) are left out: they are
refused with suggestions rather than guessed.
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
           "The group of individuals most affected by the disease.",  # Table 1 reads "The most group of ..."
           "该疾病最常累及的人群，如高发年龄段、有某病史的人群或特定性别人群。",
           ("人群", "患病人群", "易患人群", "好发人群", "高发人群", "易感人群", "高危人群", "发病人群", "常见人群", "Population",
            "Patient Populations", "Affected Population", "At-risk Population", "Risk Groups")),
    Aspect("Prevalence Ages", "好发年龄", ENUMERATED,
           "The ages at which the disease commonly occurs.",
           "该疾病常见的发病年龄段。",
           ("好发年龄段", "高发年龄", "高发年龄段", "多发年龄", "易发年龄", "常见发病年龄", "Prevalence Age", "Peak Age", "Peak Ages",
            "Common Age", "Age of Prevalence")),
    Aspect("Onset Ages", "特发年龄", ENUMERATED,
           "The ages at which the disease occurs exclusively.",
           "该疾病只在这一年龄段发生、在其他年龄段不发生的年龄段。",
           ("特发年龄段", "特定发病年龄", "Onset Age", "Age of Onset", "Exclusive Onset Age")),
    Aspect("Primary Symptoms", "主要症状", ENUMERATED,
           "The most prominent clinical symptoms of the disease.",
           "该疾病最突出的临床症状。",
           ("症状", "常见症状", "典型症状", "临床症状", "主症", "临床表现", "主要表现", "主要临床表现", "Symptoms", "Symptom", "Primary Symptom",
            "Main Symptoms", "Common Symptoms", "Chief Symptoms", "Clinical Manifestations")),
    Aspect("Associated Symptoms", "伴随症状", ENUMERATED,
           "Other clinical symptoms accompanying the primary symptoms.",
           "伴随主要症状出现的其他临床症状。",
           ("伴发症状", "伴随表现", "伴随的症状", "其他症状", "Associated Symptom", "Accompanying Symptoms",
            "Concomitant Symptoms")),
    Aspect("Differential Symptoms", "鉴别性症状", ENUMERATED,
           "Specific symptoms differentiating the disease from others.",
           "可将该疾病与其他疾病区分开的特异性症状。",
           ("鉴别症状", "鉴别要点", "特异性症状", "鉴别诊断症状", "Differential Symptom", "Distinguishing Symptoms",
            "Differentiating Symptoms")),
    Aspect("Physical Examinations", "体格检查", DECLARATIVE,
           "Physical examination results specific to the disease.",
           "该疾病特有的体格检查所见。",
           ("查体", "体征", "体格检查结果", "查体所见", "体检所见", "Physical Examination", "Physical Exam", "Physical Exams",
            "Physical Findings", "Physical Signs", "Signs")),
    Aspect("Anatomical Sites", "解剖部位", ENUMERATED,
           "Specific locations or regions on or within the body identified based on the anatomy of the disease.",
           "按解剖学确定的该疾病在体表或体内的具体部位。",
           ("发病部位", "病变部位", "解剖位置", "Anatomical Site", "Anatomic Site", "Anatomic Sites", "Anatomical Location",
            "Anatomical Locations")),
    Aspect("Affected Sites", "受累部位", ENUMERATED,
           "The area of the body damaged or affected by the disease.",
           "被该疾病损害或影响的身体部位。",
           ("累及部位", "影响部位", "受影响部位", "损害部位", "受损部位", "Affected Site", "Affected Area", "Affected Areas",
            "Involved Sites")),
    Aspect("Affected Body Systems", "人体系统", ENUMERATED,
           "The body systems that are damaged or affected by the disease.",
           "被该疾病损害或影响的人体系统。",
           ("累及系统", "受累系统", "影响系统", "受影响系统", "受累人体系统", "累及的人体系统", "涉及系统", "Affected Body System", "Body Systems",
            "Body System", "Affected Systems", "Organ Systems")),
    Aspect("Treatment Principles", "治疗原则", ENUMERATED,
           "The clinical principles for developing a treatment to the disease.",
           "制定该疾病治疗方案时遵循的临床原则，如护肝、止泻、止痛。",
           ("治则", "治疗方法", "治疗策略", "治疗方案", "治疗", "Treatment Principle", "Treatment", "Treatments",
            "Treatment Approach", "Management")),
    Aspect("Secondary Diseases", "继发疾病", ENUMERATED,
           "Possible additional diagnosis to the disease.",
           "与原发疾病有直接因果关系、可能同时诊断的疾病。",
           ("并发症", "继发病", "继发性疾病", "Secondary Disease", "Complications", "Complication")),
    Aspect("Medications", "药物", ENUMERATED,
           "Prescribed drug(s) used to treat the disease.",
           "治疗该疾病的常用药物。",
           ("常见药物", "常用药物", "治疗药物", "用药", "药品", "推荐药物", "Medication", "Drugs", "Drug", "Medicines", "Drug Therapy",
            "Drug Treatment")),
    Aspect("Surgical Procedures", "手术", ENUMERATED,
           "Medical procedures that treat the disease, involving the cutting, repairing, or removal of tissue or organs.",
           "治疗该疾病的手术，涉及组织或器官的切开、修复或切除。",
           ("手术治疗", "手术方式", "手术方法", "术式", "外科手术", "Surgical Procedure", "Surgery", "Surgeries", "Operation",
            "Operations", "Surgical Treatment")),
    Aspect("Laboratory Examinations", "实验室检查", DECLARATIVE,
           "Abnormal laboratory examination results to the disease.",
           "该疾病在实验室检查中的异常结果。",
           ("实验室检查异常结果", "化验", "化验检查", "实验室检验", "检验", "实验室结果", "Laboratory Examination", "Laboratory Tests",
            "Lab Tests", "Laboratory Findings", "Labs")),
    Aspect("Auxiliary Examinations", "辅助检查", DECLARATIVE,
           "Abnormal auxiliary examination results to this disease.",
           "该疾病在辅助检查（影像、心电图等，实验室化验除外）中的异常结果。",
           ("辅助检查异常结果", "影像学检查", "影像检查", "特殊检查", "Auxiliary Examination", "Imaging", "Imaging Findings",
            "Auxiliary Tests", "Ancillary Tests")),
    Aspect("Departments", "科室", ENUMERATED,
           "The specific medical departments responsible for the disease.",
           "负责诊治该疾病的临床科室。",
           ("就诊科室", "所属科室", "诊治科室", "临床科室", "挂号科室", "Department", "Clinical Departments", "Specialty",
            "Specialties")),
    Aspect("Severity Level", "危重等级", NUMERIC,
           "The severity level of the disease (1 = immediately life-threatening ... 4 = potentially serious, chronic or very mild).",
           "该疾病的危重等级（1级最危重，4级为潜在严重、慢性或非常轻微）。",
           ("危重程度", "严重程度", "严重等级", "危重级别", "严重级别", "病情严重程度", "危急程度", "Severity", "Severity Levels",
            "Severity Grade", "Acuity")),
)

BY_NAME: dict[str, Aspect] = {a.name: a for a in ASPECTS}


def _key(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).strip().lower().split())


_LOOKUP: dict[str, Aspect] = {}
for _a in ASPECTS:
    for _n in (_a.name, _a.name_zh, *_a.aliases):
        if _LOOKUP.setdefault(_key(_n), _a) is not _a:  # a name must never mean two aspects
            raise RuntimeError(f"aspect name {_n!r} is given to {_LOOKUP[_key(_n)].name} and {_a.name}")


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
