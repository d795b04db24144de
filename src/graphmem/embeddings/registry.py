"""The backend registry: a SPEC (``<scheme>:<name>`` or ``none``) to an embedder.

Each backend module declares an :class:`~.base.EmbeddingBackend` (its scheme, spellings and
capability flags); this module collects them, so that choosing a backend is a lookup and "is this
embedder contextual?" is a flag, not string parsing. A new backend is one module with a
``BACKEND`` and one line in :data:`_BUILTIN` (or :func:`register_backend` from outside).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from . import model2vec_backend, openai_backend, st_backend
from .base import Embedder, EmbeddingBackend

__all__ = ["register_backend", "backend_for", "parse_spec", "model_id_for", "load_embedder", "is_contextual",
           "backends"]

_BUILTIN = (model2vec_backend.BACKEND, st_backend.BACKEND, openai_backend.BACKEND)
_BY_SCHEME: dict[str, EmbeddingBackend] = {}
_BY_SPELLING: dict[str, EmbeddingBackend] = {}

_OFF = ("none", "off", "false")


def register_backend(backend: EmbeddingBackend) -> None:
    """Make ``backend`` available under its scheme and aliases (a later one with the same scheme wins)."""
    _BY_SCHEME[backend.scheme] = backend
    for spelling in (backend.scheme, *backend.aliases):
        _BY_SPELLING[_spelling(spelling)] = backend


def _spelling(word: str) -> str:
    return word.strip().lower().replace("_", "-")


for _backend in _BUILTIN:
    register_backend(_backend)


def backends() -> tuple[str, ...]:
    """The registered schemes, in registration order."""
    return tuple(_BY_SCHEME)


def _usage() -> str:
    names = [f"{s}:<model>" if not b.local_folders else f"{s}:<id or folder>" for s, b in _BY_SCHEME.items()]
    return ", ".join(names) + " or none"


def parse_spec(spec: str) -> tuple[str, str] | None:
    """``(scheme, name)`` from a SPEC string; None for ``none``. InvalidInput names the problem."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInput("embeddings.model: expected a SPEC like 'model2vec:<id or folder>' or 'none'")
    spec = spec.strip()
    if spec.lower() in _OFF:
        return None
    scheme, sep, name = spec.partition(":")
    backend = _BY_SPELLING.get(_spelling(scheme))
    if not sep or backend is None or not name.strip():
        raise InvalidInput(f"embeddings.model: '{spec}' is not a valid SPEC; use {_usage()}")
    return backend.scheme, name.strip()


def backend_for(spec: str) -> EmbeddingBackend | None:
    """The backend a SPEC names (None for ``none``); InvalidInput for a bad SPEC."""
    parsed = parse_spec(spec)
    return None if parsed is None else _BY_SCHEME[parsed[0]]


def is_contextual(spec: str) -> bool:
    """Whether a SPEC names a contextual embedder (the backend's ``contextual`` flag); False for
    ``none`` and for a SPEC that names no backend."""
    try:
        backend = backend_for(spec)
    except InvalidInput:
        return False
    return bool(backend and backend.contextual)


def model_id_for(backend: str, name: str) -> str:
    """Stable id stored with every vector: a local folder is named by its folder name, so a
    knowledge base keeps working when the model folder moves."""
    p = Path(name).expanduser()
    declared = _BY_SCHEME.get(backend)
    if (declared is None or declared.local_folders) and (p.is_dir() or name.startswith((".", "/", "~"))):
        return f"{backend}:{p.resolve().name}"
    return f"{backend}:{name}"


def load_embedder(spec: str, options: Mapping[str, Any] | None = None) -> Embedder | None:
    """Load the embedder a SPEC names (None for 'none'); EmbedderUnavailable when it cannot."""
    parsed = parse_spec(spec)
    if parsed is None:
        return None
    scheme, name = parsed
    return _BY_SCHEME[scheme].make(name, model_id_for(scheme, name), options or {})
