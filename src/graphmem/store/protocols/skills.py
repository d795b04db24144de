"""Skills: a ``skill`` node per SKILL.md with its row, fielded full text and skill-to-skill edges."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from ..rows import EdgeRow, ScoredId, SkillEdgeAdd, SkillEdgeReweight, SkillFileRow, SkillListRow, SkillRow

__all__ = ["SkillStore"]


@runtime_checkable
class SkillStore(Protocol):
    """Skill rows keyed by skill id, each tied to one node (deleting the node deletes the row, its
    edges and its vector). Skill edges are ``related``, ``sibling``, ``similar`` and ``mentions``."""

    def upsert_skill(self, row: Mapping[str, object]) -> None:
        """Insert or update (by ``skill_id``) a row with every key of :class:`~graphmem.store.rows.SkillRow`
        but ``rid``; ``tags``, ``triggers``, ``related`` (lists) and ``meta`` (a dict) are given decoded.
        A missing key: KeyError; a ``node_id`` that is no node: BackendError."""
        ...

    def set_skill_name(self, node_id: str, alias: str, norm: str) -> None:
        """Make ``norm`` the one name of a skill node (graph queries find skills by name); when another
        skill owns that name already, the node is left without one."""
        ...

    def set_skill_stat(self, skill_id: str, size: int, mtime_ns: int) -> None:
        """Record a new size and mtime for an unchanged skill file."""
        ...

    def skill_files(self, root: str) -> dict[str, SkillFileRow]:
        """What each skill file of one root looked like when indexed, by skill id."""
        ...

    def skill_roots_of(self, skill_ids: Iterable[str]) -> dict[str, str]:
        """The root each known skill id was indexed from."""
        ...

    def list_skill_rows(self) -> list[SkillListRow]:
        """Every skill without its body, in row order."""
        ...

    def skill_rows_after(self, after_rid: int, limit: int) -> list[SkillListRow]:
        """Skills with row id > ``after_rid``, in row order, at most ``limit`` (a resumable cursor)."""
        ...

    def get_skill_row(self, skill_id: str) -> SkillRow | None:
        """One skill with its body and meta; None when there is none."""
        ...

    def skill_bodies(self, skill_ids: Iterable[str]) -> dict[str, str]:
        """Bodies by skill id."""
        ...

    def skill_bm25(self, text: str, weights: Sequence[float], limit: int) -> list[ScoredId]:
        """Fielded BM25, the five ``weights`` applying to name, triggers, tags, description, body:
        skill ids best first, at most ``limit``. Not five weights: InvalidInput."""
        ...

    def skills_with_phrase_in_body(self, phrase_words: Sequence[str]) -> list[str]:
        """Skill ids whose body holds the words as a phrase (candidates: callers verify); no words: ``[]``."""
        ...

    def skill_edges(self) -> list[EdgeRow]:
        """Every skill edge between two skills (``confidence`` is its weight), in the order the
        edges were written."""
        ...

    def skill_edges_touching(self, node_ids: Sequence[str]) -> list[EdgeRow]:
        """The rows of :meth:`skill_edges` with a source or target among ``node_ids``, in the same
        order (no ids: ``[]``)."""
        ...

    def has_skill_edges(self) -> bool:
        """Whether :meth:`skill_edges` would return anything."""
        ...

    def apply_skill_edges(self, add: Sequence[SkillEdgeAdd], remove: Sequence[str],
                          reweight: Sequence[SkillEdgeReweight], now: str) -> None:
        """Delete edges by id, then insert ``add`` (manual; one that exists by ends and type gets the new
        weight), then set weights (missing ids are ignored). An added edge's end that is no node:
        BackendError."""
        ...

    def skill_root_list(self) -> list[str]:
        """Folders skills were built from, sorted."""
        ...

    def add_skill_root(self, root: str, now: str) -> None:
        """Remember a folder skills were built from (again: its time is updated)."""
        ...

    def delete_skill_nodes(self, node_ids: Sequence[str]) -> None:
        """Delete skills by node id (rows, edges and vectors go with them; other kinds are left alone)."""
        ...

    def clear_skills(self) -> int:
        """Delete every skill; returns how many there were."""
        ...
