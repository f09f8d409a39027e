"""The Help page's guides: one Markdown file per role (docs/help/<language>/<guide>.md), split into "## " sections,
with slugs and image lines.

Each guide is written for the person who reads it -- a doctor, an adjudicator, a researcher, an admin -- and explains
that role's screens and keys; each page of the app is explained by one section of one guide (:data:`PAGE_HELP`), and
each role reads its own guide first, then the guides of the pages it shares with other roles (:data:`ROLE_GUIDES`).
The guides live as files, not in code, so a translation is a folder beside the English one (``docs/help/zh-CN/``)
and the repository shows the same text the app does. A section's slug is made from its heading's words, or given
after it as ``{#slug}`` (``## 评级 {#grade}``, shown without it): a translated heading keeps the slug of its English
one, so every link (``?section=grade``, :data:`PAGE_HELP`, the start-here panels) opens the same section in every
language. Which language: the reader's (``medeval.core.i18n.current()``), English where a guide has no translation.

Pure functions (no Streamlit), so the parsing and the tables are unit-tested on their own (tests/test_help_page.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from medeval.core import i18n
from medeval.core.i18n import N_

from . import pages

ROOT = Path(__file__).resolve().parent.parent  # the repository: docs/ sits next to app.py
HELP_DIR = ROOT / "docs" / "help"
LANGUAGE = "en"  # the language every guide exists in; a translation may leave a guide out (English is shown)
_IMAGE = re.compile(r"\s*!\[([^\]]*)\]\(\s*([^)\s]+)\s*\)\s*")
_FENCE = re.compile(r"\s*(```|~~~)")
_ANCHOR = re.compile(r"\s*\{#([a-z0-9]+(?:-[a-z0-9]+)*)\}\s*$")  # "## 评级 {#grade}": the heading's own slug
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp")  # what st.image can draw; anything else is not shown

# guide -> its name in the guide selector (English, marked for the catalogue: shown as _(name))
GUIDES = {"doctor": N_("Doctors"), "adjudicator": N_("Adjudicators"), "researcher": N_("Researchers"),
          "admin": N_("Admins")}
# role -> the guides it reads: its own first, then those of the pages it shares with other roles (researchers and
# admins grade and adjudicate too; an adjudicator settles what the doctors graded, so the doctor guide says what
# they saw)
ROLE_GUIDES = {
    "annotator": ("doctor",),
    "adjudicator": ("adjudicator", "doctor"),
    "researcher": ("researcher", "doctor", "adjudicator"),
    "admin": ("admin", "researcher", "doctor", "adjudicator"),
}
# url path of a page (webui.pages.PAGES) -> (the guide that explains it, its section's slug, related sections' slugs
# in the same guide)
PAGE_HELP = {
    "grade": ("doctor", "grade", ("what-the-tiers-mean", "when-a-key-does-nothing", "changing-an-answer",
                                  "flagging-an-item", "guidelines", "qualification-and-check-items")),
    "annotate": ("doctor", "rate-compare", ("when-a-key-does-nothing", "changing-an-answer", "flagging-an-item",
                                            "guidelines", "qualification-and-check-items")),
    "adjudicate": ("adjudicator", "adjudicate", ("recording-a-final-tier", "what-the-tiers-mean")),
    "campaigns": ("researcher", "campaigns", ("guidelines-of-a-campaign", "gold-items", "downloads")),
    "new-campaign": ("researcher", "new-campaign", ("campaigns",)),
    "agreement": ("researcher", "agreement", ("downloads",)),
    "tuning": ("researcher", "tune-cut-offs", ("publish",)),
    "leaderboard": ("researcher", "leaderboard", ("downloads",)),
    "new-task": ("researcher", "new-task", ("task-results",)),
    "task-results": ("researcher", "task-results", ("guidelines-of-a-campaign", "gold-items", "downloads")),
    "exam": ("researcher", "exam-results", ()),
    "users": ("admin", "users-audit", ("the-first-admin", "backups")),
}


def slug(title: str) -> str:
    """A heading as a URL slug: its words in lowercase joined by '-' ("Running it in a hospital" ->
    "running-it-in-a-hospital"; punctuation and markup are dropped)."""
    return "-".join(re.findall(r"[^\W_]+", title.lower()))


def heading(text: str) -> tuple[str, str]:
    """(title, slug) of a heading's text: an explicit ``{#slug}`` at its end is the slug (and is not part of the
    title), else the slug of the title.

    >>> heading("评级 {#grade}"), heading("Rate & compare")
    (('评级', 'grade'), ('Rate & compare', 'rate-compare'))
    """
    m = _ANCHOR.search(text)
    if m:
        title = text[:m.start()].strip()
        return title, m.group(1)
    title = text.strip()
    return title, slug(title)


def _strip_anchor(line: str) -> str:
    """A heading line as it is shown: without its ``{#slug}``."""
    return _ANCHOR.sub("", line) if line.startswith("#") else line


@dataclass
class Section:
    title: str
    slug: str
    # ("markdown", text) or ("image", alt, path), in order
    parts: list[tuple[str, ...]] = field(default_factory=list)

    def body(self) -> list[tuple[str, ...]]:
        """The parts without the section's own "## " (or "# ") heading line: for a page that titles it itself."""
        out = list(self.parts)
        if out and out[0][0] == "markdown":
            text = re.sub(r"\A\s*#{1,2} [^\n]*\n*", "", out[0][1])
            out = ([("markdown", text)] if text.strip() else []) + out[1:]
        return out


def _parts(lines: list[str]) -> list[tuple[str, ...]]:
    parts: list[tuple[str, ...]] = []
    text: list[str] = []
    fenced = False

    def flush() -> None:
        if "".join(text).strip():
            parts.append(("markdown", "\n".join(text).strip("\n")))
        text.clear()

    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _IMAGE.fullmatch(line)
        if m:
            flush()
            parts.append(("image", m.group(1), m.group(2)))
        else:
            text.append(line)
    flush()
    return parts


def sections(text: str) -> list[Section]:
    """``text`` (Markdown) split at its "## " headings (not inside code fences). What comes before the first
    one is a section too, titled by its "# " heading (slug of that title). Each section keeps its heading."""
    chunks: list[tuple[str, list[str]]] = []
    title, lines, fenced = "", [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            chunks.append((title, lines))
            title, lines = line[3:].strip(), []
        elif not fenced and not chunks and not title and line.startswith("# "):
            title = line[2:].strip()
        lines.append(_strip_anchor(line) if not fenced else line)
    chunks.append((title, lines))
    return [Section(*heading(t), _parts(ls)) for t, ls in chunks if t or "".join(ls).strip()]


def find(secs: list[Section], wanted: str | None) -> Section | None:
    """The section whose slug is ``wanted`` (None when nothing or nothing known is asked for)."""
    return next((s for s in secs if wanted and s.slug == wanted), None)


def image_file(path: str, root: Path = ROOT, base: Path | None = None) -> Path | None:
    """The file an image line names, if it is a local picture inside the repository: never a URL, an absolute path
    or a path that leaves the repository (``..`` may only climb within it). ``base``: the folder of the Markdown
    file the line is in (relative paths start there, as on GitHub; default: the repository root)."""
    if re.match(r"[a-z][a-z0-9+.-]*:", path, re.IGNORECASE) or path.startswith(("/", "\\")):
        return None
    file = ((base or root) / path).resolve()
    inside = file.is_relative_to(root.resolve())
    return file if inside and file.suffix.lower() in IMAGE_SUFFIXES and file.is_file() else None


# ------------------------------------------------------------------ the guides


def guide_file(name: str, language: str | None = None, help_dir: Path | None = None) -> Path:
    """The Markdown file of guide ``name`` in ``language`` (default: the reader's, ``i18n.current()``), or the
    English one where that translation has none."""
    folder = help_dir or HELP_DIR
    file = folder / (language or i18n.current()) / f"{name}.md"
    return file if file.is_file() else folder / LANGUAGE / f"{name}.md"


def guide_sections(name: str, language: str | None = None, help_dir: Path | None = None) -> list[Section]:
    """Guide ``name`` (in ``language``, default the reader's) split into its sections (the first one its "# "
    title and introduction)."""
    return sections(guide_file(name, language, help_dir).read_text(encoding="utf-8"))


def role_guides(role: str | None) -> tuple[str, ...]:
    """The guides a user of ``role`` reads, their own first (a role without one of its own: every guide)."""
    return ROLE_GUIDES.get(role or "", tuple(GUIDES))


def locate(wanted: str | None, order: tuple[str, ...], load=guide_sections) -> tuple[str, Section] | None:
    """(guide, section) of the section whose slug is ``wanted``: looked for in the guides of ``order`` first, then
    in the others (a link names a section, and the reader's own guide explains it best where two have one)."""
    if not wanted:
        return None
    for name in (*order, *(g for g in GUIDES if g not in order)):
        sec = find(load(name), wanted)
        if sec is not None:
            return name, sec
    return None


@dataclass
class PageHelp:
    title: str  # the page's title, e.g. "Grade"
    guide: str  # the guide that explains it
    section: Section  # its section there
    related: list[tuple[str, str]]  # (title, slug) of the sections of that guide that say more


def page_help(url_path: str | None, load=guide_sections) -> PageHelp | None:
    """How to use the page at ``url_path`` (a section of a guide); None for a page no guide describes."""
    if url_path not in PAGE_HELP or url_path not in pages.BY_URL:
        return None
    name, wanted, related = PAGE_HELP[url_path]
    secs = load(name)
    sec = find(secs, wanted)
    if sec is None:
        return None
    known = {s.slug: s for s in secs}
    return PageHelp(pages.BY_URL[url_path].title, name, sec, [(known[r].title, r) for r in related if r in known])


def link(guide: str, section: str | None = None) -> str:
    """The Help page's address of a guide (and one of its sections)."""
    return f"/help?guide={guide}" + (f"&section={section}" if section else "")
