"""The interface catalogue's upkeep: extract the marked strings (Babel), merge them into each language's ``.po``,
compile ``.mo`` files, and check that nothing a person reads is missing, empty, fuzzy, unmarked or off-glossary.

``python -m medeval i18n update|compile|check`` calls these; ``tests/test_i18n.py`` runs the checks. Only the
command and the tests import this module (Babel's message tools are not needed to translate).
"""

from __future__ import annotations

import ast
import csv
import io
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from medeval.core import i18n

ROOT = Path(__file__).resolve().parents[2]  # the repository: babel.cfg, app.py, app_pages/, webui/, medeval/
MAPPING = ROOT / "babel.cfg"
TEMPLATE = i18n.LOCALE_DIR / "medeval.pot"
GLOSSARY = i18n.LOCALE_DIR / "glossary.tsv"
TRANSLATED = tuple(lang for lang in i18n.LANGUAGES if lang != i18n.SOURCE)
PROJECT = "medeval"


def po_file(lang: str) -> Path:
    return i18n.LOCALE_DIR / i18n._LOCALE[lang] / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"


def mo_file(lang: str) -> Path:
    return po_file(lang).with_suffix(".mo")


def extract_python(fileobj, keywords, comment_tags, options):
    """Babel's extraction method for our sources, from Python's own parse tree: every ``_("...")``,
    ``ngettext("...", "...", n)``, ``pgettext("ctx", "...")`` and ``N_("...")`` with literal text, including
    those inside an f-string's ``{...}`` (Babel's token-based method does not see those). babel.cfg names it."""
    source = fileobj.read().decode(options.get("encoding", "utf-8"))
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else (
            node.func.attr if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "i18n" else None)
        if name not in keywords:
            continue
        # literal text, or None where an argument is not (Babel then skips the call: its text is extracted where
        # it is written, e.g. an N_() constant)
        args = tuple(a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args)
        above = lines[node.lineno - 2].strip() if node.lineno >= 2 else ""
        comments = [above.lstrip("# ")] if any(above.startswith("# " + t) for t in comment_tags) else []
        found.append((node.lineno, node.col_offset, name, args, comments))
    for lineno, _col, name, args, comments in sorted(found, key=lambda f: f[:2]):
        yield lineno, name, args, comments


def extract(root: Path = ROOT) -> Catalog:
    """Every marked string of the sources ``babel.cfg`` names, as a template catalogue."""
    with open(root / MAPPING.name, encoding="utf-8") as f:
        method_map, options_map = parse_mapping_cfg(f, filename=str(MAPPING))
    catalog = Catalog(project=PROJECT, charset="utf-8")

    def _skip(path: str) -> bool:  # the virtual environment, caches and tests are not the app
        parts = Path(path).parts
        return not any(p.startswith(".") or p in ("__pycache__", "tests", "bench", "node_modules") for p in parts)

    for filename, lineno, message, comments, context in extract_from_dir(
            str(root), method_map, options_map, keywords=DEFAULT_KEYWORDS, comment_tags=("i18n:",),
            strip_comment_tags=True, directory_filter=_skip):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def _write_po(path: Path, catalog: Catalog) -> None:
    buf = io.BytesIO()
    write_po(buf, catalog, width=116, sort_output=False, ignore_obsolete=True, include_previous=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())


def read_catalogue(lang: str) -> Catalog:
    path = po_file(lang)
    if not path.exists():
        return Catalog(locale=i18n._LOCALE[lang], project=PROJECT, charset="utf-8")
    with open(path, "rb") as f:
        return read_po(f, locale=i18n._LOCALE[lang])


def update(root: Path = ROOT) -> dict[str, int]:
    """Extract, write the template, merge it into each language's ``.po`` (new strings empty, strings gone
    dropped; no fuzzy guesses: a changed English text gets an empty translation, never an old one marked
    fuzzy). Returns, per language, how many entries still need a translation."""
    template = extract(root)
    _write_po(TEMPLATE, template)
    left = {}
    for lang in TRANSLATED:
        catalog = read_catalogue(lang)
        catalog.update(template, no_fuzzy_matching=True, update_header_comment=False)
        catalog.obsolete.clear()
        _header(catalog)
        _write_po(po_file(lang), catalog)
        left[lang] = sum(1 for m in catalog if m.id and not _translated(m))
    return left


def _header(catalog: Catalog) -> None:
    # a fuzzy header is left out of the .mo, and with it the plural rule: Chinese would get English plurals
    catalog.fuzzy = False
    catalog.project, catalog.version = PROJECT, ""
    catalog.msgid_bugs_address = ""
    catalog.last_translator = catalog.language_team = "medeval"
    catalog.creation_date = catalog.revision_date = datetime(2026, 11, 28)  # no date churn in every diff
    catalog.header_comment = ("# The web app's text in Simplified Chinese. Edit the msgstr lines; keep each {field} "
                              "of the English.\n# Terms: glossary.tsv beside this folder. Checks: python -m "
                              "medeval i18n check")


def compile_all() -> list[Path]:
    """Write each language's ``.mo`` from its ``.po`` (the install does this)."""
    written = []
    for lang in TRANSLATED:
        catalog = read_catalogue(lang)
        buf = io.BytesIO()
        write_mo(buf, catalog, use_fuzzy=False)
        mo_file(lang).write_bytes(buf.getvalue())
        written.append(mo_file(lang))
    i18n.translations.cache_clear()
    return written


# -- checks ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Problem:
    where: str  # a file:line, or a catalogue entry
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def _strings(message) -> list[str]:
    return list(message) if isinstance(message, (tuple, list)) else [message]


def _translated(m) -> bool:
    return all(s for s in _strings(m.string)) and bool(_strings(m.string))


_BRACE = re.compile(r"(?<!\{)\{([^{}]*)\}(?!\})")
# (no space flag: "95% interval" is text, not "% i"; our strings are formatted with str.format anyway)
_PERCENT = re.compile(r"%(?:\([^)]+\))?[#0+-]*\d*(?:\.\d+)?[sdifr%]")


def placeholders(text: str) -> list[str]:
    """The format fields of ``text`` (``{name}``, ``{n:.2f}``, ``%s``, ``%(n)d``), sorted; ``%%`` is not one.

    >>> placeholders("{n} of {total:,} items, %(pct)d%%")
    ['%(pct)d', '{n}', '{total:,}']
    """
    return sorted([f"{{{m}}}" for m in _BRACE.findall(text)] + [p for p in _PERCENT.findall(text) if p != "%%"])


def read_glossary(path: Path = GLOSSARY) -> list[dict]:
    """The glossary: one row a concept (``en``, ``zh-CN``, ``note``); each English term has exactly one Chinese."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")]
    return rows


def _term_pattern(term: str) -> re.Pattern:
    # a whole word or phrase, any case, a plural "s" allowed ("gold item" finds "gold items")
    return re.compile(r"(?<![A-Za-z])" + re.escape(term) + r"(?:e?s)?(?![A-Za-z])", re.IGNORECASE)


def check_catalogue(lang: str, template: Catalog | None = None, glossary: list[dict] | None = None,
                    catalog: Catalog | None = None) -> list[Problem]:
    """Every marked string has a translation in ``lang`` that is not empty, not fuzzy, keeps the English text's
    placeholders, and uses the glossary's term wherever the English uses the glossary's term."""
    template = template if template is not None else extract()
    catalog = read_catalogue(lang) if catalog is None else catalog
    glossary = read_glossary() if glossary is None else glossary
    terms = [(_term_pattern(g["en"]), g["en"], g["zh-CN"]) for g in glossary]
    problems = []
    for m in template:
        if not m.id:
            continue
        label = m.id[0] if isinstance(m.id, tuple) else m.id
        where = f"{po_file(lang).relative_to(ROOT)} msgid {label[:70]!r}"
        t = catalog.get(m.id, context=m.context)
        if t is None:
            problems.append(Problem(where, "missing (run: python -m medeval i18n update, then translate it)"))
            continue
        if t.fuzzy:
            problems.append(Problem(where, "marked fuzzy: check the translation and remove the flag"))
        if not _translated(t):
            problems.append(Problem(where, "no translation"))
            continue
        english = _strings(m.id)
        for s in _strings(t.string):
            for src in english:  # Chinese has one plural form: it must keep the fields of every English form
                if placeholders(src) != placeholders(s) and not (len(english) > 1 and
                                                                  set(placeholders(s)) <= set(placeholders(src))):
                    problems.append(Problem(where, f"placeholders {placeholders(s)} differ from the English "
                                                   f"{placeholders(src)}"))
                    break
            for pattern, en, zh in terms:  # (a field's name, "{threshold}", is not the word)
                if any(pattern.search(_BRACE.sub(" ", src)) for src in english) and zh not in s:
                    problems.append(Problem(where, f"the glossary says {en!r} is {zh!r}; the translation "
                                                   f"{s[:60]!r} does not use it"))
    for m in catalog:
        if m.id and m.id not in template:
            problems.append(Problem(f"{po_file(lang).relative_to(ROOT)} msgid {str(m.id)[:70]!r}",
                                    "no longer in the sources (run: python -m medeval i18n update)"))
    return problems


def check_glossary(glossary: list[dict] | None = None) -> list[Problem]:
    """One Chinese term per English concept, every row filled."""
    glossary = read_glossary() if glossary is None else glossary
    problems, seen = [], {}
    for i, g in enumerate(glossary, start=2):
        en, zh = (g.get("en") or "").strip(), (g.get("zh-CN") or "").strip()
        if not en or not zh:
            problems.append(Problem(f"{GLOSSARY.name}:{i}", "a row needs an English and a Chinese term"))
            continue
        if en.lower() in seen and seen[en.lower()] != zh:
            problems.append(Problem(f"{GLOSSARY.name}:{i}", f"{en!r} has two Chinese terms: {seen[en.lower()]!r} "
                                                            f"and {zh!r}"))
        seen[en.lower()] = zh
    return problems


# -- strings a page shows that are not marked ------------------------------------------------------------------

# Streamlit calls whose text a person reads, and the keyword arguments that carry text
_SHOWN = {"title", "header", "subheader", "caption", "markdown", "info", "warning", "error", "success", "toast",
          "button", "download_button", "form_submit_button", "link_button", "page_link", "text_input", "text_area",
          "number_input", "selectbox", "multiselect", "radio", "checkbox", "toggle", "slider", "select_slider",
          "file_uploader", "expander", "tabs", "metric", "dialog", "spinner", "status", "segmented_control",
          "pills", "date_input", "popover", "write", "text", "TextColumn", "NumberColumn", "ProgressColumn",
          "CheckboxColumn", "SelectboxColumn", "Column", "LinkColumn", "ListColumn", "DatetimeColumn"}
_TEXT_KEYWORDS = {"label", "help", "placeholder", "question", "details", "yes", "no", "title", "body", "caption",
                  "next_step", "value_label", "done", "delta", "text"}
_MARKERS = {"_", "N_", "ngettext", "pgettext", "gettext", "npgettext"}
_WORD = re.compile(r"[A-Za-z]{2,}")
SCANNED = ("app.py", "app_pages", "webui")
NOT_TEXT = "# i18n: not text"  # on a line whose literal is an identifier, markup or a name, never read as text


def _shown_path(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _literal_text(node: ast.AST) -> str | None:
    """The words of a string literal or f-string's literal parts (None: not a literal)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return None


def _words(text: str) -> bool:
    stripped = text.strip()
    if stripped.startswith("<") or stripped.startswith(":material/"):  # our own markup, an icon
        return False
    return bool(_WORD.search(text))


def unmarked_strings(paths: list[Path] | None = None) -> list[Problem]:
    """Literal text passed to a Streamlit element of a page (a title, a label, a message, a help text) without
    ``_()``: a person would read it in English whatever their language."""
    if paths is None:
        paths = []
        for name in SCANNED:
            p = ROOT / name
            paths += sorted(p.glob("*.py")) if p.is_dir() else [p]
    problems = []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            owner = node.func.value if isinstance(node.func, ast.Attribute) else None
            if isinstance(owner, ast.Name) and "log" in owner.id.lower():
                continue  # LOGGER.warning(...): the server's log, in English
            if name not in _SHOWN and name not in ("confirm", "start_here", "plain", "safe_table"):
                continue
            candidates = list(node.args) + [k.value for k in node.keywords if k.arg in _TEXT_KEYWORDS]
            for arg in candidates:
                items = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
                for item in items:
                    text = _literal_text(item)
                    if text is None or not _words(text):
                        continue
                    if NOT_TEXT in lines[item.lineno - 1] or NOT_TEXT in lines[node.lineno - 1]:
                        continue
                    problems.append(Problem(f"{_shown_path(path)}:{item.lineno}",
                                            f"{name}() shows {text[:60]!r} unmarked: wrap it in _()"))
    return problems


def check_all() -> list[Problem]:
    """Every check at once: the glossary, each language's catalogue against the sources, unmarked strings."""
    template = extract()
    glossary = read_glossary()
    problems = check_glossary(glossary)
    for lang in TRANSLATED:
        problems += check_catalogue(lang, template, glossary)
    return problems + unmarked_strings()
