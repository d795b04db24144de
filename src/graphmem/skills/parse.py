"""Reading one SKILL.md: front matter (robustly), name, description, category, tags,
triggers, related skills, body.

Collections in use spell the same things differently: ``related``, ``related_skills``,
``related-skills``, ``metadata.related*``, ``metadata.hermes.related_skills``; category and
tags at the top, under ``metadata`` or under ``metadata.hermes``. A front matter that
:func:`graphmem.frontmatter.load_front_matter` refuses (not valid YAML, aliases, too big) is
read line by line for what can be read, with a warning naming the file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..frontmatter import FrontMatterError, load_front_matter

__all__ = ["SkillDoc", "parse_skill", "split_front_matter", "name_key"]

_FENCE = re.compile(r"^---[ \t]*$")


@dataclass
class SkillDoc:
    """What a SKILL.md says about its skill (``id`` is its folder relative to the root)."""

    id: str
    name: str
    description: str
    category: str
    tags: list[str]
    triggers: list[str]
    related: list[str]
    body: str
    sha256: str
    warnings: list[str] = field(default_factory=list)
    front_matter: dict[str, Any] = field(default_factory=dict)


def name_key(name: str) -> str:
    """How skill names are compared: case-, space-, hyphen- and underscore-insensitive."""
    return " ".join(re.findall(r"[0-9a-z]+", name.lower()))


def split_front_matter(text: str) -> tuple[str | None, str]:
    """``(front matter text or None, body)``. Only a block that opens the file counts: a
    second ``---`` block further down belongs to the body."""
    lines = text.split("\n")
    if not lines or not _FENCE.match(lines[0]):
        return None, text
    for i in range(1, len(lines)):
        if _FENCE.match(lines[i]) or lines[i].rstrip() == "...":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]).lstrip("\n")
    return None, text  # never closed: not front matter


def _loose_front_matter(fm: str) -> dict[str, Any]:
    """Top-level ``key: value`` lines (with indented continuation lines) of a front matter
    that YAML rejects."""
    out: dict[str, Any] = {}
    key: str | None = None
    for line in fm.split("\n"):
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if m:
            key = m.group(1)
            value = m.group(2).strip()
            if value in ("|", ">", "|-", ">-"):
                value = ""
            out[key] = _unquote(value)
        elif key and line.startswith((" ", "\t")) and line.strip():
            prev = out.get(key, "")
            out[key] = (prev + " " + line.strip()).strip() if isinstance(prev, str) else prev
    return out


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return " ".join(_text(v) for v in value)
    return " ".join(str(value).split())


def _names(value: Any) -> list[str]:
    """A list of names from a YAML list, a comma/space-separated string, or a mapping's keys."""
    if value is None or value is False:
        return []
    if isinstance(value, str):
        parts = re.split(r"[,;\n]", value.strip().strip("[]"))
        return [p.strip().strip("'\"`") for p in parts if p.strip().strip("'\"`")]
    if isinstance(value, Mapping):
        return [str(k) for k in value]
    if isinstance(value, Iterable):
        out: list[str] = []
        for v in value:
            if isinstance(v, Mapping):  # e.g. [{name: x, reason: ...}]
                v = v.get("name") or v.get("skill") or next(iter(v.values()), None)
            if v is not None and str(v).strip():
                out.append(str(v).strip())
        return out
    return [str(value)]


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        k = item.strip().lower()
        if k and k not in seen:
            seen[k] = item.strip()
    return list(seen.values())


def _related(fm: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    scopes: list[Mapping[str, Any]] = [fm]
    meta = fm.get("metadata")
    if isinstance(meta, Mapping):
        scopes.append(meta)
        hermes = meta.get("hermes")
        if isinstance(hermes, Mapping):
            scopes.append(hermes)
    for scope in scopes:
        for key, value in scope.items():
            k = str(key).lower().replace("-", "_")
            if k == "related" or k.startswith("related_"):
                found.extend(_names(value))
    return _dedupe(found)


def _first(fm: Mapping[str, Any], *paths: str) -> Any:
    for path in paths:
        node: Any = fm
        for part in path.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if node not in (None, "", [], {}):
            return node
    return None


def parse_skill(skill_id: str, raw: bytes, folder_name: str, parent: str) -> SkillDoc:
    """Parse the bytes of one SKILL.md. Never raises on content: problems become warnings."""
    warnings: list[str] = []
    sha = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("utf-8-sig", errors="replace")
        warnings.append(f"{skill_id}/SKILL.md: not valid UTF-8; undecodable bytes replaced")
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    fm_text, body = split_front_matter(text)
    fm: dict[str, Any] = {}
    if fm_text is None:
        warnings.append(f"{skill_id}/SKILL.md: no front matter; name from the folder, description from the text")
    else:
        try:
            fm = load_front_matter(fm_text)
        except FrontMatterError as exc:
            where = f" (line {exc.line + 1})" if exc.line is not None else ""  # the file's line: after '---'
            warnings.append(f"{skill_id}/SKILL.md: front matter {exc.reason}{where}; read line by line")
            fm = _loose_front_matter(fm_text)
    name = _text(fm.get("name")) or folder_name
    description = _text(fm.get("description"))
    if not description:
        description = _text(_first(fm, "metadata.short-description", "metadata.description"))
    if not description:
        description = _first_paragraph(body)
    category = _text(_first(fm, "category", "metadata.category", "metadata.hermes.category")) or parent
    tags = _dedupe(_names(_first(fm, "tags", "metadata.tags", "metadata.hermes.tags")))
    triggers = _dedupe(_names(_first(fm, "triggers", "metadata.triggers", "metadata.hermes.triggers")))
    return SkillDoc(id=skill_id, name=name, description=description, category=category, tags=tags,
                    triggers=triggers, related=_related(fm), body=body, sha256=sha, warnings=warnings,
                    front_matter=fm)


def _first_paragraph(body: str, limit: int = 300) -> str:
    for para in re.split(r"\n\s*\n", body):
        p = " ".join(line.strip() for line in para.split("\n") if not line.strip().startswith("#"))
        if p.strip():
            return p.strip()[:limit]
    return ""

