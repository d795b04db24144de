"""Pluggable embeddings: Model2Vec (default), sentence-transformers, OpenAI-compatible servers."""

from .base import Embedder, EmbedderUnavailable, load_embedder, model_id_for, normalise_rows, parse_spec

__all__ = ["Embedder", "EmbedderUnavailable", "load_embedder", "model_id_for", "normalise_rows", "parse_spec"]
