"""What retrieval keeps in memory about the skills: one load per change of the skill set.

The knowledge base bumps ``skills.version`` (in ``kb_meta``) in every transaction that changes
skills or their edges; the index reloads when it differs, so a query never sees a stale set.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .parse import name_key

if TYPE_CHECKING:
    from ..context import Context
    from ..store.protocols import SkillStore

__all__ = ["SkillIndex", "SkillAdjacency", "SkillEntry", "embed_text", "VERSION_KEY", "message_keys", "node_id_for"]

VERSION_KEY = "skills.version"


def node_id_for(skill_id: str) -> str:
    """The graph node of a skill."""
    return "skill:" + skill_id


def embed_text(name: str, description: str, tags: list[str], triggers: list[str]) -> str:
    """The text a skill's vector encodes: what a prompt would show of it, plus tags/triggers."""
    parts = [name.replace("-", " ").replace("_", " "), description]
    if tags:
        parts.append("Tags: " + ", ".join(tags))
    if triggers:
        parts.append("Triggers: " + ", ".join(triggers))
    return ". ".join(p for p in parts if p)


def collection_of(skill_id: str) -> str:
    """The folder holding a skill's folder ('' at the root): its collection."""
    return skill_id.rsplit("/", 1)[0] if "/" in skill_id else ""


_WORD = re.compile(r"[0-9a-z]+")


def message_keys(text: str, max_len: int) -> set[str]:
    """Every run of 1..max_len consecutive words of ``text`` as a name key."""
    words = _WORD.findall(text.lower())
    out: set[str] = set()
    for n in range(1, max_len + 1):
        for i in range(len(words) - n + 1):
            out.add(" ".join(words[i : i + n]))
    return out


@dataclass
class SkillEntry:
    """One skill as retrieval and prompts see it (no body)."""

    rid: int
    id: str
    node_id: str
    name: str
    name_key: str
    description: str
    category: str
    tags: list[str]
    triggers: list[str]
    related: list[str]
    path: str
    root: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "description": self.description, "category": self.category,
                "tags": self.tags, "triggers": self.triggers, "path": self.path}


Neighbour = tuple[int, float, str]  # (other skill's row, edge weight, edge type)


class SkillAdjacency(Mapping[int, list[Neighbour]]):
    """Each skill's edges, read from the store the first time a walk reaches the skill (a cold
    command walks from a few seeds: reading all of a collection's edges cost more than the rest
    of the index). The lists are those a full read gives: the edges in the order they were
    written, a ``related`` edge under its source (related edges are stored both ways), any other
    under both ends; skills without edges are absent."""

    def __init__(self, store: SkillStore, by_node: Mapping[str, int]) -> None:
        self._store, self._by_node = store, by_node
        self._node_of = {i: n for n, i in by_node.items()}
        self._lists: dict[int, list[Neighbour]] = {}
        self._complete = False
        self._any: bool | None = None

    def prefetch(self, rows: Iterable[int]) -> None:
        """Read the edges of those of ``rows`` not read yet, in one store call."""
        if self._complete:
            return
        node_of = self._node_of
        want = [r for r in dict.fromkeys(rows) if r not in self._lists and r in node_of]
        if not want:
            return
        wanted = set(want)
        got: dict[int, list[Neighbour]] = {r: [] for r in want}
        for src, typ, dst, w, _ in self._store.skill_edges_touching([node_of[r] for r in want]):
            a, b = self._by_node.get(src), self._by_node.get(dst)
            if a is None or b is None:
                continue
            if a in wanted:
                got[a].append((b, w, typ))
            if b in wanted and typ != "related":
                got[b].append((a, w, typ))
        self._lists.update(got)

    def _load_all(self) -> None:
        if self._complete:
            return
        lists: dict[int, list[Neighbour]] = defaultdict(list)
        for src, typ, dst, w, _ in self._store.skill_edges():
            a, b = self._by_node.get(src), self._by_node.get(dst)
            if a is None or b is None:
                continue
            lists[a].append((b, w, typ))
            if typ != "related":
                lists[b].append((a, w, typ))
        self._lists = {i: lists.get(i, []) for i in self._by_node.values()}
        self._complete = True

    def __getitem__(self, row: int) -> list[Neighbour]:
        self.prefetch([row])
        got = self._lists.get(row)
        if not got:
            raise KeyError(row)
        return got

    def __iter__(self) -> Iterator[int]:
        self._load_all()
        return (i for i, lst in self._lists.items() if lst)

    def __len__(self) -> int:
        self._load_all()
        return sum(1 for lst in self._lists.values() if lst)

    def __bool__(self) -> bool:
        if self._any is None:
            self._any = (any(self._lists.values()) if self._complete else self._store.has_skill_edges())
        return self._any


@dataclass
class SkillIndex:
    """Skills, their name/trigger keys, vectors and adjacency, loaded at one version."""

    version: str
    entries: list[SkillEntry]
    by_id: dict[str, int]
    by_node: dict[str, int]
    names: dict[str, list[int]]          # name key -> skills with that name
    triggers: dict[str, list[int]]       # trigger key -> skills
    max_key_words: int
    vectors: np.ndarray | None           # (n, dim) float32, unit rows, aligned with entries
    adjacency: Mapping[int, list[tuple[int, float, str]]] = field(default_factory=dict)

    @classmethod
    def load(cls, ctx: Context, version: str) -> SkillIndex:
        store = ctx.store
        entries = [SkillEntry(r["rid"], r["skill_id"], r["node_id"], r["name"], r["name_key"], r["description"],
                              r["category"], json.loads(r["tags"]), json.loads(r["triggers"]),
                              json.loads(r["related"]), r["path"], r["root"]) for r in store.list_skill_rows()]
        by_id = {e.id: i for i, e in enumerate(entries)}
        by_node = {e.node_id: i for i, e in enumerate(entries)}
        names: dict[str, list[int]] = defaultdict(list)
        trig: dict[str, list[int]] = defaultdict(list)
        longest = 1
        for i, e in enumerate(entries):
            if e.name_key:
                names[e.name_key].append(i)
                longest = max(longest, e.name_key.count(" ") + 1)
            for t in e.triggers:
                k = name_key(t)
                if k:
                    trig[k].append(i)
                    longest = max(longest, k.count(" ") + 1)
        vectors = None
        index = ctx.embeddings.vector_index("skill") if entries else None
        if index is not None:
            index.refresh()
            got = index.vectors_of([e.node_id for e in entries])
            if got is not None:
                vectors = got
        return cls(version, entries, by_id, by_node, dict(names), dict(trig), min(longest, 8), vectors,
                   SkillAdjacency(store, by_node))

    def __len__(self) -> int:
        return len(self.entries)

    @cached_property
    def multiword_names(self) -> dict[str, list[str]]:
        """Multi-word name keys by their first word (for finding names in a body)."""
        out: dict[str, list[str]] = defaultdict(list)
        for key in self.names:
            if " " in key:
                out[key.split(" ", 1)[0]].append(key)
        return dict(out)

    @cached_property
    def multiword_lengths(self) -> dict[str, tuple[int, ...]]:
        """The word counts of the multi-word names starting with each first word: a body's phrase is looked up
        once per length, not compared with every name that shares its first word (3,000 names "skill-N" made
        a build quadratic)."""
        return {first: tuple(sorted({k.count(" ") + 1 for k in keys})) for first, keys in self.multiword_names.items()}
