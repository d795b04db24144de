"""The Embedder interface, what a backend declares about itself, and the helpers backends share.

Backends (``*_backend.py``) import this module only; :mod:`.registry` imports the backends and
turns a SPEC into an embedder. Backends import their libraries lazily and raise
:class:`EmbedderUnavailable` with an actionable message when something is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from ..errors import BackendError

T = TypeVar("T")

__all__ = ["Embedder", "EmbedderUnavailable", "EmbeddingBackend", "load_errors", "load_model",
           "is_untyped_loader_error", "short_reason", "normalise_rows"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors."""

    # Read-only for users of an embedder (a backend may compute ``dim`` lazily, as the OpenAI one does).
    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 array, rows L2-normalised."""


class EmbedderUnavailable(BackendError):
    """The configured model cannot be loaded here (missing package, no network, bad path). A
    :class:`BackendError`: where it reaches a caller (an OpenAI-compatible endpoint that does not answer at
    the first embedding), ``except GraphmemError`` catches it and the CLI prints its one line."""


def load_errors() -> tuple[type[BaseException], ...]:
    """The exceptions model loaders really raise when a model cannot be had here: OSError (no
    file, no network: the hub's LocalEntryNotFoundError, OfflineModeIsEnabled, HfHubHTTPError),
    ValueError (not a model folder, HFValidationError for a path that does not exist), KeyError /
    AttributeError / TypeError (a config.json of the wrong shape), the hub's EntryNotFoundError and
    the HTTP client's own errors (neither is an OSError in huggingface_hub 1.x+: a dead proxy raised
    httpx's ProxyError), safetensors' SafetensorError (a damaged weights file)."""
    errors: list[type[BaseException]] = [OSError, ValueError, RuntimeError, KeyError, AttributeError, TypeError]
    for module, name in (("huggingface_hub.errors", "EntryNotFoundError"), ("httpx", "HTTPError"),
                         ("httpx2", "HTTPError"), ("requests", "RequestException"),
                         ("safetensors", "SafetensorError")):
        try:
            errors.append(getattr(__import__(module, fromlist=[name]), name))
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


def is_untyped_loader_error(exc: Exception) -> bool:
    """True for a plain ``Exception`` (not a subclass): the tokenizers library's Rust bindings raise
    exactly that for a malformed tokenizer.json; anything more specific is a real bug to surface."""
    return type(exc) is Exception


def short_reason(exc: BaseException, name: str) -> str:
    """A few words on why ``name`` did not load, for a one-line note."""
    text = str(exc)
    kind = type(exc).__name__
    looks_local = name.startswith((".", "/", "~")) or Path(name).expanduser().exists()
    if looks_local and not Path(name).expanduser().exists():
        return "no such folder"
    network = ("Connect", "Proxy", "Offline", "Timeout", "LocalEntryNotFound", "outgoing traffic", "Network")
    if not looks_local and any(w in kind or w in text for w in network):
        return "not downloaded, no network"
    first = text.splitlines()[0] if text else kind
    return f"{kind}: {first[:70]}"


def load_model(load: Callable[[], T], name: str) -> T:
    """``load()``, with every way a model can fail to load (no network, a dead proxy, a missing or
    broken folder) turned into :class:`EmbedderUnavailable` naming ``name`` and the reason."""
    try:
        return load()
    except load_errors() as exc:
        raise EmbedderUnavailable(f"'{name}': {short_reason(exc, name)}") from None
    except Exception as exc:  # noqa: BLE001 - only tokenizers' untyped error, see is_untyped_loader_error
        if not is_untyped_loader_error(exc):
            raise
        raise EmbedderUnavailable(f"'{name}': {short_reason(exc, name)}") from None


@dataclass(frozen=True)
class EmbeddingBackend:
    """What a backend module declares about itself (its ``BACKEND``), for the registry.

    ``scheme``: the SPEC prefix (``model2vec`` in ``model2vec:<name>``); ``aliases``: other
    spellings users type; ``make(name, model_id, options)``: the embedder; ``contextual``: the
    vectors depend on context (a transformer), not one static vector per token — retrieval trusts
    such a channel more; ``local_folders``: a name may be a model folder, whose model id is then its
    folder name (so a knowledge base keeps working when the folder moves).
    """

    scheme: str
    make: Callable[[str, str, Mapping[str, Any]], Embedder]
    contextual: bool = False
    aliases: tuple[str, ...] = ()
    local_folders: bool = True


def normalise_rows(mat: np.ndarray) -> np.ndarray:
    """float32 copy with unit-length rows (zero rows stay zero)."""
    m = np.asarray(mat, dtype=np.float32)
    if m.ndim == 1:
        m = m.reshape(1, -1)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms
