"""SQL for the graph (PostgreSQL backend): nodes and their names, edges, the ontology's types.

The port of ``store/sqlite/graph.py``, method for method. IN-lists are arrays (``= ANY(%s)``: one
parameter whatever their length); names are full-text indexed in fts.py's term statistics; SQLite's
``rowid`` order of edges is ``edges.rid``; text columns compare bytewise (``COLLATE "C"`` in the
schema), so orders match SQLite's."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ...errors import BackendError
from ...models import Edge, Node
from ..rows import EdgeRow, MergeCounts, NameEntry, NodeEdges, NodeSpellings, ScoredId, WeightUpdate
from .fts import FtsPgMixin
from .pgbase import Row, edge_from_row

__all__ = ["GraphPgMixin", "EDGE_COLS"]

EDGE_COLS = "id, source, target, type, confidence, created_at, updated_at, valid_from, valid_to, manual, properties"
_NODE_COLS = "id, kind, name, type, properties, created_at, updated_at, relevance, archived, manual"


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


class GraphPgMixin(FtsPgMixin):
    """Nodes, names, edges, ontology types."""

    # -- nodes -----------------------------------------------------------------------------------

    def _nodes_from_rows(self, rows: Sequence[Row]) -> dict[str, Node]:
        nodes = {
            r["id"]: Node(
                id=r["id"], kind=r["kind"], name=r["name"], type=r["type"], aliases=[],
                properties=json.loads(r["properties"]), created_at=r["created_at"], updated_at=r["updated_at"],
                relevance=r["relevance"], archived=bool(r["archived"]), manual=bool(r["manual"]),
            )
            for r in rows
        }
        if nodes:
            for r in self._rows("SELECT node_id, alias FROM node_names WHERE node_id = ANY(%s) ORDER BY id",
                                [list(nodes)]):
                node = nodes[r[0]]
                if r[1] != node.name:
                    node.aliases.append(r[1])
        return nodes

    def get_nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        """Nodes by id, with their aliases."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        return self._nodes_from_rows(self._rows(f"SELECT {_NODE_COLS} FROM nodes WHERE id = ANY(%s)", [wanted]))

    def find_nodes(self, kind: str, norms: Iterable[str]) -> dict[str, str]:
        """Map normalised names/aliases to node ids, for the ones that exist."""
        wanted = list(dict.fromkeys(norms))
        if not wanted:
            return {}
        return {r[0]: r[1] for r in self._rows(
            "SELECT norm, node_id FROM node_names WHERE kind = %s AND norm = ANY(%s)", [kind, wanted])}

    def insert_node(self, node: Node, names: Sequence[NameEntry]) -> None:
        """Insert a node and its ``(alias, norm)`` names (the first is its own name)."""
        self._exec(
            f"INSERT INTO nodes ({_NODE_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [node.id, node.kind, node.name, node.type, _dumps(node.properties), node.created_at, node.updated_at,
             node.relevance, int(node.archived), int(node.manual)],
        )
        self.add_names(node.id, node.kind, names)

    def add_names(self, node_id: str, kind: str, names: Sequence[NameEntry]) -> list[str]:
        """Attach aliases to a node; returns the norms already taken by another node."""
        taken: list[str] = []
        added: list[tuple[int, list[str]]] = []
        for alias, norm in names:
            row = self._one("INSERT INTO node_names (kind, norm, alias, node_id) VALUES (%s, %s, %s, %s)"
                            " ON CONFLICT (kind, norm) DO NOTHING RETURNING id", [kind, norm, alias, node_id])
            if row is not None:
                added.append((int(row[0]), [alias]))
                continue
            owner = self._one("SELECT node_id FROM node_names WHERE kind = %s AND norm = %s", [kind, norm])
            if owner is not None and owner[0] != node_id:
                taken.append(norm)
        self._fts_add("node_names", added)
        return taken

    def insert_nodes(self, items: Sequence[tuple[Node, Sequence[NameEntry]]]) -> None:
        """:meth:`insert_node` for each ``(node, names)``, in order: the nodes in one statement, their
        names in another (numbered in the order given; a name taken, here or earlier, is skipped), and
        one index write for the names."""
        if not items:
            return
        nodes = [n for n, _ in items]
        self._exec(
            f"INSERT INTO nodes ({_NODE_COLS}) SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[],"
            " %s::text[], %s::text[], %s::text[], %s::float8[], %s::int[], %s::int[])",
            [[n.id for n in nodes], [n.kind for n in nodes], [n.name for n in nodes], [n.type for n in nodes],
             [_dumps(n.properties) for n in nodes], [n.created_at for n in nodes], [n.updated_at for n in nodes],
             [n.relevance for n in nodes], [int(n.archived) for n in nodes], [int(n.manual) for n in nodes]])
        names = [(n.kind, norm, alias, n.id) for n, entries in items for alias, norm in entries]
        if not names:
            return
        added = self._rows(
            "INSERT INTO node_names (kind, norm, alias, node_id) SELECT k, n, a, i FROM unnest(%s::text[], %s::text[],"
            " %s::text[], %s::text[]) WITH ORDINALITY AS x(k, n, a, i, o) ORDER BY o"
            " ON CONFLICT (kind, norm) DO NOTHING RETURNING id, alias",
            [[r[0] for r in names], [r[1] for r in names], [r[2] for r in names], [r[3] for r in names]])
        self._fts_add("node_names", sorted((int(r[0]), [r[1]]) for r in added))

    def update_node(self, node: Node) -> None:
        """Write a node's mutable fields back."""
        self._exec(
            "UPDATE nodes SET name = %s, type = %s, properties = %s, updated_at = %s, relevance = %s, archived = %s,"
            " manual = %s WHERE id = %s",
            [node.name, node.type, _dumps(node.properties), node.updated_at, node.relevance, int(node.archived),
             int(node.manual), node.id],
        )

    def search_node_names(self, text: str, kind: str, k: int) -> list[ScoredId]:
        """Nodes whose name or an alias shares words with ``text``, best BM25 first."""
        if k <= 0:
            return []
        total, _ = self._fts_stats("node_names")
        # Names are ranked first, then each node keeps its best name.
        ranked = self._fts_rank("node_names", text, k * 4, join_sql="JOIN node_names n ON n.id = p.rid",
                                where_sql="AND n.kind = %s", params=[kind], total=total)
        if not ranked:
            return []
        owner = {int(r[0]): r[1] for r in self._rows("SELECT id, node_id FROM node_names WHERE id = ANY(%s)",
                                                     [[rid for rid, _ in ranked]])}
        best: dict[str, float] = {}
        for rid, score in ranked:
            if rid in owner:
                best[owner[rid]] = max(best.get(owner[rid], score), score)
        return [ScoredId(i, s) for i, s in sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]

    def search_node_spellings(self, text: str, kind: str, k: int) -> list[NodeSpellings]:
        """:meth:`search_node_names` with every spelling of each node (name first, then aliases in
        the order added): the entity seeds test each candidate's spellings, not whole nodes."""
        found = self.search_node_names(text, kind, k)
        if not found:
            return []
        ids = [f.id for f in found]
        names = {r[0]: r[1] for r in self._rows("SELECT id, name FROM nodes WHERE id = ANY(%s)", [ids])}
        out = {f.id: NodeSpellings(f.id, f.score, [names[f.id]]) for f in found if f.id in names}
        for r in self._rows("SELECT node_id, alias FROM node_names WHERE node_id = ANY(%s) ORDER BY id", [list(out)]):
            if r[1] != names[r[0]]:
                out[r[0]].spellings.append(r[1])
        return list(out.values())

    def list_nodes(self, kind: str, type: str | None = None, limit: int = 100, offset: int = 0) -> list[Node]:
        """Nodes of a kind (optionally of one type), by name."""
        sql = f"SELECT {_NODE_COLS} FROM nodes WHERE kind = %s"
        params: list[Any] = [kind]
        if type is not None:
            sql += " AND type = %s"
            params.append(type)
        sql += " ORDER BY name LIMIT %s OFFSET %s"
        params += [limit, offset]
        return list(self._nodes_from_rows(self._rows(sql, params)).values())

    def node_names(self, node_ids: Iterable[str]) -> dict[str, str]:
        """Display name per node id (no aliases, no JSON): for paths and subgraphs."""
        wanted = list(dict.fromkeys(node_ids))
        if not wanted:
            return {}
        return {r[0]: r[1] for r in self._rows("SELECT id, name FROM nodes WHERE id = ANY(%s)", [wanted])}

    def node_labels(self, node_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """``(name, type)`` per node id (no aliases, no JSON): for listing many nodes by name."""
        wanted = list(dict.fromkeys(node_ids))
        if not wanted:
            return {}
        return {r[0]: (r[1], r[2]) for r in self._rows("SELECT id, name, type FROM nodes WHERE id = ANY(%s)",
                                                       [wanted])}

    def has_entities(self) -> bool:
        """Whether the knowledge graph holds any entity."""
        return self._one("SELECT 1 FROM nodes WHERE kind = 'entity' LIMIT 1") is not None

    def merge_nodes(self, keep: str, other: str, now: str) -> MergeCounts:
        """Move everything of node ``other`` onto ``keep`` and delete ``other``.

        Edges are re-pointed; an edge that then duplicates one of ``keep``'s is folded into
        it (evidence moved, higher confidence kept); a self-loop created by the merge is
        dropped. Returns counts of what moved. Either node missing: BackendError.
        """
        found = {r[0] for r in self._rows("SELECT id FROM nodes WHERE id = ANY(%s) FOR UPDATE", [[keep, other]])}
        if found != {keep, other}:
            missing = other if other not in found else keep
            raise BackendError(f"merge: node {missing!r} does not exist; nothing was merged")
        moved = folded = dropped = 0
        for e in self.edges_of([other]):
            src = keep if e.source == other else e.source
            dst = keep if e.target == other else e.target
            if src == dst:
                self._exec("DELETE FROM provenance WHERE item_kind = 'edge' AND item_id = %s", [e.id])
                self._exec("DELETE FROM edges WHERE id = %s", [e.id])
                dropped += 1
                continue
            existing = self.find_edge(src, e.type, dst)
            if existing is not None and existing.id != e.id:
                self._exec("UPDATE provenance SET item_id = %s WHERE item_kind = 'edge' AND item_id = %s",
                           [existing.id, e.id])
                self._exec("UPDATE edges SET confidence = greatest(confidence, %s), manual = greatest(manual, %s),"
                           " updated_at = %s WHERE id = %s", [e.confidence, int(e.manual), now, existing.id])
                self._exec("DELETE FROM edges WHERE id = %s", [e.id])
                folded += 1
            else:
                self._exec("UPDATE edges SET source = %s, target = %s, updated_at = %s WHERE id = %s",
                           [src, dst, now, e.id])
                moved += 1
        self._exec("UPDATE provenance SET item_id = %s WHERE item_kind = 'node' AND item_id = %s", [keep, other])
        self._exec("UPDATE mentions SET node_id = %s WHERE node_id = %s", [keep, other])
        names = self._rows("SELECT kind, norm, alias FROM node_names WHERE node_id = %s ORDER BY id", [other])
        self._exec("DELETE FROM node_names WHERE node_id = %s", [other])  # their index rows cascade
        for r in names:
            self.add_names(keep, r[0], [(r[2], r[1])])
        self._exec("UPDATE nodes SET manual = greatest(manual, (SELECT manual FROM nodes WHERE id = %s)) WHERE id = %s",
                   [other, keep])
        self._exec("DELETE FROM nodes WHERE id = %s", [other])
        return {"edges_moved": moved, "edges_folded": folded, "self_loops_dropped": dropped}

    def delete_node(self, node_id: str) -> None:
        """Delete a node, its edges (cascade) and all their evidence."""
        self._exec("DELETE FROM provenance WHERE item_kind = 'edge' AND item_id IN"
                   " (SELECT id FROM edges WHERE source = %s UNION SELECT id FROM edges WHERE target = %s)",
                   [node_id, node_id])
        self._exec("DELETE FROM provenance WHERE item_kind = 'node' AND item_id = %s", [node_id])
        self._exec("DELETE FROM nodes WHERE id = %s", [node_id])

    # -- edges -----------------------------------------------------------------------------------

    def find_edge(self, source: str, type: str, target: str) -> Edge | None:
        """The edge ``source --[type]--> target`` if it exists."""
        r = self._one(f"SELECT {EDGE_COLS} FROM edges WHERE source = %s AND type = %s AND target = %s",
                      [source, type, target])
        return edge_from_row(r) if r is not None else None

    def find_edges(self, triples: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], Edge]:
        """Edges by ``(source, type, target)``: one unique-index probe each, in one statement."""
        keys = list(dict.fromkeys(triples))
        if not keys:
            return {}
        rows = self._rows(
            f"SELECT {', '.join('e.' + c for c in EDGE_COLS.split(', '))} FROM unnest(%s::text[], %s::text[],"
            " %s::text[]) AS k(s, t, d) JOIN edges e ON e.source = k.s AND e.type = k.t AND e.target = k.d",
            [[k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys]])
        return {(r["source"], r["type"], r["target"]): edge_from_row(r) for r in rows}

    def get_edges(self, ids: Iterable[str]) -> dict[str, Edge]:
        """Edges by id."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        return {r["id"]: edge_from_row(r) for r in self._rows(f"SELECT {EDGE_COLS} FROM edges WHERE id = ANY(%s)",
                                                              [wanted])}

    def insert_edge(self, edge: Edge) -> None:
        """Insert a new edge."""
        self._exec(
            f"INSERT INTO edges ({EDGE_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [edge.id, edge.source, edge.target, edge.type, edge.confidence, edge.created_at, edge.updated_at,
             edge.valid_from, edge.valid_to, int(edge.manual), _dumps(edge.properties)],
        )

    def insert_edges(self, edges: Sequence[Edge]) -> None:
        """:meth:`insert_edge` for each edge, in order."""
        self._execmany(
            f"INSERT INTO edges ({EDGE_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [[e.id, e.source, e.target, e.type, e.confidence, e.created_at, e.updated_at, e.valid_from, e.valid_to,
              int(e.manual), _dumps(e.properties)] for e in edges],
        )

    def update_edge(self, edge: Edge) -> None:
        """Write an edge's mutable fields back."""
        self._exec(
            "UPDATE edges SET confidence = %s, updated_at = %s, valid_from = %s, valid_to = %s, manual = %s,"
            " properties = %s WHERE id = %s",
            [edge.confidence, edge.updated_at, edge.valid_from, edge.valid_to, int(edge.manual),
             _dumps(edge.properties), edge.id],
        )

    def edges_of(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None) -> list[Edge]:
        """Edges touching any of ``node_ids`` (either direction), strongest first."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return []
        sql = (f"SELECT {EDGE_COLS} FROM edges WHERE source = ANY(%s) AND confidence >= %s"
               f" UNION SELECT {EDGE_COLS} FROM edges WHERE target = ANY(%s) AND confidence >= %s"
               " ORDER BY confidence DESC, id")
        params: list[Any] = [ids, min_confidence, ids, min_confidence]
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [edge_from_row(r) for r in self._rows(sql, params)]

    def edges_among(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                    ) -> list[Edge]:
        """Edges whose both ends are in ``node_ids``, strongest first (at most ``limit``)."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return []
        sql = (f"SELECT {EDGE_COLS} FROM edges WHERE source = ANY(%s) AND target = ANY(%s) AND confidence >= %s"
               " ORDER BY confidence DESC, id")
        params: list[Any] = [ids, ids, min_confidence]
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [edge_from_row(r) for r in self._rows(sql, params)]

    def strongest_edges(self, node_id: str, limit: int) -> NodeEdges:
        """At most ``limit`` outgoing and ``limit`` incoming edges of a node, strongest first
        (ties: oldest first, so a full hub page stops changing), each read from one index range."""
        out = [edge_from_row(r) for r in self._rows(
            f"SELECT {EDGE_COLS} FROM edges WHERE source = %s ORDER BY confidence DESC, rid LIMIT %s",
            [node_id, limit])]
        inc = [edge_from_row(r) for r in self._rows(
            f"SELECT {EDGE_COLS} FROM edges WHERE target = %s ORDER BY confidence DESC, rid LIMIT %s",
            [node_id, limit])]
        return NodeEdges(out, inc)

    def edges_of_types(self, node_id: str, types: Sequence[str], limit: int) -> list[Edge]:
        """Outgoing edges of ``node_id`` with one of ``types`` (the unique index's prefix)."""
        if not types:
            return []
        return [edge_from_row(r) for r in self._rows(
            f"SELECT {EDGE_COLS} FROM edges WHERE source = %s AND type = ANY(%s) LIMIT %s",
            [node_id, list(types), limit])]

    def adjacency(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                  ) -> list[EdgeRow]:
        """``(source, type, target, confidence, edge id)`` of the edges touching the nodes, strongest
        first, at most ``limit`` (no JSON decoding: this is the graph walks' hot path)."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return []
        if limit is None:
            return self._rows_as(
                EdgeRow,
                "SELECT source, type, target, confidence, id FROM edges WHERE source = ANY(%s) AND confidence >= %s"
                " UNION SELECT source, type, target, confidence, id FROM edges WHERE target = ANY(%s)"
                " AND confidence >= %s", [ids, min_confidence, ids, min_confidence])
        # Bounded: each node's strongest edges off the (node, confidence) indexes, in one statement, so
        # that a hub with 10,000 relations costs what a node with 10 does.
        per_node = max(10, -(-limit // max(len(ids), 1)))
        rows = self._rows_as(
            EdgeRow,
            "SELECT DISTINCT x.source, x.type, x.target, x.confidence, x.id FROM unnest(%s::text[]) AS n(id)"
            " CROSS JOIN LATERAL (SELECT * FROM (SELECT source, type, target, confidence, id FROM edges"
            " WHERE source = n.id AND confidence >= %s ORDER BY confidence DESC LIMIT %s) a UNION ALL"
            " SELECT * FROM (SELECT source, type, target, confidence, id FROM edges WHERE target = n.id"
            " AND confidence >= %s ORDER BY confidence DESC LIMIT %s) b) x",
            [ids, min_confidence, per_node, min_confidence, per_node])
        rows.sort(key=lambda t: (-t[3], t[4]))
        return rows[:limit]

    def set_edge_weights(self, weights: Sequence[WeightUpdate], now: str) -> None:
        """``(weight, edge id)`` updates."""
        last = {i: w for w, i in weights}  # an id given twice: the last value wins, as in a loop of updates
        if last:
            self._exec("UPDATE edges e SET confidence = w.c, updated_at = %s FROM unnest(%s::float8[], %s::text[])"
                       " AS w(c, id) WHERE e.id = w.id", [now, list(last.values()), list(last)])

    def delete_edges_by_id(self, edge_ids: Sequence[str]) -> int:
        """Delete edges by id; returns how many went."""
        ids = list(dict.fromkeys(edge_ids))
        return self._exec("DELETE FROM edges WHERE id = ANY(%s)", [ids]) if ids else 0

    # -- ontology types --------------------------------------------------------------------------

    def ontology_types(self, kind: str) -> list[str]:
        """Registered canonical types of a kind ('entity' or 'relation')."""
        return [r[0] for r in self._rows("SELECT name FROM ontology_types WHERE kind = %s ORDER BY name", [kind])]

    def add_ontology_type(self, kind: str, name: str, now: str) -> bool:
        """Register a type; True when it was new."""
        return self._exec("INSERT INTO ontology_types (kind, name, created_at) VALUES (%s, %s, %s)"
                          " ON CONFLICT (kind, name) DO NOTHING", [kind, name, now]) > 0
