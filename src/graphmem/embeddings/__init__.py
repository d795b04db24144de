"""Pluggable embeddings: Model2Vec (default), sentence-transformers, OpenAI-compatible servers."""

from .base import Embedder, EmbedderUnavailable, EmbeddingBackend, normalise_rows
from .registry import backend_for, is_contextual, load_embedder, model_id_for, parse_spec, register_backend

__all__ = ["Embedder", "EmbedderUnavailable", "EmbeddingBackend", "backend_for", "is_contextual", "load_embedder",
           "model_id_for", "normalise_rows", "parse_spec", "register_backend"]
