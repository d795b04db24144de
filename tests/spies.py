"""Spies the tests put on graphmem's own seams, so each test asserts what was called, not how to record it."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

import graphmem.retrieval.search as search_mod


def count_encode_calls(kb: Any) -> list[int]:
    """Wraps the knowledge base's embedder: the returned list gets the number of texts of every encode call."""
    emb = kb.embeddings.embedder
    assert emb is not None, "the knowledge base has no embedding model"
    calls: list[int] = []
    encode = emb.encode

    def spy(texts: list[str]) -> Any:
        calls.append(len(texts))
        return encode(texts)

    emb.encode = spy
    return calls


def record_rank_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The query text of every search round (`search._rank`), in order: a feedback round's second query last."""
    seen: list[str] = []
    real = search_mod._rank

    def spy(ctx, query, cfg, kinds, want, detail=None, **more):  # type: ignore[no-untyped-def]
        seen.append(query)
        return real(ctx, query, cfg, kinds, want, detail, **more)

    monkeypatch.setattr(search_mod, "_rank", spy)
    return seen


@contextlib.contextmanager
def traced_sql(conn: sqlite3.Connection) -> Iterator[list[str]]:
    """Every SQL statement ``conn`` runs inside the block, in order (the trace is removed on the way out)."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        conn.set_trace_callback(None)
