"""The demo data set: a knowledge base written for this project and reproducible model responses.

DEMO DATA -- NOT CLINICAL ADVICE. ``data/knowledge_base.jsonl`` is the
project's own writing (32 diseases x 18 aspects, Chinese with English disease
names). Responses of five fictional models are generated from it with a seeded
RNG so that scores spread over the whole range and every tier is populated:
a strong general model, a base model with a medical fine-tune of it, and a
weaker base model with its own medical fine-tune.

:func:`medeval.demo.build.build_demo` writes the files, imports them through the normal import
path, scores, and grades -- exactly what a user's data goes through.
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from medeval.core.chinese import chinese_numeral
from medeval.engine.aspects import BY_NAME, DECLARATIVE, ENUMERATED, NUMERIC

DEMO_SEED = 20231001


@dataclass(frozen=True)
class DemoModel:
    name: str
    kind: str
    backbone: str | None
    quality: float  # 0..1: chance mass on good answers
    verbosity: float  # chance of wrapping the answer in prose
    refusal: float  # chance of "无"/"不清楚"


DEMO_MODELS = (
    DemoModel("DemoGPT-L", "general", None, 0.55, 0.35, 0.08),
    DemoModel("DemoBase-7B", "general", None, 0.30, 0.25, 0.12),
    DemoModel("DemoMed-7B", "medical", "DemoBase-7B", 0.38, 0.45, 0.08),
    DemoModel("DemoChat-6B", "general", None, 0.16, 0.55, 0.18),
    DemoModel("DemoDoc-6B", "medical", "DemoChat-6B", 0.10, 0.40, 0.22),
)

FILLER = ["根据现有医学资料，", "一般来说，", "从临床角度看，", "需要注意的是，", ""]
GENERIC_DECLARATIVE = ["建议完善相关检查，结合临床表现综合判断。", "具体情况因人而异，请咨询专业医生。",
                       "该病的检查结果通常无明显特异性。", "需根据病情进行个体化评估。"]
# refusals as chat models write them (no placeholder such as the word "None": a doctor would read it as a bug)
REFUSALS = ["无", "我不太清楚。", "抱歉，我无法回答这个问题。", "这个问题我暂时无法给出准确答案，建议咨询医生。"]


def load_kb() -> list[dict]:
    text = resources.files("medeval.demo").joinpath("data/knowledge_base.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_synonyms() -> dict[str, list[str]]:
    return json.loads(resources.files("medeval.demo").joinpath("data/synonyms.json").read_text(encoding="utf-8"))


def _entities(ref: str) -> list[str]:
    return [e for e in ref.split(";") if e]


def _enumerated_answer(rng: random.Random, ents: list[str], pool: list[str], syn: dict, q: float) -> list[str]:
    r = rng.random()
    if ents == ["无"]:
        return ["无"] if r < q else rng.sample(pool, k=min(len(pool), rng.randint(1, 3)))
    if r < q * 0.55:  # basically right: most entities, some paraphrased
        keep = [e for e in ents if rng.random() < 0.85] or ents[:1]
        out = [rng.choice(syn[e]) if e in syn and rng.random() < 0.3 else e for e in keep]
        if rng.random() < 0.3:
            out.append(rng.choice(pool))
    elif r < q:  # partially right: a few entities, paraphrases and wrong ones
        k = max(1, int(len(ents) * rng.uniform(0.2, 0.6)))
        out = [rng.choice(syn[e]) if e in syn and rng.random() < 0.5 else e for e in rng.sample(ents, k)]
        out += rng.sample(pool, k=min(len(pool), rng.randint(1, 3)))
    elif r < q + (1 - q) * 0.5:  # paraphrase-heavy or mostly wrong
        out = [rng.choice(syn[e]) for e in ents if e in syn][:3] + rng.sample(pool, k=min(len(pool), rng.randint(1, 4)))
    else:  # wrong: entities of other diseases
        out = rng.sample(pool, k=min(len(pool), rng.randint(1, 5)))
    rng.shuffle(out)
    return list(dict.fromkeys(out))


def _declarative_answer(rng: random.Random, ref: str, others: list[str], q: float) -> str:
    r = rng.random()
    parts = [p for p in ref.replace("；", "，").split("，") if p]
    if r < q * 0.5:
        return ref if rng.random() < 0.5 else "，".join(parts[: max(1, len(parts) - 1)]) + "。"
    if r < q:
        return "，".join(rng.sample(parts, k=max(1, len(parts) // 2))) + "，" + rng.choice(GENERIC_DECLARATIVE)
    if r < q + (1 - q) * 0.4:
        return rng.choice(GENERIC_DECLARATIVE)
    return rng.choice(others)


def _numeric_answer(rng: random.Random, ref: str, q: float) -> str:
    value = int(ref) if ref.isdigit() else rng.randint(1, 4)
    if rng.random() >= q:
        value = rng.choice([v for v in (1, 2, 3, 4) if v != value])
    zh = chinese_numeral(value)
    return rng.choice([f"{value}", f"{value}级", f"危重等级为{zh}级", f"该病属于{value}级。", f"评估为{zh}级"])


def generate_responses(kb: list[dict], models=DEMO_MODELS, seed: int = DEMO_SEED) -> list[dict]:
    """Reproducible responses (same seed -> same rows) for every model, disease and aspect."""
    syn = load_synonyms()
    pools: dict[str, list[str]] = {}
    decl: dict[str, list[str]] = {}
    for row in kb:
        a = BY_NAME[row["aspect"]]
        if a.type == ENUMERATED:
            pools.setdefault(row["aspect"], []).extend(e for e in _entities(row["reference"]) if e != "无")
        elif a.type == DECLARATIVE:
            decl.setdefault(row["aspect"], []).append(row["reference"])
    out = []
    for m in models:
        rng = random.Random(f"{seed}:{m.name}")
        for row in kb:
            d, a, ref = row["disease"], BY_NAME[row["aspect"]], row["reference"]
            if rng.random() < m.refusal and a.type != NUMERIC:
                text = rng.choice(REFUSALS)
            elif a.type == ENUMERATED:
                own = set(_entities(ref))
                pool = [e for e in dict.fromkeys(pools[a.name]) if e not in own] or ["无"]
                ents = _enumerated_answer(rng, _entities(ref), pool, syn, m.quality)
                sep = rng.choice(["；", "、", ";", "，", "\n"])
                body = sep.join(ents)
                if rng.random() < m.verbosity:
                    text = rng.choice(FILLER) + f"{d}的{a.name_zh}包括：{body}。" + (
                        "如有不适请及时就医。" if rng.random() < 0.3 else "")
                elif sep == "\n":
                    text = "\n".join(f"{i}. {e}" for i, e in enumerate(ents, 1))
                else:
                    text = body
            elif a.type == DECLARATIVE:
                others = [x for x in decl[a.name] if x != ref]
                body = _declarative_answer(rng, ref, others, m.quality)
                text = (rng.choice(FILLER) + f"{d}的{a.name_zh}为：{body}") if rng.random() < m.verbosity else body
            else:
                text = _numeric_answer(rng, ref, m.quality)
            out.append({"model": m.name, "disease": d, "aspect": a.name_zh if rng.random() < 0.3 else a.name,
                        "response": text})
    return out


def write_demo_files(folder: str | Path, seed: int = DEMO_SEED) -> dict[str, Path]:
    """Write kb.csv, models.csv and responses.jsonl (the formats users import) into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    kb = load_kb()
    paths = {"kb": folder / "kb.csv", "models": folder / "models.csv", "responses": folder / "responses.jsonl"}
    with open(paths["kb"], "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["disease", "disease_en", "aspect", "reference"])
        for r in kb:
            w.writerow([r["disease"], r["disease_en"], r["aspect"], r["reference"]])
    with open(paths["models"], "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "backbone", "kind"])
        for m in DEMO_MODELS:
            w.writerow([m.name, m.backbone or "", m.kind])
    with open(paths["responses"], "w", encoding="utf-8") as f:
        for r in generate_responses(kb, seed=seed):
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return paths
