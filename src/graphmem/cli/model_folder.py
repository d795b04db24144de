"""Local embedding-model folders: saved as absolute paths, and a missing one is an error, not 0.00 dense.

A folder typed relative to the current directory (``model2vec:models/mini``) stopped working as soon
as a command ran elsewhere, and a hub id and a relative folder look alike (``org/name``). So the rule:
a name that exists as a folder here is a folder and is saved absolute; a name written as a path
(``./x``, ``../x``, ``/x``, ``~/x``) that does not exist is refused; anything else is a hub id.
"""

from __future__ import annotations

from pathlib import Path

from ..embeddings import parse_spec
from ..errors import InvalidInput

__all__ = ["absolute_spec", "check_model_folder"]

_LOCAL_BACKENDS = ("model2vec", "sentence-transformers")
_PATH_PREFIXES = (".", "/", "~")


def absolute_spec(spec: str) -> str:
    """``spec`` with a local model folder made absolute; InvalidInput for a path that is not there."""
    parsed = parse_spec(spec)
    if parsed is None or parsed[0] not in _LOCAL_BACKENDS:
        return spec.strip()
    backend, name = parsed
    folder = Path(name).expanduser()
    if folder.is_dir():
        return f"{backend}:{folder.resolve()}"
    if name.startswith(_PATH_PREFIXES) or folder.exists():
        raise InvalidInput(f"--embedder {spec}: model folder {name} not found (from {Path.cwd()}); give the path "
                           f"of a folder holding the model, e.g. --embedder {backend}:/path/to/model, or a hub id")
    return spec.strip()


def check_model_folder(spec: str, home: Path) -> None:
    """InvalidInput when the configured model names a local folder (an absolute path, or one written as
    a path) that does not exist: saying so beats searching with dense scores of 0.00."""
    try:
        parsed = parse_spec(spec)
    except InvalidInput:
        return  # a bad SPEC is reported where the embedder is loaded
    if parsed is None or parsed[0] not in _LOCAL_BACKENDS:
        return
    backend, name = parsed
    if not name.startswith(_PATH_PREFIXES) or Path(name).expanduser().is_dir():
        return
    raise InvalidInput(
        f"embedding model folder {Path(name).expanduser()} not found (embeddings.model in {home / 'config.toml'} "
        f"or GRAPHMEM_EMBED_MODEL); point at the folder with `graphmem init --home {home} --embedder "
        f"{backend}:DIR`, or use `--embedder none` to search with BM25 + graph")
