"""An ingest batch is embedded in one model call (chunks, entity names and relation facts together),
and the vectors it stores are the ones each text gets on its own (reindex re-embeds them in other batches)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import graphmem
from graphmem.ingest.chunking import embedding_text
from spies import count_encode_calls

PEOPLE = ["Ada Lovelace", "Charles Babbage", "Alan Turing", "Grace Hopper", "John von Neumann", "Emmy Noether",
          "Kurt Godel", "Claude Shannon", "Barbara Liskov", "Edsger Dijkstra", "Donald Knuth", "Frances Allen"]
PLACES = ["London", "Paris", "Princeton", "Vienna", "Cambridge", "Zurich"]


def _corpus(n: int) -> list[dict[str, str]]:
    docs = []
    for i in range(n):
        a, b = PEOPLE[i % len(PEOPLE)], PEOPLE[(i * 5 + 3) % len(PEOPLE)]
        place = PLACES[i % len(PLACES)]
        docs.append({"title": f"{a} ({i})",
                     "text": f"{a} is a mathematician. {a} was born in {place}. "
                             f"{a} worked with {b} at the Institute of {place}. "
                             f"Document {i} also names {b} and the city of {PLACES[(i + 2) % len(PLACES)]}."})
    return docs


def _vectors(kb: graphmem.KnowledgeBase, model: str) -> dict[tuple[str, str], bytes]:
    out: dict[tuple[str, str], bytes] = {}
    for kind in ("chunk", "entity", "relation"):
        batch = kb.store.load_vectors(kind, model)
        out.update({(kind, item): vec for item, vec in zip(batch.item_ids, batch.vectors)})
    return out


def test_one_model_call_per_batch_and_vectors_as_each_text_alone(tmp_path: Path, model_dir: Path) -> None:
    corpus_file = tmp_path / "corpus.json"
    corpus_file.write_text(json.dumps(_corpus(24)), encoding="utf-8")
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"},
                                                "ingest": {"batch_size": 8}})
    try:
        encode = kb.embeddings.embedder.encode  # the model's own, for the expected vectors
        calls = count_encode_calls(kb)
        summary = kb.ingest_paths([corpus_file], extractor="offline")
        assert summary.added == 24
        # Three batches of 8: one call each, holding every text the batch stores a vector for.
        assert len(calls) == 3
        model = kb.embeddings.stored_model()
        assert model is not None
        stored = _vectors(kb, model)
        kinds = {kind for kind, _ in stored}
        assert kinds == {"chunk", "entity", "relation"}
        assert sum(calls) >= len(stored)

        # Each text encoded alone, straight from the model (no ingest batch around it).
        chunk_rows = kb.store.chunks_to_embed(True, 0, 1000)
        info = kb.store.chunk_info([r.item_id for r in chunk_rows])
        alone = {("chunk", r.item_id): embedding_text(info[r.item_id][2], r.text) for r in chunk_rows}
        alone |= {("entity", r.item_id): r.text for r in kb.store.nodes_to_embed("entity", 0, 1000)}
        alone |= {("relation", r.item_id): r.text for r in kb.store.relations_to_embed(0, 1000)}
        assert set(alone) == set(stored)
        for key, text in alone.items():
            expected = np.asarray(encode([text])[0], dtype=np.float32).astype(np.float16).tobytes()
            assert stored[key] == expected, key

        # Reindex embeds the same texts in other batches: every vector comes back bit for bit.
        kb.embeddings.reindex()
        assert _vectors(kb, model) == stored
    finally:
        kb.close()


@pytest.mark.parametrize("section", ["embed_entities", "embed_relations"])
def test_names_left_out_of_the_batch_call_when_not_embedded(tmp_path: Path, model_dir: Path, section: str) -> None:
    corpus_file = tmp_path / "corpus.json"
    corpus_file.write_text(json.dumps(_corpus(10)), encoding="utf-8")
    kb = graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}",
                                                               "embed_entities": False, "embed_relations": False,
                                                               section: True},
                                                "ingest": {"batch_size": 10}})
    try:
        calls = count_encode_calls(kb)
        kb.ingest_paths([corpus_file], extractor="offline")
        assert len(calls) == 1
        model = kb.embeddings.stored_model()
        assert model is not None
        stored = _vectors(kb, model)
        wanted = "entity" if section == "embed_entities" else "relation"
        assert {kind for kind, _ in stored} == {"chunk", wanted}
    finally:
        kb.close()
