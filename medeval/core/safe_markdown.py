"""Markdown written by one person and shown to others, made safe to render (``st.markdown``).

:func:`safe_markdown` parses the text (markdown-it, CommonMark with tables and strikethrough, raw HTML
off) and writes it out again with only the harmless constructs: headings, emphasis, lists, quotes, code,
tables and http/https links. Raw HTML is shown as text, images become their alt text, other links become
plain text, and Streamlit's own syntax (``:icon:``, colours, ``$maths$``, autolinks) is escaped.

markdown-it parses in time linear in the text, but it is pure Python and dense markup costs it much per
character: 20,000 characters of ``![`` took 0.4 s, of ``- a`` lines 0.25 s, against 0.01-0.02 s for a
20,000-character document as people write them. A text whose parse would cost more than :data:`WORK_BUDGET`
(estimated from its lines and markup characters, :func:`work`) is shown as plain text instead: every line
escaped, lines and paragraphs kept -- as safe, and never slow. A link's target is read with its brackets nested
at most 8 deep (markdown-it: 32), which keeps a long run of links with nested brackets linear.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from markdown_it import MarkdownIt
from markdown_it import helpers as _helpers
from markdown_it.common.utils import unescapeAll
from markdown_it.tree import SyntaxTreeNode

from medeval.core.limits import TEXT_MAX_CHARS, check_text

_MD = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_NESTING = 8
"""Brackets nested in a link's target, at most (markdown-it allows 32, CommonMark asks for 3): each link in a long
run of "[a](((..." was read up to 32 brackets ahead, which made such text grow quadratically up to 1,500 characters."""
_DEST_STOP = re.compile(r"[\x00-\x20\x7f\\()]")


class _Destination:
    __slots__ = ("ok", "pos", "str")

    def __init__(self) -> None:
        self.ok, self.pos, self.str = False, 0, ""


def _link_destination(string: str, pos: int, maximum: int):
    """markdown-it's ``parseLinkDestination``, with brackets nested at most ``_NESTING`` deep, and the characters
    that cannot end a target skipped in one step (a regular expression) instead of one at a time."""
    if string[pos:pos + 1] == "<":
        return _helpers.parseLinkDestination(string, pos, maximum)  # "<target>": no brackets counted
    result, start, level = _Destination(), pos, 0
    while pos < maximum:
        stop = _DEST_STOP.search(string, pos, maximum)
        if stop is None:
            pos = maximum
            break
        pos, c = stop.start(), stop.group()
        if c <= " " or c == "\x7f":  # a space or a control character ends the target
            break
        if c == "\\":
            if pos + 1 < maximum:
                if string[pos + 1] == " ":
                    break
                pos += 2
                continue
        elif c == "(":
            level += 1
            if level > _NESTING:
                return result
        elif level == 0:  # ")" closing the link
            break
        else:
            level -= 1
        pos += 1
    if start == pos or level != 0:
        return result
    result.ok, result.pos, result.str = True, pos, unescapeAll(string[start:pos])
    return result


_MD.helpers = SimpleNamespace(parseLinkLabel=_helpers.parseLinkLabel, parseLinkTitle=_helpers.parseLinkTitle,
                              parseLinkDestination=_link_destination)
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=\"'])")
# after ":" and "@" and between "www" and ".": a word joiner stops Streamlit's autolinks, icons and emoji
_AUTOLINKS = re.compile(r"(?<=[:@])(?=\S)|(?<=www)(?=\.)", re.IGNORECASE)
_SAFE_SCHEMES = ("http://", "https://")
# markdown-it's inline "terminators": where its inline rules run (the rest of a text is skipped in one step)
_MARKUP = re.compile(r"[!#$%&*+\-:<=>@\[\\\]^_`{}~]")
WORK_BUDGET = 100_000
"""The most work (:func:`work`, about microseconds of markdown-it on a 2-core server) a text is parsed with."""


def _esc(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", _AUTOLINKS.sub("\u2060", text))


def _safe_href(href: str) -> str | None:
    h = (href or "").strip()
    if not h.lower().startswith(_SAFE_SCHEMES) or len(h) <= len("https://"):
        return None
    return "".join(c if 32 < ord(c) < 127 and c not in "<>\\" else f"%{ord(c):02X}" if ord(c) < 128
                   else c for c in h)


def _plain(node: SyntaxTreeNode) -> str:
    """The text of an inline subtree, nothing else (an image's alt text)."""
    if node.type in ("text", "code_inline"):
        return node.content
    if node.type in ("softbreak", "hardbreak"):
        return " "
    return "".join(_plain(c) for c in node.children)


def _code_span(content: str) -> str:
    run = max((len(m) for m in re.findall(r"`+", content)), default=0)
    fence = "`" * (run + 1)
    pad = " " if content.startswith("`") or content.endswith("`") else ""
    return f"{fence}{pad}{content}{pad}{fence}"


def _inline(node: SyntaxTreeNode) -> str:
    out = []
    for c in node.children:
        t = c.type
        if t == "text":
            out.append(_esc(c.content))
        elif t == "softbreak":
            out.append("\n")
        elif t == "hardbreak":
            out.append("\\\n")
        elif t == "code_inline":
            out.append(_code_span(c.content))
        elif t == "strong":
            out.append(f"**{_inline(c)}**")
        elif t == "em":
            out.append(f"*{_inline(c)}*")
        elif t == "s":
            out.append(f"~~{_inline(c)}~~")
        elif t == "link":
            href = _safe_href(str(c.attrs.get("href", "")))
            label = _inline(c)
            out.append(f"[{label}](<{href}>)" if href and label.strip() else label)
        elif t == "image":
            out.append(_esc(_plain(c)))  # never an image: its alt text
        else:
            out.append(_esc(_plain(c)) if c.children else _esc(c.content or ""))
    return "".join(out)


def _indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    return "\n".join([first + lines[0]] + [(rest + ln) if ln else "" for ln in lines[1:]])


def _block(node: SyntaxTreeNode) -> str:
    t = node.type
    if t == "paragraph":
        return _inline(node.children[0]) if node.children else ""
    if t == "heading":
        return "#" * int(node.tag[1]) + " " + _inline(node.children[0])
    if t == "blockquote":
        inner = "\n\n".join(_block(c) for c in node.children)
        return "\n".join("> " + ln if ln else ">" for ln in inner.split("\n"))
    if t in ("bullet_list", "ordered_list"):
        start = int(node.attrs.get("start", 1)) if t == "ordered_list" else 1
        tight = all(p.hidden for li in node.children for p in li.children if p.type == "paragraph")
        items = []
        for n, li in enumerate(node.children):
            marker = f"{start + n}. " if t == "ordered_list" else "- "
            body = ("\n" if tight else "\n\n").join(_block(c) for c in li.children) or " "
            items.append(_indent(body, marker, " " * len(marker)))
        return ("\n" if tight else "\n\n").join(items)
    if t in ("fence", "code_block"):
        content = node.content if node.content.endswith("\n") else node.content + "\n"
        run = max((len(m) for m in re.findall(r"`{3,}", content)), default=0)
        fence = "`" * max(3, run + 1)
        lang = re.sub(r"[^A-Za-z0-9_+-]", "", (node.info or "").split(" ")[0])[:20] if t == "fence" else ""
        return f"{fence}{lang}\n{content}{fence}"
    if t == "hr":
        return "---"
    if t == "table":
        rows = [tr for part in node.children for tr in part.children]
        lines = []
        for i, tr in enumerate(rows):
            cells = [_inline(td.children[0]).replace("\n", " ") if td.children else "" for td in tr.children]
            lines.append("| " + " | ".join(cells) + " |")
            if i == 0:
                lines.append("|" + "|".join(" --- " for _ in cells) + "|")
        return "\n".join(lines)
    if node.children:
        return "\n\n".join(_block(c) for c in node.children)
    return _esc(node.content or "")


def work(text: str) -> float:
    """The estimated cost of parsing and rewriting ``text``, about microseconds on a 2-core server: per line 60
    (lists and quotes, the dearest lines), per markup character 20, per parenthesis 12 and per link or image
    opening ("](", "![") 20 more (a link's target is scanned through up to 32 nested brackets), per character 0.2
    -- upper bounds measured on the densest inputs of each kind (``bench/bench_readers.py``). This repository's
    20,000-character documents cost 33,000 to 46,000."""
    return (60 * text.count("\n") + 20 * len(_MARKUP.findall(text)) + 12 * (text.count("(") + text.count(")"))
            + 20 * (text.count("](") + text.count("![")) + 0.2 * len(text))


def _as_text(text: str) -> str:
    """``text`` shown as written, nothing in it read as Markdown: each line escaped (leading spaces dropped, so
    that no line becomes code) and ended by a hard break, paragraphs apart."""
    paragraphs, lines = [], []
    for line in text.splitlines() + [""]:
        if line.strip():
            lines.append(_esc(line.strip()))
        elif lines:
            paragraphs.append("\\\n".join(lines))
            lines = []
    return "\n\n".join(paragraphs)


def safe_markdown(text: str, *, what: str = "the guidelines text") -> str:
    """``text`` (untrusted Markdown) written out again as Markdown that is safe to render.

    Kept: headings, paragraphs, emphasis, strike-through, lists, quotes, code, tables, rules, and links
    whose target is http or https (Streamlit opens them in a new tab). Raw HTML is shown as text; an
    image becomes its alt text (nothing is loaded); a link with another scheme (javascript:, data:,
    mailto:, a relative path) becomes its text. Every piece of text is escaped, so nothing inside it can
    become HTML, a link, an icon, a colour or maths. Show the result with
    ``st.markdown(..., unsafe_allow_html=False)``. A text too dense in markup to parse within
    :data:`WORK_BUDGET` is shown as plain text (see the module's notes).
    """
    text = check_text(text, what=what, max_chars=TEXT_MAX_CHARS)
    if work(text) > WORK_BUDGET:
        return _as_text(text)
    root = SyntaxTreeNode(_MD.parse(text))
    return "\n\n".join(b for b in (_block(c) for c in root.children) if b.strip())

