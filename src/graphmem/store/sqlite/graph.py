"""SQL for the graph (SQLite backend): nodes and their names, edges, the ontology's types.

Reads that feed generated pages or graph walks are bounded by an index range and a LIMIT,
so that a hub with ten thousand relations costs what a small node costs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ...models import Edge, Node
from ..rows import EdgeRow, MergeCounts, NameEntry, NodeEdges, NodeSpellings, ScoredId, WeightUpdate
from .fts import pruned_fts_query
from .sqlbase import MAX_VARS, SqlHelpers, batches, edge_from_row, marks

__all__ = ["GraphSqlMixin"]

_INSERT_NODE = ("INSERT INTO nodes (id, kind, name, type, properties, created_at, updated_at, relevance, archived,"
                " manual) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
_INSERT_EDGE = ("INSERT INTO edges (id, source, target, type, confidence, created_at, updated_at, valid_from,"
                " valid_to, manual, properties) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def _json(value: dict[str, Any]) -> str:
    # Most nodes and edges have no properties: skip the encoder for them.
    return "{}" if not value else json.dumps(value, ensure_ascii=False)


def _node_row(node: Node) -> tuple[Any, ...]:
    return (node.id, node.kind, node.name, node.type, _json(node.properties), node.created_at, node.updated_at,
            node.relevance, int(node.archived), int(node.manual))


def _edge_row(edge: Edge) -> tuple[Any, ...]:
    return (edge.id, edge.source, edge.target, edge.type, edge.confidence, edge.created_at, edge.updated_at,
            edge.valid_from, edge.valid_to, int(edge.manual), _json(edge.properties))


class GraphSqlMixin(SqlHelpers):
    """Nodes, names, edges, ontology types."""

    # -- nodes -----------------------------------------------------------------------------------

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
        for part in batches(ids):
            for r in self._rows(
                f"SELECT node_id, alias, norm FROM node_names WHERE node_id IN ({marks(len(part))}) ORDER BY id",
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
        for part in batches(wanted):
            rows += self._rows(f"SELECT * FROM nodes WHERE id IN ({','.join('?' * len(part))})", part)
        return self._nodes_from_rows(rows)

    def find_nodes(self, kind: str, norms: Iterable[str]) -> dict[str, str]:
        """Map normalised names/aliases to node ids, for the ones that exist."""
        return self._map_in("SELECT norm, node_id FROM node_names WHERE kind = ? AND norm IN ({ids})", norms,
                            before=[kind])

    def insert_node(self, node: Node, names: Sequence[NameEntry]) -> None:
        """Insert a node and its ``(alias, norm)`` names (the first is its own name)."""
        self.conn.execute(_INSERT_NODE, _node_row(node))
        self.add_names(node.id, node.kind, names)

    def insert_nodes(self, items: Sequence[tuple[Node, Sequence[NameEntry]]]) -> None:
        """Insert nodes with their names: one statement for the nodes, one for all their names (an ingest
        creates a dozen entities per document; a statement each was a third of its SQL)."""
        if not items:
            return
        self.conn.executemany(_INSERT_NODE, [_node_row(n) for n, _ in items])
        # Plain INSERT OR IGNORE in one batch skips a name another node owns, as add_names does (the
        # single call's "taken" report is not asked for here).
        self.conn.executemany("INSERT OR IGNORE INTO node_names (kind, norm, alias, node_id) VALUES (?, ?, ?, ?)",
                              [(n.kind, norm, alias, n.id) for n, names in items for alias, norm in names])

    def add_names(self, node_id: str, kind: str, names: Sequence[NameEntry]) -> list[str]:
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

    def search_node_names(self, text: str, kind: str, k: int) -> list[ScoredId]:
        """Nodes whose name or an alias shares words with ``text``, best BM25 first."""
        total = self.conn.execute("SELECT coalesce(max(id), 0) FROM node_names").fetchone()[0]
        expr = pruned_fts_query(self.conn, "node_names_fts", text, total,
                                memo=self._prune_memo("node_names_fts", total))
        if expr is None or k <= 0:
            return []
        # bm25() cannot sit inside an aggregate: rank names first, then group per node.
        rows = self._rows(
            "SELECT node_id, max(score) AS score FROM ("
            " SELECT n.node_id AS node_id, -bm25(node_names_fts) AS score"
            " FROM node_names_fts JOIN node_names n ON n.id = node_names_fts.rowid"
            " WHERE node_names_fts MATCH ? AND n.kind = ? ORDER BY bm25(node_names_fts) LIMIT ?)"
            " GROUP BY node_id ORDER BY score DESC, node_id LIMIT ?",
            (expr, kind, k * 4, k),
        )
        return [ScoredId(r["node_id"], float(r["score"])) for r in rows]

    def search_node_spellings(self, text: str, kind: str, k: int) -> list[NodeSpellings]:
        """:meth:`search_node_names` with every spelling of each node (its name, then its aliases in
        the order they were added), in one statement: the entity seeds test each candidate's
        spellings against the text, and reading whole nodes (properties, a second query for the
        aliases) for that cost as much as the name search itself."""
        total = self.conn.execute("SELECT coalesce(max(id), 0) FROM node_names").fetchone()[0]
        expr = pruned_fts_query(self.conn, "node_names_fts", text, total,
                                memo=self._prune_memo("node_names_fts", total))
        if expr is None or k <= 0:
            return []
        # The candidates are search_node_names' statement verbatim (same ties at its LIMITs).
        rows = self.conn.execute(
            "WITH top AS (SELECT node_id, max(score) AS score FROM ("
            " SELECT n.node_id AS node_id, -bm25(node_names_fts) AS score"
            " FROM node_names_fts JOIN node_names n ON n.id = node_names_fts.rowid"
            " WHERE node_names_fts MATCH ? AND n.kind = ? ORDER BY bm25(node_names_fts) LIMIT ?)"
            " GROUP BY node_id ORDER BY score DESC, node_id LIMIT ?)"
            " SELECT top.node_id, top.score, nd.name, a.alias FROM top JOIN nodes nd ON nd.id = top.node_id"
            " LEFT JOIN node_names a ON a.node_id = top.node_id AND a.alias <> nd.name"
            " ORDER BY top.score DESC, top.node_id, a.id",
            (expr, kind, k * 4, k),
        ).fetchall()
        out: dict[str, NodeSpellings] = {}
        for node_id, score, name, alias in rows:
            got = out.get(node_id)
            if got is None:
                got = out[node_id] = NodeSpellings(node_id, float(score), [name])
            if alias is not None:
                got.spellings.append(alias)
        return list(out.values())

    def list_nodes(self, kind: str, type: str | None = None, limit: int = 100, offset: int = 0) -> list[Node]:
        """Nodes of a kind (optionally of one type), by name."""
        sql = "SELECT * FROM nodes WHERE kind = ?"
        params: list[Any] = [kind]
        if type is not None:
            sql += " AND type = ?"
            params.append(type)
        sql += " ORDER BY name LIMIT ? OFFSET ?"
        params += [limit, offset]
        return list(self._nodes_from_rows(self._rows(sql, params)).values())

    def node_names(self, node_ids: Iterable[str]) -> dict[str, str]:
        """Display name per node id (no aliases, no JSON): for paths and subgraphs."""
        return self._map_in("SELECT id, name FROM nodes WHERE id IN ({ids})", node_ids)

    def node_labels(self, node_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """``(name, type)`` per node id (no aliases, no JSON): the wiki lists a batch's hundreds of entities
        by name and type, and builds full nodes only for those that get a page."""
        return {r[0]: (r[1], r[2]) for r in self._rows_in("SELECT id, name, type FROM nodes WHERE id IN ({ids})",
                                                          node_ids)}

    def has_entities(self) -> bool:
        """Whether the knowledge graph holds any entity."""
        return self.conn.execute("SELECT 1 FROM nodes WHERE kind = 'entity' LIMIT 1").fetchone() is not None

    def merge_nodes(self, keep: str, other: str, now: str) -> MergeCounts:
        """Move everything of node ``other`` onto ``keep`` and delete ``other``.

        Edges are re-pointed; an edge that then duplicates one of ``keep``'s is folded into
        it (evidence moved, higher confidence kept); a self-loop created by the merge is
        dropped. Returns counts of what moved.
        """
        c = self.conn
        moved = folded = dropped = 0
        for e in self.edges_of([other]):
            src = keep if e.source == other else e.source
            dst = keep if e.target == other else e.target
            if src == dst:
                c.execute("DELETE FROM provenance WHERE item_kind = 'edge' AND item_id = ?", (e.id,))
                c.execute("DELETE FROM edges WHERE id = ?", (e.id,))
                dropped += 1
                continue
            existing = self.find_edge(src, e.type, dst)
            if existing is not None and existing.id != e.id:
                c.execute(
                    "UPDATE provenance SET item_id = ? WHERE item_kind = 'edge' AND item_id = ?", (existing.id, e.id)
                )
                c.execute(
                    "UPDATE edges SET confidence = max(confidence, ?), manual = max(manual, ?), updated_at = ?"
                    " WHERE id = ?",
                    (e.confidence, int(e.manual), now, existing.id),
                )
                c.execute("DELETE FROM edges WHERE id = ?", (e.id,))
                folded += 1
            else:
                c.execute(
                    "UPDATE edges SET source = ?, target = ?, updated_at = ? WHERE id = ?", (src, dst, now, e.id)
                )
                moved += 1
        c.execute("UPDATE provenance SET item_id = ? WHERE item_kind = 'node' AND item_id = ?", (keep, other))
        c.execute("UPDATE mention_rows SET node_id = ? WHERE node_id = ?", (keep, other))
        # Names: drop the FTS rows through delete + insert so the index stays in step.
        names = self._rows("SELECT kind, norm, alias FROM node_names WHERE node_id = ?", (other,))
        c.execute("DELETE FROM node_names WHERE node_id = ?", (other,))
        for r in names:
            c.execute(
                "INSERT OR IGNORE INTO node_names (kind, norm, alias, node_id) VALUES (?, ?, ?, ?)",
                (r["kind"], r["norm"], r["alias"], keep),
            )
        c.execute("UPDATE nodes SET manual = max(manual, (SELECT manual FROM nodes WHERE id = ?)) WHERE id = ?",
                  (other, keep))
        c.execute("DELETE FROM nodes WHERE id = ?", (other,))
        return {"edges_moved": moved, "edges_folded": folded, "self_loops_dropped": dropped}

    def delete_node(self, node_id: str) -> None:
        """Delete a node, its edges (cascade) and all their evidence."""
        c = self.conn
        edge_ids = [r[0] for r in self._rows("SELECT id FROM edges WHERE source = ? OR target = ?", (node_id, node_id))]
        for part in batches(edge_ids):
            c.execute(
                f"DELETE FROM provenance WHERE item_kind = 'edge' AND item_id IN ({','.join('?' * len(part))})", part
            )
        c.execute("DELETE FROM provenance WHERE item_kind = 'node' AND item_id = ?", (node_id,))
        c.execute("DELETE FROM nodes WHERE id = ?", (node_id,))

    # -- edges -----------------------------------------------------------------------------------

    def find_edge(self, source: str, type: str, target: str) -> Edge | None:
        """The edge ``source --[type]--> target`` if it exists."""
        rows = self._rows("SELECT * FROM edges WHERE source = ? AND type = ? AND target = ?", (source, type, target))
        return edge_from_row(rows[0]) if rows else None

    def find_edges(self, triples: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], Edge]:
        """Edges by ``(source, type, target)``: one unique-index probe each, in one statement."""
        keys = list(dict.fromkeys(triples))
        out: dict[tuple[str, str, str], Edge] = {}
        for part in batches(keys):
            for r in self._rows(
                "SELECT e.* FROM json_each(?) j JOIN edges e ON e.source = json_extract(j.value, '$[0]')"
                " AND e.type = json_extract(j.value, '$[1]') AND e.target = json_extract(j.value, '$[2]')",
                (json.dumps([list(t) for t in part]),)):
                out[(r["source"], r["type"], r["target"])] = edge_from_row(r)
        return out

    def get_edges(self, ids: Iterable[str]) -> dict[str, Edge]:
        """Edges by id."""
        wanted = list(dict.fromkeys(ids))
        out: dict[str, Edge] = {}
        for part in batches(wanted):
            for r in self._rows(f"SELECT * FROM edges WHERE id IN ({','.join('?' * len(part))})", part):
                out[r["id"]] = edge_from_row(r)
        return out

    def insert_edge(self, edge: Edge) -> None:
        """Insert a new edge."""
        self.conn.execute(_INSERT_EDGE, _edge_row(edge))

    def insert_edges(self, edges: Sequence[Edge]) -> None:
        """Insert new edges in one statement."""
        if edges:
            self.conn.executemany(_INSERT_EDGE, [_edge_row(e) for e in edges])

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
        for part in batches(ids, MAX_VARS // 2):
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
            for r in self._rows(sql, params):
                seen.setdefault(r["id"], edge_from_row(r))
        return sorted(seen.values(), key=lambda e: (-e.confidence, e.id))

    def edges_among(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                    ) -> list[Edge]:
        """Edges whose both ends are in ``node_ids``, strongest first (at most ``limit``)."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return []
        if len(ids) > MAX_VARS // 2:
            wanted = set(ids)
            found = [e for e in self.edges_of(ids, min_confidence) if e.source in wanted and e.target in wanted]
            return found if limit is None else found[:limit]
        marks = ",".join("?" * len(ids))
        rows = self._rows(
            # (source, target) probes: cost follows the node set, not the hubs' edge lists.
            f"SELECT * FROM edges INDEXED BY edges_pair WHERE source IN ({marks}) AND target IN ({marks})"
            " AND confidence >= ? ORDER BY confidence DESC, id LIMIT ?",
            [*ids, *ids, min_confidence, -1 if limit is None else limit],
        )
        return [edge_from_row(r) for r in rows]

    def strongest_edges(self, node_id: str, limit: int) -> NodeEdges:
        """At most ``limit`` outgoing and ``limit`` incoming edges of a node, strongest first
        (ties: oldest first, so a full hub page stops changing), each read from one index range."""
        out = [edge_from_row(r) for r in self._rows(
            "SELECT * FROM edges INDEXED BY wiki_edges_source WHERE source = ?"
            " ORDER BY confidence DESC, rowid LIMIT ?", (node_id, limit))]
        inc = [edge_from_row(r) for r in self._rows(
            "SELECT * FROM edges INDEXED BY wiki_edges_target WHERE target = ?"
            " ORDER BY confidence DESC, rowid LIMIT ?", (node_id, limit))]
        return NodeEdges(out, inc)

    def edges_of_types(self, node_id: str, types: Sequence[str], limit: int) -> list[Edge]:
        """Outgoing edges of ``node_id`` with one of ``types`` (the unique index's prefix)."""
        if not types:
            return []
        return [edge_from_row(r) for r in self._rows(
            f"SELECT * FROM edges WHERE source = ? AND type IN ({marks(len(types))}) LIMIT ?",
            [node_id, *types, limit])]

    def adjacency(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                  ) -> list[EdgeRow]:
        """``(source, type, target, confidence, edge id)`` of the edges touching the nodes, strongest
        first, at most ``limit`` (no JSON decoding: this is the graph walks' hot path)."""
        ids = list(dict.fromkeys(node_ids))
        out: list[EdgeRow] = []
        if limit is None:
            for part in batches(ids, MAX_VARS // 2):
                marks = ",".join("?" * len(part))
                out += self._rows_as(
                    EdgeRow,
                    f"SELECT source, type, target, confidence, id FROM edges WHERE source IN ({marks})"
                    f" AND confidence >= ? UNION SELECT source, type, target, confidence, id FROM edges"
                    f" WHERE target IN ({marks}) AND confidence >= ?",
                    [*part, min_confidence, *part, min_confidence],
                )
            return out
        # Bounded: each node's strongest edges through the (node, confidence) indexes, so a hub
        # with 10,000 relations costs what a node with 10 does.
        per_node = max(10, -(-limit // max(len(ids), 1)))
        seen: set[str] = set()
        for nid in ids:
            for col in ("source", "target"):
                for r in self._rows_as(
                    EdgeRow,
                    f"SELECT source, type, target, confidence, id FROM edges WHERE {col} = ? AND confidence >= ?"
                    " ORDER BY confidence DESC LIMIT ?",
                    (nid, min_confidence, per_node),
                ):
                    if r.edge_id not in seen:
                        seen.add(r.edge_id)
                        out.append(r)
        out.sort(key=lambda t: (-t[3], t[4]))
        return out[:limit]

    def set_edge_weights(self, weights: Sequence[WeightUpdate], now: str) -> None:
        """``(weight, edge id)`` updates."""
        self.conn.executemany("UPDATE edges SET confidence = ?, updated_at = ? WHERE id = ?",
                              [(w, now, i) for w, i in weights])

    def delete_edges_by_id(self, edge_ids: Sequence[str]) -> int:
        """Delete edges by id; returns how many went."""
        n = 0
        for part in batches(list(edge_ids)):
            n += self.conn.execute(f"DELETE FROM edges WHERE id IN ({','.join('?' * len(part))})", part).rowcount
        return n

    # -- ontology types --------------------------------------------------------------------------

    def ontology_types(self, kind: str) -> list[str]:
        """Registered canonical types of a kind ('entity' or 'relation')."""
        return [r[0] for r in self._rows("SELECT name FROM ontology_types WHERE kind = ? ORDER BY name", (kind,))]

    def add_ontology_type(self, kind: str, name: str, now: str) -> bool:
        """Register a type; True when it was new."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO ontology_types (kind, name, created_at) VALUES (?, ?, ?)", (kind, name, now)
        )
        return cur.rowcount > 0
