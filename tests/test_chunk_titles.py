"""Titles as a field: the header of every chunk's embedding text, and the lexical title field."""

from __future__ import annotations

import json

import graphmem
from graphmem.ingest.chunking import embedding_text
from graphmem.text import content_hash

LONG = ("Christopher Edward Nolan is a British-American filmmaker. " * 12
        + "His brother Jonathan co-wrote several of the scripts with him. " * 12)


def test_embedding_text_puts_the_title_first_unless_the_text_starts_with_it() -> None:
    assert embedding_text("Christopher Nolan", "He directed Memento.") == "Christopher Nolan\nHe directed Memento."
    assert embedding_text("  Christopher \n Nolan ", "x") == "Christopher Nolan\nx"  # one header line
    assert embedding_text("", "He directed Memento.") == "He directed Memento."
    assert embedding_text("Notes", "# Notes\nbody") == "# Notes\nbody"  # a Markdown heading already says it
    assert embedding_text("Memento", "memento\nA 2000 film.") == "memento\nA 2000 film."  # glued records


def test_every_chunk_is_embedded_under_its_title_at_ingest_and_reindex(tmp_path, model_dir) -> None:
    """A split passage: the second chunk never names its topic, its vector has the title."""
    cfg = {"embeddings": {"model": f"model2vec:{model_dir}"}, "chunking": {"size": 400, "overlap": 50}}
    records = tmp_path / "films.jsonl"
    records.write_text(json.dumps({"id": "nolan", "title": "Christopher Nolan", "text": LONG}) + "\n")
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        kb.ingest_paths([records])
        chunks = kb.store.document_chunks("nolan", 1)
        assert len(chunks) > 2 and "Nolan" not in chunks[-1].text
        model = kb.embeddings.stored_model()
        want = {c.chunk_id: content_hash("Christopher Nolan\n" + c.text) for c in chunks}
        assert kb.store.vector_hashes("chunk", list(want), model) == want
        kb.reindex()
        assert kb.store.vector_hashes("chunk", list(want), model) == want
        # the lexical field: the last chunk is found by the title word it does not contain
        assert chunks[-1].chunk_id in {h.chunk.chunk_id for h in kb.store.search_chunks("christopher", k=20)}
