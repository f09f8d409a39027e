"""What a page shows, as text, for the language tests: every string of every element Streamlit sent (titles,
Markdown, labels, options, help texts, placeholders, table headers), and the English words among them."""

from __future__ import annotations

import re

# Words that stay as they are on a Chinese page: names, abbreviations and the formats' own names, the language
# choice's own name, and Markdown/HTML/CSS that is markup, not text
KEPT = {
    "medeval", "ICC", "BLEU", "ROUGE", "BERTScore", "Krippendorff", "Spearman", "Pearson", "Cohen", "Fleiss",
    "Kendall", "Gwet", "AC", "CMB", "SDAK", "AutoMedEval", "MedDisKEval", "LLM", "LLMs", "CSV", "JSON", "JSONL",
    "PDF", "HTML", "ZIP", "SQLite", "English", "AccR", "kappa", "alpha", "pingouin", "Markdown", "URL", "ID", "IDs",
    "https", "http", "www", "NER", "Exam", "cosine", "bleu", "rouge", "exact", "match", "Excel", "UTF",
    "GPT", "Wald", "Wilson", "bootstrap", "OpenCC", "Likert", "Table", "Fig", "NFKC", "CI", "SD", "IQR", "DEMO",
    "Chromium", "Fisher", "Landis", "Koch", "Welch", "CMB-Exam", "CMB-Clin", "Bonett-Wright",
    "atanh",  # the function Fisher's z is, as formulas write it
    "Enter", "Esc", "Ctrl", "Shift", "Tab",  # key names, as printed on the keys
    "Average",  # CMB's Table 6 column, quoted by name
    "import-cases", "import-judgements", "import-claims",  # commands
}
_SKIP_FIELDS = {"id", "form_id", "key", "icon", "type", "arrow_data", "data", "spec", "css", "default", "value",
                "element_hash", "page_script_hash", "script_hash", "url_path", "page_name", "kind", "format",
                "width_config", "height_config", "shortcut", "column_order", "selections", "set_value",
                "file_id", "url", "src", "body_html", "html", "theme", "autocomplete", "column_config",
                "deploy_params", "query_string", "placeholder_image", "js_content", "css_content",
                "html_content", "js_source_path", "css_source_path", "json", "json_args"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")


def _strings(message, out: list[str]) -> None:
    for field, value in message.ListFields():
        if field.name in _SKIP_FIELDS:
            continue
        if isinstance(value, (bool, int, float, bytes)):
            continue
        values = [value] if isinstance(value, str) or hasattr(value, "ListFields") else list(value)
        for v in values:
            if isinstance(v, str):
                out.append(v)
            elif hasattr(v, "ListFields"):
                _strings(v, out)


def page_texts(at) -> list[str]:
    """Every string the elements of an AppTest run carry (values of typed inputs and table cells aside)."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            _strings(proto, out)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return [s for s in out if s.strip() and not s.lstrip().startswith("{")]  # (JSON configs are not text)


def _strip_markup(text: str) -> str:
    text = re.sub(r"\\(?=[^\w\s])", "", text)  # Markdown's escapes: "DemoGPT\-L" is the name DemoGPT-L
    text = re.sub(r"<style>.*?</style>|<script>.*?</script>", " ", text, flags=re.S)
    text = re.sub(r"```.*?```|~~~.*?~~~", " ", text, flags=re.S)  # code blocks: commands, not interface text
    text = re.sub(r"`[^`\n]*`", " ", text)  # inline code: keys, settings, file names
    text = re.sub(r"<[^>]+>", " ", text)  # tags and their attributes
    text = re.sub(r":material/[a-z_]+:", " ", text)  # icons
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    text = re.sub(r"https?://\S+|/[a-z][a-z0-9_/?=&.-]*", " ", text)  # addresses and paths
    text = re.sub(r"\b[a-z]+_[a-z0-9_]+\b", " ", text)  # identifiers (file names, keys) shown as data
    text = re.sub(r"\b[a-z]+\d*:[0-9a-f]{8,}\b", " ", text)  # digests ("sha256:d91d…")
    text = re.sub(r"#[0-9a-fA-F]{3,8}\b", " ", text)  # colours
    text = re.sub(r"[0-9a-f-]*\d[0-9a-f-]*", lambda m: " " if len(m.group()) >= 8 else m.group(), text)  # ids
    return text


def english_words(texts: list[str], data: set[str] = frozenset()) -> set[str]:
    """The English words in ``texts`` that are neither :data:`KEPT` nor in ``data`` (the database's own text:
    model names, usernames, campaign names)."""
    kept = {w.lower() for w in KEPT} | {w.lower() for w in data}
    found = set()
    for t in texts:
        for w in _WORD.findall(_strip_markup(t)):
            if len(w) >= 2 and w.lower() not in kept and not w.isupper():
                found.add(w)
    return found


def data_words(path) -> set[str]:
    """Every word of the database's own text (names, models, campaigns, imported files, answers) and of the demo's
    data files (the Exam page reads its files from there): data, not UI."""
    import sqlite3
    from pathlib import Path

    words: set[str] = set()
    demo_data = Path(__file__).resolve().parents[1] / "medeval" / "demo" / "data"
    for f in demo_data.rglob("*"):
        # (the demo's guidelines are a researcher's words, Chinese and English: guideline_texts() takes them out
        # of a page as a whole, so their English words are not allowed everywhere)
        if f.is_file() and f.suffix in (".csv", ".jsonl", ".json", ".tsv", ".txt") and f.stem != "guidelines":
            words.update(_WORD.findall(f.read_text(encoding="utf-8", errors="replace")))
    with sqlite3.connect(str(path)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for t in tables:
            if t in ("audit_log", "sessions", "campaign_guidelines"):
                continue
            for row in conn.execute(f'SELECT * FROM "{t}"'):
                for v in row:
                    if isinstance(v, str):
                        words.update(_WORD.findall(v))
    return words


def guideline_texts(path) -> set[str]:
    """Every campaign's current guidelines as a page shows them (the researcher's Markdown and the cells of its
    definitions and examples): someone's own text, in whatever language they wrote it."""
    from medeval.annotation import guidelines as gl
    from medeval.store.db import connect
    from webui.page import md_escape

    out: set[str] = set()
    with connect(path) as db:
        for (cid,) in db.conn.execute("SELECT DISTINCT campaign_id FROM campaign_guidelines"):
            g = gl.current(db, cid)
            if g is None:
                continue
            out.add(g.markdown)
            for row in (*g.definitions, *g.examples):
                out.update(md_escape(v) for v in row.values() if isinstance(v, str))
    return out


_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")


def data_text(path) -> str:
    """All of the database's own text (answers, references, names, campaigns), the demo's data files and the
    knowledge base's Chinese aspect names and definitions, as one string: Chinese found here is data, which an
    English page shows as it is (the answers doctors read are Chinese)."""
    import sqlite3
    from pathlib import Path

    from medeval.engine.aspects import ASPECTS

    parts: list[str] = [f"{a.name_zh} {a.definition_zh}" for a in ASPECTS]
    demo_data = Path(__file__).resolve().parents[1] / "medeval" / "demo" / "data"
    parts += [f.read_text(encoding="utf-8", errors="replace") for f in demo_data.rglob("*")
              if f.is_file() and f.suffix in (".csv", ".jsonl", ".json", ".tsv", ".txt")]
    with sqlite3.connect(str(path)) as conn:
        for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            if t in ("audit_log", "sessions"):
                continue
            parts += [v for row in conn.execute(f'SELECT * FROM "{t}"') for v in row if isinstance(v, str)]
    return "\n".join(parts)


def interface_chinese(texts: list[str], data: str) -> set[str]:
    """The runs of Chinese characters in ``texts`` that are not data (:func:`data_text`): words of the interface,
    which an English page must not show. The language choice's own name (中文) is kept."""
    from medeval.core.i18n import NAMES

    kept = set(NAMES.values())
    return {run for t in texts for run in _CJK_RUN.findall(_strip_markup(t)) if run not in kept and run not in data}
