"""The reading-screen tests' data: realistic long Chinese texts (numbered lists, line breaks, symbols) of exact
lengths, in a small database of their own (``tests/test_browser_reading.py``)."""

from __future__ import annotations

import csv
from pathlib import Path

from tests import browser_support as bs

LENGTHS = (50, 300, 600, 1500)
DISEASES = ("社区获得性肺炎", "2型糖尿病", "急性心肌梗死", "慢性阻塞性肺疾病")
ASPECT = "Treatment Principles"

_LINES = (
    "患者男性，65岁，因“咳嗽、咳黄痰伴发热3天”入院，最高体温39.2℃，伴胸闷、气促。",
    "1. 抗感染：首选β-内酰胺类（如头孢曲松2 g静脉滴注，每日1次）联合大环内酯类（阿奇霉素0.5 g，每日1次）。",
    "2. 对症支持：退热、止咳化痰（氨溴索30 mg，每日3次），注意补液，维持水、电解质平衡。",
    "3. 氧疗：SpO₂<90%时给予鼻导管吸氧，目标SpO₂ 94%-98%；必要时无创通气。",
    "4. 评估病情：CURB-65评分≥3分者收入ICU，监测血压、呼吸频率、意识状态。",
    "* 注意：青霉素过敏者改用呼吸喹诺酮类（左氧氟沙星0.75 g，每日1次），疗程一般7-10天。",
    "复查：治疗48-72小时后评估疗效；体温、白细胞及C反应蛋白下降提示有效，否则需调整方案并完善病原学检查。",
)


def text(n: int, *, seed: int = 0) -> str:
    """A realistic answer of exactly ``n`` characters: sentences and numbered lists with line breaks."""
    lines, i = [], seed
    while sum(len(x) + 1 for x in lines) < n + 1:
        lines.append(_LINES[i % len(_LINES)])
        i += 1
    out = "\n".join(lines)[:n]
    return out[:-1] + "。" if n > 1 and out[-1] == "\n" else out


def build(folder: Path, annotators: list[str], *, lengths=LENGTHS) -> tuple[Path, dict[str, int]]:
    """A database whose knowledge base has one entry per length in ``lengths`` (its reference as long), one model
    answering each with a text as long, scored; every annotator gets a campaign of all of them. Returns the
    database and each annotator's campaign id."""
    from medeval.accounts import auth
    from medeval.annotation import campaigns as cp
    from medeval.engine.importer import import_files
    from medeval.engine.scoring import score_db
    from medeval.store.db import connect

    folder.mkdir(parents=True, exist_ok=True)
    kb, responses = folder / "kb.csv", folder / "responses.csv"
    with open(kb, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["disease", "aspect", "reference"])
        for d, n in zip(DISEASES, lengths):
            w.writerow([d, ASPECT, text(n, seed=3)])
    with open(responses, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "disease", "aspect", "response"])
        for i, (d, n) in enumerate(zip(DISEASES, lengths)):
            w.writerow(["ModelR", d, ASPECT, text(n, seed=i)])  # each answer starts differently
    db = folder / "reading.db"
    campaigns = {}
    with connect(db) as d:
        import_files(d, kb=kb, responses=responses)
        score_db(d, metrics=("bleu1", "rouge1"))
        res = auth.add_user(d, "res_read", bs.PASSWORD, "researcher")
        for i, name in enumerate(annotators):
            auth.add_user(d, name, bs.PASSWORD, "annotator")
            campaigns[name] = cp.create_random_campaign(d, f"reading {name}", len(lengths), [name], k=1, seed=i,
                                                        actor=res)
    return db, campaigns
