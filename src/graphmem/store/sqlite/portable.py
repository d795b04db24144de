"""Dump, load, back up and check the SQLite store (the :class:`PortableStore` protocol)."""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ...errors import BackendError, InvalidInput
from .documents import CHUNK_TEXTS, read_content, stored_content
from .events import event_payload_text, shaped_payload
from .evidence import PROVENANCE_CREATED, PROVENANCE_TEXT
from .memory import USED_AT, USES, WITH_USES
from .schema_disk import DISK_REPLAYED
from .schema_memory import REPLAYED_TABLES
from .schema_memory_uses import MEMORY_USES_REPLAYED
from .sqlbase import SqlHelpers, marks

__all__ = ["PortableSqlMixin"]

# Not dumped: SQLite's own tables, full-text indexes (rebuilt by triggers as rows load), counters the
# triggers keep, the schema's own bookkeeping, and where each feed consumer got to (a deployment's state,
# not knowledge; a backup keeps it), and the replay log (undo records, meaningful only in this file). The use
# counts of memory_uses (migration 0031) are written out in the memories' own columns, as before that table.
_DERIVED = ("sqlite_", "schema_migrations", "wiki_index_counts", "feed_cursors", "replay_log", "event_shapes",
            "memory_uses")
# Views dumped and loaded in place of the compact table under them (schema_disk.py): view -> table.
_VIEWS = {"mentions": "mention_rows"}
_FTS_EXTERNAL = {"chunks_fts": "chunks", "node_names_fts": "node_names", "pages_fts": "pages", "skills_fts": "skills"}
# memories_fts is contentless (content=''): it is refilled from memories with the scope column the
# migration 0008 trigger computes.
_MEMORIES_FTS_FILL = (
    "INSERT INTO memories_fts (rowid, text, scope) SELECT rowid_, text, trim("
    "coalesce('t' || lower(hex(m.tenant_id)), '') || ' ' || coalesce('u' || lower(hex(m.user_id)), '') || ' ' || "
    "coalesce('a' || lower(hex(m.agent_id)), '') || ' ' || coalesce('r' || lower(hex(m.run_id)), '')) FROM memories m")
# A vector whose item is gone: the item tables per item kind.
_VECTOR_OWNERS = {"chunk": ("chunks", "chunk_id"), "entity": ("nodes", "id"), "memory": ("nodes", "id"),
                  "skill": ("nodes", "id"), "relation": ("edges", "id")}


def _encode(value: Any) -> Any:
    return {"$b64": base64.b64encode(value).decode("ascii")} if isinstance(value, bytes) else value


def _json_bytes(value: Any) -> Any:
    if isinstance(value, bytes):
        return _encode(value)
    raise TypeError(f"a {type(value).__name__} is not a dumped value")


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$b64"}:
        return base64.b64decode(value["$b64"])
    return value


class PortableSqlMixin(SqlHelpers):
    """Whole-store dump/load, online backup, consistency checks."""

    path: Path
    busy_timeout: float
    _lock: Any

    def _connect_uri(self, uri: str) -> sqlite3.Connection:  # provided by ConnectionMixin
        raise NotImplementedError

    def _connect_read_only(self) -> sqlite3.Connection:  # provided by ConnectionMixin
        raise NotImplementedError

    def _fts_tables(self) -> set[str]:
        return {r[0] for r in self._rows("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE "
                                         "'CREATE VIRTUAL TABLE%'")}

    def dump_tables(self) -> list[str]:
        """Content tables, parents before the tables that reference them (a table stored compactly is dumped
        through the view that shows it as it was: ``mentions``, not ``mention_rows``)."""
        names = [r[0] for r in self._rows("SELECT name FROM sqlite_master WHERE type = 'table' OR (type = 'view'"
                                          f" AND name IN ({marks(len(_VIEWS))})) ORDER BY name", list(_VIEWS))]
        fts = self._fts_tables()
        keep = [n for n in names if not n.startswith(_DERIVED) and n not in _VIEWS.values()
                and not any(n == f or n.startswith(f + "_") for f in fts)]
        parents = {n: {r["table"] for r in self._rows(f'PRAGMA foreign_key_list("{_VIEWS.get(n, n)}")')} - {n}
                   for n in keep}
        ordered: list[str] = []
        while len(ordered) < len(keep):
            ready = [n for n in keep if n not in ordered and parents[n] <= set(ordered)]
            if not ready:  # a reference cycle: cannot happen with this schema, but never loop forever
                ready = [n for n in keep if n not in ordered]
            ordered += ready
        return ordered

    def dump_rows(self, tables: Sequence[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row of ``tables`` from one read snapshot (its own read-only connection)."""
        wanted = list(tables) if tables is not None else self.dump_tables()
        known = set(self.dump_tables())
        bad = [t for t in wanted if t not in known]
        if bad:
            raise InvalidInput(f"tables: {bad[0]!r} is not a dumpable table; use one of {sorted(known)}")
        # read-only, as the store's own connection falls back when the folder may not be written (no -shm)
        conn = self._connect_read_only()
        try:
            conn.execute("BEGIN")  # one snapshot for every table
            for table in wanted:
                cur = conn.execute(_dump_select(conn, table))
                cols = [d[0] for d in cur.description]
                for row in cur:
                    out = {c: _encode(v) for c, v in zip(cols, row)}
                    if table == "documents":  # a text stored as its chunks is written out in full
                        out["content"] = read_content(out["content"], lambda o=out: conn.execute(  # type: ignore[misc]
                            CHUNK_TEXTS, (o["doc_id"], o["version"])))
                    elif table == "events":  # a payload stored as its values, written out as it was given
                        out["payload"] = event_payload_text(out["payload"], out.pop("shape_keys"))
                    yield table, out
            conn.execute("COMMIT")
        finally:
            conn.close()

    def load_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Insert dumped rows (inside a transaction); references are checked at COMMIT.

        Rows may come in any order. Mentions are set aside (in a temporary table) until every other row is in:
        they name their chunk by its integer key. Documents are stored in the compact form their chunks allow
        (:func:`stored_content`) once those are in, and events with their payload's shape where that gives the
        payload's text back byte for byte: a copy takes as little room as the knowledge base it comes from."""
        known = {t: {r["name"] for r in self._rows(f'PRAGMA table_info("{t}")')} for t in self.dump_tables()}
        self.conn.execute("PRAGMA defer_foreign_keys = ON")  # rows may come in any order; checked at COMMIT
        self.conn.execute("DROP TABLE IF EXISTS temp.load_later")
        self.conn.execute("CREATE TEMP TABLE load_later (seq INTEGER PRIMARY KEY, row TEXT NOT NULL)")
        shapes: dict[str, int] = {}
        documents: list[tuple[Any, Any]] = []
        counts: dict[str, int] = {}
        for table, row in rows:
            cols = known.get(table)
            if cols is None:
                raise InvalidInput(f"table: {table!r} is not a graphmem table; nothing was imported")
            extra = [c for c in row if c not in cols]
            if extra:
                raise InvalidInput(f"{table}.{extra[0]}: no such column; the export comes from another schema; "
                                   "nothing was imported")
            if table == "mentions":
                self.conn.execute("INSERT INTO temp.load_later (row) VALUES (?)",
                                  (json.dumps(row, ensure_ascii=False, default=_json_bytes),))
            else:
                self._load_row(table, self._shaped_event(row, shapes) if table == "events" else row)
                if table == "documents":
                    documents.append((row.get("doc_id"), row.get("version")))
            counts[table] = counts.get(table, 0) + 1
        self._compact_documents(documents)
        for (text,) in self.conn.execute("SELECT row FROM temp.load_later ORDER BY seq").fetchall():
            self._load_row("mentions", json.loads(text))
        self.conn.execute("DROP TABLE temp.load_later")
        return counts

    def _load_row(self, table: str, row: dict[str, Any]) -> None:
        names = list(row)
        self.conn.execute(f'INSERT OR REPLACE INTO "{table}" ({",".join(_q(c) for c in names)}) '
                          f"VALUES ({','.join('?' * len(names))})", [_decode(row[c]) for c in names])

    def _compact_documents(self, keys: list[tuple[Any, Any]]) -> None:
        """Store the loaded document versions' texts (given in full) as :func:`stored_content` does, now that
        their chunks are in. The replay log's update trigger is set aside meanwhile, as migration
        0021_document_text_from_chunks did: the rows mean the same before and after."""
        updates = []
        for doc_id, version in keys:
            got = self.conn.execute("SELECT rowid_, content FROM documents WHERE doc_id = ? AND version = ?",
                                    (doc_id, version)).fetchone()
            if got is None or not isinstance(got[1], str):
                continue
            chunks = [tuple(c) for c in self.conn.execute(CHUNK_TEXTS, (doc_id, version))]
            stored = stored_content(got[1], chunks)
            if stored != got[1]:
                updates.append((stored, got[0]))
        if not updates:
            return
        trigger = self.conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'"
                                    " AND name = 'replay_documents_u'").fetchone()
        if trigger is not None:
            self.conn.execute("DROP TRIGGER replay_documents_u")
        self.conn.executemany("UPDATE documents SET content = ? WHERE rowid_ = ?", updates)
        if trigger is not None:
            self.conn.execute(trigger[0])

    def _shaped_event(self, row: dict[str, Any], shapes: dict[str, int]) -> dict[str, Any]:
        """A dumped events row stored as append_event stores it in a transaction (its payload's values and shape),
        where the shaped form reads back as the same text; else as given."""
        text = row.get("payload")
        if not isinstance(text, str) or row.get("shape") is not None:
            return row
        shaped = shaped_payload(text)
        if shaped is None:
            return row
        keys, values = shaped
        if keys not in shapes:
            shapes.update(self._shape_ids({keys}))  # type: ignore[attr-defined]  # EventSqlMixin
        return {**row, "payload": values, "shape": shapes[keys]}

    def backup_to(self, path: Path) -> None:
        """SQLite's online backup API: a page-level copy under one read snapshot, so writers in other
        processes go on and the copy holds exactly the commits before it started."""
        if path.exists():
            raise InvalidInput(f"backup: {path} exists; give a new file name")
        target = sqlite3.connect(str(path))
        try:
            with self._lock:  # not in the middle of this process's own write transaction
                self.conn.backup(target)
            target.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        except sqlite3.Error as exc:
            target.close()
            path.unlink(missing_ok=True)
            raise BackendError(f"backup to {path} failed: {exc}; nothing was written") from None
        target.close()

    def check_store(self, repair: bool = False) -> dict[str, list[str]]:
        """Problems by check (``integrity``, ``fts``, ``vectors``, ``evidence``); with ``repair``, fixed."""
        found: dict[str, list[str]] = {"integrity": [], "fts": [], "vectors": [], "evidence": []}
        found["integrity"] = [str(r[0]) for r in self._rows("PRAGMA integrity_check") if r[0] != "ok"]
        found["integrity"] += [f"foreign key: {r[0]} row {r[1]} references a missing {r[2]} row"
                               for r in self._rows("PRAGMA foreign_key_check")]
        # FTS5's integrity-check is an INSERT: refused on a read-only file, and it needs the write lock. A check
        # is a read, so it never waits for another process's writer (it used to wait the whole busy timeout,
        # then call the index "out of step ... (database is locked)"): then row counts are compared instead.
        self.conn.execute("PRAGMA busy_timeout = 0")
        try:
            for fts, table in _FTS_EXTERNAL.items():
                counted_only = getattr(self, "read_only", False)
                if not counted_only:
                    try:
                        self.conn.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)")
                    except sqlite3.OperationalError as exc:
                        if "locked" not in str(exc) and "busy" not in str(exc):
                            found["fts"].append(f"{fts}: out of step with {table} ({exc})")
                        counted_only = "locked" in str(exc) or "busy" in str(exc)
                    except sqlite3.DatabaseError as exc:
                        found["fts"].append(f"{fts}: out of step with {table} ({exc})")
                if counted_only:
                    indexed = self.conn.execute(f"SELECT count(*) FROM {fts}_docsize").fetchone()[0]
                    rows = self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                    if indexed != rows:
                        found["fts"].append(f"{fts}: {indexed} rows indexed for {rows} in {table}")
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        indexed = self.conn.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]
        stored = self.conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        if indexed != stored:
            found["fts"].append(f"memories_fts: {indexed} rows indexed for {stored} memories")
        for kind, (table, col) in _VECTOR_OWNERS.items():
            n = self.conn.execute(f"SELECT count(*) FROM vectors v WHERE v.item_kind = ? AND NOT EXISTS "
                                  f"(SELECT 1 FROM {table} t WHERE t.{col} = v.item_id)", (kind,)).fetchone()[0]
            if n:
                found["vectors"].append(f"{n} {kind} vectors of {kind}s that are gone")
        # float16: two bytes per dimension (a shorter blob fails every product that reads it)
        for kind, item_id, dim, size in self._rows("SELECT item_kind, item_id, dim, length(vec) FROM vectors"
                                                   " WHERE dim < 1 OR length(vec) != 2 * dim LIMIT 20"):
            found["vectors"].append(f"{kind} {item_id!r}: vector of {size} bytes for dim {dim} (expected "
                                    f"{2 * int(dim or 0)}); graphmem check --repair drops it, graphmem reindex "
                                    "writes it again")
        n = self.conn.execute("SELECT count(*) FROM provenance p WHERE p.chunk_id IS NOT NULL AND NOT EXISTS "
                              "(SELECT 1 FROM chunks c WHERE c.chunk_id = p.chunk_id)").fetchone()[0]
        if n:
            found["evidence"].append(f"{n} evidence records point at missing chunks")
        n = self.conn.execute("SELECT count(*) FROM page_sources s WHERE NOT EXISTS "
                              "(SELECT 1 FROM documents d WHERE d.doc_id = s.doc_id)").fetchone()[0]
        if n:
            found["evidence"].append(f"{n} page sources name missing documents")
        if repair and any(found[k] for k in ("fts", "vectors", "evidence")):
            self._repair(found)
        return found

    def _repair(self, found: dict[str, list[str]]) -> None:
        with self.transaction():  # type: ignore[attr-defined]  # TransactionMixin, mixed in by SqliteStore
            if found["fts"]:
                for fts in _FTS_EXTERNAL:
                    self.conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
                self.conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('delete-all')")
                self.conn.execute(_MEMORIES_FTS_FILL)
            self.conn.execute("DELETE FROM vectors WHERE dim < 1 OR length(vec) != 2 * dim")
            for kind, (table, col) in _VECTOR_OWNERS.items():
                self.conn.execute(f"DELETE FROM vectors WHERE item_kind = ? AND NOT EXISTS "
                                  f"(SELECT 1 FROM {table} t WHERE t.{col} = vectors.item_id)", (kind,))
            self.conn.execute("DELETE FROM provenance WHERE chunk_id IS NOT NULL AND NOT EXISTS "
                              "(SELECT 1 FROM chunks c WHERE c.chunk_id = provenance.chunk_id)")
            self.conn.execute("DELETE FROM page_sources WHERE NOT EXISTS "
                              "(SELECT 1 FROM documents d WHERE d.doc_id = page_sources.doc_id)")

    def replay_to(self, path: Path, event_id: int) -> dict[str, int]:
        """A copy of the database as it was at ``event_id`` (undoing the replay log backwards)."""
        if not isinstance(event_id, int) or event_id < 0:
            raise InvalidInput(f"until: expected an event id >= 0, got {event_id!r}")
        last = self.conn.execute("SELECT max(id) FROM events").fetchone()[0] or 0
        if event_id > last:
            raise InvalidInput(f"until: event {event_id} does not exist yet (the last is {last})")
        started = self.get_meta("replay.since_event")  # type: ignore[attr-defined]  # LifecycleSqlMixin
        if started is not None and event_id < int(started):
            raise InvalidInput(f"until: the replay log of this knowledge base starts after event {started}: the "
                               "events before it came with an import or a migrate, or were written by a graphmem "
                               "older than the log, and their undo records are not kept; replay to a later point")
        self.backup_to(path)
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            for table in (*REPLAYED_TABLES, *DISK_REPLAYED, *MEMORY_USES_REPLAYED):  # undoing must not log itself
                for op in "iud":
                    conn.execute(f"DROP TRIGGER IF EXISTS replay_{table}_{op}")
            undone = 0
            start = _first_seq_at(conn, event_id)
            for table, op, rid, old in conn.execute("SELECT tbl, op, rid, old FROM replay_log WHERE seq >= ? "
                                                    "ORDER BY seq DESC", (start,)).fetchall():
                if op == "I":
                    if table == "documents":
                        _drop_version_chunks(conn, rid)
                    conn.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rid,))
                else:
                    row = json.loads(old)
                    cols = [c for c in row if c != "rowid"]
                    if op == "U":
                        conn.execute(f'UPDATE "{table}" SET {", ".join(f"{_q(c)} = ?" for c in cols)} WHERE rowid = ?',
                                     [row[c] for c in cols] + [rid])
                    else:
                        conn.execute(f'INSERT OR REPLACE INTO "{table}" (rowid, {", ".join(_q(c) for c in cols)}) '
                                     f"VALUES (?, {', '.join('?' * len(cols))})", [rid] + [row[c] for c in cols])
                undone += 1
            conn.execute("DELETE FROM replay_log WHERE seq >= ?", (start,))
            conn.execute("DELETE FROM events WHERE id > ?", (event_id,))
            orphans = _drop_orphans(conn)
            kept = conn.execute("SELECT count(*) FROM events").fetchone()[0]
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.close()
            path.unlink(missing_ok=True)
            raise BackendError(f"replay to event {event_id} failed: {exc}; nothing was written") from None
        conn.close()
        return {"undone": undone, "orphans": orphans, "events": kept}


def _dump_select(conn: sqlite3.Connection, table: str) -> str:
    """``SELECT *`` of ``table``, with evidence quotes stored as spans (and creation times as their document's)
    written out in full (an export holds the text itself, whoever reads it)."""
    if table == "events":  # a payload's shape is the store's own encoding, not a column of the event
        cols = [r[1] for r in conn.execute('PRAGMA table_info("events")') if r[1] != "shape"]
        return ("SELECT " + ", ".join(f"e.{_q(c)}" for c in cols) + ", s.keys AS shape_keys FROM events e"
                " LEFT JOIN event_shapes s ON s.id = e.shape ORDER BY e.id")
    if table == "memories" and conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_uses'").fetchone():
        # a counted memory's uses and used_at are in memory_uses (migration 0031)
        merged = {"uses": f"{USES} AS uses", "used_at": f"{USED_AT} AS used_at"}
        cols = [r[1] for r in conn.execute('PRAGMA table_info("memories")')]
        return "SELECT " + ", ".join(merged.get(c, f"m.{_q(c)}") for c in cols) + f" FROM {WITH_USES}"
    if table != "provenance":
        return f'SELECT * FROM "{table}"'
    cols = [r[1] for r in conn.execute('PRAGMA table_info("provenance")')]
    derived = {"text": f"{PROVENANCE_TEXT} AS text", "created_at": f"{PROVENANCE_CREATED} AS created_at"}
    return "SELECT " + ", ".join(derived.get(c, f"p.{_q(c)}") for c in cols) + " FROM provenance p"


def _q(col: str) -> str:
    return '"' + col.replace('"', '""') + '"'


def _first_seq_at(conn: sqlite3.Connection, event_id: int) -> int:
    """The first replay-log seq whose ``ev`` is at least ``event_id`` (past the end: one more than the last).
    ``ev`` never decreases along ``seq``, so a binary search over the primary key finds it in O(log n)."""
    lo, hi = conn.execute("SELECT coalesce(min(seq), 1), coalesce(max(seq), 0) + 1 FROM replay_log").fetchone()
    while lo < hi:
        mid = (lo + hi) // 2
        row = conn.execute("SELECT seq, ev FROM replay_log WHERE seq >= ? ORDER BY seq LIMIT 1", (mid,)).fetchone()
        if row is None or row[1] >= event_id:
            hi = mid
        else:
            lo = row[0] + 1
    return lo


def _drop_version_chunks(conn: sqlite3.Connection, rowid: int) -> None:
    """Delete the chunks and mentions of the document version whose insert is being undone (their own inserts are
    not logged). Left for the orphan sweep at the end, a chunk whose integer id an older, deleted chunk had would
    be overwritten when that chunk is restored, and its mentions (naming the chunk by that id) would become the
    restored chunk's."""
    chunks = ("SELECT c.id FROM chunks c JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version"
              " WHERE d.rowid = ?")
    conn.execute(f"DELETE FROM mention_rows WHERE chunk IN ({chunks})", (rowid,))
    conn.execute(f"DELETE FROM chunks WHERE id IN ({chunks})", (rowid,))


def _drop_orphans(conn: sqlite3.Connection) -> int:
    """Delete rows whose foreign key points at a row that is gone (what an undone insert leaves behind:
    mentions of an entity, chunks of a document version), until none is left; returns how many."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    checks: list[str] = []
    for table in tables:
        fks: dict[int, list[tuple[str, str, str]]] = {}
        for fk in conn.execute(f"PRAGMA foreign_key_list({_q(table)})"):
            fks.setdefault(fk[0], []).append((fk[2], fk[3], fk[4]))  # parent table, child col, parent col
        for cols in fks.values():
            parent = cols[0][0]
            match = " AND ".join(f"p.{_q(pc)} = c.{_q(cc)}" for _, cc, pc in cols)
            present = " AND ".join(f"c.{_q(cc)} IS NOT NULL" for _, cc, _ in cols)
            checks.append(f"DELETE FROM {_q(table)} AS c WHERE {present} AND NOT EXISTS "
                          f"(SELECT 1 FROM {_q(parent)} AS p WHERE {match})")
    removed = 0
    while True:
        before = conn.total_changes
        for sql in checks:
            conn.execute(sql)
        step = conn.total_changes - before
        if not step:
            return removed
        removed += step
