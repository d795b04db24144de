"""Ctrl-C while one document of a batch is still being extracted (a slow extractor, e.g. an LLM call), with an
embedding model configured, so the writer embeds the batch ahead of its transaction: every document whose
extraction had finished is committed with all its vectors, the slow one is absent, and the next run resumes.

The interrupt is a real SIGINT sent to the main thread, and only once the state it must meet is reached: the other
documents' extractions returned, the other extraction workers idle (so their results are set) and the main thread
in a wait -- which can then only be for the slow document. A signal that arrives just before the wait blocks wakes
nothing, so it is sent again until the handler has run (a pending SIGINT is not counted twice): the handler runs
exactly once, inside that wait. Nothing depends on how long anything takes."""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.extraction import EntitySpec, Extraction, RelationSpec
from graphmem.ingest.extractors.base import SourceDocument
from spies import count_encode_calls

N_DOCS = 6
GIVE_UP_S = 60.0  # a safety net against a hang, never part of an assertion


def _blocked_waiting(frame: Any) -> bool:
    """A thread parked in threading's Condition.wait (how futures are awaited, one by one or all together)."""
    return frame is not None and frame.f_code.co_name == "wait" and frame.f_code.co_filename.endswith("threading.py")


def _idle_worker(frame: Any) -> bool:
    """A pool worker between work items (its result, if it had one, is set on its future)."""
    return frame is not None and frame.f_code.co_name == "_worker"


class SlowOneExtractor:
    """Extracts 'X met Y.' sentences; the document ``slow`` never returns by itself: once the others are done it
    presses Ctrl-C for the user and hangs until the test releases it (a stuck LLM call)."""

    name = "slow-one"

    def __init__(self, slow: str, presses: list[int]) -> None:
        self.slow = slow
        self.presses = presses  # appended to by the SIGINT handler, in the main thread
        self.finished = 0
        self.lock = threading.Lock()
        self.release = threading.Event()

    def extract(self, doc: SourceDocument) -> Extraction:
        if doc.doc_id.endswith(self.slow):
            self._interrupt_when_only_this_is_left()
            self.release.wait(GIVE_UP_S)
            return Extraction()
        sentence = doc.text.strip().split("\n")[-1]  # 'Alice SmithN met Bob JonesN.'
        words = sentence.rstrip(".").split()
        a, b = " ".join(words[0:2]), " ".join(words[3:5])
        ents = (EntitySpec(a, "person", sentence), EntitySpec(b, "person", sentence))
        out = Extraction(ents, (RelationSpec(a, b, "met", 1.0, sentence),))
        with self.lock:
            self.finished += 1
        return out

    def _interrupt_when_only_this_is_left(self) -> None:
        main = threading.main_thread()
        me = threading.get_ident()
        deadline = time.monotonic() + GIVE_UP_S
        while time.monotonic() < deadline:
            frames = sys._current_frames()
            workers = [t.ident for t in threading.enumerate()
                       if t.name.startswith("graphmem-extract") and t.ident != me]
            with self.lock:
                others_done = self.finished == N_DOCS - 1
            if self.presses:  # the handler ran: the main thread has its KeyboardInterrupt
                return
            if (others_done and all(_idle_worker(frames.get(w)) for w in workers)
                    and _blocked_waiting(frames.get(main.ident))):  # type: ignore[arg-type]
                assert main.ident is not None
                signal.pthread_kill(main.ident, signal.SIGINT)
            time.sleep(0.005)


@pytest.fixture
def sigint_presses() -> Iterator[list[int]]:
    """SIGINT raises KeyboardInterrupt in the main thread (as Python's default handler does), whatever the
    runner installed; the list yielded records each time the handler ran."""
    presses: list[int] = []

    def on_sigint(signum: int, frame: Any) -> None:
        presses.append(signum)
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield presses
    finally:
        signal.signal(signal.SIGINT, old)


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for i in range(N_DOCS):
        (docs / f"d{i}.md").write_text(f"# Doc {i}\n\nAlice Smith{i} met Bob Jones{i}.\n", encoding="utf-8")
    return docs


def _ingest_interrupted(kb: graphmem.KnowledgeBase, docs: Path, slow: str,
                        presses: list[int]) -> tuple[Any, SlowOneExtractor]:
    extractor = SlowOneExtractor(slow, presses)
    try:
        summary = kb.ingest_paths([docs], extractor=extractor)
    finally:
        extractor.release.set()  # let the stuck extraction thread end
    assert presses == [signal.SIGINT], "one Ctrl-C, delivered"
    return summary, extractor


@pytest.mark.parametrize("slow", ["d5.md", "d2.md"])
def test_ctrl_c_during_slow_extraction_keeps_finished_documents_with_vectors(
        tmp_path: Path, model_dir: Path, sigint_presses: list[int], slow: str) -> None:
    docs = _corpus(tmp_path)
    config = {"embeddings": {"model": f"model2vec:{model_dir}"}, "ingest": {"workers": 2, "batch_size": 8}}
    kb = graphmem.open(tmp_path / "kb", config=config)
    try:
        calls = count_encode_calls(kb)
        summary, _ = _ingest_interrupted(kb, docs, slow, sigint_presses)
        finished = {f"docs/d{i}.md" for i in range(N_DOCS)} - {f"docs/{slow}"}
        assert summary.interrupted
        assert summary.added == N_DOCS - 1
        assert {d.doc_id for d in kb.documents.list()} == finished
        # Embedded as they would have been: one model call for the batch, every stored text has its vector.
        assert len(calls) == 1
        model = kb.embeddings.stored_model()
        assert model is not None
        stored = {(kind, item) for kind in ("chunk", "entity", "relation")
                  for item in kb.store.load_vectors(kind, model).item_ids}
        wanted = {("chunk", r.item_id) for r in kb.store.chunks_to_embed(True, 0, 1000)}
        wanted |= {("entity", r.item_id) for r in kb.store.nodes_to_embed("entity", 0, 1000)}
        wanted |= {("relation", r.item_id) for r in kb.store.relations_to_embed(0, 1000)}
        assert len([k for k in wanted if k[0] == "chunk"]) == N_DOCS - 1
        assert len([k for k in wanted if k[0] == "entity"]) == 2 * (N_DOCS - 1)
        assert len([k for k in wanted if k[0] == "relation"]) == N_DOCS - 1
        assert stored == wanted
        # The next run resumes: the finished documents are unchanged, only the interrupted one is written.
        again = kb.ingest_paths([docs], extractor="none")
        assert (again.unchanged, again.added, again.interrupted) == (N_DOCS - 1, 1, False)
    finally:
        kb.close()
