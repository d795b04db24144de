"""Moving a PostgreSQL knowledge base's rows in and out whole: dump and load (the same rows and columns as
the SQLite backend's, so a dump of one loads into the other), a backup and a replay that write a SQLite
knowledge base file (one self-contained, consistent copy that any graphmem opens, and that
``graphmem migrate`` can bring back into a server), and the store's consistency checks."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ...errors import BackendError, InvalidInput
from .fts import FTS_SOURCES, FtsPgMixin
from .pgbase import Row

__all__ = ["PortablePgMixin", "PG_ONLY_COLUMNS"]

# Not dumped: the schema's bookkeeping, full-text term statistics (rebuilt on load), where each feed
# consumer got to (a deployment's state), the replay log (undo records, meaningful only here).
_DERIVED_PREFIXES = ("schema_migrations", "feed_cursors", "replay_log", "wiki_index_counts")
PG_ONLY_COLUMNS: dict[str, set[str]] = {"nodes": {"rid"}, "edges": {"rid"}, "vectors": {"emb"}}
"""Columns the SQLite schema has not (row-id cursors SQLite keeps as its implicit rowid, the pgvector copy of
a vector): left out of dumps, given afresh on load (row ids in dump order, so their order is kept)."""
# Facts about this database's own log (the highest event id given, where its replay log starts): never
# dumped, and set afresh by a load (a loaded history has no replay log here).
_BOOKKEEPING_META = ("events.high", "replay.since_event")
# A vector whose item is gone: the item tables per item kind.
_VECTOR_OWNERS = {"chunk": ("chunks", "chunk_id"), "entity": ("nodes", "id"), "memory": ("nodes", "id"),
                  "skill": ("nodes", "id"), "relation": ("edges", "id")}
_CLEAN: dict[str, list[str]] = {"integrity": [], "fts": [], "vectors": [], "evidence": []}


def _encode(value: Any) -> Any:
    if isinstance(value, memoryview):
        value = bytes(value)
    return {"$b64": base64.b64encode(value).decode("ascii")} if isinstance(value, bytes) else value


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$b64"}:
        return base64.b64decode(value["$b64"])
    return value


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _select(table: str, cols: list[str], order: str | None) -> str:
    sql = f"SELECT {', '.join(_q(c) for c in cols)} FROM {_q(table)}"
    if table == "kb_meta":
        sql += " WHERE key NOT IN (" + ", ".join(f"'{k}'" for k in _BOOKKEEPING_META) + ")"
    return sql + (f" ORDER BY {_q(order)}" if order else "")


class PortablePgMixin(FtsPgMixin):
    """Whole-store dump/load, a SQLite-file backup and replay, consistency checks."""

    _pool: Any
    read_only: bool

    # -- what is dumped --------------------------------------------------------------------------

    def _table_names(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                                         " ORDER BY tablename")]

    def dump_tables(self) -> list[str]:
        """Content tables, parents before the tables that reference them."""
        keep = [n for n in self._table_names() if not n.startswith(_DERIVED_PREFIXES) and "_fts_" not in n]
        parents: dict[str, set[str]] = {n: set() for n in keep}
        for r in self._rows("SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint"
                            " WHERE contype = 'f' AND connamespace = current_schema()::regnamespace"):
            if r[0] in parents and r[1] != r[0]:
                parents[r[0]].add(r[1].strip('"'))
        ordered: list[str] = []
        while len(ordered) < len(keep):
            ready = [n for n in keep if n not in ordered and parents[n] <= set(ordered)]
            ordered += ready or [n for n in keep if n not in ordered]
        return ordered

    def _columns(self, table: str) -> list[str]:
        skip = PG_ONLY_COLUMNS.get(table, set())
        return [r[0] for r in self._rows(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
            " ORDER BY attnum", (_q(table),)) if r[0] not in skip]

    def _order_column(self, table: str) -> str | None:
        """The identity column that gives the table's row order (as SQLite's rowid does), if any."""
        row = self._one("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attidentity <> ''"
                        " ORDER BY attnum LIMIT 1", (_q(table),))
        return row[0] if row else None

    def dump_rows(self, tables: Sequence[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row of ``tables`` from one REPEATABLE READ snapshot (a connection of its own)."""
        known = self.dump_tables()
        wanted = list(tables) if tables is not None else known
        bad = [t for t in wanted if t not in known]
        if bad:
            raise InvalidInput(f"tables: {bad[0]!r} is not a dumpable table; use one of {sorted(known)}")
        plans = [(t, self._columns(t), self._order_column(t)) for t in wanted]
        return self._dump(plans)

    def _dump(self, plans: list[tuple[str, list[str], str | None]]) -> Iterator[tuple[str, dict[str, Any]]]:
        with self._pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                for table, cols, order in plans:
                    sql = _select(table, cols, order)
                    with conn.cursor(name=f"gm_dump_{table}") as cur:  # streamed, not all in memory
                        cur.itersize = 2000
                        cur.execute(sql)
                        for row in cur:
                            yield table, {c: _encode(v) for c, v in zip(cols, row)}
            finally:
                conn.execute("ROLLBACK")

    # -- load ------------------------------------------------------------------------------------

    def load_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Insert dumped rows (inside a transaction, parents before children as :meth:`dump_rows` gives
        them; a row with a stored key replaces it), then rebuild the term statistics of what was loaded
        and move the identity sequences past the loaded ids."""
        known = {t: set(self._columns(t)) for t in self.dump_tables()}
        keys = {t: self._primary_key(t) for t in known}
        counts: dict[str, int] = {}
        batch: dict[tuple[str, tuple[str, ...]], list[list[Any]]] = {}
        for table, row in rows:
            cols = known.get(table)
            if cols is None:
                raise InvalidInput(f"table: {table!r} is not a graphmem table; nothing was imported")
            extra = [c for c in row if c not in cols]
            if extra:
                raise InvalidInput(f"{table}.{extra[0]}: no such column; the export comes from another schema; "
                                   "nothing was imported")
            if table == "kb_meta" and row.get("key") in _BOOKKEEPING_META:
                continue
            names = tuple(row)
            batch.setdefault((table, names), []).append([_decode(row[c]) for c in names])
            counts[table] = counts.get(table, 0) + 1
            if sum(len(v) for v in batch.values()) >= 1000:
                self._flush_load(batch, keys)
        self._flush_load(batch, keys)
        for table in counts:
            self._bump_identity(table)
        if "vectors" in counts:
            self._fill_emb()  # type: ignore[attr-defined]  # VectorPgMixin's
        if "chunks" in counts:  # a dump from before chunks had titles: they are their documents'
            self._exec("UPDATE chunks c SET title = d.title FROM documents d WHERE c.title = '' AND d.title <> ''"
                       " AND d.doc_id = c.doc_id AND d.version = c.version")
        for table in FTS_SOURCES:
            if table in counts and self._has_table(f"{table}_fts_docs"):
                self._fts_rebuild(table)
        if "events" in counts:
            self._exec("UPDATE kb_meta SET value = greatest(value::bigint, (SELECT coalesce(max(id), 0) FROM events))"
                       "::text"
                       " WHERE key = 'events.high'")
            self._exec("INSERT INTO kb_meta (key, value) SELECT 'replay.since_event', coalesce(max(id), 0)::text"
                       " FROM events ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        return counts

    def _has_table(self, name: str) -> bool:
        row = self._one("SELECT to_regclass(%s)", (name,))
        return row is not None and row[0] is not None

    def _primary_key(self, table: str) -> list[str]:
        return [r[0] for r in self._rows(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
            " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary", (_q(table),))]

    def _flush_load(self, batch: dict[tuple[str, tuple[str, ...]], list[list[Any]]],
                    keys: dict[str, list[str]]) -> None:
        # Tables in the order their rows came (parents first), each in one statement per column set.
        for (table, names), values in list(batch.items()):
            key = keys[table]
            update = [c for c in names if c not in key]
            conflict = (f" ON CONFLICT ({', '.join(_q(k) for k in key)}) DO "
                        + (f"UPDATE SET {', '.join(f'{_q(c)} = excluded.{_q(c)}' for c in update)}"
                           if update else "NOTHING")) if key else ""
            self._execmany(f"INSERT INTO {_q(table)} ({', '.join(_q(c) for c in names)}) OVERRIDING SYSTEM VALUE"
                           f" VALUES ({', '.join(['%s'] * len(names))}){conflict}", values)
        batch.clear()

    def _bump_identity(self, table: str) -> None:
        for r in self._rows("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attidentity <> ''",
                            (_q(table),)):
            self._one(f"SELECT setval(pg_get_serial_sequence(%s, %s), greatest((SELECT max({_q(r[0])})"
                      f" FROM {_q(table)}), 1))", (_q(table), r[0]))

    def _fts_rebuild(self, table: str, rids: Sequence[int] | None = None) -> None:
        """Re-index ``table``'s rows (all, or ``rids``) from their text columns."""
        key, columns = FTS_SOURCES[table]
        self._exec(f"DELETE FROM {table}_fts_docs" + (" WHERE rid = ANY(%s)" if rids is not None else ""),
                   (list(rids),) if rids is not None else ())
        sql = f"SELECT {key}, {', '.join(columns)} FROM {table}" + (f" WHERE {key} = ANY(%s)" if rids else "")
        last = 0
        while True:  # in slices, so that a large table is not read into memory at once
            got = self._rows(sql + (" AND" if rids else " WHERE") + f" {key} > %s ORDER BY {key} LIMIT 2000",
                             ((list(rids),) if rids else ()) + (last,))
            if not got:
                return
            self._fts_add(table, [(int(r[0]), [r[i + 1] for i in range(len(columns))]) for r in got])
            last = int(got[-1][0])

    # -- backup ----------------------------------------------------------------------------------

    def backup_to(self, path: Path) -> None:
        """A SQLite knowledge base file holding every row of one snapshot of this database (writers go on
        meanwhile); open it as any graphmem knowledge base, or load it back with ``graphmem migrate``."""
        self._write_sqlite(path, self.dump_rows(), None)

    def _write_sqlite(self, path: Path, rows: Iterable[tuple[str, dict[str, Any]]],
                      replay: int | None) -> dict[str, int]:
        from ..sqlite import SqliteStore

        if path.exists():
            raise InvalidInput(f"backup: {path} exists; give a new file name")
        out = {"undone": 0, "orphans": 0, "events": 0}
        try:
            copy = SqliteStore(path)
        except BackendError:
            path.unlink(missing_ok=True)
            raise
        try:
            rows = _fit(copy, rows)
            with copy.transaction():
                if replay is None:
                    copy.load_rows(rows)
                else:
                    out = _replayed(copy, rows, replay)
                # The copy's own replay log starts now: its loaded rows are not changes to undo.
                copy.conn.execute("DELETE FROM replay_log")
                copy.conn.execute("INSERT OR REPLACE INTO kb_meta (key, value) SELECT 'replay.since_event',"
                                  " CAST(coalesce(max(id), 0) AS TEXT) FROM events")
        except BaseException:
            copy.close()
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            raise
        copy.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        copy.conn.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        copy.close()
        return out

    # -- replay ----------------------------------------------------------------------------------

    def replay_to(self, path: Path, event_id: int) -> dict[str, int]:
        """A SQLite copy of the database as it was at ``event_id``: the rows of one snapshot with every
        change logged after that event undone (the replay log of migration pg0101), dangling rows dropped."""
        if not isinstance(event_id, int) or isinstance(event_id, bool) or event_id < 0:
            raise InvalidInput(f"until: expected an event id >= 0, got {event_id!r}")
        last = int((self._one("SELECT coalesce(max(id), 0) FROM events") or (0,))[0])
        if event_id > last:
            raise InvalidInput(f"until: event {event_id} does not exist yet (the last is {last})")
        started = self._one("SELECT value FROM kb_meta WHERE key = 'replay.since_event'")
        if started is not None and event_id < int(started[0]):
            raise InvalidInput(f"until: the replay log of this knowledge base starts after event {started[0]}; "
                               "replay to a later point")
        # The log and the rows from one snapshot: a change committed meanwhile is in both or in neither.
        tables = self.dump_tables()
        plans = [(t, self._columns(t), self._order_column(t)) for t in tables]
        with self._pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                log = conn.execute("SELECT tbl, op, key, old FROM replay_log WHERE ev >= %s ORDER BY seq DESC",
                                   (event_id,)).fetchall()
                rows = []
                for table, cols, order in plans:
                    sql = _select(table, cols, order)
                    rows += [(table, {c: _encode(v) for c, v in zip(cols, r)}) for r in conn.execute(sql)]
            finally:
                conn.execute("ROLLBACK")
        keys = {t: self._primary_key(t) for t in tables}
        return self._write_sqlite(path, _undo(rows, log, keys), event_id)

    # -- checks ----------------------------------------------------------------------------------

    def check_store(self, repair: bool = False) -> dict[str, list[str]]:
        """Problems by check (``integrity``, ``fts``, ``vectors``, ``evidence``); with ``repair``, fixed."""
        found: dict[str, list[str]] = {k: list(v) for k, v in _CLEAN.items()}
        for table in FTS_SOURCES:
            if not self._has_table(f"{table}_fts_docs"):
                continue
            r = self._one(f"SELECT (SELECT count(*) FROM {table}), (SELECT count(*) FROM {table}_fts_docs),"
                          f" (SELECT n FROM {table}_fts_stats), (SELECT coalesce(sum(len), 0) FROM {table}_fts_docs),"
                          f" (SELECT tokens FROM {table}_fts_stats), (SELECT count(*) FROM {table}_fts_terms),"
                          f" (SELECT coalesce(sum(df), 0) FROM {table}_fts_df)")
            assert r is not None
            if r[0] != r[1]:
                found["fts"].append(f"{table}_fts: {r[1]} rows indexed for {r[0]} in {table}")
            elif (r[1], r[3], r[5]) != (r[2], r[4], r[6]):
                found["fts"].append(f"{table}_fts: term statistics out of step with the indexed rows")
        for kind, (table, col) in _VECTOR_OWNERS.items():
            row = self._one(f"SELECT count(*) FROM vectors v WHERE v.item_kind = %s AND NOT EXISTS "
                            f"(SELECT 1 FROM {table} t WHERE t.{col} = v.item_id)", (kind,))
            if row and row[0]:
                found["vectors"].append(f"{row[0]} {kind} vectors of {kind}s that are gone")
        row = self._one("SELECT count(*) FROM provenance p WHERE p.chunk_id IS NOT NULL AND NOT EXISTS "
                        "(SELECT 1 FROM chunks c WHERE c.chunk_id = p.chunk_id)")
        if row and row[0]:
            found["evidence"].append(f"{row[0]} evidence records point at missing chunks")
        if self._has_table("page_sources"):
            row = self._one("SELECT count(*) FROM page_sources s WHERE NOT EXISTS "
                            "(SELECT 1 FROM documents d WHERE d.doc_id = s.doc_id)")
            if row and row[0]:
                found["evidence"].append(f"{row[0]} page sources name missing documents")
        if repair and any(found[k] for k in ("fts", "vectors", "evidence")):
            self._repair(found)
        return found

    def _repair(self, found: dict[str, list[str]]) -> None:
        with self.transaction():  # type: ignore[attr-defined]  # TransactionPgMixin, mixed in by PostgresStore
            if found["fts"]:
                for table in FTS_SOURCES:
                    if self._has_table(f"{table}_fts_docs"):
                        self._exec(f"DELETE FROM {table}_fts_docs")
                        self._exec(f"DELETE FROM {table}_fts_df")  # recounted from the rows re-added
                        self._exec(f"UPDATE {table}_fts_stats SET n = 0, tokens = 0")
                        self._fts_rebuild(table)
            for kind, (table, col) in _VECTOR_OWNERS.items():
                self._exec(f"DELETE FROM vectors WHERE item_kind = %s AND NOT EXISTS "
                           f"(SELECT 1 FROM {table} t WHERE t.{col} = vectors.item_id)", (kind,))
            self._exec("DELETE FROM provenance WHERE chunk_id IS NOT NULL AND NOT EXISTS "
                       "(SELECT 1 FROM chunks c WHERE c.chunk_id = provenance.chunk_id)")
            if self._has_table("page_sources"):
                self._exec("DELETE FROM page_sources WHERE NOT EXISTS "
                           "(SELECT 1 FROM documents d WHERE d.doc_id = page_sources.doc_id)")


def _undo(rows: list[tuple[str, dict[str, Any]]], log: list[Row], keys: dict[str, list[str]]
          ) -> Iterator[tuple[str, dict[str, Any]]]:
    """``rows`` with the logged changes undone (newest first): an insert's row goes, an update's or a
    delete's old row comes back. The first item yielded is a marker carrying how many changes were undone
    (see _replayed)."""
    by_key: dict[str, dict[Any, dict[str, Any]]] = {}
    order: list[str] = []
    for table, row in rows:
        if table not in by_key:
            by_key[table] = {}
            order.append(table)
        key = keys.get(table) or list(row)
        by_key[table][tuple(row[k] for k in key)] = row
    undone = 0
    for logged in log:
        table, op, key, old = str(logged[0]), logged[1], logged[2], logged[3]
        if table not in by_key:
            continue
        pk = keys[table]
        ident = tuple(key[k] for k in pk) if isinstance(key, dict) else (key,)
        skip = PG_ONLY_COLUMNS.get(table, set())
        restored = {c: v for c, v in (old or {}).items() if c not in skip}
        if op == "I":
            by_key[table].pop(ident, None)
        elif op == "U":  # an update logs the columns it may change (a document's content never does)
            by_key[table][ident] = {**by_key[table].get(ident, {}), **restored}
        else:
            by_key[table][ident] = restored
        undone += 1
    yield "__undone__", {"n": undone}
    for table in order:
        for row in by_key[table].values():
            yield table, row


# Columns the SQLite schema may not have yet (they are derived there from other rows): left out of a
# SQLite copy that lacks them.
_DERIVABLE = {"chunks": {"title"}}


def _fit(copy: Any, rows: Iterable[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``rows`` without the derivable columns the SQLite ``copy``'s tables lack."""
    drop = {t: {c for c in cols if not copy.conn.execute(
        "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (t, c)).fetchone()} for t, cols in _DERIVABLE.items()}
    for table, row in rows:
        gone = drop.get(table)
        yield table, ({c: v for c, v in row.items() if c not in gone} if gone else row)


def _replayed(copy: Any, rows: Iterable[tuple[str, dict[str, Any]]], event_id: int) -> dict[str, int]:
    """Load the undone rows into the SQLite ``copy`` (in its transaction): events after ``event_id`` left out,
    rows left dangling by the undone inserts dropped. Returns the replay's counts."""
    from ..sqlite.portable import _drop_orphans

    it = iter(rows)
    _, marker = next(it)
    kept = (r for r in it if not (r[0] == "events" and int(r[1]["id"]) > event_id))
    copy.load_rows(kept)
    orphans = _drop_orphans(copy.conn)
    events = copy.conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return {"undone": int(marker["n"]), "orphans": orphans, "events": int(events)}
