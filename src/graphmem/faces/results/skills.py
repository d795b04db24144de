"""Results of ``kb.skills``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import Result

__all__ = [
    "SkillDetail",
    "SkillLink",
    "SkillNeighbours",
    "SkillsInfo",
]


# -- skills ------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class SkillDetail(Result):
    """One skill as indexed (``kb.skills.get``): what its SKILL.md says, where it is, its hash."""

    id: str
    name: str
    description: str
    category: str
    tags: list[str]
    triggers: list[str]
    related: list[str]
    path: str
    root: str
    front_matter: dict[str, Any]
    warnings: list[str]
    body: str
    sha256: str
    updated_at: str


@dataclass(frozen=True, eq=False)
class SkillLink(Result):
    """A linked skill and the weight of the link."""

    id: str
    name: str
    weight: float


@dataclass(frozen=True, eq=False)
class SkillNeighbours(Result):
    """``kb.skills.neighbours``: a skill and its linked skills by edge type (related, sibling, similar)."""

    id: str
    name: str
    category: str
    edges: dict[str, list[SkillLink]]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "category": self.category,
                "edges": {t: [link.to_dict() for link in links] for t, links in self.edges.items()}}


@dataclass(frozen=True, eq=False)
class SkillsInfo(Result):
    """``kb.skills.info``: counts, categories (most skills first), edges by type, unresolved ``related``."""

    skills: int
    roots: list[str]
    categories: dict[str, int]
    edges: dict[str, int]
    unresolved_related: dict[str, list[str]]
    with_vectors: bool
