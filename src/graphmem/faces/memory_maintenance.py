"""Context-graph maintenance of the memories face: backfill the links of memories stored while the
graph was off, and reset the automatic links. A mixin of :class:`graphmem.faces.memory.Memory`
(kept apart so the face module stays readable); it uses the face's ``_kb`` and ``_link``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..memory.scope import scope_filters, session_key
from ..store.rows import MemoryRow
from .results import Backfilled, GraphReset

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["ContextGraphMaintenance", "MAX_LIMIT", "positive_int"]

MAX_LIMIT = 10_000


def positive_int(value: Any, field: str, high: int = MAX_LIMIT) -> int:
    """``value`` when it is an integer from 1 to ``high``; InvalidInput naming ``field`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise InvalidInput(f"{field}: expected an integer from 1 to {high}, got {value!r}")
    return value


class ContextGraphMaintenance:
    _kb: FaceHost

    def _link(self, mem: Mapping[str, Any], prev: tuple[str, str] | None, now: str,
              earlier: set[str] | None = None) -> int:
        raise NotImplementedError  # the face's

    # -- maintenance ----------------------------------------------------------------------------

    def backfill_context_graph(self, user_id: str | None = None, agent_id: str | None = None,
                               run_id: str | None = None, tenant_id: str | None = None,
                               batch_size: int = 500, on_progress: Callable[[int, int], None] | None = None
                               ) -> Backfilled:
        """Link memories stored while the context graph was off (or after a reset), in the order
        they were said; idempotent. Each batch is one transaction (``on_progress(done, total)`` after
        each). Returns ``{"nodes", "edges"}``."""
        kb, store = self._kb, self._kb.store
        filters = scope_filters(user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id)
        batch_size = positive_int(batch_size, "batch_size")
        rows: list[MemoryRow] = []
        after = 0
        while chunk := store.memories_after(filters, after, 5000):
            rows += [r for r in chunk if not r["archived"]]
            after = chunk[-1]["rowid_"]
        rows.sort(key=lambda r: (r["said_at"], r["rowid_"]))
        last: dict[str, tuple[str, str]] = {}
        done: set[str] = set()
        nodes = edges = 0
        for i in range(0, len(rows), batch_size):
            part = rows[i: i + batch_size]
            now = kb.now()
            with store.transaction():
                kb.embeddings.embed_items("memory", [(r["id"], r["text"]) for r in part])
                for r in part:
                    sess = session_key(r)
                    edges += self._link(r, last.get(sess), now, done)
                    last[sess] = (r["id"], r["said_at"])
                    done.add(r["id"])
                    nodes += 1
                if i + batch_size >= len(rows):
                    for sess, (mid, said) in last.items():
                        cur = store.memory_session(sess)
                        if cur is None or said >= cur[1]:
                            store.set_memory_session(sess, mid, said)
                    store.append_event("memory.backfilled", "memory", now, {**filters, "nodes": nodes, "edges": edges})
            if on_progress:
                on_progress(nodes, len(rows))
        return Backfilled(nodes, edges)

    def reset_context_graph(self, user_id: str | None = None, agent_id: str | None = None,
                            run_id: str | None = None, tenant_id: str | None = None) -> GraphReset:
        """Remove the automatic and LLM edges between memories (of a scope, or all); memories,
        their history links (UPDATED_FROM) and mentions stay."""
        kb, store = self._kb, self._kb.store
        filters = scope_filters(user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id)
        now = kb.now()
        with store.transaction():
            n = store.delete_memory_edges(filters, keep_types=("UPDATED_FROM",))
            store.append_event("memory.graph_reset", "memory", now, {**filters, "edges": n})
        return GraphReset(n)
