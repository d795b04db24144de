"""Acceptance of issue 20: 4 processes x 1,000 mixed writes (documents with evidence, memories, relations,
wiki pages) from 4 separate homes against one PostgreSQL database: nothing lost, every evidence record points
at an existing chunk that contains its quote, every ingested relation keeps its evidence."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import graphmem
from pg_server import drop_database, fresh_database

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import mixed_writes  # noqa: E402

WORKERS, WRITES = 4, 1000


@pytest.mark.slow
def test_four_hosts_write_at_once_and_nothing_is_lost(tmp_path):
    name, url = fresh_database("gm_conc")
    try:
        graphmem.open(tmp_path / "setup", config=mixed_writes._config(url)).close()  # migrations applied once
        out = mixed_writes.run(url, WORKERS, WRITES, root=tmp_path, timeout=300)
        with graphmem.open(tmp_path / "check", config=mixed_writes._config(url)) as kb:
            report = mixed_writes.verify(kb, out["results"])
            assert kb.stats()["documents"] == WORKERS * WRITES // 4
        assert report["written"] == {k: WORKERS * WRITES // 4 for k in mixed_writes.KINDS}
        assert report["lost"] == {k: 0 for k in mixed_writes.KINDS}, report["lost_ids"]
        assert report["bad_evidence"] == 0 and report["uncited_relations"] == 0
        assert report["evidence_rows"] >= 3 * WORKERS * WRITES // 4  # two entities and a relation per document
    finally:
        drop_database(name)
