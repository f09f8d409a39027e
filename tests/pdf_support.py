"""Reading a PDF back (poppler-utils, which scripts/install-browser.sh installs): its text, the fonts embedded in
it, and the characters of its text that no font the report asks for has a glyph for (what would print as a box)."""

from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path


def text(pdf: Path) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True,
                          encoding="utf-8", check=True).stdout


def embedded_fonts(pdf: Path) -> list[str]:
    """The PostScript names of the fonts embedded in ``pdf`` (a subset's ``ABCDEF+`` prefix removed)."""
    out = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True).stdout.splitlines()
    names = []
    for line in out[2:]:  # a header and a rule first
        parts = line.split()
        if parts and "yes" in parts[-5:-2]:  # the "emb" column
            names.append(re.sub(r"^[A-Z]{6}\+", "", parts[0]))
    return names


@lru_cache(maxsize=None)
def _family_files(family: str) -> tuple[tuple[str, int], ...]:
    """(file, index in a collection) of each installed font of ``family`` (fontconfig)."""
    out = subprocess.run(["fc-list", "-f", "%{file}\t%{index}\n", family], capture_output=True, text=True,
                         check=True).stdout
    return tuple((f, int(i or 0)) for f, i in (line.split("\t") for line in out.splitlines() if "\t" in line))


@lru_cache(maxsize=None)
def _cmap(file: str, index: int) -> frozenset[int]:
    from fontTools.ttLib import TTFont

    return frozenset(TTFont(file, fontNumber=index, lazy=True).getBestCmap())


def stack_families(css_stack: str) -> list[str]:
    """The family names of a CSS font-family list (generic names like sans-serif left out)."""
    names = [n.strip().strip('"\'') for n in css_stack.split(",")]
    return [n for n in names if n and n not in ("system-ui", "sans-serif", "serif", "monospace")]


def uncovered_chars(chars, css_stack: str) -> tuple[set[str], list[str]]:
    """(the characters of ``chars`` that no installed font of the font stack has a glyph for -- what would print as
    a box --, the installed families of the stack)."""
    installed = [f for f in stack_families(css_stack) if _family_files(f)]
    covered = frozenset().union(*(_cmap(file, i) for fam in installed for file, i in _family_files(fam)))
    return {c for c in chars if not c.isspace() and ord(c) not in covered}, installed


def uncovered(pdf: Path, css_stack: str) -> tuple[set[str], list[str]]:
    """:func:`uncovered_chars` of the PDF's text. Chromium embeds CFF fonts such as Noto Sans CJK as nameless Type 3
    fonts, so the fonts are read from the stack the page asks for, the text from the PDF."""
    return uncovered_chars(set(text(pdf)), css_stack)
