"""The Embedder interface and the one setting that chooses a model.

SPEC is ``model2vec:<hub id or folder>``, ``sentence-transformers:<hub id or folder>``,
``openai:<model>`` or ``none``. Backends import their libraries lazily and raise
:class:`EmbedderUnavailable` with an actionable message when something is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from ..errors import InvalidInput

T = TypeVar("T")

__all__ = ["Embedder", "EmbedderUnavailable", "load_errors", "load_model", "is_untyped_loader_error", "short_reason", "parse_spec", "load_embedder", "model_id_for", "BACKENDS"]

BACKENDS = ("model2vec", "sentence-transformers", "openai")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors."""

    model_id: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 array, rows L2-normalised."""


class EmbedderUnavailable(Exception):
    """The configured model cannot be loaded here (missing package, no network, bad path)."""


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


def parse_spec(spec: str) -> tuple[str, str] | None:
    """``(backend, name)`` from a SPEC string; None for ``none``. InvalidInput names the problem."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInput("embeddings.model: expected a SPEC like 'model2vec:<id or folder>' or 'none'")
    spec = spec.strip()
    if spec.lower() in ("none", "off", "false"):
        return None
    backend, sep, name = spec.partition(":")
    backend = backend.lower().replace("_", "-")
    if backend in ("st", "sentence-transformer", "sentencetransformers"):
        backend = "sentence-transformers"
    if not sep or backend not in BACKENDS or not name.strip():
        raise InvalidInput(
            f"embeddings.model: '{spec}' is not a valid SPEC; use model2vec:<id or folder>, "
            "sentence-transformers:<id or folder>, openai:<model> or none"
        )
    return backend, name.strip()


def model_id_for(backend: str, name: str) -> str:
    """Stable id stored with every vector: a local folder is named by its folder name, so a
    knowledge base keeps working when the model folder moves."""
    p = Path(name).expanduser()
    if backend != "openai" and (p.is_dir() or name.startswith((".", "/", "~"))):
        return f"{backend}:{p.resolve().name}"
    return f"{backend}:{name}"


def load_embedder(spec: str, options: dict[str, Any] | None = None) -> Embedder | None:
    """Load the embedder a SPEC names (None for 'none'); EmbedderUnavailable when it cannot."""
    parsed = parse_spec(spec)
    if parsed is None:
        return None
    backend, name = parsed
    opts = options or {}
    if backend == "model2vec":
        from .model2vec_backend import Model2VecEmbedder

        return Model2VecEmbedder(name, model_id_for(backend, name))
    if backend == "sentence-transformers":
        from .st_backend import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(name, model_id_for(backend, name), device=opts.get("device") or None)
    from .openai_backend import OpenAIEmbedder

    return OpenAIEmbedder(
        name,
        base_url=opts.get("base_url") or None,
        api_key=opts.get("api_key") or None,
        batch_size=int(opts.get("batch_size") or 128),
        timeout=float(opts.get("timeout") or 60.0),
    )


def normalise_rows(mat: np.ndarray) -> np.ndarray:
    """float32 copy with unit-length rows (zero rows stay zero)."""
    m = np.asarray(mat, dtype=np.float32)
    if m.ndim == 1:
        m = m.reshape(1, -1)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms
