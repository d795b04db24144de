"""Relevance decay: half-life on system time since a memory was stored or last used.

relevance = max(floor, quality * 0.5 ** (age / half_life)); an edge's weight is its base
weight times the same factor, its age counted from the later of its creation and its two
memories' last use. CONTRADICTS edges never decay. Ticks recompute from those times, so
running one twice changes nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from .scope import parse_iso

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["relevance_now", "tick", "try_tick", "LAST_TICK_KEY"]

LAST_TICK_KEY = "memory.last_decay"
# A contradiction stays known however old; a version link is history, not a weakening association.
NEVER_DECAY = ("CONTRADICTS", "UPDATED_FROM")
_DAY = 86400.0
# Stored values move only by more than this: search recomputes relevance exactly anyway, and a
# tick should not rewrite every row for seconds of decay.
_STEP = 1e-4


def relevance_now(quality: float, floor: float, used_at: str, now: datetime, half_life_days: float) -> float:
    """Current relevance of a memory."""
    age = max(0.0, (now - parse_iso(used_at)).total_seconds()) / _DAY
    factor = 0.5 ** (age / half_life_days) if half_life_days > 0 else 1.0
    return max(floor, quality * factor)


def tick(ctx: Context) -> dict[str, int]:
    """One decay pass over every memory and memory edge (one transaction), with the settings of
    ``[memory.context_graph.decay]``."""
    with ctx.store.transaction():
        return _tick(ctx)


def try_tick(ctx: Context) -> dict[str, int] | None:
    """:func:`tick` if the write lock is free right now (a read path's tick never waits for a
    writer and never fails the read); None when skipped (read-only, busy): a later read ticks."""
    out: dict[str, dict[str, int]] = {}
    done = ctx.store.try_write(lambda: out.setdefault("tick", _tick(ctx)))
    return out["tick"] if done else None


def _tick(ctx: Context) -> dict[str, int]:
    """The decay pass itself, inside the caller's transaction."""
    cfg = ctx.config.memory.context_graph.decay
    store = ctx.store
    now_s = ctx.now()
    now = parse_iso(now_s)
    hl = cfg.half_life_days
    rel_updates: list[tuple[float, str]] = []
    low: list[str] = []
    decayed = 0
    for mid, used_at, quality, floor, rel in store.memory_decay_rows():
        new = relevance_now(quality, floor, used_at, now, hl)
        if abs(new - rel) > _STEP:
            rel_updates.append((new, mid))
            decayed += new < rel
        if new < cfg.min_node_relevance:
            low.append(mid)
    store.set_memory_relevance(rel_updates)
    weights: list[tuple[float, str]] = []
    prune: list[str] = []
    for eid, etype, w, w0, created, used_a, used_b in store.memory_edge_decay_rows():
        if etype in NEVER_DECAY:
            continue
        since = max(created, used_a, used_b)
        age = max(0.0, (now - parse_iso(since)).total_seconds()) / _DAY
        new_w = w0 * (0.5 ** (age / hl) if hl > 0 else 1.0)
        if new_w < cfg.min_edge_weight:
            prune.append(eid)
        elif abs(new_w - w) > _STEP:
            weights.append((new_w, eid))
            decayed += new_w < w
    store.set_edge_weights(weights, now_s)
    pruned = store.delete_edges_by_id(prune)
    pruned_ids = prune[:100]
    # a link to its own old version (UPDATED_FROM, which never decays) kept an updated memory from ever
    # being archived: only links to other memories keep a faded one
    linked = store.memories_with_edges(low, ignore_types=("UPDATED_FROM",)) if low else set()
    archive = [m for m in low if m not in linked]
    store.set_memories_archived(archive, True, now_s)
    store.set_meta(LAST_TICK_KEY, now_s)
    out = {"decayed": decayed, "pruned": pruned, "archived": len(archive)}
    store.append_event("memory.decayed", "memory", now_s, {**out, "archived_ids": archive[:100],
                                                                 "pruned_ids": pruned_ids})
    return out
