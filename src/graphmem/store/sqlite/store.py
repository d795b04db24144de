"""The SQLite backend: one file, WAL, FTS5. The only place (with migrations.py) holding SQL.

Concurrency: WAL lets readers run while one writer writes. Every write transaction starts
with ``BEGIN IMMEDIATE`` so a second writer waits (up to ``busy_timeout`` seconds) for the
write lock up front instead of failing half-way; past the timeout it raises
:class:`StoreBusy` and nothing of the operation is written (see txn.py; opening and migrations
are in connect.py).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ...errors import BackendError, StoreBusy
from ...models import Chunk, ChunkHit, Document, Edge, Event, Node
from .connect import ConnectionMixin
from .evidence import EvidenceSqlMixin
from .fts import pruned_fts_query
from .memory import MemorySqlMixin
from .migrations import MIGRATIONS
from .skills import SkillSqlMixin
from .txn import TransactionMixin
from .vectors import VectorSqlMixin
from .wiki import WikiSqlMixin

__all__ = ["SqliteStore"]

_MAX_VARS = 500  # bound parameters per IN (...) list, well under SQLite's limit


def _chunks(seq: Sequence[Any], n: int = _MAX_VARS) -> Iterator[Sequence[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


class SqliteStore(ConnectionMixin, TransactionMixin, EvidenceSqlMixin, VectorSqlMixin, WikiSqlMixin, SkillSqlMixin,
                  MemorySqlMixin):
    """Store protocol implementation over one SQLite file."""

    backend = "sqlite"

    def __init__(self, path: Path, busy_timeout: float = 30.0, read_only: str | None = None) -> None:
        """Open (and migrate) ``path``; ``read_only`` is the reason to open it read-only (None: writable)."""
        self.path = path
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._depth = 0
        self._hooks = []
        self._tls = threading.local()
        self.read_only = read_only is not None
        self.read_only_reason = read_only or ""
        self._fts_memo: tuple[tuple[str, int] | None, str | None] = (None, None)
        try:
            self.conn = self._connect()
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open knowledge base file {path}: {exc}") from None
        try:
            self._configure()
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(
                    f"{path} is locked by another process for more than {busy_timeout:g} s; retry later"
                ) from None
            raise BackendError(f"{path} is not a usable graphmem knowledge base ({exc})") from None
        except BackendError:
            self.conn.close()
            raise

    # -- migrations and lifecycle ---------------------------------------------------------

    def _migrate(self) -> None:
        c = self.conn
        if self.read_only:
            applied = {r[0] for r in c.execute("SELECT name FROM schema_migrations")}
            missing = [name for name, _ in MIGRATIONS if name not in applied]
            if missing:
                raise BackendError(
                    f"{self.path} needs upgrading ({len(missing)} migration(s), first {missing[0]}) and is open "
                    "read-only; open it once with write access to upgrade it"
                )
            return
        c.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        applied = {r[0] for r in c.execute("SELECT name FROM schema_migrations")}
        for name, script in MIGRATIONS:
            if name in applied:
                continue
            with self.transaction():
                # Another process may have applied it while we waited for the lock.
                if c.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone():
                    continue
                for stmt in _split_sql(script):
                    c.execute(stmt)
                c.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, datetime('now'))", (name,)
                )

    def applied_migrations(self) -> list[str]:
        """Names of the migrations applied to this file, in order."""
        return [r[0] for r in self.conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")]

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            try:
                self.conn.close()
            except sqlite3.Error:  # pragma: no cover - closing twice is harmless
                pass

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    # -- events ---------------------------------------------------------------------------

    def append_event(self, type: str, target: str, ts: str, payload: dict[str, Any], actor: str | None = None) -> int:
        """Append one change event (call inside the operation's transaction)."""
        cur = self.conn.execute(
            "INSERT INTO events (type, target, ts, actor, payload) VALUES (?, ?, ?, ?, ?)",
            (type, target, ts, actor, json.dumps(payload, ensure_ascii=False, default=str)),
        )
        return int(cur.lastrowid or 0)

    def list_events(
        self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None, limit: int = 100
    ) -> list[Event]:
        """Events with id > ``after_id``, oldest first, optionally filtered."""
        sql = "SELECT * FROM events WHERE id > ?"
        params: list[Any] = [after_id]
        if types:
            sql += f" AND type IN ({','.join('?' * len(types))})"
            params += list(types)
        if target is not None:
            sql += " AND target = ?"
            params.append(target)
        sql += " ORDER BY id LIMIT ?"
        params.append(limit)
        return [
            Event(r["id"], r["type"], r["target"], r["ts"], json.loads(r["payload"]), r["actor"])
            for r in self._q(sql, params)
        ]

    # -- documents and chunks ---------------------------------------------------------------

    @staticmethod
    def _doc(r: sqlite3.Row, with_content: bool = True) -> Document:
        return Document(
            doc_id=r["doc_id"],
            version=r["version"],
            title=r["title"],
            source=r["source"],
            content=r["content"] if with_content else "",
            content_hash=r["content_hash"],
            metadata=json.loads(r["metadata"]),
            created_at=r["created_at"],
            is_latest=bool(r["is_latest"]),
            chunk_count=r["chunk_count"],
        )

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """A document version (the latest when ``version`` is None)."""
        if version is None:
            rows = self._q("SELECT * FROM documents WHERE doc_id = ? ORDER BY version DESC LIMIT 1", (doc_id,))
        else:
            rows = self._q("SELECT * FROM documents WHERE doc_id = ? AND version = ?", (doc_id, version))
        return self._doc(rows[0]) if rows else None

    def document_versions(self, doc_id: str) -> list[Document]:
        """Every stored version of a document, oldest first (content omitted)."""
        rows = self._q("SELECT * FROM documents WHERE doc_id = ? ORDER BY version", (doc_id,))
        return [self._doc(r, with_content=False) for r in rows]

    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        """Latest version of every document, by id (content omitted)."""
        rows = self._q(
            "SELECT * FROM documents WHERE is_latest = 1 ORDER BY doc_id LIMIT ? OFFSET ?",
            (-1 if limit is None else limit, offset),
        )
        return [self._doc(r, with_content=False) for r in rows]

    def insert_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Store a new document version with its chunks; it becomes the latest."""
        c = self.conn
        c.execute("UPDATE documents SET is_latest = 0 WHERE doc_id = ? AND is_latest = 1", (doc.doc_id,))
        c.execute(
            "INSERT INTO documents (doc_id, version, title, source, content, content_hash, metadata, created_at,"
            " is_latest, chunk_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
            (
                doc.doc_id, doc.version, doc.title, doc.source, doc.content, doc.content_hash,
                json.dumps(doc.metadata, ensure_ascii=False), doc.created_at, len(chunks),
            ),
        )
        c.executemany(
            'INSERT INTO chunks (chunk_id, doc_id, version, ordinal, start, "end", text) VALUES (?, ?, ?, ?, ?, ?, ?)',
            [(ch.chunk_id, ch.doc_id, ch.version, ch.ordinal, ch.start, ch.end, ch.text) for ch in chunks],
        )

    @staticmethod
    def _chunk(r: sqlite3.Row) -> Chunk:
        return Chunk(r["chunk_id"], r["doc_id"], r["version"], r["ordinal"], r["start"], r["end"], r["text"])

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """Chunks by id (missing ids are absent from the result)."""
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, Chunk] = {}
        for part in _chunks(ids):
            for r in self._q(f"SELECT * FROM chunks WHERE chunk_id IN ({','.join('?' * len(part))})", part):
                out[r["chunk_id"]] = self._chunk(r)
        return out

    def document_chunks(self, doc_id: str, version: int) -> list[Chunk]:
        """The chunks of one document version, in order."""
        rows = self._q("SELECT * FROM chunks WHERE doc_id = ? AND version = ? ORDER BY ordinal", (doc_id, version))
        return [self._chunk(r) for r in rows]

    def search_chunks(self, text: str, k: int = 10, latest_only: bool = True) -> list[ChunkHit]:
        """BM25-ranked chunks matching any word of ``text``, with a snippet."""
        expr = self.chunk_fts_expr(text)
        if expr is None or k <= 0:
            return []
        sql = (
            "SELECT c.*, d.title AS title, -bm25(chunks_fts) AS score,"
            " snippet(chunks_fts, 0, '[', ']', '…', 16) AS snip"
            " FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid"
            " JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version"
            " WHERE chunks_fts MATCH ?"
        )
        if latest_only:
            sql += " AND d.is_latest = 1"
        sql += " ORDER BY bm25(chunks_fts) LIMIT ?"
        return [ChunkHit(self._chunk(r), r["title"], float(r["score"]), r["snip"]) for r in self._q(sql, (expr, k))]

    def chunk_fts_expr(self, text: str) -> str | None:
        """The FTS5 expression for ``text`` over chunks (escaped; corpus-wide words pruned)."""
        total = self.conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]
        # A search asks twice for the same text (seed retrieval, then BM25 of the candidates):
        # the pruning checks run once while the chunk table is unchanged.
        key = (text, total)
        if self._fts_memo[0] != key:
            self._fts_memo = (key, pruned_fts_query(self.conn, "chunks_fts", text, total))
        return self._fts_memo[1]

    def delete_document(self, doc_id: str) -> tuple[set[str], set[str]]:
        """Delete every version of a document, its chunks and provenance.

        Returns the ids of the nodes and edges that lost provenance, so that the caller can
        prune those left unsupported.
        """
        node_ids = {r[0] for r in self._q(
            "SELECT DISTINCT item_id FROM provenance WHERE doc_id = ? AND item_kind = 'node'", (doc_id,))}
        edge_ids = {r[0] for r in self._q(
            "SELECT DISTINCT item_id FROM provenance WHERE doc_id = ? AND item_kind = 'edge'", (doc_id,))}
        self.conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))  # cascades
        return node_ids, edge_ids

    # -- nodes ----------------------------------------------------------------------------

    def _nodes_from_rows(self, rows: Sequence[sqlite3.Row]) -> dict[str, Node]:
        nodes = {
            r["id"]: Node(
                id=r["id"], kind=r["kind"], name=r["name"], type=r["type"], aliases=[],
                properties=json.loads(r["properties"]), created_at=r["created_at"], updated_at=r["updated_at"],
                relevance=r["relevance"], archived=bool(r["archived"]), manual=bool(r["manual"]),
            )
            for r in rows
        }
        ids = list(nodes)
        for part in _chunks(ids):
            for r in self._q(
                f"SELECT node_id, alias, norm FROM node_names WHERE node_id IN ({','.join('?' * len(part))}) ORDER BY id",
                part,
            ):
                node = nodes[r["node_id"]]
                if r["alias"] != node.name:
                    node.aliases.append(r["alias"])
        return nodes

    def get_nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        """Nodes by id, with their aliases."""
        wanted = list(dict.fromkeys(ids))
        rows: list[sqlite3.Row] = []
        for part in _chunks(wanted):
            rows += self._q(f"SELECT * FROM nodes WHERE id IN ({','.join('?' * len(part))})", part)
        return self._nodes_from_rows(rows)

    def find_nodes(self, kind: str, norms: Iterable[str]) -> dict[str, str]:
        """Map normalised names/aliases to node ids, for the ones that exist."""
        return self._map_in("SELECT norm, node_id FROM node_names WHERE kind = ? AND norm IN ({ids})", norms,
                            before=[kind])

    def insert_node(self, node: Node, names: Sequence[tuple[str, str]]) -> None:
        """Insert a node and its ``(alias, norm)`` names (the first is its own name)."""
        self.conn.execute(
            "INSERT INTO nodes (id, kind, name, type, properties, created_at, updated_at, relevance, archived, manual)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                node.id, node.kind, node.name, node.type, json.dumps(node.properties, ensure_ascii=False),
                node.created_at, node.updated_at, node.relevance, int(node.archived), int(node.manual),
            ),
        )
        self.add_names(node.id, node.kind, names)

    def add_names(self, node_id: str, kind: str, names: Sequence[tuple[str, str]]) -> list[str]:
        """Attach aliases to a node; returns the norms already taken by another node."""
        taken: list[str] = []
        for alias, norm in names:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO node_names (kind, norm, alias, node_id) VALUES (?, ?, ?, ?)",
                (kind, norm, alias, node_id),
            )
            if cur.rowcount == 0:
                owner = self.conn.execute(
                    "SELECT node_id FROM node_names WHERE kind = ? AND norm = ?", (kind, norm)
                ).fetchone()[0]
                if owner != node_id:
                    taken.append(norm)
        return taken

    def update_node(self, node: Node) -> None:
        """Write a node's mutable fields back."""
        self.conn.execute(
            "UPDATE nodes SET name = ?, type = ?, properties = ?, updated_at = ?, relevance = ?, archived = ?,"
            " manual = ? WHERE id = ?",
            (
                node.name, node.type, json.dumps(node.properties, ensure_ascii=False), node.updated_at,
                node.relevance, int(node.archived), int(node.manual), node.id,
            ),
        )

    def search_node_names(self, text: str, kind: str, k: int) -> list[tuple[str, float]]:
        """Nodes whose name or an alias shares words with ``text``, best BM25 first."""
        total = self.conn.execute("SELECT coalesce(max(id), 0) FROM node_names").fetchone()[0]
        expr = pruned_fts_query(self.conn, "node_names_fts", text, total)
        if expr is None or k <= 0:
            return []
        # bm25() cannot sit inside an aggregate: rank names first, then group per node.
        rows = self._q(
            "SELECT node_id, max(score) AS score FROM ("
            " SELECT n.node_id AS node_id, -bm25(node_names_fts) AS score"
            " FROM node_names_fts JOIN node_names n ON n.id = node_names_fts.rowid"
            " WHERE node_names_fts MATCH ? AND n.kind = ? ORDER BY bm25(node_names_fts) LIMIT ?)"
            " GROUP BY node_id ORDER BY score DESC, node_id LIMIT ?",
            (expr, kind, k * 4, k),
        )
        return [(r["node_id"], float(r["score"])) for r in rows]

    def list_nodes(self, kind: str, type: str | None = None, limit: int = 100, offset: int = 0) -> list[Node]:
        """Nodes of a kind (optionally of one type), by name."""
        sql = "SELECT * FROM nodes WHERE kind = ?"
        params: list[Any] = [kind]
        if type is not None:
            sql += " AND type = ?"
            params.append(type)
        sql += " ORDER BY name LIMIT ? OFFSET ?"
        params += [limit, offset]
        return list(self._nodes_from_rows(self._q(sql, params)).values())

    # -- edges ----------------------------------------------------------------------------

    @staticmethod
    def _edge(r: sqlite3.Row) -> Edge:
        return Edge(
            id=r["id"], source=r["source"], target=r["target"], type=r["type"], confidence=r["confidence"],
            created_at=r["created_at"], updated_at=r["updated_at"], valid_from=r["valid_from"],
            valid_to=r["valid_to"], manual=bool(r["manual"]), properties=json.loads(r["properties"]),
        )

    def find_edge(self, source: str, type: str, target: str) -> Edge | None:
        """The edge ``source --[type]--> target`` if it exists."""
        rows = self._q("SELECT * FROM edges WHERE source = ? AND type = ? AND target = ?", (source, type, target))
        return self._edge(rows[0]) if rows else None

    def get_edges(self, ids: Iterable[str]) -> dict[str, Edge]:
        """Edges by id."""
        wanted = list(dict.fromkeys(ids))
        out: dict[str, Edge] = {}
        for part in _chunks(wanted):
            for r in self._q(f"SELECT * FROM edges WHERE id IN ({','.join('?' * len(part))})", part):
                out[r["id"]] = self._edge(r)
        return out

    def insert_edge(self, edge: Edge) -> None:
        """Insert a new edge."""
        self.conn.execute(
            "INSERT INTO edges (id, source, target, type, confidence, created_at, updated_at, valid_from, valid_to,"
            " manual, properties) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                edge.id, edge.source, edge.target, edge.type, edge.confidence, edge.created_at, edge.updated_at,
                edge.valid_from, edge.valid_to, int(edge.manual), json.dumps(edge.properties, ensure_ascii=False),
            ),
        )

    def update_edge(self, edge: Edge) -> None:
        """Write an edge's mutable fields back."""
        self.conn.execute(
            "UPDATE edges SET confidence = ?, updated_at = ?, valid_from = ?, valid_to = ?, manual = ?,"
            " properties = ? WHERE id = ?",
            (
                edge.confidence, edge.updated_at, edge.valid_from, edge.valid_to, int(edge.manual),
                json.dumps(edge.properties, ensure_ascii=False), edge.id,
            ),
        )

    def edges_of(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None) -> list[Edge]:
        """Edges touching any of ``node_ids`` (either direction), strongest first."""
        ids = list(dict.fromkeys(node_ids))
        seen: dict[str, Edge] = {}
        for part in _chunks(ids, _MAX_VARS // 2):
            marks = ",".join("?" * len(part))
            sql = (
                f"SELECT * FROM edges WHERE source IN ({marks}) AND confidence >= ?"
                f" UNION SELECT * FROM edges WHERE target IN ({marks}) AND confidence >= ?"
                " ORDER BY confidence DESC, id"
            )
            params: list[Any] = [*part, min_confidence, *part, min_confidence]
            if limit is not None:
                sql += " LIMIT ?"
                params.append(limit)
            for r in self._q(sql, params):
                seen.setdefault(r["id"], self._edge(r))
        return sorted(seen.values(), key=lambda e: (-e.confidence, e.id))

    def edges_among(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                    ) -> list[Edge]:
        """Edges whose both ends are in ``node_ids``, strongest first (at most ``limit``)."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return []
        if len(ids) > _MAX_VARS // 2:
            wanted = set(ids)
            found = [e for e in self.edges_of(ids, min_confidence) if e.source in wanted and e.target in wanted]
            return found if limit is None else found[:limit]
        marks = ",".join("?" * len(ids))
        rows = self._q(
            # (source, target) probes: cost follows the node set, not the hubs' edge lists.
            f"SELECT * FROM edges INDEXED BY edges_pair WHERE source IN ({marks}) AND target IN ({marks})"
            " AND confidence >= ? ORDER BY confidence DESC, id LIMIT ?",
            [*ids, *ids, min_confidence, -1 if limit is None else limit],
        )
        return [self._edge(r) for r in rows]

    # -- ontology types -------------------------------------------------------------------

    def ontology_types(self, kind: str) -> list[str]:
        """Registered canonical types of a kind ('entity' or 'relation')."""
        return [r[0] for r in self._q("SELECT name FROM ontology_types WHERE kind = ? ORDER BY name", (kind,))]

    def add_ontology_type(self, kind: str, name: str, now: str) -> bool:
        """Register a type; True when it was new."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO ontology_types (kind, name, created_at) VALUES (?, ?, ?)", (kind, name, now)
        )
        return cur.rowcount > 0

    # -- stats ----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts of everything stored."""
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        nodes_by_kind = {r[0]: r[1] for r in self._q("SELECT kind, count(*) FROM nodes GROUP BY kind")}
        return {
            "documents": one("SELECT count(*) FROM documents WHERE is_latest = 1"),
            "document_versions": one("SELECT count(*) FROM documents"),
            "chunks": one("SELECT count(*) FROM chunks"),
            "nodes": nodes_by_kind,
            "entities": nodes_by_kind.get("entity", 0),
            "edges": one("SELECT count(*) FROM edges"),
            "provenance": one("SELECT count(*) FROM provenance"),
            "mentions": one("SELECT count(*) FROM mentions"),
            "entity_types": one("SELECT count(*) FROM ontology_types WHERE kind = 'entity'"),
            "relation_types": one("SELECT count(*) FROM ontology_types WHERE kind = 'relation'"),
            "events": one("SELECT count(*) FROM events"),
            "size_bytes": self._size(),
        }

    def _size(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total


def _split_sql(script: str) -> list[str]:
    """Split a migration script into statements (trigger bodies stay whole)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if not buf and (not line.strip() or line.strip().startswith("--")):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
