"""LLM-labelled edges between memories (SUPPORTS, CONTRADICTS, REFINES, ELABORATES), kept apart from
the memory face: an optional extra with its own budget, cooldown and transaction."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..memory.edges import LLM_TYPES, edge_id
from ..memory.llm import LLMError, MemoryLLM
from ..memory.scope import iso, parse_iso, scope_key
from ..trust import endpoint_api_key

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["label_new_memories", "memory_llm"]


def memory_llm(kb: FaceHost) -> MemoryLLM:
    """The [llm] client, with the env key only if it may go to the configured address."""
    return MemoryLLM(dataclasses.asdict(kb.config.llm), api_key=endpoint_api_key(kb.config, kb.home, "llm"))


def label_new_memories(kb: FaceHost, new_ids: list[str], filters: Mapping[str, Any], lc: Mapping[str, Any]) -> int:
    """LLM labels for the new memories' most similar pairs, within the persisted daily budget;
    returns the number of edges added. ``lc`` is ``memory.context_graph.edges.llm``.

    Runs after the add's transaction (an HTTP call never holds the write lock) and writes
    its edges and the budget in one transaction of its own."""
    store = kb.store
    pairs: list[tuple[str, str, float]] = []
    for mid in new_ids:
        for other, w, t in store.memory_neighbours([mid], 0.0).get(mid, []):
            if t == "TOPIC_SIMILAR" and w >= lc["min_topic_similarity"]:
                pairs.append((other, mid, w))
    pairs = sorted(pairs, key=lambda p: -p[2])[: lc["max_pairs_per_insert"]]
    if not pairs:
        return 0
    now_s = kb.now()
    now = parse_iso(now_s)
    key = scope_key({"tenant_id": filters.get("tenant_id"), "user_id": filters.get("user_id")})
    day = now_s[:10]
    state = store.memory_llm_budget(key)
    used = state[1] if state and state[0] == day else 0
    cooldown = state[2] if state else None
    if cooldown and parse_iso(cooldown) > now:
        return 0
    if used >= lc["daily_token_budget"]:
        with store.transaction():
            until = iso(now + timedelta(seconds=lc["cooldown_seconds"]))
            store.set_memory_llm_budget(key, day, used, until)
            store.append_event("memory.llm_budget_spent", key, now_s, {"tokens": used, "cooldown_until": until})
        return 0
    rows = store.get_memories([p[0] for p in pairs] + [p[1] for p in pairs])
    try:
        labels, tokens = memory_llm(kb).label_pairs(
            [(rows[a]["text"], rows[b]["text"]) for a, b, _ in pairs])
    except (LLMError, InvalidInput) as exc:  # an optional extra: the memory itself is kept
        kb.warn(f"memory edge labelling skipped: {exc}")
        return 0
    new = [(edge_id(b, lab, a), b, a, lab, round(conf, 4), now_s)
           for (a, b, _), got in zip(pairs, labels) if got
           for lab, conf in [got] if lab in LLM_TYPES and conf >= lc["min_confidence"]]
    with store.transaction():
        n = store.insert_memory_edges(new)
        used += tokens
        cooldown_until: str | None = (iso(now + timedelta(seconds=lc["cooldown_seconds"]))
                                      if used >= lc["daily_token_budget"] else None)
        store.set_memory_llm_budget(key, day, used, cooldown_until)
        store.append_event("memory.labelled", new_ids[0], now_s,
                           {"pairs": len(pairs), "edges": n, "tokens": tokens, "day_tokens": used})
    return n
