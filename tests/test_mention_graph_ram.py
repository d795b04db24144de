"""The mention graph held in RAM (store/sqlite/mention_graph.py) answers ``chunk_entities``, ``entities_chunks``
and ``entity_chunk_counts`` exactly as SQL does, and never from a state of the file older than the read: after
ingest, a new version, a delete, a re-ingest, an entity merge, a write by another process, a rolled-back write;
inside a write transaction SQL answers; read-only knowledge bases and point-in-time copies read their own file."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import graphmem
from clocks import ticking_clock
from graphmem.models import Mention
from graphmem.store.sqlite import mention_graph
from graphmem.store.sqlite.mention_graph import MentionGraphCache
from spies import traced_sql

CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}, "chunking": {"size": 90, "overlap": 20}}
TEXT = ("The Dispatch Service depends on the Ledger DB. The Ledger DB runs on Postgres. Bob maintains the "
        "Tracker; the Tracker feeds the Dispatch Service. Zoë's café uses Postgres too, like the Tracker.")
ENTITIES = [{"name": n, "type": t} for n, t in (("Dispatch Service", "service"), ("Ledger DB", "database"),
                                                ("Postgres", "technology"), ("Tracker", "service"),
                                                ("Bob", "person"), ("Zoë's café", "organization"))]
RELATIONS = [{"source": "Dispatch Service", "target": "Ledger DB", "type": "depends on", "confidence": 0.9,
              "supporting_text": "The Dispatch Service depends on the Ledger DB."}]


def _open(home: Path, **kw: Any) -> graphmem.KnowledgeBase:
    return graphmem.open(home, config=CONFIG, clock=ticking_clock(), **kw)


def _fill(kb: graphmem.KnowledgeBase) -> None:
    kb.ingest_with_content("d1", "Dispatch", "s1", TEXT, ENTITIES, RELATIONS)
    kb.ingest_with_content("d2", "Tracker notes", "s2", TEXT[60:], ENTITIES[2:], [])


def _ids(kb: graphmem.KnowledgeBase) -> tuple[list[str], list[str]]:
    conn = kb.store.conn  # type: ignore[attr-defined]
    nodes = [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY id DESC")] + ["no-such-node"]
    chunks = [r[0] for r in conn.execute("SELECT chunk_id FROM chunks ORDER BY id DESC")] + ["no-such-chunk"]
    return nodes, chunks


def _answers(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    """Every mention read, over every node and chunk (and ids that do not exist), values in order."""
    nodes, chunks = _ids(kb)
    s = kb.store
    return {"counts": s.entity_chunk_counts(nodes),
            **{f"recent_{n}": {k: [tuple(c) for c in v] for k, v in s.entities_chunks(nodes, n).items()}
               for n in (1, 2, 99)},
            "entities": s.chunk_entities(chunks)}


def _cache(kb: graphmem.KnowledgeBase) -> MentionGraphCache:
    return kb.store._mention_cache()  # type: ignore[attr-defined, no-any-return]


def _by_sql(kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    with monkeypatch.context() as m:
        m.setattr(mention_graph, "LOAD_AFTER_READS", 10**9)
        _cache(kb).drop()
        return _answers(kb)


def _assert_ram_equals_sql(kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    sql = _by_sql(kb, monkeypatch)
    cache = _cache(kb)
    loads = cache.loads
    monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
    ram = _answers(kb)
    assert cache.loads == loads + 1  # answered from a graph loaded for this state
    assert ram == sql
    assert ram["counts"] and ram["entities"] and ram["recent_99"]
    return ram


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with _open(tmp_path / "kb") as kb:
        _fill(kb)
    return tmp_path / "kb"


def test_equals_sql_after_versions_merge_delete_and_reingest(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _open(home) as kb:
        first = _assert_ram_equals_sql(kb, monkeypatch)
        # a new version: the old version's chunks stay (counted) but are no latest passages
        kb.ingest_with_content("d1", "Dispatch", "s1", TEXT + " The Tracker is new.", ENTITIES, RELATIONS)
        second = _assert_ram_equals_sql(kb, monkeypatch)
        assert second != first
        assert kb.store.conn.execute(  # type: ignore[attr-defined]
            "SELECT count(*) FROM documents WHERE is_latest = 0").fetchone()[0] == 1
        found = kb.store.find_nodes("entity", ["ledger db", "postgres"])
        keep, other = found["ledger db"], found["postgres"]
        kb.graph.merge("Ledger DB", "Postgres")  # mentions move to the kept entity
        merged = _assert_ram_equals_sql(kb, monkeypatch)
        assert other not in merged["counts"] and merged["counts"][keep] > second["counts"][keep]
        kb.documents.delete("d2")
        _assert_ram_equals_sql(kb, monkeypatch)
        kb.ingest_with_content("d2", "Tracker notes", "s2", TEXT[60:], ENTITIES[2:], [])  # same chunk ids, new keys
        _assert_ram_equals_sql(kb, monkeypatch)


def test_a_held_graph_follows_this_connections_writes(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
    with _open(home) as kb:
        before = _answers(kb)
        loads = _cache(kb).loads
        kb.ingest_with_content("d3", "Bob", "s3", "Bob maintains the Ledger DB at night.", ENTITIES[:2] + ENTITIES[4:5],
                               [])
        after = _answers(kb)
        assert _cache(kb).loads == loads + 1  # the write moved the stamp: reloaded
        assert after != before
        assert after == _by_sql(kb, monkeypatch)


def test_a_write_by_another_process_between_searches_is_seen(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
    with _open(home) as kb:
        bob = kb.store.find_nodes("entity", ["bob"])["bob"]
        assert kb.search("Bob", k=5).hits
        held = kb.store.entities_chunks([bob], 99)[bob]
        script = ("import sys, graphmem\n"
                  "cfg = {'embeddings': {'model': 'none'}, 'wiki': {'auto_pages': False}}\n"
                  "with graphmem.open(sys.argv[1], config=cfg) as kb:\n"
                  "    kb.ingest_with_content('d9', 'More Bob', 's9', 'Bob also maintains the Dispatch Service.',"
                  " [{'name': 'Bob', 'type': 'person'}, {'name': 'Dispatch Service', 'type': 'service'}], [])\n")
        subprocess.run([sys.executable, "-c", script, str(home)], check=True)
        now = kb.store.entities_chunks([bob], 99)[bob]
        assert len(now) == len(held) + 1
        assert kb.store.chunk_info([now[0].chunk_id])[now[0].chunk_id][0] == "d9"  # newest first
        assert now[1:] == held
        assert _answers(kb) == _by_sql(kb, monkeypatch)
        hits = kb.search("Bob maintains", k=10).hits
        assert any(h.doc_id == "d9" for h in hits)


def test_inside_a_write_transaction_sql_answers_and_a_rollback_leaves_nothing(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
    with _open(home) as kb:
        before = _answers(kb)
        bob = kb.store.find_nodes("entity", ["bob"])["bob"]
        doc = kb.store.conn.execute(  # type: ignore[attr-defined]
            "SELECT chunk_id, doc_id, version FROM chunks WHERE doc_id = 'd1' ORDER BY id DESC LIMIT 1").fetchone()
        count = kb.store.entity_chunk_counts([bob])[bob]
        with pytest.raises(RuntimeError), kb.store.transaction():
            kb.store.insert_mentions([Mention(bob, doc[0], doc[1], doc[2], 0, 3)])
            # seen inside the transaction (SQL answers there)...
            assert doc[0] in [c.chunk_id for c in kb.store.entities_chunks([bob], 99)[bob]]
            assert bob in kb.store.chunk_entities([doc[0]])[doc[0]]
            raise RuntimeError("roll back")
        # ...and gone with its rollback, also from what RAM holds
        assert kb.store.entity_chunk_counts([bob])[bob] == count
        assert _answers(kb) == before
        assert before == _by_sql(kb, monkeypatch)


def test_loaded_only_after_many_reads_at_one_stamp(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 5)
    with _open(home) as kb:
        cache = _cache(kb)
        nodes, _ = _ids(kb)
        for _ in range(4):
            kb.store.entity_chunk_counts(nodes)
        assert cache.loads == 0  # SQL so far
        kb.ingest_with_content("d4", "Tracker", "s4", "The Tracker runs on Postgres.", ENTITIES[2:4], [])
        for _ in range(5):
            kb.store.entity_chunk_counts(nodes)
        assert cache.loads == 0  # the write started the count again
        kb.store.entity_chunk_counts(nodes)
        assert cache.loads == 1
        for _ in range(20):
            kb.store.entities_chunks(nodes, 3)
        assert cache.loads == 1  # held while nothing changes


def test_a_bigger_mention_table_is_read_longer_by_sql_first(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 1)
    monkeypatch.setattr(mention_graph, "MENTIONS_PER_READ", 2)
    with _open(home) as kb:
        cache = _cache(kb)
        top = kb.store.conn.execute("SELECT max(id) FROM mention_rows").fetchone()[0]  # type: ignore[attr-defined]
        assert top // 2 > 1
        for _ in range(top // 2):
            kb.store.chunk_entities(["no-such-chunk"])
        assert cache.loads == 0
        kb.store.chunk_entities(["no-such-chunk"])
        assert cache.loads == 1


def test_too_many_mentions_are_not_held(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
    monkeypatch.setattr(mention_graph, "MAX_HELD_MENTIONS", 3)
    with _open(home) as kb:
        sql = _by_sql(kb, monkeypatch)
        monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
        assert _answers(kb) == sql
        assert _cache(kb).loads == 0 and _cache(kb).disabled


def test_read_only_and_point_in_time_copies_read_their_own_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _open(home) as kb:
        sql_then = _by_sql(kb, monkeypatch)
        point = kb.events.last_id()
        kb.ingest_with_content("d5", "Bob again", "s5", "Bob maintains Postgres.", [ENTITIES[2], ENTITIES[4]], [])
        copy = home.parent / "then" / "graph.db"
        copy.parent.mkdir()
        kb.store.replay_to(copy, point)
    with _open(copy.parent) as then:
        assert _assert_ram_equals_sql(then, monkeypatch) == sql_then
    with pytest.warns(UserWarning, match="read-only"), _open(home, read_only=True) as ro:
        ram = _assert_ram_equals_sql(ro, monkeypatch)
        bob = ro.store.find_nodes("entity", ["bob"])["bob"]
        assert ram["counts"][bob] == sql_then["counts"][bob] + 1


def test_search_from_ram_ranks_as_search_from_sql(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    queries = ["What does the Dispatch Service depend on?", "Who maintains the Tracker?", "Postgres café"]

    def hits(kb: graphmem.KnowledgeBase, q: str, strategy: str) -> list[tuple[str, float, list[str]]]:
        return [(h.id, h.score, h.path) for h in kb.search(q, k=5, strategy=strategy, kinds=["chunk", "entity"]).hits]

    with _open(home) as kb:
        for strategy in ("ppr", "bfs"):
            monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 10**9)
            _cache(kb).drop()
            sql = [hits(kb, q, strategy) for q in queries]
            monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
            ram = [hits(kb, q, strategy) for q in queries]
            assert _cache(kb).loads >= 1
            assert ram == sql
            assert all(ram)


def test_a_search_looks_for_other_processes_commits_once(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside the search's read scope the held copies ask the file nothing: no mention statement, and fewer
    ``PRAGMA data_version`` checks than the same search without the scope (one per read then)."""
    monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
    with _open(home) as kb:
        conn = kb.store.conn  # type: ignore[attr-defined]

        def traced() -> tuple[list[Any], list[str]]:
            with traced_sql(conn) as seen:
                hits = kb.search("Who maintains the Tracker?", k=5, kinds=["chunk", "entity"]).hits
            return [(h.id, h.score) for h in hits], seen

        traced()  # loads what a search holds
        hits, scoped = traced()
        monkeypatch.setattr(kb.store, "read_scope", contextlib.nullcontext)
        same, unscoped = traced()
        assert hits and hits == same
        assert not any("mention" in s for s in scoped)  # the walk read RAM
        checks = [sum(s == "PRAGMA data_version" for s in seen) for seen in (scoped, unscoped)]
        assert checks[0] < checks[1]


def test_ingest_between_searches_never_loads_it(home: Path) -> None:
    """With the shipped thresholds: each ingest moves the stamp, so searches in between stay on SQL."""
    with _open(home) as kb:
        for i in range(12):
            kb.ingest_with_content(f"n{i}", f"Note {i}", f"s{i}", f"Bob maintains the Tracker, note {i}.",
                                   [ENTITIES[3], ENTITIES[4]], [])
            for _ in range(3):
                assert kb.search("Who maintains the Tracker?", k=5).hits
        assert _cache(kb).loads == 0
        # ...while a process that keeps searching one state loads it once
        for _ in range(mention_graph.LOAD_AFTER_READS):
            kb.search("Who maintains the Tracker?", k=5)
        assert _cache(kb).loads == 1


def test_a_mention_of_a_missing_chunk_is_read_as_sql_reads_it(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mention row left without its chunk (written with foreign keys off, by another tool): counted, as SQL
    counts it, but no passage of the entity."""
    import sqlite3

    raw = sqlite3.connect(home / "graph.db")
    bob = raw.execute("SELECT id FROM nodes WHERE name = 'Bob'").fetchone()[0]
    raw.execute('INSERT INTO mention_rows (node_id, chunk, start, "end") VALUES (?, 999999, 0, 3)', (bob,))
    raw.commit()
    raw.close()
    with _open(home) as kb:
        ram = _assert_ram_equals_sql(kb, monkeypatch)
        assert ram["counts"][bob] == len(ram["recent_99"][bob]) + 1


def test_threads_sharing_a_store_load_it_once_and_rank_alike(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    queries = ["Who maintains the Tracker?", "What does the Dispatch Service depend on?", "Postgres café"] * 8
    with _open(home) as kb:
        monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 10**9)
        by_sql = [[(h.id, h.score) for h in kb.search(q, k=5).hits] for q in queries]
        monkeypatch.setattr(mention_graph, "LOAD_AFTER_READS", 0)
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda q: [(h.id, h.score) for h in kb.search(q, k=5).hits], queries))
        assert got == by_sql and all(got)
        assert _cache(kb).loads == 1
