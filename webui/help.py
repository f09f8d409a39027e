"""The Help page's guide: README.md split into its "## " sections, with slugs and image lines.

Pure functions (no Streamlit), so the parsing is unit-tested on its own (tests/test_help_page.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository: README.md sits next to app.py
README = ROOT / "README.md"
_IMAGE = re.compile(r"\s*!\[([^\]]*)\]\(\s*([^)\s]+)\s*\)\s*")
_FENCE = re.compile(r"\s*(```|~~~)")


def slug(title: str) -> str:
    """A heading as a URL slug: its words in lowercase joined by '-' ("Running it in a hospital" ->
    "running-it-in-a-hospital"; punctuation and markup are dropped)."""
    return "-".join(re.findall(r"[^\W_]+", title.lower()))


@dataclass
class Section:
    title: str
    slug: str
    # ("markdown", text) or ("image", alt, path), in order
    parts: list[tuple[str, ...]] = field(default_factory=list)


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
        lines.append(line)
    chunks.append((title, lines))
    return [Section(t, slug(t), _parts(ls)) for t, ls in chunks if t or "".join(ls).strip()]


def find(secs: list[Section], wanted: str | None) -> Section | None:
    """The section whose slug is ``wanted`` (None when nothing or nothing known is asked for)."""
    return next((s for s in secs if wanted and s.slug == wanted), None)


def image_file(path: str, root: Path = ROOT) -> Path | None:
    """The file an image line names, if it is a local file inside the repository (never a URL or ``..``)."""
    if re.match(r"[a-z][a-z0-9+.-]*:", path, re.IGNORECASE) or path.startswith("/"):
        return None
    file = (root / path).resolve()
    return file if file.is_relative_to(root.resolve()) and file.is_file() else None


# ------------------------------------------------------------------ help for the page the user came from
# url path of a page -> (its title, the bold label of its bullet in "## The web app", related sections' slugs).
# A page without a bullet (None) is explained by its own "### " section, the first related slug.
PAGE_HELP = {
    "grade": ("Grade", "Grading", ("guidelines", "gold-items-and-qualification")),
    "annotate": ("Rate & compare", "Rate & compare", ("guidelines", "gold-items-and-qualification")),
    "campaigns": ("Campaigns", "Campaigns", ("campaigns-app-library-and-cli", "five-minutes-with-the-demo")),
    "new-campaign": ("New campaign", "Campaigns", ("campaigns-app-library-and-cli",)),
    "agreement": ("Agreement", "Agreement", ("agreement-statistics",)),
    "tuning": ("Tune cut-offs", "Tune cut-offs", ("calibrating-cut-offs",)),
    "leaderboard": ("Leaderboard", "Leaderboard", ("threshold-sets-and-grading",)),
    "new-task": ("New task", "New task", ("cases-judgements-and-fact-check-answers-task-campaigns",
                                          "task-types-adding-one")),
    "task-results": ("Task results", "Task results", ("cases-judgements-and-fact-check-answers-task-campaigns",)),
    "adjudicate": ("Adjudicate", None, ("adjudication",)),
    "users": ("Users & audit", "Users & audit", ("accounts",)),
    "exam": ("Exam results", None, ("exam-answers-cmb-exam",)),
}
# "## " sections for installing and running medeval: shown after everything about using it
SETUP_SECTIONS = ("two-commands", "command-line", "settings", "storage", "speed", "layout")


def subsections(text: str) -> list[Section]:
    """Every "### " section of ``text`` (Markdown), up to the next "### " or "## " heading (not inside fences)."""
    out: list[tuple[str, list[str]]] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            out.append(("", []))  # a "## " heading ends the "### " section before it
            continue
        if not fenced and line.startswith("### "):
            out.append((line[4:].strip(), []))
        if out:
            out[-1][1].append(line)
    return [Section(t, slug(t), _parts(ls)) for t, ls in out if t]


def bullet(text: str, label: str) -> str | None:
    """The top-level list item of "## The web app" that starts ``- **label**`` (its lines, the marker removed)."""
    secs = {s.slug: s for s in sections(text)}
    web = secs.get("the-web-app")
    if web is None:
        return None
    lines = "\n".join(p[1] for p in web.parts if p[0] == "markdown").splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(f"- **{label}**")), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("- ", "#")) or
                (not lines[i].strip() and (i + 1 >= len(lines) or not lines[i + 1].startswith(" ")))), len(lines))
    return "\n".join([lines[start][2:], *(ln[2:] if ln.startswith("  ") else ln for ln in lines[start + 1:end])])


@dataclass
class PageHelp:
    title: str  # the page's title, e.g. "Grade"
    body: str  # Markdown: how to use the page (the README's own words)
    related: list[tuple[str, str]]  # (title, slug) of the sections that say more


def page_help(text: str, url_path: str | None) -> PageHelp | None:
    """How to use the page at ``url_path``, from the README ``text``; None for a page it does not describe."""
    if url_path not in PAGE_HELP:
        return None
    title, label, related = PAGE_HELP[url_path]
    known = {s.slug: s for s in [*sections(text), *subsections(text)]}
    body = bullet(text, label) if label else None
    if body is None and related and related[0] in known:  # a page with a section of its own
        body = "\n\n".join(p[1] for p in known[related[0]].parts if p[0] == "markdown")
        body = re.sub(r"^#{2,3} .*\n+", "", body)
        related = related[1:]
    if body is None:
        return None
    return PageHelp(title, body, [(known[r].title, r) for r in related if r in known])


def ordered(secs: list[Section]) -> tuple[list[Section], list[Section]]:
    """The whole guide as (using medeval, setting it up): installing, the command line and settings come last."""
    return [s for s in secs if s.slug not in SETUP_SECTIONS], [s for s in secs if s.slug in SETUP_SECTIONS]
