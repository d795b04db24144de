"""Spies the tests put on graphmem's own seams, so each test asserts what was called, not how to record it."""

from __future__ import annotations

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
