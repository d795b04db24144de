"""Prompt blocks for retrieved skills: what an agent's system prompt gets instead of every skill.

Three shapes, each returned with an estimate of the tokens it adds (about four characters a
token, the same estimate for every block so they compare):

- ``markdown``: skills grouped by category, one line each (name, description, id);
- ``hermes``: Hermes Agent's ``<available_skills>`` block;
- ``claude``: a Claude Code context file (markdown with how to load a skill).

Descriptions only: bodies stay out of prompts (``graphmem skills show ID`` loads one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Protocol

from ..errors import InvalidInput
from ..retrieval.evidence import estimate_tokens

__all__ = ["PromptBlock", "render_block", "FORMATS"]

FORMATS = ("markdown", "hermes", "claude")


class _Skill(Protocol):
    id: str
    name: str
    description: str
    category: str
    path: str


@dataclass
class PromptBlock:
    """A rendered block and its size."""

    format: str
    text: str
    skills: int
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "skills": self.skills, "tokens": self.tokens, "text": self.text}


# C0 controls and DEL: a terminal escape or a bell in a skill's text has no place in a prompt, and the hermes
# block would not be XML 1.0 with them
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _one_line(text: str, limit: int) -> str:
    text = " ".join(_CONTROL.sub("", text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _markdown(skills: Sequence[_Skill], max_desc: int) -> str:
    groups: dict[str, list[_Skill]] = {}
    for s in skills:
        groups.setdefault(s.category or "other", []).append(s)
    lines = ["## Available skills", ""]
    for cat, members in groups.items():
        lines.append(f"### {cat}")
        for s in members:
            lines.append(f"- **{s.name}** ({s.id}): {_one_line(s.description, max_desc)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _hermes(skills: Sequence[_Skill], max_desc: int) -> str:
    lines = ["<available_skills>"]
    for s in skills:
        lines.append("  <skill>")
        lines.append(f"    <name>{escape(s.name)}</name>")
        lines.append(f"    <description>{escape(_one_line(s.description, max_desc))}</description>")
        lines.append(f"    <location>{escape(s.path)}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines) + "\n"


def _claude(skills: Sequence[_Skill], max_desc: int, query: str | None) -> str:
    head = ["# Skills for this task", ""]
    if query:
        head += [f"Selected by graphmem for: {_one_line(query, 200)}", ""]
    head += ["Read a skill's SKILL.md (path below, or `graphmem skills show ID`) before using it.", ""]
    body = [f"- **{s.name}** — {_one_line(s.description, max_desc)}  \n  `{s.path}`" for s in skills]
    return "\n".join(head + body) + "\n"


def render_block(skills: Sequence[_Skill], fmt: str = "markdown", *, max_description: int = 300,
                 query: str | None = None) -> PromptBlock:
    """Render ``skills`` as a prompt block of format ``fmt`` (markdown, hermes, claude)."""
    if fmt == "markdown":
        text = _markdown(skills, max_description)
    elif fmt == "hermes":
        text = _hermes(skills, max_description)
    elif fmt == "claude":
        text = _claude(skills, max_description, query)
    else:
        raise InvalidInput(f"prompt format '{fmt}': choose one of {', '.join(FORMATS)}")
    return PromptBlock(fmt, text, len(skills), estimate_tokens(text))
