"""sentence-transformers models (optional extra ``st``; needs torch)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .base import EmbedderUnavailable, EmbeddingBackend, load_model, normalise_rows

__all__ = ["SentenceTransformerEmbedder"]


class SentenceTransformerEmbedder:
    """Any sentence-transformers model, local folder or hub id."""

    def __init__(self, name: str, model_id: str, device: str | None = None) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedderUnavailable(
                "sentence-transformers is not installed; pip install 'graphmem[st]' (CPU torch: "
                "pip install torch --index-url https://download.pytorch.org/whl/cpu)"
            ) from None
        self._model = load_model(lambda: SentenceTransformer(name, device=device or "cpu"), name)
        self.model_id = model_id
        # sentence-transformers 5 renamed the method (the old name warns); older versions lack the new one
        dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim())

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise_rows(self._model.encode(list(texts), batch_size=64, show_progress_bar=False,
                                                 convert_to_numpy=True))


def _make(name: str, model_id: str, options: Mapping[str, Any]) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(name, model_id, device=options.get("device") or None)


BACKEND = EmbeddingBackend("sentence-transformers", _make, contextual=True,
                           aliases=("st", "sentence-transformer", "sentencetransformers"))
