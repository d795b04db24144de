"""``kb.memory``: what an agent was told, as a context graph in the shared store.

mem0 / ContextKit-shaped: ``add``, ``get``, ``get_all``, ``update``, ``delete``, ``history``,
``search``, plus decay and feedback. Memories are ``kind = 'memory'`` nodes; each add links the
new memory to its session, documents and topics (see :mod:`graphmem.memory.edges`); search is
seed -> expand -> rerank (:mod:`graphmem.memory.search`). Every write is one transaction with
its events.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config_sections import ContextGraphConfig, MemoryConfig
from ..errors import InvalidInput, NotFound
from ..memory.decay import LAST_TICK_KEY, relevance_now, tick, try_tick
from ..memory.edges import EDGE_WEIGHTS, edge_id, place_in_session, plan_edges, session_splice
from ..memory.llm import LLMError
from ..memory.scope import (
    SCOPE_FIELDS,
    check_metadata,
    check_text,
    doc_refs,
    message_items,
    parse_iso,
    parse_timestamp,
    require_scope,
    scope_filters,
    scope_key,
    session_key,
)
from ..memory.search import STRATEGIES, rank_memories
from ..retrieval.graph_query import find_seed_entities
from ..store.rows import MemoryRow
from ..validate import check_count, checked_inputs
from .memory_labels import label_new_memories, memory_llm
from .memory_maintenance import ContextGraphMaintenance
from .memory_maintenance import positive_int as _positive_int
from .results import (
    DecayReport,
    MemoriesAdded,
    MemoryDeleted,
    MemoryEvent,
    MemoryFeedback,
    MemoryHit,
    MemoryLink,
    MemoryList,
    MemoryRecord,
    MemoryRelevance,
    MemoryScores,
    MemorySearch,
    MemoryStats,
    MemoryUpdated,
    MemoryVersion,
)

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["Memory"]

_TICK_EVERY = timedelta(hours=1)


def _scope_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """The scope fields a memory row sets (events carry them, so subscribers can filter by scope)."""
    return {k: row[k] for k in SCOPE_FIELDS if row[k] is not None}


def _delta(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise InvalidInput(f"delta: expected a number in (0, 1], got {value!r}")
    return float(value)


@checked_inputs("memory")
class Memory(ContextGraphMaintenance):
    """The memories face of a knowledge base."""

    def __init__(self, kb: FaceHost) -> None:
        self._kb = kb
        self._said_dense_off = False
        self._last_tick: tuple[object, str | None] = (None, None)  # (read stamp, LAST_TICK_KEY then)
        kb.embeddings.register_source("memory", kb.store.memories_to_embed)
        cg = kb.config.memory.context_graph
        algo = cg.retrieval.algorithm
        if algo not in STRATEGIES:
            raise InvalidInput(f"config key 'memory.context_graph.retrieval.algorithm' must be one of "
                               f"{', '.join(STRATEGIES)}, got {algo!r}")
        if cg.decay.half_life_days <= 0:
            raise InvalidInput("config key 'memory.context_graph.decay.half_life_days' must be positive")

    # -- configuration --------------------------------------------------------------------------

    @property
    def _cfg(self) -> MemoryConfig:
        return self._kb.config.memory

    @property
    def _cg(self) -> ContextGraphConfig:
        return self._kb.config.memory.context_graph

    # -- writing --------------------------------------------------------------------------------

    def _vector(self, memory_id: str) -> np.ndarray | None:
        model = self._kb.embeddings.stored_model()
        if model is None:
            return None
        blob = self._kb.store.vectors_for("memory", [memory_id], model).get(memory_id)
        return None if blob is None else np.frombuffer(blob, dtype=np.float16).astype(np.float32)

    def _link(self, mem: Mapping[str, Any], prev: tuple[str, str] | None, now: str,
              earlier: set[str] | None = None, following: tuple[str, str] | None = None) -> int:
        """Edges, references and mentions of a stored memory (inside the caller's transaction)."""
        store = self._kb.store
        refs = doc_refs(mem["metadata"], mem["text"])
        if prev is not None and following is not None:  # said between them: the chain runs through it
            store.delete_memory_edges_by_id(session_splice(prev[0], following[0]))
        planned = plan_edges(self._kb.ctx, mem, self._vector(mem["id"]), prev, refs, earlier, following)
        n = store.insert_memory_edges([(edge_id(s, t, d), s, d, t, w, now) for s, d, t, w in planned])
        if refs:
            store.add_memory_docrefs(mem["scope_key"], mem["id"], refs)
        if self._cfg.mention_entities and store.has_entities():
            ents = find_seed_entities(self._kb.ctx, mem["text"], 5, strict=True)
            if ents:
                store.add_memory_mentions(mem["id"], ents)
        return n

    def add(
        self,
        messages_or_text: str | Sequence[Mapping[str, Any] | str] | Mapping[str, Any],
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        tenant_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timestamp: Any = None,
        infer: bool = False,
    ) -> MemoriesAdded:
        """Remember a text, or each message of a ``[{role, content}]`` list (one memory each).

        ``timestamp`` (datetime or ISO-8601; default now) is when it was said. With ``infer=True``
        and an LLM configured, the facts the LLM extracts are stored instead, each citing its
        message in ``metadata.source_message``. Returns ``{"results": [{"id", "memory", "event"}],
        "edges": n}``. Bad input raises InvalidInput and stores nothing.
        """
        kb, store = self._kb, self._kb.store
        if not isinstance(infer, bool):  # "no" is truthy: it switched the LLM extraction on
            raise InvalidInput(f"infer: expected True or False, got {infer!r}")
        filters = scope_filters(user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id, writing=True)
        require_scope(filters, self._cfg.require_scope, "add")
        meta = check_metadata(metadata)
        items = message_items(messages_or_text, self._cfg.max_text_chars)
        now = kb.now()
        said = parse_timestamp(timestamp, now)
        sources: list[dict[str, Any] | None] = [None] * len(items)
        if infer:
            llm = memory_llm(kb)
            try:
                facts, _tokens = llm.extract_facts(items)
            except LLMError as exc:
                raise InvalidInput(f"infer=True: the LLM could not extract facts ({exc}); nothing was stored") from None
            sources = [{"index": i, "role": items[i][0], "content": items[i][1]} for _, i in facts]
            items = [(None, f) for f, _ in facts]
            if not items:
                return MemoriesAdded([], 0)
        kb.embeddings.prefetch([t for _, t in items])
        skey, sess = scope_key(filters), session_key(filters)
        results: list[MemoryEvent] = []
        edges = 0
        try:
            with store.transaction():
                for (role, text), source in zip(items, sources):
                    mem: dict[str, Any] = {
                        "id": "mem_" + uuid.uuid4().hex[:20], "text": text, "role": role, "said_at": said,
                        "created_at": now, "scope_key": skey, **filters,
                        "metadata": {**meta, **({"source_message": source} if source else {})}}
                    store.insert_memory(mem)
                    kb.embeddings.embed_items("memory", [(mem["id"], text)])
                    prev, following = place_in_session(store, sess, skey, filters.get("run_id"), said, mem["id"])
                    linked = self._link(mem, prev, now, following=following)
                    edges += linked
                    store.add_memory_version(mem["id"], 1, "ADD", None, text, now)
                    store.append_event("memory.added", mem["id"], now,
                                       {**filters, "said_at": said, "chars": len(text), "inferred": bool(source),
                                        "text": text, "role": role, "metadata": mem["metadata"], "edges": linked})
                    results.append(MemoryEvent(mem["id"], text))
        finally:
            kb.embeddings.clear_prefetched()
        if self._cg.edges.llm.enabled:
            edges += label_new_memories(kb, [r.id for r in results], filters,
                                        dataclasses.asdict(self._cg.edges.llm))
        return MemoriesAdded(results, edges)

    def _require(self, memory_id: Any) -> MemoryRow:
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise InvalidInput(f"memory id: expected a non-empty string, got {memory_id!r}")
        row = self._kb.store.get_memories([memory_id]).get(memory_id)
        if row is None:
            raise NotFound(f"no memory with id '{memory_id}'; list ids with get_all(user_id=...) or "
                           "`graphmem memory list --user ...`")
        return row

    def update(self, memory_id: str, text: str, metadata: Mapping[str, Any] | None = None) -> MemoryUpdated:
        """Replace a memory's text (and metadata, when given). The old text stays as an archived
        version node ``<id>~v<n>`` linked by UPDATED_FROM, and in :meth:`history`."""
        kb, store = self._kb, self._kb.store
        row = self._require(memory_id)
        text = check_text(text, "text", self._cfg.max_text_chars)
        meta = check_metadata(metadata) if metadata is not None else row["metadata"]
        if "~v" in memory_id:
            raise InvalidInput(f"memory '{memory_id}' is an old version; update '{memory_id.split('~v')[0]}' instead")
        if text == row["text"] and meta == row["metadata"]:
            # the same text again (an agent re-saving what it was told): no new version, no event, as mem0's
            # "NONE"; before, each one added a version and an UPDATE to the history
            return MemoryUpdated(memory_id, text, "", 0, event="NONE")
        now = kb.now()
        old_id = f"{memory_id}~v{row['version']}"
        with store.transaction():
            fields: Mapping[str, Any] = row  # the columns copied are named by a tuple, not literals
            old = {**{k: fields[k] for k in (*SCOPE_FIELDS, "scope_key", "role", "text", "metadata", "said_at")},
                   "id": old_id, "created_at": now}
            store.insert_memory(old)
            store.set_memories_archived([old_id], True, now)
            kb.embeddings.embed_items("memory", [(old_id, row["text"])])
            store.update_memory_text(memory_id, text, meta, now)
            kb.embeddings.embed_items("memory", [(memory_id, text)])
            n = store.insert_memory_edges([(edge_id(memory_id, "UPDATED_FROM", old_id), memory_id, old_id,
                                            "UPDATED_FROM", EDGE_WEIGHTS["UPDATED_FROM"], now)])
            fresh = store.get_memories([memory_id])[memory_id]
            n += self._link(fresh, None, now)
            store.add_memory_version(memory_id, row["version"] + 1, "UPDATE", row["text"], text, now)
            store.append_event("memory.updated", memory_id, now, {
                "version": row["version"] + 1, "previous": old_id, "text": text, "metadata": meta, "edges": n,
                **_scope_of(row)})
        return MemoryUpdated(memory_id, text, old_id, n)

    def delete(self, memory_id: str) -> MemoryDeleted:
        """Delete a memory, its old versions and its edges (its history stays readable)."""
        kb, store = self._kb, self._kb.store
        row = self._require(memory_id)
        now = kb.now()
        with store.transaction():
            edges = store.delete_memory(memory_id)
            for v in range(1, row["version"]):
                if store.get_memories([f"{memory_id}~v{v}"]):
                    edges += store.delete_memory(f"{memory_id}~v{v}")
            store.add_memory_version(memory_id, row["version"], "DELETE", row["text"], None, now)
            store.append_event("memory.deleted", memory_id, now, {"edges": edges, **_scope_of(row)})
        return MemoryDeleted(memory_id, edges)

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                   tenant_id: str | None = None, *, everything: bool = False) -> dict[str, Any]:
        """Delete every memory of a scope (mem0's ``delete_all``) with its old versions and edges, in
        one transaction; their histories stay readable. Without a scope field only when
        ``everything=True`` (:meth:`reset`). Returns ``{"deleted", "edges"}``."""
        kb, store = self._kb, self._kb.store
        filters = scope_filters(user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id)
        if not filters and not everything:
            raise InvalidInput("delete_all: give at least one of user_id, agent_id, run_id, tenant_id "
                               "(reset() deletes every memory)")
        now = kb.now()
        deleted = edges = 0
        with store.transaction():
            while rows := store.list_memories(filters, True, 1000):
                for r in rows:
                    edges += store.delete_memory(r["id"])
                    if "~v" not in r["id"]:  # an old version goes with its memory; only memories get a DELETE
                        store.add_memory_version(r["id"], r["version"], "DELETE", r["text"], None, now)
                        deleted += 1
            store.append_event("memory.deleted_all", "memory", now, {**filters, "deleted": deleted, "edges": edges})
        return {"deleted": deleted, "edges": edges}

    def reset(self) -> dict[str, Any]:
        """Delete every memory of every scope (mem0's ``reset``); documents, the graph, the wiki and
        skills stay. Returns ``{"deleted", "edges"}``."""
        return self.delete_all(everything=True)

    def edges_among(self, memory_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The context-graph edges between these memories: ``[{src, dst, type, weight}]``."""
        if not isinstance(memory_ids, (list, tuple, set, frozenset)) or not all(isinstance(m, str) for m in memory_ids):
            raise InvalidInput(f"memory_ids: expected a list of memory ids, got {type(memory_ids).__name__}")
        return [{"src": s, "dst": d, "type": t, "weight": round(w, 4)}
                for s, d, t, w in self._kb.store.memory_edges_among(sorted(set(memory_ids)))]

    # -- reading --------------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord:
        """One memory (NotFound when absent)."""
        return MemoryRecord.from_row(self._require(memory_id))

    def get_all(self, filters: Mapping[str, Any] | None = None, limit: int = 100, *, user_id: str | None = None,
                agent_id: str | None = None, run_id: str | None = None, tenant_id: str | None = None,
                include_archived: bool = False, offset: int = 0) -> MemoryList:
        """Memories of a scope, oldest said first: ``{"results": [...]}``. ``filters`` may hold
        the scope fields (as in mem0's ``filters={"user_id": ...}``); ``offset`` skips that many (a scope of
        more than ``limit`` memories is read page by page)."""
        check_count("memory.get_all", "offset", offset)
        if not isinstance(filters, (Mapping, type(None))):
            raise InvalidInput(f"filters: expected a mapping of scope fields, got {type(filters).__name__}")
        merged = dict(filters or {})
        unknown = set(merged) - set(SCOPE_FIELDS)
        if unknown:
            raise InvalidInput(f"filters: unknown key(s) {sorted(unknown)}; use {', '.join(SCOPE_FIELDS)}")
        for key, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id), ("tenant_id", tenant_id)):
            if value is not None:
                merged[key] = value
        scope = scope_filters(**merged)
        require_scope(scope, self._cfg.require_scope, "get_all")
        rows = self._kb.store.list_memories(scope, include_archived, _positive_int(limit, "limit"), offset)
        return MemoryList([MemoryRecord.from_row(r) for r in rows])

    def history(self, memory_id: str) -> list[MemoryVersion]:
        """What happened to a memory (ADD, UPDATE with old and new text, DELETE), oldest first."""
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise InvalidInput(f"memory id: expected a non-empty string, got {memory_id!r}")
        rows = self._kb.store.memory_versions(memory_id)
        if not rows:
            raise NotFound(f"no memory with id '{memory_id}' (nor any history of one)")
        return [MemoryVersion.from_row(r) for r in rows]

    # -- search ---------------------------------------------------------------------------------

    def _maybe_tick(self) -> None:
        dc = self._cg.decay
        if not (dc.enabled and dc.tick_on_read):
            return
        # the last tick's time, read again only when the store's read stamp moved (a tick, any write
        # but a search's use counts, another process's commit)
        stamp = self._kb.store.read_stamp()
        if stamp is not None and self._last_tick[0] == stamp:
            last = self._last_tick[1]
        else:
            last = self._kb.store.get_meta(LAST_TICK_KEY)
            self._last_tick = (stamp, last)
        if last is None or parse_iso(self._kb.now()) - parse_iso(last) >= _TICK_EVERY:
            try_tick(self._kb.ctx)  # on a read path: skipped when read-only or another process writes

    def search(
        self,
        query: str,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        tenant_id: str | None = None,
        limit: int = 10,
        use_context_graph: bool | None = None,
        include_archived: bool = False,
        strategy: str | None = None,
    ) -> MemorySearch:
        """Seeds (dense + BM25 in the scope) -> expand (``strategy`` bfs or ppr, default from
        config) -> rerank. Returns ``{"results": [...], "subgraph": [...]}`` (subgraph only when
        it has edges: those among the results and on the paths that led to them)."""
        kb = self._kb
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query: expected a non-empty string")
        filters = scope_filters(user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id)
        require_scope(filters, self._cfg.require_scope, "search")
        limit = _positive_int(limit, "limit", 1000)
        rc = self._cg.retrieval
        strategy = rc.algorithm if strategy is None else strategy
        if strategy not in STRATEGIES:
            raise InvalidInput(f"strategy: choose from {', '.join(STRATEGIES)}, got {strategy!r}")
        use_graph = rc.enabled if use_context_graph is None else bool(use_context_graph)
        # the reads' RAM copies (vectors, memory graph, scope ids, rank inputs) look for other
        # processes' writes once for the whole search, not once per copy and step
        with kb.store.read_scope():
            self._maybe_tick()
            qvec = kb.embeddings.embed_query(query)
            if qvec is None and not self._said_dense_off and not kb.embeddings.note_reported:
                self._said_dense_off = True
                kb.warn(f"memory search without dense similarity: {kb.embeddings.note or 'no embedding model'}")
            ranked = rank_memories(kb.ctx, query, qvec, filters, limit=limit, include_archived=include_archived,
                                   strategy=strategy, use_graph=use_graph)
            sub = self._subgraph(ranked.ids, ranked.parent) if use_graph and ranked.ids else []
        results = []
        for mid in ranked.ids:
            r = ranked.rows[mid]
            results.append(MemoryHit(
                mid, r["text"], round(ranked.score[mid], 6), r["metadata"], r["user_id"], r["agent_id"],
                r["run_id"], r["tenant_id"], r["said_at"], r["created_at"], MemoryScores.from_parts(ranked.parts[mid])))
        out = MemorySearch(results, sub or None)
        if ranked.ids:
            # Use counts feed ranking, but a search is a read: it never waits for (or fails
            # because of) another process's writer, and a read-only knowledge base skips them.
            now = kb.now()
            used = ranked.ids if ranked.pooled is None else ranked.ids[: ranked.pooled]
            kb.store.try_write(lambda: self._record_use(used, now, filters))
        return out

    def _record_use(self, ids: list[str], now: str, filters: Mapping[str, Any]) -> None:
        # The use counts change rows, so they get their event like every other write (ContextKit's
        # node_accessed): the ids returned, in rank order, and the scope searched.
        self._kb.store.record_memory_use(ids, now)
        self._kb.store.append_event("memory.accessed", ids[0], now,
                                    {"ids": ids[:100], "count": len(ids),
                                     **{k: v for k, v in filters.items() if v is not None}})

    def _subgraph(self, ids: list[str], parent: Mapping[str, tuple[str, str, float]]) -> list[MemoryLink]:
        result = set(ids)
        pairs: set[frozenset[str]] = set()
        nodes = set(ids)
        for mid in ids:
            here, steps = mid, 0
            while here in parent and steps < 10:
                up = parent[here][0]
                pairs.add(frozenset((here, up)))
                nodes.add(up)
                here, steps = up, steps + 1
        edges = self._kb.store.memory_edges_among(sorted(nodes))
        return [MemoryLink(s, d, t, round(w, 4)) for s, d, t, w in edges
                if (s in result and d in result) or frozenset((s, d)) in pairs]

    # -- decay and feedback ---------------------------------------------------------------------

    def tick_decay(self) -> DecayReport:
        """Decay relevances and edge weights now; prune weak edges; archive faded, unlinked
        memories. Returns ``{"decayed", "pruned", "archived"}``."""
        done = tick(self._kb.ctx)
        return DecayReport(done["decayed"], done["pruned"], done["archived"])

    def _mark(self, memory_id: str, delta: float, up: bool) -> MemoryRelevance:
        kb, store = self._kb, self._kb.store
        row = self._require(memory_id)
        delta = _delta(delta)
        now = kb.now()
        rel = relevance_now(row["quality"], row["floor"], row["used_at"], parse_iso(now),
                            self._cg.decay.half_life_days)
        if up:
            quality = min(2.0, rel + delta)
            floor = max(row["floor"], delta)  # marked relevant: never fades below delta
        else:
            quality = max(0.0, rel - delta)
            floor = min(row["floor"], quality)
        with store.transaction():
            store.set_memory_quality(memory_id, quality, floor, max(floor, quality), now,
                                     row["archived"] and not up)
            store.append_event("memory.marked", memory_id, now, {"relevant": up, "delta": delta,
                                                                 "relevance": max(floor, quality), **_scope_of(row)})
        return MemoryRelevance(memory_id, round(max(floor, quality), 6), floor)

    def mark_relevant(self, memory_id: str, delta: float = 0.25) -> MemoryRelevance:
        """Raise a memory's relevance by ``delta`` (restoring it if archived); ``delta`` also
        becomes its floor."""
        return self._mark(memory_id, delta, True)

    def mark_irrelevant(self, memory_id: str, delta: float = 0.25) -> MemoryRelevance:
        """Lower a memory's relevance by ``delta``."""
        return self._mark(memory_id, delta, False)

    def feedback(self, memory_id: str, query: str, helpful: bool) -> MemoryFeedback:
        """Record whether a memory helped for a query (feeds the personal / success terms)."""
        kb, store = self._kb, self._kb.store
        row = self._require(memory_id)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query: expected the non-empty query the memory was found for")
        if not isinstance(helpful, bool):
            raise InvalidInput(f"helpful: expected true or false, got {helpful!r}")
        now = kb.now()
        with store.transaction():
            store.add_memory_feedback(memory_id, query, helpful, now)
            store.append_event("memory.feedback", memory_id, now, {"query": query, "helpful": helpful,
                                                                   **_scope_of(row)})
        return MemoryFeedback(memory_id, helpful)

    def stats(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
              tenant_id: str | None = None) -> MemoryStats:
        """Counts of memories, archived memories, edges by type and mentions (of a scope, or all)."""
        filters = scope_filters(user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id)
        counts = self._kb.store.memory_stats(filters)
        return MemoryStats(counts["memories"], counts["archived"], counts["edges"], counts["edge_types"],
                           counts["mentions"], self._kb.store.get_meta(LAST_TICK_KEY),
                           self._kb.embeddings.stored_model())
