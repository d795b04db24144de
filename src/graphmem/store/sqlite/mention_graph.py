"""The mention graph (entity <-> chunk) held in RAM per store (one connection): what a passage search's walk reads.

A default search asks the store, round after round, which entities a passage mentions (``chunk_entities``),
which passages an entity is in (``entities_chunks``) and in how many (``entity_chunk_counts``): about 19 such
reads, 45 SQL statements, per search, a quarter of its CPU on the 2Wiki knowledge base. Here the whole mention table is
read once (one statement) into per-chunk and per-entity lists and every such read is a few dict look-ups.

When it is held (ingest-heavy work never pays for it): once the mention reads SQL answered at one read stamp
(``store/sqlite/read_stamp.py``: ``PRAGMA data_version`` + this connection's changes) have cost about what a
load costs (the ski-rental rule: whatever a process does next, it pays at most twice what the better of the two
choices would have cost): ``max(LOAD_AFTER_READS, mentions // MENTIONS_PER_READ)`` reads. On 2Wiki (71,864
mentions) that is 718 reads, about 35 default searches; a load there costs ~160 ms CPU, a search saves ~4.7 ms.
So a process that keeps searching a knowledge base nobody writes to (a server, an agent loop, a benchmark)
holds it, and a CLI command never loads it. Any write, by any process, moves the stamp: the copy is dropped
and the count starts again. Inside a write transaction (no stamp: rows may still roll back) SQL answers.

Every answer is the SQL's, order included: chunk_entities lists a chunk's entities in the order of their first
mention (the mention rows of a chunk are read off its index in rowid order); entities_chunks newest first by
each chunk's newest mention, latest document versions only; counts over every version.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from typing import Any

from ..rows import ChunkOffset

__all__ = ["MentionGraph", "MentionGraphCache", "LOAD_AFTER_READS", "MENTIONS_PER_READ", "MAX_HELD_MENTIONS"]

# Mention reads answered by SQL at one stamp before the graph is loaded: at least this many, and one per
# MENTIONS_PER_READ mentions (a load costs ~2.2 us CPU per mention, an SQL mention read ~0.25 ms more than
# one from RAM: 100 mentions' load is one read's saving).
LOAD_AFTER_READS = 100
MENTIONS_PER_READ = 100
# Above this many mention rows the graph is not held (about 0.4 KB of RAM per mention; the SQL statements,
# bounded per entity, serve).
MAX_HELD_MENTIONS = 500_000

# One statement, so one snapshot of the file: every chunk (its key, id and whether it is of its document's latest
# version; NULL: no document row), then every mention in id order (a plain scan of the table).
# (The ORDER BY costs nothing, a rowid scan, and makes the order a promise: a chunk's entities by first mention.)
_LOAD_SQL = ("SELECT 0, c.id, c.chunk_id, d.is_latest, NULL FROM chunks c LEFT JOIN documents d ON d.doc_id = c.doc_id"
             " AND d.version = c.version UNION ALL SELECT * FROM (SELECT 1, id, node_id, chunk, start FROM mention_rows"
             " ORDER BY id)")


class MentionGraph:
    """One state of the mention table: per chunk its entities, per entity its passages and their count.

    Loading keeps the rows nearly as read (two dicts); each entity's sorted passage list is built the first time
    it is asked for (a search touches a few hundred of 40,000 entities)."""

    def __init__(self, rows: Iterable[tuple[Any, ...]]) -> None:
        self._key: dict[str, int] = {}  # chunk id -> chunk key
        self._chunk: dict[int, tuple[str, bool]] = {}  # chunk key -> (chunk id, of a latest version)
        self._by_chunk: dict[int, dict[str, None]] = {}  # chunk key -> entities, first mention first
        self._by_node: dict[str, dict[int, list[int]]] = {}  # entity -> chunk key -> [newest mention id, first offset]
        self._recent: dict[str, list[ChunkOffset]] = {}
        latest_flags: dict[int, object] = {}
        by_chunk, by_node = self._by_chunk, self._by_node
        for part, mid, a, b, c in rows:
            if part == 0:
                self._key[a] = mid
                latest_flags[mid] = b
                continue
            node, key, start = a, b, c
            ents = by_chunk.get(key)
            if ents is None:
                ents = by_chunk[key] = {}
            ents[node] = None
            per = by_node.get(node)
            if per is None:
                per = by_node[node] = {}
            got = per.get(key)
            if got is None:
                per[key] = [mid, start]
            else:
                got[0] = mid  # mentions come in id order: the last one is the newest
                if start < got[1]:
                    got[1] = start
        # Without chunks of old versions entities_chunks skips the join to documents: every chunk is a latest one.
        any_old = any(flag == 0 for flag in latest_flags.values())
        self._chunk = {key: (cid, latest_flags[key] == 1 or (not any_old and latest_flags[key] is None))
                       for cid, key in self._key.items()}

    def count(self, node_id: str) -> int:
        """Distinct chunks (every version) mentioning the entity."""
        return len(self._by_node.get(node_id, ()))

    def recent(self, node_id: str) -> list[ChunkOffset]:
        """The entity's latest-version passages, newest first (by its newest mention in each), first offsets."""
        got = self._recent.get(node_id)
        if got is None:
            chunk = self._chunk
            # A mention whose chunk row is gone (written with foreign keys off) is no passage, as in the SQL's join.
            pairs = sorted(((-newest, key, first) for key, (newest, first) in self._by_node.get(node_id, {}).items()
                            if key in chunk and chunk[key][1]))
            got = self._recent[node_id] = [ChunkOffset(chunk[key][0], first) for _, key, first in pairs]
        return got

    def entities_of(self, chunk_id: str) -> list[str]:
        """Distinct entities the chunk mentions, in the order of their first mention ([] for none)."""
        key = self._key.get(chunk_id)
        ents = self._by_chunk.get(key) if key is not None else None
        return list(ents) if ents else []


class MentionGraphCache:
    """Holds a :class:`MentionGraph` for one store while its read stamp does not move."""

    def __init__(self) -> None:
        self._held: tuple[object, MentionGraph] | None = None  # (its stamp, the graph): one attribute, one read
        self._stamp: object = None  # the stamp the reads are being counted at
        self._reads = 0
        self._top = 0  # the highest mention id at this stamp
        self._lock = threading.Lock()
        self.disabled = False
        self.loads = 0  # graphs loaded so far (tests and benchmarks read it)

    def get(self, conn: sqlite3.Connection, stamp: object) -> MentionGraph | None:
        """The graph as of ``stamp`` (the store's read stamp, taken just before this read), or None when SQL
        should answer (no stamp, not read often enough yet at this stamp, or too many mentions to hold)."""
        if stamp is None or self.disabled or conn.in_transaction:
            return None
        held = self._held
        if held is not None and held[0] == stamp:
            return held[1]
        with self._lock:
            held = self._held  # another thread may have loaded it while this one waited
            if held is not None and held[0] == stamp:
                return held[1]
            if self._stamp != stamp:
                self._stamp, self._reads, self._held = stamp, 0, None
                # The highest mention id bounds the count (one index probe, once per stamp).
                self._top = conn.execute("SELECT coalesce(max(id), 0) FROM mention_rows").fetchone()[0]
            self._reads += 1
            if self._reads <= (max(LOAD_AFTER_READS, self._top // MENTIONS_PER_READ) if LOAD_AFTER_READS else 0):
                return None
            return self._load(conn, stamp)

    def _load(self, conn: sqlite3.Connection, stamp: object) -> MentionGraph | None:
        n = conn.execute("SELECT count(*) FROM mention_rows").fetchone()[0]
        if n > MAX_HELD_MENTIONS:
            self.disabled = True
            return None
        # The stamp was taken before these reads: a write in between moves the next read's stamp, and the
        # graph (newer than its label, never older) is dropped then.
        graph = MentionGraph(conn.execute(_LOAD_SQL))
        self._held = (stamp, graph)
        self.loads += 1
        return graph

    def drop(self) -> None:
        """Forget the held graph (the next reads count again from zero)."""
        with self._lock:
            self._held, self._stamp, self._reads = None, None, 0
