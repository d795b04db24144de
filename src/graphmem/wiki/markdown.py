"""Reading and writing page markdown: YAML front matter, graphmem's generated blocks,
``[[wikilinks]]`` with their line numbers, stated claims, and the flags lint needs.

Pure functions over text; no I/O. A page file is::

    ---
    title: memory leak
    category: entity
    ...
    ---
    # memory leak
    <!-- graphmem:begin generated -->
    ...written by graphmem, rewritten on every update...
    <!-- graphmem:end generated -->
    Anything here (or above the block) is a person's or an agent's, kept byte for byte.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from ..frontmatter import FrontMatterError, load_front_matter
from ..models import PageLink
from ..text import memo_short

__all__ = [
    "BEGIN",
    "END",
    "ParsedPage",
    "Claim",
    "parse_page",
    "split_front_matter",
    "dump_front_matter",
    "generated_block",
    "html_safe",
    "heading_text",
    "code_span",
    "replace_generated",
    "parse_links",
    "parse_claims",
    "index_text",
]

BEGIN = "<!-- graphmem:begin generated -->"
END = "<!-- graphmem:end generated -->"

# libyaml's C dumper when PyYAML was built with it (10x faster), else pure Python. Reading goes
# through graphmem.frontmatter (no aliases, dates kept as text, one error type).
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_FENCE = re.compile(r"^\s*(```|~~~)")
# A code span as CommonMark reads it: a run of backticks, then the same run closing it (code_span writes ids
# holding backticks that way); links inside one are no links.
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.*?)(?<!`)\1(?!`)")
_LINK = re.compile(r"!?\[\[([^\[\]\n|#]*)(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")
_CLAIM = re.compile(
    r"^\s*(?:[-*+]|\d+\.)\s+\[\[([^\[\]\n|#]+)(?:\|[^\[\]\n]*)?\]\]\s+\**([A-Za-z][A-Za-z _-]{0,48}?)\**\s+"
    r"\[\[([^\[\]\n|#]+)(?:\|[^\[\]\n]*)?\]\]"
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_CONTRA_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+contradictions\b", re.IGNORECASE)
_TYPE_LINE = re.compile(r"^\*\*Type:\*\*\s*([^·\n*]+)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+\S")


@dataclass(frozen=True)
class Claim:
    """A stated relation ``[[source]] relation [[target]]`` on line ``line`` of a page."""

    source: str
    relation: str
    target: str
    line: int
    text: str


@dataclass(frozen=True)
class ParsedPage:
    """What indexing needs from one page file."""

    front_matter: dict[str, Any]
    body: str
    body_line: int  # 1-based line number of the body's first line in the file
    links: list[PageLink]
    claims: list[Claim]
    contradictions: int
    stub: bool
    stated_type: str | None
    has_generated: bool
    front_matter_error: str | None = None


def html_safe(text: str) -> str:
    """A stranger's text (a title, a name, a quote) made inert in markdown prose: Obsidian and the web UI
    render inline HTML, so ``<`` is written ``&lt;`` (it reads the same) and no tag, comment or style
    can begin. Text without ``<`` is returned as it is."""
    return text.replace("<", "&lt;") if "<" in text else text


def heading_text(title: str) -> str:
    """A title as the ``# heading`` of the page graphmem writes for it: :func:`html_safe`, and ``[[``/``]]``
    broken apart so that a document titled "Notes on [[Secret]]" does not put a live (broken) link there."""
    return html_safe(title).replace("[[", "[ [").replace("]]", "] ]")


def code_span(text: str) -> str:
    """``text`` (an id, a path) as one inline code span: fenced by one backtick more than the longest run
    inside it, padded when it starts or ends with one (CommonMark), so a backtick in an id cannot end the
    span early and let the rest be read as markdown or HTML. A plain id gives `` `id` `` as before."""
    one = text.replace("\n", " ").replace("\r", " ")
    if "`" not in one:
        return f"`{one}`"
    run = max(len(m) for m in re.findall(r"`+", one))
    fence = "`" * (run + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{fence}{pad}{one}{pad}{fence}"  # inside a code span nothing is HTML: no escaping


def split_front_matter(text: str, known: dict[str, Any] | None = None
                       ) -> tuple[dict[str, Any], str, int, str | None]:
    """``(front matter, body, body's first line number, YAML error or None)``. A front matter
    :func:`~graphmem.frontmatter.load_front_matter` refuses gives ``{}`` and the reason.

    ``known``: the front matter the text was just written with (its YAML is not re-parsed). A byte-order
    mark before it (Windows editors write one) is not part of the page: the front matter was lost to it.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return {}, text, 1, None
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") in ("---", "..."):
            raw = "".join(lines[1:i])
            body = "".join(lines[i + 1 :])
            if known is not None:
                return known, body, i + 2, None
            try:
                return load_front_matter(raw), body, i + 2, None
            except FrontMatterError as exc:  # the page is read without its front matter
                return {}, body, i + 2, str(exc)
    return {}, text, 1, "front matter has no closing '---' line"


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_ .@/+-]*[A-Za-z0-9_.@/+-]|[A-Za-z_]")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# Plain scalars YAML 1.1 would read as something other than a string.
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n"})


def _scalar(value: Any) -> str | None:
    """A one-line YAML scalar for simple values, or None (let PyYAML do it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "null"
    if not isinstance(value, str) or not value.isprintable():
        return None
    if _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def _fast_yaml(data: dict[str, Any]) -> str | None:
    out: list[str] = []
    for key, value in data.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            return None
        if isinstance(value, list):
            if not value:
                out.append(f"{key}: []")
                continue
            items = [_scalar(v) for v in value]
            if any(i is None for i in items):
                return None
            out.append(f"{key}:")
            out += [f"- {i}" for i in items]
        else:
            s = _scalar(value)
            if s is None:
                return None
            out.append(f"{key}: {s}")
    return "\n".join(out) + "\n"


def dump_front_matter(data: dict[str, Any]) -> str:
    """``---`` + YAML + ``---`` (keys in the given order, Unicode kept). Flat front matter of
    strings, numbers and lists is written directly (a page write is hot); anything else by
    PyYAML."""
    fast = _fast_yaml(data)
    if fast is not None:
        return "---\n" + fast + "---\n"
    dumped = yaml.dump(json.loads(json.dumps(data, default=str)), Dumper=_Dumper, sort_keys=False,
                       allow_unicode=True, default_flow_style=False, width=1000)
    return "---\n" + dumped + "---\n"


def generated_block(body: str) -> tuple[int, int] | None:
    """``(start, end)`` offsets of the first ``BEGIN ... END`` block, markers included."""
    start = body.find(BEGIN)
    if start < 0:
        return None
    end = body.find(END, start + len(BEGIN))
    if end < 0:
        return None
    return start, end + len(END)


def replace_generated(body: str, block: str) -> str:
    """``body`` with its generated block's inside replaced by ``block``; everything outside
    the markers is kept byte for byte. A body without a block gets one appended."""
    inner = BEGIN + "\n" + block.rstrip("\n") + "\n" + END
    span = generated_block(body)
    if span is None:
        if not body:
            return inner + "\n"
        sep = "" if body.endswith("\n\n") else ("\n" if body.endswith("\n") else "\n\n")
        return body + sep + inner + "\n"
    return body[: span[0]] + inner + body[span[1] :]


def _link_lines(text: str) -> list[tuple[int, str]]:
    """(0-based index, line) of the lines holding ``[[`` outside fenced code, inline code blanked."""
    out: list[tuple[int, str]] = []
    fenced = False
    has_fence = "```" in text or "~~~" in text
    for i, line in enumerate(text.split("\n")):
        if has_fence and _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and "[[" in line:
            if "`" in line:
                line = _INLINE_CODE.sub("", line)
            out.append((i, line))
    return out


@memo_short(65536)
def link_target(raw: str) -> str:
    """Normalise a link target the way pages are named: last path part, no ``.md``, lowercase."""
    target = raw.strip().replace("\\", "/").rsplit("/", 1)[-1].strip()
    if target.lower().endswith(".md"):
        target = target[:-3]
    return target.lower()


def link_forms(slug: str, title: str | None, front_matter: Any) -> set[str]:
    """The stored targets (:func:`link_target`) of links that mean the page ``slug``: its slug, and its title
    and front-matter ``aliases`` as written in ``[[Dispatch API]]`` (what Obsidian resolves too). Links keep
    the target as written, so a link made before its page existed resolves once the page is there."""
    forms = {slug}
    names = [title] if isinstance(title, str) else []
    aliases = front_matter.get("aliases") if isinstance(front_matter, dict) else None
    if isinstance(aliases, list):
        names += [a for a in aliases if isinstance(a, str)]
    forms.update(link_target(n) for n in names if n.strip())
    forms.discard("")
    return forms


def parse_links(body: str, first_line: int = 1) -> list[PageLink]:
    """The ``[[target]]``, ``[[target|label]]``, ``[[target#heading]]`` and ``![[embed]]``
    links outside code: one per target, with the line of its first occurrence (``first_line``
    is the line number of the body's start)."""
    return _links(_link_lines(body), first_line)


def _links(lines: list[tuple[int, str]], first_line: int) -> list[PageLink]:
    """One link per target (its first occurrence): what lint and backlinks report."""
    seen: dict[str, PageLink] = {}
    for i, line in lines:
        for raw, label in _LINK.findall(line):
            target = link_target(raw)
            if target and target not in seen:
                seen[target] = PageLink(target, first_line + i, label.strip() or None)
    return list(seen.values())


def parse_claims(body: str, first_line: int = 1) -> list[Claim]:
    """List items stating ``[[a]] relation [[b]]`` (the form summary pages use)."""
    return _claims(_link_lines(body), first_line)


def _claims(lines: list[tuple[int, str]], first_line: int) -> list[Claim]:
    out: list[Claim] = []
    for i, line in lines:
        m = _CLAIM.match(line)
        if m:
            out.append(Claim(link_target(m.group(1)), m.group(2).strip().lower(), link_target(m.group(3)),
                             first_line + i, line.strip()[:300]))
    return out


def _contradictions(body: str) -> int:
    count = 0
    inside = False
    for line in body.split("\n"):
        if _HEADING.match(line):
            inside = bool(_CONTRA_HEADING.match(line))
            continue
        if line.strip() in (BEGIN, END):
            inside = False
            continue
        if inside and _LIST_ITEM.match(line):
            count += 1
    return count


def _meaningful(text: str) -> bool:
    return any(line.strip() and not _HEADING.match(line) for line in text.split("\n"))


def index_text(body: str) -> str:
    """The body as indexed for search: graphmem's marker lines removed."""
    if BEGIN not in body:
        return body
    return "\n".join(line for line in body.split("\n") if line.strip() not in (BEGIN, END))


def parse_page(text: str, category: str, front_matter: dict[str, Any] | None = None) -> ParsedPage:
    """Parse a page file's text (``category`` decides whether it can be a stub;
    ``front_matter``: the one it was just written with, to skip re-parsing the YAML)."""
    fm, body, body_line, error = split_front_matter(text, front_matter)
    lines = _link_lines(body)
    links = _links(lines, body_line)
    claims = _claims(lines, body_line)
    span = generated_block(body)
    generated = body[span[0] : span[1]] if span else ""
    outside = body[: span[0]] + body[span[1] :] if span else body
    stated = fm.get("type") or fm.get("entity_type")
    if not isinstance(stated, str) or not stated.strip():
        stated = None
        for line in generated.split("\n"):
            m = _TYPE_LINE.match(line.strip())
            if m:
                stated = m.group(1).strip()
                break
    has_items = any(_LIST_ITEM.match(line) for line in generated.split("\n"))
    stub = category == "entity" and not _meaningful(outside) and not has_items
    return ParsedPage(fm, body, body_line, links, claims, _contradictions(body), stub,
                      stated.strip().lower() if isinstance(stated, str) else None, span is not None, error)
