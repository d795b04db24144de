"""kill -9 during a folder ingest, ten times, then a plain re-run: the store is sound, no
document is half ingested, no temp file is left, and the result equals an uninterrupted run.

bench/reliability.py runs 50 kills on a larger folder.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import graphmem

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checks import integrity, temp_files, wiki_disagreements  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

SYSTEMS = ["Dispatch Service", "Ledger Database", "Route Planner", "Notification Worker", "Tracker Gateway",
           "Billing Queue", "Auth Proxy", "Search Indexer", "Payment Bridge", "Audit Store", "Cache Tier",
           "Mail Relay"]
VERBS = ["depends on", "calls", "writes to", "reads from"]
DOCS = 2000  # a run takes several seconds: long enough for ten kills at random points
ENV = {**os.environ, "GRAPHMEM_EMBED_MODEL": "none"}


def make_corpus(root: Path, n: int, seed: int = 7) -> Path:
    """``n`` Markdown incident notes whose sentences state relations between shared systems."""
    rng = random.Random(seed)
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    for i in range(n):
        lines = [f"# Incident {i:03d}", ""]
        for _ in range(12):
            a, b = rng.sample(SYSTEMS, 2)
            lines.append(f"The {a} {rng.choice(VERBS)} the {b}. Engineers saw errors at {rng.randrange(24):02d}:00.")
        (corpus / f"incident-{i:03d}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return corpus


def ingest_cmd(home: Path) -> list[str]:
    return [sys.executable, "-m", "graphmem", "--home", str(home), "ingest", "corpus"]


def kill_repeatedly(cwd: Path, home: Path, want: dict[str, Any], kills: int, seed: int,
                    window: tuple[float, float] = (0.3, 1.2)) -> int:
    """Start the ingest and kill -9 it after a random delay, ``kills`` times (a run that finishes
    first is not a kill; then the rest is a no-op); after each kill the store must be sound and
    every document in it complete. Returns the number of runs that were really killed."""
    rng = random.Random(seed)
    done = 0
    for _ in range(kills * 3):
        if done == kills:
            break
        proc = subprocess.Popen(ingest_cmd(home), cwd=cwd, env=ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            proc.wait(timeout=rng.uniform(*window))
            if proc.returncode == 0:
                break  # the ingest finished: nothing left to interrupt
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            done += 1
        if (home / "graph.db").exists():
            assert integrity(home) == "ok"
            try:
                got = snapshot(home)
            except graphmem.BackendError as exc:  # killed while the store was being created
                assert "needs upgrading" in str(exc) or "not a usable" in str(exc), exc
                continue
            for doc_id, (version, digest, chunks) in got["documents"].items():  # none half-written
                assert (version, digest, chunks) == want["documents"][doc_id], doc_id
    return done


def snapshot(home: Path) -> dict[str, Any]:
    """What a finished ingest leaves: documents with their versions and chunk counts, graph counts,
    pages by category and title."""
    # Read-only: a read-write open would autosync and sweep temp files, mending file/row drift
    # before it could be seen.
    with graphmem.open(home, config={"embeddings": {"model": "none"}}, create=False, read_only=True) as kb:
        docs = {d.doc_id: (d.version, d.content_hash, len(kb.documents.chunks(d.doc_id)))
                for d in kb.documents.list()}
        st = kb.stats()
        pages = sorted((p["category"], p["title"]) for p in kb.wiki.list_pages())
        wiki = wiki_disagreements(kb)
    return {"documents": docs, "pages": pages, "wiki": wiki,
            "counts": {k: st[k] for k in ("documents", "document_versions", "chunks", "entities", "edges",
                                          "provenance", "mentions")}}


def test_kill_nine_during_ingest_then_rerun_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    make_corpus(tmp_path, DOCS)
    subprocess.run(ingest_cmd(tmp_path / "reference"), cwd=tmp_path, env=ENV, check=True, capture_output=True)
    want = snapshot(tmp_path / "reference")
    assert want["counts"]["documents"] == DOCS and want["counts"]["provenance"] > 0

    home = tmp_path / "killed"
    kills = kill_repeatedly(tmp_path, home, want, kills=10, seed=11)
    assert kills == 10  # every kill landed part-way through a run

    rerun = subprocess.run(ingest_cmd(home), cwd=tmp_path, env=ENV, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert integrity(home) == "ok"
    assert temp_files(home) == []
    assert snapshot(home) == want
