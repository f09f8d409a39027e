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
