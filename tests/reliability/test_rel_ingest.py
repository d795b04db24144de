"""Trust regressions for bulk ingest (issue 12): re-ingest past long unchanged runs, deep or
broken JSON, symlinks, and streaming (the input is never materialised)."""

from __future__ import annotations

import pytest

import graphmem

pytestmark = pytest.mark.reliability


def _small_corpus(root, n):
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"f{i:04d}.txt").write_text(f"Document number {i} talks about topic {i}.")


# -- defect 1: re-ingest stopped after 2 x batch_size unchanged files ------------------------------


def test_reingest_reads_past_a_long_run_of_unchanged_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    _small_corpus(docs, 130)
    with graphmem.open(tmp_path / "kb") as kb:  # default batch_size 64: a window of 128
        first = kb.ingest_paths([docs], extractor="none")
        assert first.added == 130
        (docs / "f0130.txt").write_text("A new document arrived after the first run.")
        (docs / "f0129.txt").write_text("Document 129 was edited after the first run.")
        progress = []
        s = kb.ingest_paths([docs], extractor="none", on_progress=lambda d, t, i: progress.append((d, t)))
        assert (s.documents, s.added, s.new_versions, s.unchanged) == (131, 1, 1, 129)
        assert kb.documents.get("docs/f0130.txt").version == 1
        assert kb.documents.get("docs/f0129.txt").version == 2
        # progress moves through the unchanged run and ends at the true total
        assert progress and progress[-1] == (131, 131)
        assert [d for d, _ in progress] == sorted(d for d, _ in progress)


def test_reingest_after_interrupt_resumes_beyond_the_window(tmp_path, monkeypatch):
    """Ctrl-C after 200 documents, then re-run: the first 200 are unchanged and the rest is read."""
    from graphmem.extraction import Extraction

    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    _small_corpus(docs, 300)

    class StopAt:
        name = "stop"

        def extract(self, doc):
            if doc.doc_id.endswith("f0200.txt"):
                raise KeyboardInterrupt
            return Extraction()

    with graphmem.open(tmp_path / "kb", config={"ingest": {"batch_size": 10, "workers": 1}}) as kb:
        s = kb.ingest_paths([docs], extractor=StopAt())
        assert s.interrupted and s.added == 200
        s = kb.ingest_paths([docs], extractor="none")
        assert (s.unchanged, s.added, s.interrupted) == (200, 100, False)
        assert len(kb.documents.list(limit=1000)) == 300
