"""The embedding backend registry: a SPEC is a lookup, capability flags come from the backend."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

import graphmem
from graphmem.embeddings import (
    EmbeddingBackend,
    backend_for,
    is_contextual,
    load_embedder,
    model_id_for,
    parse_spec,
    register_backend,
    registry,
)


class _Fixed:
    """A toy embedder: one fixed direction per text length (enough to store and search vectors)."""

    def __init__(self, name: str, model_id: str, dim: int) -> None:
        self.model_id, self.dim, self.name = model_id, dim, name

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = 1.0
        return out


@pytest.fixture
def toy_backend() -> Any:
    made: list[tuple[str, str, dict[str, Any]]] = []

    def make(name: str, model_id: str, options: Mapping[str, Any]) -> _Fixed:
        made.append((name, model_id, dict(options)))
        return _Fixed(name, model_id, 8)

    backend = EmbeddingBackend("toy", make, contextual=True, aliases=("toy_model",), local_folders=False)
    register_backend(backend)
    yield made
    registry._BY_SCHEME.pop("toy")
    for spelling in ("toy", "toy-model"):
        registry._BY_SPELLING.pop(spelling)


def test_builtin_backends_declare_their_flags():
    assert registry.backends() == ("model2vec", "sentence-transformers", "openai")
    assert [is_contextual(s) for s in ("model2vec:x", "sentence-transformers:x", "st:x", "openai:m", "none")] == [
        False, True, True, True, False]
    assert is_contextual("no-such-backend:x") is False
    st = backend_for("Sentence_Transformer:all-MiniLM")
    assert st is not None and st.scheme == "sentence-transformers"
    assert backend_for("none") is None


def test_spec_parsing_names_the_problem():
    assert parse_spec(" ST:all-MiniLM ") == ("sentence-transformers", "all-MiniLM")
    assert parse_spec("OFF") is None
    with pytest.raises(graphmem.InvalidInput, match="embeddings.model: 'word2vec:x' is not a valid SPEC; use "
                                                     "model2vec:<id or folder>, .*openai:<model> or none"):
        parse_spec("word2vec:x")
    with pytest.raises(graphmem.InvalidInput, match="embeddings.model: expected a SPEC"):
        parse_spec("  ")


def test_model_ids_name_folders_by_their_name_except_for_remote_backends(tmp_path):
    folder = tmp_path / "models" / "mini"
    folder.mkdir(parents=True)
    assert model_id_for("model2vec", str(folder)) == "model2vec:mini"
    assert model_id_for("openai", str(folder)) == f"openai:{folder}"
    assert model_id_for("model2vec", "org/model") == "model2vec:org/model"


def test_a_registered_backend_is_loaded_by_its_scheme_and_aliases(toy_backend):
    emb = load_embedder("toy_model:small", {"device": "cpu"})
    assert isinstance(emb, _Fixed) and emb.model_id == "toy:small" and emb.dim == 8
    assert toy_backend == [("small", "toy:small", {"device": "cpu"})]
    assert is_contextual("toy:small") is True


def test_a_knowledge_base_embeds_with_a_registered_backend(toy_backend, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHMEM_EMBED_MODEL", "toy:small")
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_with_content("d", "T", "s", "Alice founded Acme in Paris.")
        assert kb.embeddings.contextual is True
        assert kb.stats()["embedding_model"] == "toy:small"
        assert kb.embed_query("Alice").shape == (8,)
