"""Static Model2Vec embeddings: fast on a CPU, numpy only at query time, no torch."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from .base import EmbedderUnavailable, EmbeddingBackend, load_model, normalise_rows

__all__ = ["Model2VecEmbedder"]


class Model2VecEmbedder:
    """A Model2Vec ``StaticModel`` from a hub id (downloaded on first use) or a local folder."""

    def __init__(self, name: str, model_id: str) -> None:
        try:
            from model2vec import StaticModel
        except ImportError:
            raise EmbedderUnavailable("model2vec is not installed; pip install model2vec") from None
        # The hub client logs a harmless "Repo card metadata" warning for local folders.
        logging.getLogger("huggingface_hub.repocard").setLevel(logging.ERROR)
        self._model = load_model(lambda: StaticModel.from_pretrained(name), name)
        self.model_id = model_id
        self.dim = int(self._model.dim)
        m = self._model
        # The plain case (one vector per token id, no vocabulary quantisation, float vectors) is
        # averaged here; anything else goes through the library's own encode.
        self._plain = (getattr(m, "token_mapping", None) is None and getattr(m, "weights", None) is None
                       and np.issubdtype(m.embedding.dtype, np.floating) and hasattr(m, "tokenizer"))

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._plain:
            return normalise_rows(self._encode_plain(list(texts)))
        return normalise_rows(self._model.encode(list(texts), show_progress_bar=False))

    def _encode_plain(self, texts: list[str]) -> np.ndarray:
        """What ``StaticModel.encode`` returns for these texts, bit for bit (tests/test_model2vec_encode.py
        compares the two), without its per-call costs: the texts are tokenized one by one, in this
        thread. The library's batch tokenizer call hands each batch to a pool of worker threads,
        whose start and idle spinning cost more CPU than the tokenizing itself on an ingest
        batch's few hundred short texts (and they compete with the extraction threads).

        The arithmetic is the library's: texts cut at ``max_length`` x the median token length
        in characters, token ids (unknown tokens dropped, at most ``max_length``: the tokenizer's
        truncation, which the library keeps at the model's ``max_length`` between calls), the
        mean of their vectors in the vectors' dtype (rows of one length averaged together, as
        numpy's mean then sums each row in the same order), then, for a normalising model, each
        row divided by its norm in float32 and cast back."""
        m = self._model
        limit = m.max_length
        if limit is not None:
            cut = limit * m.median_token_length
            texts = [t[:cut] for t in texts]
        encode, unk = m.tokenizer.encode, m.unk_token_id
        ids = [encode(t, add_special_tokens=False).ids for t in texts]
        if unk is not None:
            ids = [[i for i in row if i != unk] for row in ids]
        table = m.embedding
        out = np.zeros((len(ids), self.dim), dtype=table.dtype)
        by_length: dict[int, list[int]] = {}
        for n, row in enumerate(ids):
            if row:
                by_length.setdefault(len(row), []).append(n)
        for rows in by_length.values():
            out[rows] = table[np.array([ids[n] for n in rows], dtype=np.int64)].mean(axis=1)
        if m.normalize:
            wide = out.astype(np.float32)
            out = (wide / (np.linalg.norm(wide, axis=1, keepdims=True) + 1e-32)).astype(out.dtype)
        return out


def _make(name: str, model_id: str, options: Mapping[str, Any]) -> Model2VecEmbedder:
    return Model2VecEmbedder(name, model_id)


# Static vectors (one per token, averaged): not contextual.
BACKEND = EmbeddingBackend("model2vec", _make, contextual=False)
