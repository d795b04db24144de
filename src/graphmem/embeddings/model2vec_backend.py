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

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise_rows(self._model.encode(list(texts), show_progress_bar=False))


def _make(name: str, model_id: str, options: Mapping[str, Any]) -> Model2VecEmbedder:
    return Model2VecEmbedder(name, model_id)


# Static vectors (one per token, averaged): not contextual.
BACKEND = EmbeddingBackend("model2vec", _make, contextual=False)
