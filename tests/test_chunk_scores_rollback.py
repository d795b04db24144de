"""The store keeps one FTS match's scores (``rank_chunks(keep_scores=True)`` then ``chunk_bm25``) until the next
write. A rollback does not move ``total_changes`` back, so scores read inside a write transaction that then rolls
back must not be served afterwards: the next search reads the file as it is."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmem
from clocks import ticking_clock

CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}


@pytest.fixture()
def kb(tmp_path: Path) -> Iterator[graphmem.KnowledgeBase]:
    kb = graphmem.open(tmp_path / "kb", config=CONFIG, clock=ticking_clock())
    kb.ingest_with_content("d1", "Dispatch", "s1", "The Tracker feeds the Dispatch Service.", [], [])
    kb.ingest_with_content("d2", "Tracker notes", "s2", "Bob maintains the Tracker and its queue.", [], [])
    yield kb
    kb.close()


def _drop_d2_from_fts_and_roll_back(kb: graphmem.KnowledgeBase, read_inside: Callable[[], Any]) -> Any:
    store = kb.store
    got = None
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.conn.execute("DELETE FROM chunks_fts WHERE rowid IN "  # type: ignore[attr-defined]
                               "(SELECT id FROM chunks WHERE doc_id = 'd2')")
            got = read_inside()
            raise RuntimeError("roll back")
    return got


def test_ranked_scores_read_in_a_rolled_back_transaction_are_not_served_after_it(kb: graphmem.KnowledgeBase) -> None:
    store = kb.store
    before = store.rank_chunks("Tracker", 10, keep_scores=True)
    assert len(before) == 2
    inside = _drop_d2_from_fts_and_roll_back(kb, lambda: store.rank_chunks("Tracker", 10, keep_scores=True))
    assert len(inside) == 1  # the transaction's own view
    assert store.rank_chunks("Tracker", 10, keep_scores=True) == before


def test_candidate_scores_after_a_rolled_back_transaction_are_the_files(kb: graphmem.KnowledgeBase) -> None:
    store = kb.store
    ids = [cid for cid, _ in store.rank_chunks("Tracker", 10, keep_scores=True)]
    before = store.chunk_bm25("Tracker", ids)
    assert len(before) == 2
    _drop_d2_from_fts_and_roll_back(kb, lambda: store.rank_chunks("Tracker", 10, keep_scores=True))
    assert store.chunk_bm25("Tracker", ids) == before
