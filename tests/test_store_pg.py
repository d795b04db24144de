"""The PostgreSQL backend's own guarantees, beyond the store contract suite: FTS5-identical tokens and BM25
scores, event ids in commit order under concurrent writers, one writer at a time, migrations applied once,
clear errors. Runs against the real server of tests/pg_server.py (skips without one; fails under CI=true)."""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem.errors import BackendError, InvalidInput, StoreBusy
from graphmem.models import Chunk, Document
from graphmem.store import open_store
from graphmem.store.postgres.fts import tokens
from graphmem.store.postgres.migrations import MIGRATIONS
from pg_server import _unavailable, drop_database, fresh_database, pg_server_url

T0 = "2026-01-01T00:00:00.000Z"

# The core's shipped migrations, pinned: never edit one, append a new one.
SHIPPED_CORE = {
    "pg0001_core": "a71fd450543e905bf4d9656d4341ef5d7d8df48db8f29dae3aba765f89f2172f",
    "pg0101_replay_log": "6a42280eaff0e0ae3d58e3b59dd1862060767e3c457548eeefd8c7937e28cf3c",
    "pg0102_vector_search": "d1ca32af27e1cf14197323dbc3c052e68f4e7e7e6bc6f1ded033b1916e9e30c9",
}

TEXT = ("Ada Lovelace's notes (1843) on Babbage's Analytical Engine: the first published algorithm! "
        "Caresses, ponies, relational conditioning; hopping, hopefulness — généralisation, Zürich, naïve café. "
        "e-mail foo_bar@example.com, C++ and x86-64; 3.14159, 2nd, ½, Ⅻ; privately \ue000marked\ue001 words. "
        "ΕΛΛΗΝΙΚΑ λέξεις, кириллица, 日本語のテキスト, emoji 🙂 stop.")

CORPUS = [
    ("Rivers", "The Nile is the longest river in Africa and flows north into the Mediterranean Sea."),
    ("Rivers", "The Amazon river carries more water than any other river; the Amazon basin is vast."),
    ("Lakes", "Lake Victoria feeds the White Nile; the lake is shared by three countries."),
    ("Mountains", "Kilimanjaro is the highest mountain in Africa, a dormant volcano in Tanzania."),
    ("Deserts", "The Sahara desert lies north of the Sahel and south of the Mediterranean coast."),
    ("Cities", "Cairo sits on the Nile delta; Alexandria faces the Mediterranean Sea."),
    ("Rivers", "Rivers rising in the highlands: the Blue Nile joins the White Nile at Khartoum."),
    ("Oceans", "The Atlantic Ocean separates Africa from South America, where the Amazon ends."),
]
QUERIES = ["Nile river", "longest river in Africa", "Mediterranean", "amazon basin water", "lake countries",
           "highest volcano", "the", "Khartoum Blue Nile White Nile", "desert north", "nothing-here zzz"]


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh database (not migrated yet) on the session's server, dropped afterwards."""
    name, url = fresh_database("gm_pgtest", migrated=False)
    yield url
    drop_database(name)


def _ingest(store, corpus: list[tuple[str, str]], title: bool) -> None:
    for i, (doc_title, text) in enumerate(corpus):
        doc = Document(f"d{i}", 1, doc_title if title else "", "src", text, f"h{i}", {}, T0)
        with store.transaction():
            store.insert_document(doc, [Chunk(f"d{i}:v1:c0", f"d{i}", 1, 0, 0, len(text), text)])


def test_core_migrations_are_pinned() -> None:
    got = {name: hashlib.sha256(sql.encode()).hexdigest() for name, sql in MIGRATIONS if name in SHIPPED_CORE}
    assert got == SHIPPED_CORE
    names = [name for name, _ in MIGRATIONS]
    assert names[0] == "pg0001_core" and names[-2:] == ["pg0101_replay_log", "pg0102_vector_search"]
    assert len(set(names)) == len(names)


def test_tokens_are_exactly_fts5_porter_unicode61() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5 (x, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (f, 'instance')")
    words = Path(__file__).read_text(encoding="utf-8")  # a few thousand words of English and code
    for text in (TEXT, words):
        conn.execute("DELETE FROM f")
        conn.execute("INSERT INTO f (x) VALUES (?)", (text,))
        fts5 = [r[0] for r in conn.execute("SELECT term FROM v ORDER BY offset")]
        assert tokens(text) == fts5


def test_unicode61_tables_match_the_running_sqlite() -> None:
    # Every non-ASCII code point below U+20000, between two letters: one token (folded as FTS5 folds it) or
    # a separator, exactly as SQLite's unicode61 sees it.
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5 (x, tokenize='unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (f, 'instance')")
    points = [cp for cp in range(0x80, 0x20000) if not 0xD800 <= cp <= 0xDFFF]
    conn.executemany("INSERT INTO f (rowid, x) VALUES (?, ?)", [(cp, f"a{chr(cp)}a") for cp in points])
    fts5: dict[int, list[str]] = {}
    for doc, term in conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        fts5.setdefault(doc, []).append(term)
    wrong = [hex(cp) for cp in points if tokens(f"a{chr(cp)}a") != fts5.get(cp, [])]
    assert wrong == []


def test_bm25_scores_and_order_equal_sqlite_fts5(pg_url: str, tmp_path: Path) -> None:
    lite = open_store(tmp_path)
    pg = open_store(tmp_path, url=pg_url)
    try:
        _ingest(lite, CORPUS, title=False)
        _ingest(pg, CORPUS, title=False)
        for q in QUERIES:
            want, got = lite.rank_chunks(q, 10), pg.rank_chunks(q, 10)
            assert [c for c, _ in got] == [c for c, _ in want], q
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9), q
            ids = [f"d{i}:v1:c0" for i in range(len(CORPUS))]
            assert pg.chunk_bm25(q, ids) == pytest.approx(lite.chunk_bm25(q, ids), rel=1e-9), q
        assert [h.chunk.chunk_id for h in pg.search_chunks("Nile", 3)] == [h.chunk.chunk_id
                                                                          for h in lite.search_chunks("Nile", 3)]
    finally:
        lite.close()
        pg.close()


def test_titles_weigh_as_a_second_field(pg_url: str, tmp_path: Path) -> None:
    pg = open_store(tmp_path, url=pg_url)
    try:
        _ingest(pg, CORPUS, title=True)
        # "lakes" is only in a title: found there, and a heavier title weight puts title matches first
        assert [c for c, _ in pg.rank_chunks("lakes", 5, title_weight=1.0)] == ["d2:v1:c0"]
        assert pg.rank_chunks("rivers", 3, title_weight=10.0)[0][0] in {"d0:v1:c0", "d1:v1:c0", "d6:v1:c0"}
        for bad in (-1.0, float("nan"), float("inf"), "4"):
            with pytest.raises(InvalidInput, match="title_weight"):
                pg.rank_chunks("rivers", 3, title_weight=bad)  # type: ignore[arg-type]
    finally:
        pg.close()


def test_event_ids_follow_commit_order_so_a_follower_misses_none(pg_url: str, tmp_path: Path) -> None:
    writers = [open_store(tmp_path, url=pg_url) for _ in range(4)]
    follower = open_store(tmp_path, url=pg_url)
    errors: list[BaseException] = []

    def write(store, n: int) -> None:
        try:
            for i in range(40):
                with store.transaction():
                    store.append_event("w", f"writer{n}", T0, {"i": i})
                    store.append_event("w2", f"writer{n}", T0, {"i": i})
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(s, n)) for n, s in enumerate(writers)]
    for t in threads:
        t.start()
    seen: list[int] = []
    cursor = 0

    def follow() -> None:
        nonlocal cursor
        for e in follower.list_events(after_id=cursor, limit=1000):
            seen.append(e.id)
            cursor = e.id

    while any(t.is_alive() for t in threads):
        follow()  # resumes after the last id seen, as a feed consumer does
    for t in threads:
        t.join()
    follow()
    try:
        assert errors == []
        assert seen == list(range(1, 4 * 40 * 2 + 1))  # every event, each once, no gaps, in id order
        assert follower.last_event_id() == 320
    finally:
        for s in (*writers, follower):
            s.close()


def test_one_writer_at_a_time_and_no_wait_or_timeout_is_store_busy(pg_url: str, tmp_path: Path) -> None:
    a = open_store(tmp_path, url=pg_url)
    b = open_store(tmp_path, busy_timeout=0.05, url=pg_url)
    try:
        with a.transaction():
            a.append_event("a", "x", T0, {})
            with pytest.raises(StoreBusy, match="nothing was written"), b.transaction():
                b.append_event("b", "x", T0, {})
            with pytest.raises(StoreBusy), b.no_wait(), b.transaction():
                pass
            assert b.try_write(lambda: b.set_meta("k", "v")) is False
            assert b.list_events() == []  # a's transaction is not visible before it commits
        assert [e.type for e in b.list_events()] == ["a"] and b.get_meta("k") is None
        assert b.try_write(lambda: b.set_meta("k", "v")) is True and a.get_meta("k") == "v"
    finally:
        a.close()
        b.close()


def test_migrations_are_applied_once_by_concurrent_openers(pg_url: str, tmp_path: Path) -> None:
    opened: list[object] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            opened.append(open_store(tmp_path, url=pg_url))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == [] and len(opened) == 3
        assert opened[0].applied_migrations() == [name for name, _ in MIGRATIONS]  # type: ignore[attr-defined]
    finally:
        for s in opened:
            s.close()  # type: ignore[attr-defined]


def test_a_read_only_open_of_an_unmigrated_database_says_so(pg_url: str, tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="needs upgrading.*read-only"):
        open_store(tmp_path, read_only="testing", url=pg_url)


def test_bad_urls_and_unreachable_servers_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="postgresql://"):
        open_store(tmp_path, url="mysql://u@h/db")
    bad = "postgresql://nobody:s3cret@/nowhere?host=" + str(tmp_path)  # no server listens in this folder
    with pytest.raises(BackendError, match="cannot connect to PostgreSQL") as err:
        open_store(tmp_path, busy_timeout=1.0, url=bad)
    assert "s3cret" not in str(err.value) and "***" in str(err.value)


def test_missing_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    url = pg_server_url()
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(InvalidInput, match=r"pip install 'graphmem\[postgres\]'"):
        open_store(tmp_path, url=url)


def test_no_server_skips_with_the_reason_but_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        _unavailable("pgserver could not start")
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match="pgserver could not start"):
        _unavailable("pgserver could not start")


def test_nearest_vectors_exact_then_through_hnsw_past_the_threshold(pg_url: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from graphmem.store.postgres import vectors

    rng = np.random.default_rng(20)
    vecs = rng.standard_normal((60, 8)).astype(np.float16)
    items = [(f"c{i}", f"h{i}", vecs[i].tobytes()) for i in range(60)]
    norm = vecs.astype(np.float64) / np.linalg.norm(vecs.astype(np.float64), axis=1, keepdims=True)
    query = vecs[7].tobytes()
    sims = norm @ norm[7]
    want = [f"c{i}" for i in np.argsort(-sims, kind="stable")[:5]]
    want30 = [f"c{i}" for i in np.argsort(-sims[:30], kind="stable")[:5]]
    pg = open_store(tmp_path, url=pg_url)
    try:
        with pg.transaction():
            pg.upsert_vectors("chunk", "m", 8, items[:30])
        assert [c for c, _ in pg.nearest_vectors("chunk", "m", query, 5)] == want30
        monkeypatch.setattr(vectors, "HNSW_THRESHOLD", 40)
        with pg.transaction():
            pg.upsert_vectors("chunk", "m", 8, items[30:])
        indexes = [r[0] for r in pg._rows("SELECT indexdef FROM pg_indexes WHERE tablename = 'vectors'")]
        assert sum("USING hnsw" in d for d in indexes) == 1
        got = pg.nearest_vectors("chunk", "m", query, 5)
        assert got[0][0] == "c7" and got[0][1] == pytest.approx(1.0, abs=1e-3)
        assert len({c for c, _ in got} & set(want)) >= 4  # approximate above the threshold
        assert pg.nearest_vectors("chunk", "other model", query, 5) == []
        assert pg.nearest_vectors("chunk", "m", query, 0) == []
        # a loaded dump gets its pgvector values too
        rows = list(pg.dump_rows(["vectors"]))
        assert rows and all("emb" not in r for _, r in rows)
    finally:
        pg.close()


def test_an_exhausted_pool_is_store_busy_and_a_read_only_store_cannot_write(pg_url: str, tmp_path: Path) -> None:
    from graphmem.store.postgres import PostgresStore

    open_store(tmp_path, url=pg_url).close()  # migrated
    small = PostgresStore(pg_url, tmp_path, busy_timeout=0.1, pool_size=1)
    reader = open_store(tmp_path, read_only="testing", url=pg_url)
    got: list[BaseException] = []
    try:
        with small.transaction():  # holds the pool's only connection
            t = threading.Thread(target=lambda: got.append(pytest.raises(StoreBusy, small.get_meta, "k").value))
            t.start()
            t.join()
        assert len(got) == 1 and "connections" in str(got[0]) and small.get_meta("k") is None
        with pytest.raises(BackendError, match="read-only"):
            reader._exec("INSERT INTO kb_meta (key, value) VALUES ('k', 'v')")  # past refuse_write, on the server
        assert small.get_meta("k") is None
    finally:
        small.close()
        reader.close()


def test_a_database_that_does_not_exist_is_named_as_the_cause(pg_url: str, tmp_path: Path) -> None:
    """The pool retried for the whole busy timeout, logging each attempt, then said only 'pool initialization
    incomplete after 30.0 sec'; libpq's own reason comes first now."""
    base, _, _ = pg_url.partition("?")
    root, _, _ = base.rpartition("/")
    query = pg_url[len(base):]
    missing = f"{root}/graphmem_no_such_db{query}"
    with pytest.raises(BackendError, match=r"cannot connect to PostgreSQL at .*does not exist") as err:
        open_store(tmp_path, busy_timeout=30.0, url=missing)
    assert "pool initialization" not in str(err.value)


@pytest.mark.parametrize("url", ["postgresql://u:hu%zzter2@127.0.0.1:1/db", "postgresql://u@127.0.0.1:1/db?password=hu%zzter2"])
def test_a_password_libpq_quotes_is_not_in_the_error(tmp_path: Path, url: str) -> None:
    """libpq quotes a token it cannot parse ('invalid percent-encoded token: "hu%zzter2"'); the direct connect
    put that text into the error, which reaches stderr, HTTP and MCP."""
    pytest.importorskip("psycopg")
    with pytest.raises(BackendError, match="cannot connect to PostgreSQL") as err:
        open_store(tmp_path, busy_timeout=1.0, url=url)
    assert "zzter" not in str(err.value)
