"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Ollama, vLLM, ...).

Standard library HTTP only (through :mod:`graphmem.openai_http`): texts go out in batches of
``batch_size``, 429/5xx/timeouts are retried with backoff, and the API key never appears in
a message. The vector width is not known until the server answers, so :attr:`OpenAIEmbedder.dim`
asks once (one short text) on first access, and every later batch must match it.

Errors: a configuration, auth or connection problem before the model ever answered is an
:class:`EmbedderUnavailable` (the embedder cannot be used here); an auth problem is one at any
time. Once the model has answered, a failed request or an inconsistent answer is a
:class:`~graphmem.errors.BackendError`, and the caller decides whether to go on without vectors.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import BackendError, InvalidInput
from ..openai_http import HTTPFailure, post_json
from .base import EmbedderUnavailable, EmbeddingBackend, normalise_rows

__all__ = ["DEFAULT_BASE_URL", "OpenAIEmbedder"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_RETRY_AFTER = 60.0  # seconds: a server's Retry-After is capped at this
_PROBE_TEXT = "dimension probe"

_HINTS = {
    "unreachable": "; is the server running and base_url right?",
    "bad_json": "; is base_url an OpenAI-compatible API?",
    "client": "; are the model name and base_url right?",
}


class OpenAIEmbedder:
    """An embedding model behind an OpenAI-compatible API.

    ``base_url`` defaults to ``$GRAPHMEM_OPENAI_BASE_URL``, then ``https://api.openai.com/v1``;
    ``api_key`` to ``$OPENAI_API_KEY`` (no key: no ``Authorization`` header, as local servers
    expect). ``timeout`` is per request, ``max_attempts`` the tries per request and
    ``backoff_base`` the first retry delay in seconds (doubled per attempt).
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 128,
        timeout: float = 60.0,
        max_attempts: int = 3,
        backoff_base: float = 1.0,
    ) -> None:
        model = (model or "").strip()
        if not model:
            raise EmbedderUnavailable("openai embeddings: no model named; use e.g. openai:text-embedding-3-small")
        url = (base_url or os.environ.get("GRAPHMEM_OPENAI_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
        if url.endswith("/embeddings"):  # a full endpoint URL is a common slip
            url = url[: -len("/embeddings")]
        if not url.startswith(("http://", "https://")):
            raise EmbedderUnavailable(
                f"openai embeddings: base_url {url!r} is not an http(s) URL; use e.g. {DEFAULT_BASE_URL} "
                "or http://localhost:11434/v1 (set GRAPHMEM_OPENAI_BASE_URL or the base_url option)"
            )
        if int(batch_size) < 1:
            raise EmbedderUnavailable(f"openai embeddings: batch_size must be at least 1, got {batch_size}")
        if float(timeout) <= 0:
            raise EmbedderUnavailable(f"openai embeddings: timeout must be positive, got {timeout}")
        if int(max_attempts) < 1:
            raise EmbedderUnavailable(f"openai embeddings: max_attempts must be at least 1, got {max_attempts}")
        if float(backoff_base) < 0:
            raise EmbedderUnavailable(f"openai embeddings: backoff_base must not be negative, got {backoff_base}")
        self.model = model
        self.model_id = f"openai:{model}"
        self.base_url = url
        self.url = f"{url}/embeddings"
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        self.batch_size = int(batch_size)
        self.timeout = float(timeout)
        self.max_attempts = int(max_attempts)
        self.backoff_base = float(backoff_base)
        self._dim: int | None = None
        self._answered = False  # has the server ever given a usable answer?
        self._lock = threading.RLock()

    def __repr__(self) -> str:  # never shows the API key
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def dim(self) -> int:
        """Width of the vectors; the first access embeds one short text to learn it (cached)."""
        if self._dim is None:
            with self._lock:  # concurrent first accesses probe once
                if self._dim is None:
                    self._embed_batch([_PROBE_TEXT], start=0)
        assert self._dim is not None
        return self._dim

    def encode(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 array with unit-length rows, in the order of ``texts``.

        An empty list sends no texts (only the one-off :attr:`dim` probe, if the width is not
        known yet). Raises :class:`EmbedderUnavailable` or :class:`BackendError` (see the module).
        """
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInput(f"encode: texts[{i}] is {type(text).__name__}, expected str")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._embed_batch(texts[start:start + self.batch_size], start)
                 for start in range(0, len(texts), self.batch_size)]
        return normalise_rows(np.concatenate(parts, axis=0))

    # ----------------------------------------------------------------- one request

    def _embed_batch(self, batch: list[str], start: int) -> np.ndarray:
        """Raw ``(len(batch), dim)`` float32 vectors of ``batch`` (``start``: its first text's position)."""
        try:
            answer = post_json(
                self.url, {"model": self.model, "input": batch}, api_key=self._api_key,
                timeout=self.timeout, max_attempts=self.max_attempts, backoff_base=self.backoff_base,
                max_retry_after=MAX_RETRY_AFTER, label=self.model_id,
            )
        except HTTPFailure as exc:
            raise self._http_error(exc) from None
        span = f"texts {start}-{start + len(batch) - 1}" if len(batch) > 1 else f"text {start}"
        matrix = self._parse(answer, len(batch), span)
        with self._lock:
            width = matrix.shape[1]
            if self._dim is None:
                self._dim = width
            elif width != self._dim:
                raise self._error(
                    f"{self.url} returned {width}-dimensional vectors for {span}, but {self._dim}-dimensional "
                    "ones before; the vectors of one model must all have the same dimension (does base_url "
                    "route to another model?)"
                )
            self._answered = True
        return matrix

    def _parse(self, answer: Any, count: int, span: str) -> np.ndarray:
        """The vectors of an answer, sorted by each item's ``index``; errors for any other shape."""
        data = answer.get("data") if isinstance(answer, Mapping) else None
        if not isinstance(data, list):
            raise self._error(f"{self.url} answered without a 'data' list; is base_url an OpenAI-compatible API?")
        if len(data) != count:
            raise self._error(f"{self.url} returned {len(data)} embeddings for {count} input texts ({span})")
        rows: list[Any] = [None] * count
        for item in data:
            index = item.get("index") if isinstance(item, Mapping) else None
            vector = item.get("embedding") if isinstance(item, Mapping) else None
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                raise self._error(f"{self.url} returned an item without a valid 'index' (0..{count - 1}) for {span}")
            if rows[index] is not None:
                raise self._error(f"{self.url} returned index {index} twice for {span}")
            if not isinstance(vector, list) or not vector:
                raise self._error(
                    f"{self.url} returned no 'embedding' list for item {index} of {span} "
                    "(only the float encoding_format is supported)"
                )
            rows[index] = vector
        widths = sorted({len(row) for row in rows})
        if len(widths) > 1:
            raise self._error(f"{self.url} returned vectors of different dimensions {widths} for {span}")
        try:
            matrix = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError):
            raise self._error(f"{self.url} returned an embedding with non-numeric values for {span}") from None
        if not np.isfinite(matrix).all():
            raise self._error(f"{self.url} returned an embedding with NaN or infinite values for {span}")
        return matrix

    # ----------------------------------------------------------------- errors

    def _error(self, message: str) -> Exception:
        """EmbedderUnavailable until the model has answered once, BackendError afterwards."""
        text = f"embedding model {self.model_id}: {message}"
        return BackendError(text) if self._answered else EmbedderUnavailable(text)

    def _http_error(self, exc: HTTPFailure) -> Exception:
        if exc.kind == "auth":  # a missing or revoked key is a configuration problem at any time
            return EmbedderUnavailable(
                f"embedding model {self.model_id}: {self.url} refused the request (HTTP {exc.status}): "
                "the API key is missing or wrong; set OPENAI_API_KEY (or the embeddings api_key option). "
                f"Server said: {exc.detail}"
            )
        return self._error(f"{exc.message}{_HINTS.get(exc.kind, '')}")


def _make(name: str, model_id: str, options: Mapping[str, Any]) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        name,
        base_url=options.get("base_url") or None,
        api_key=options.get("api_key") or None,
        batch_size=int(options.get("batch_size") or 128),
        timeout=float(options.get("timeout") or 60.0),
    )


# A model name, never a folder: its model id is the name as given.
BACKEND = EmbeddingBackend("openai", _make, contextual=True, local_folders=False)
