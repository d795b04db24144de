"""The context graph's automatic edges: which memories a new (or updated) memory links to.

REPLY_TO (previous memory of the session within the reply window, 1.0), TEMPORAL_NEXT
(previous -> new in the session, 0.6), DOCUMENT_LINK (a shared document reference, 0.8),
TOPIC_SIMILAR (cosine >= topic_min_similarity, top topic_top_k, weight = cosine),
UPDATED_FROM (1.0, made by update). Every candidate is looked up within the new memory's
scope key (tenant, user, agent), so an edge never joins two users, agents or tenants.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..text import short_id
from .dense import dense_top_stored
from .scope import parse_iso

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["EDGE_WEIGHTS", "AUTO_TYPES", "LLM_TYPES", "plan_edges", "edge_id", "place_in_session", "session_splice"]

REPLY_TO, TEMPORAL_NEXT, DOCUMENT_LINK, TOPIC_SIMILAR, UPDATED_FROM = (
    "REPLY_TO", "TEMPORAL_NEXT", "DOCUMENT_LINK", "TOPIC_SIMILAR", "UPDATED_FROM")
LLM_TYPES = ("SUPPORTS", "CONTRADICTS", "REFINES", "ELABORATES")
AUTO_TYPES = (REPLY_TO, TEMPORAL_NEXT, DOCUMENT_LINK, TOPIC_SIMILAR, UPDATED_FROM)
EDGE_WEIGHTS = {REPLY_TO: 1.0, TEMPORAL_NEXT: 0.6, DOCUMENT_LINK: 0.8, UPDATED_FROM: 1.0}
MAX_DOCUMENT_LINKS = 10  # a document shared by thousands of memories links each to its latest few


def edge_id(source: str, type: str, target: str) -> str:
    """Stable id of a memory edge."""
    return short_id("me_", source, type, target)


def session_splice(prev_id: str, next_id: str) -> list[str]:
    """Ids of the session edges between two memories that stop being neighbours when a memory said between
    them is added: ``prev TEMPORAL_NEXT next`` and ``next REPLY_TO prev`` (the chain then runs through it)."""
    return [edge_id(prev_id, TEMPORAL_NEXT, next_id), edge_id(next_id, REPLY_TO, prev_id)]


def plan_edges(ctx: Context, mem: Mapping[str, Any], vec: np.ndarray | None,
               prev: tuple[str, str] | None, refs: list[str],
               earlier: set[str] | None = None,
               following: tuple[str, str] | None = None) -> list[tuple[str, str, str, float]]:
    """``(source, target, type, weight)`` edges for memory ``mem``.

    ``prev``: ``(id, said_at)`` of the previous memory of its session (or None); ``following``: the next one,
    when ``mem`` was said before the session's latest (an import out of order, a slower writer): it is then
    linked between the two (``session_splice`` names the edge between them it replaces); ``refs``: its
    document references; ``vec``: its unit vector (None without embeddings). ``earlier``, when
    given (backfills), limits document and topic links to those memories, so that a pair is
    linked once, from the later memory to the earlier one, as when they were added live.
    Which edges and their thresholds: ``[memory.context_graph.edges]``.
    """
    cfg = ctx.config.memory.context_graph.edges
    out: list[tuple[str, str, str, float]] = []
    mid = mem["id"]
    if following is not None and following[0] != mid:
        gap = (parse_iso(following[1]) - parse_iso(mem["said_at"])).total_seconds()
        if cfg.enable_reply_to and 0 <= gap <= cfg.reply_to_window_seconds:
            out.append((following[0], mid, REPLY_TO, EDGE_WEIGHTS[REPLY_TO]))
        if cfg.enable_temporal_next:
            out.append((mid, following[0], TEMPORAL_NEXT, EDGE_WEIGHTS[TEMPORAL_NEXT]))
    if prev is not None and prev[0] != mid:
        prev_id, prev_said = prev
        gap = (parse_iso(mem["said_at"]) - parse_iso(prev_said)).total_seconds()
        if gap >= 0:
            if cfg.enable_reply_to and gap <= cfg.reply_to_window_seconds:
                out.append((mid, prev_id, REPLY_TO, EDGE_WEIGHTS[REPLY_TO]))
            if cfg.enable_temporal_next:
                out.append((prev_id, mid, TEMPORAL_NEXT, EDGE_WEIGHTS[TEMPORAL_NEXT]))
        elif cfg.enable_temporal_next:  # said before the session's latest: it comes first
            out.append((mid, prev_id, TEMPORAL_NEXT, EDGE_WEIGHTS[TEMPORAL_NEXT]))
    if cfg.enable_document_link and refs:
        for other in ctx.store.memories_with_docrefs(mem["scope_key"], refs, mid, MAX_DOCUMENT_LINKS):
            if earlier is None or other in earlier:
                out.append((mid, other, DOCUMENT_LINK, EDGE_WEIGHTS[DOCUMENT_LINK]))
    if cfg.enable_topic_similar and vec is not None and cfg.topic_top_k > 0:
        for other, sim in dense_top_stored(ctx, vec, mem["scope_key"], cfg.topic_top_k, mid):
            if sim >= cfg.topic_min_similarity and (earlier is None or other in earlier):
                out.append((mid, other, TOPIC_SIMILAR, round(min(sim, 1.0), 4)))
    return out


_END_OF_TIME = "9999-12-31T23:59:59.999Z"  # later than any said_at (scope.iso() of a datetime)


def place_in_session(store: Any, sess: str, skey: str, run_id: str | None, said: str, memory_id: str
                     ) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """``(previous, following)`` of a new memory in its session (inside the add's transaction); the session's
    last-memory pointer moves when the new one is its latest.

    Usually the previous one is the session's last and there is no following one. A memory said before the
    session's latest (an import out of order, a writer that took its time before the lock) goes between the
    memories said around it; so does one whose session's last memory was deleted (a re-import after
    delete_all), whose pointer then moves to the session's real latest memory."""
    last = store.memory_session(sess)
    alive = last is not None and bool(store.get_memories([last[0]]))
    if last is None or (alive and said >= last[1]):
        store.set_memory_session(sess, memory_id, said)
        return (last if alive else None), None
    prev, following = store.memory_session_neighbours(skey, run_id, said, memory_id)
    if following is None:
        store.set_memory_session(sess, memory_id, said)
    elif not alive:
        latest = store.memory_session_neighbours(skey, run_id, _END_OF_TIME, memory_id)[0]
        if latest is not None:
            store.set_memory_session(sess, latest[0], latest[1])
    return prev, following
