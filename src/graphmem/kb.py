"""The knowledge base: one folder, one store, the faces over it."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from .config import DEFAULT_CONFIG_TOML, Config, load_config
from .config_sections import redact_url
from .context import (
    AFTER_DELETE,
    AFTER_INGEST,
    DELETE_DOCUMENT,
    FIND_ENTITY,
    SEARCH_WIKI,
    SKILLS_CHANGED,
    WIKI_DEFERRED,
    WIKI_FLUSH,
    WIKI_FLUSH_DUE,
    Context,
    utc_now,
)
from .embeddings.manager import EmbeddingManager
from .errors import BackendError, GraphmemError, InvalidInput
from .extraction import Extraction, parse_extraction
from .faces import Documents, Events, Graph
from .faces.memory import Memory
from .faces.skills import Skills
from .faces.wiki import Wiki
from .ingest.core import IngestResult, ingest_document
from .ingest.pipeline import IngestSummary, ingest_paths
from .retrieval.config import SearchConfig
from .retrieval.graph_query import graph_query, query_with_evidence
from .retrieval.search import SearchResult, search
from .store import Store, open_store
from .validate import check_input, check_query, checked_inputs, path_list

__all__ = ["KnowledgeBase", "open", "default_home"]

DEFAULT_HOME = ".graphmem"


def default_home() -> Path:
    """``$GRAPHMEM_HOME`` if set, else ``./.graphmem``."""
    return Path(os.environ.get("GRAPHMEM_HOME") or DEFAULT_HOME)


@checked_inputs("kb")
class KnowledgeBase:
    """A knowledge base folder: ``graph.db``, ``wiki/`` and ``config.toml``.

    Use :func:`graphmem.open` to get one. Faces: ``documents``, ``graph``, ``events``, ``wiki``.
    The seed's methods (``ingest_with_content``, ``add_node``, ``add_edge``, ``query``,
    ``query_with_evidence``) are available directly on the knowledge base.
    """

    def __init__(self, home: Path, config: Config, store: Store,
                 clock: Callable[[], datetime] = utc_now) -> None:
        self.home = home
        self.config = config
        self.store = store
        # What engine code receives (store, config, clock, embeddings, notes, hooks); the faces
        # register their hooks on it.
        self.ctx = Context(home=home, config=config, store=store, clock=clock)
        self.closed = False  # set by close(): every public call then says so (validate.checked_inputs)
        self.notes: list[str] = self.ctx.notes
        self.embeddings = EmbeddingManager(self.ctx)
        self.ctx.embeddings = self.embeddings
        self.documents = Documents(self)
        self.graph = Graph(self)
        self.events = Events(self, open_view=lambda folder: open(folder, read_only=True))
        self.wiki = Wiki(self)
        self.memory = Memory(self)
        self.skills = Skills(self)
        self._register_hooks()

    def _register_hooks(self) -> None:
        """What the engine may trigger above itself (docs/architecture.md lists every hook). Each
        hook looks its method up when called, so a face method replaced later (a test's spy, a
        subclass) is the one that runs."""
        hooks = self.ctx.hooks
        for name, face, method in (
            (AFTER_INGEST, "wiki", "after_ingest"),
            (AFTER_DELETE, "wiki", "after_delete"),
            (WIKI_DEFERRED, "wiki", "deferred"),
            (WIKI_FLUSH, "wiki", "flush"),
            (WIKI_FLUSH_DUE, "wiki", "flush_due"),
            (DELETE_DOCUMENT, "documents", "delete"),
            (SKILLS_CHANGED, "skills", "invalidate"),
            (FIND_ENTITY, "graph", "find"),
            (SEARCH_WIKI, "wiki", "search_wiki"),
        ):
            hooks.register(name, self._late_bound(face, method))

    def _late_bound(self, face: str, method: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(getattr(self, face), method)(*args, **kwargs)

        call.__name__ = f"{face}.{method}"
        return call

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the store (after regenerating wiki pages still pending). The knowledge base is
        unusable afterwards: a call then raises InvalidInput saying so (closing again is harmless)."""
        if self.closed:
            return
        self.events.close()  # stop this process's subscriptions before their store goes
        self.wiki.close()
        self.store.close()
        self.closed = True

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<KnowledgeBase {str(self.home)!r} ({self.store.backend})>"

    @property
    def read_only(self) -> bool:
        """True when opened read-only (see :func:`open`)."""
        return bool(self.store.read_only)

    def now(self) -> str:
        """Current time as an ISO-8601 UTC string (from the injectable clock)."""
        return self.ctx.now()

    def warn(self, message: str) -> None:
        """Record a note for the caller (also issued as a Python warning)."""
        self.notes.append(message)
        warnings.warn(message, stacklevel=3)

    # -- the seed's API -----------------------------------------------------------------------

    def ingest_with_content(
        self,
        doc_id: str,
        title: str,
        source: str,
        raw_content: str,
        entities: Sequence[Mapping[str, Any]] | None = None,
        relations: Sequence[Mapping[str, Any]] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store a document with the entities and relations extracted from it.

        ``entities``: ``[{name, type, supporting_text}]``; ``relations``: ``[{source, target,
        type, confidence, supporting_text}]`` (the seed's extraction format). Returns
        ``{doc_id, chunk_count, nodes_added, edges_added, warnings, status, version, ...}``.
        Malformed input raises InvalidInput and writes nothing; acceptable-but-skipped
        items (low confidence, unknown entity, unlocatable quote) are listed in warnings.
        """
        return self.ingest(doc_id, title, source, raw_content, parse_extraction(entities, relations),
                           metadata).to_dict()

    def ingest(
        self,
        doc_id: str,
        title: str | None,
        source: str | None,
        content: str,
        extraction: Extraction | Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> IngestResult:
        """Like :meth:`ingest_with_content` with an already-validated :class:`Extraction` (what its parser
        warned about, e.g. fields the contract does not read, leads the result's warnings). A mapping
        ``{"entities": [...], "relations": [...]}`` is parsed as :meth:`ingest_with_content` parses its lists."""
        if isinstance(extraction, Mapping):
            unknown = sorted(set(extraction) - {"entities", "relations"})
            if unknown:
                raise InvalidInput(f"extraction: unknown key(s) {', '.join(map(repr, unknown))}; an extraction holds "
                                   "'entities' and 'relations'")
            extraction = parse_extraction(extraction.get("entities"), extraction.get("relations"))
        elif extraction is not None and not isinstance(extraction, Extraction):
            raise InvalidInput(f"extraction: expected an Extraction or a mapping with 'entities' and 'relations', "
                               f"got {type(extraction).__name__}")
        extraction = extraction or Extraction()
        result = ingest_document(self.ctx, doc_id, title, source, content, extraction, metadata)
        said = extraction.extra.get("warnings") if isinstance(extraction.extra, dict) else None
        if said:
            result.warnings[:0] = [str(w) for w in said]
        return result

    def ingest_paths(
        self,
        paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
        *,
        glob: str | None = None,
        extractor: str | Any | None = None,
        excludes: Sequence[str] | str = (),
        prune: bool = False,
        on_progress: Callable[[int, int, str], None] | None = None,
        as_jsonl: bool = False,
        follow_symlinks: bool = False,
        on_stage: Callable[[str], None] | None = None,
    ) -> IngestSummary:
        """Ingest files and folders (recursively): readers by extension, the configured
        extractor (offline by default), unchanged files skipped, batched transactions.
        Symbolic links are skipped (listed in ``skipped``) unless ``follow_symlinks=True``.
        ``on_stage(what)`` names a step without a count (the final wiki update).
        ``paths``: one path or a list of them.
        Returns an :class:`IngestSummary` (added / unchanged / new versions / skipped...)."""
        paths = path_list("kb.ingest_paths", "paths", paths)
        if glob is not None and not isinstance(glob, str):
            raise InvalidInput(f"kb.ingest_paths: glob must be a pattern string such as '*.md', got {glob!r}")
        if isinstance(excludes, str):
            excludes = [excludes]
        if not isinstance(excludes, (list, tuple)) or not all(isinstance(e, str) for e in excludes):
            raise InvalidInput(f"kb.ingest_paths: excludes must be a pattern or a list of patterns such as "
                               f"['drafts/*'], got {excludes!r}")
        return ingest_paths(self.ctx, paths, glob=glob, extractor=extractor, excludes=excludes, prune=prune,
                            on_progress=on_progress, as_jsonl=as_jsonl, follow_symlinks=follow_symlinks,
                            on_stage=on_stage)

    def add_node(self, name: str, type: str = "concept", aliases: Sequence[str] = ()) -> str:
        """Add an entity by hand; returns its id (see :meth:`Graph.add_node`)."""
        return self.graph.add_node(name, type, aliases)

    def add_edge(self, source: str, target: str, relation: str, confidence: float = 1.0) -> str:
        """Add a relation by hand; returns its id (see :meth:`Graph.add_edge`)."""
        return self.graph.add_edge(source, target, relation, confidence)

    def query(self, text: str) -> dict[str, Any]:
        """Subgraph around the entities ``text`` names: ``{"nodes": {...}, "edges": [...]}``."""
        check_query(text)
        return graph_query(self.ctx, text)

    def query_with_evidence(self, text: str) -> dict[str, Any]:
        """The subgraph plus supporting documents, chunks, spans and the evidence chain."""
        check_query(text)
        return query_with_evidence(self.ctx, text)

    # -- retrieval ------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        kinds: Sequence[str] | str = ("chunk",),
        k: int = 10,
        strategy: str | None = None,
        preset: str | None = None,
        config: Mapping[str, Any] | SearchConfig | None = None,
        as_context: bool = False,
        token_budget: int = 1000,
    ) -> SearchResult:
        """Hybrid search (BM25 + dense + entity seeds, PPR/BFS expansion, rerank) with evidence.

        ``kinds``: chunk, entity, document, page (wiki). ``strategy``: ppr, bfs, none. ``preset``: a named
        SearchConfig (auto — the configured default: feedback with an embedding model (channel weights of
        its class, static or contextual), else default —, default, facts, feedback, facts+feedback, bm25,
        dense, rrf, hybrid, bfs, ppr). ``as_context=True`` adds a
        text block of the best evidence within ``token_budget`` tokens.
        """
        check_query(query)
        return search(self.ctx, query, kinds=kinds, k=k, strategy=strategy, preset=preset, config=config,
                      as_context=as_context, token_budget=token_budget)

    def embed_query(self, text: str) -> Any:
        """The query vector, or None without a usable embedding model."""
        return self.embeddings.embed_query(text)

    @property
    def embedder_note(self) -> str | None:
        """Why dense retrieval is off, when it is."""
        return self.embeddings.note

    def vector_index(self, item_kind: str) -> Any:
        """In-memory vector index of an item kind (None without vectors)."""
        return self.embeddings.vector_index(item_kind)

    def reindex(self, on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Re-embed every chunk and entity with the configured model (after switching models)."""
        return self.embeddings.reindex(on_progress)

    def status(self) -> dict[str, Any]:
        """Where the knowledge base lives: its folder, the store backend and (a server's) url without its
        password, whether it is read-only, the schema migrations applied."""
        url = self.config.store.url
        return {"home": str(self.home), "backend": self.store.backend,
                "store_url": redact_url(url) if url else None,
                "store_origin": self.config.origin("store", "url") if url else None,
                "read_only": self.read_only, "migrations": len(self.store.applied_migrations())}

    def stats(self) -> dict[str, Any]:
        """Counts of what the knowledge base holds, its size, and where it lives."""
        out: dict[str, Any] = dict(self.store.stats())
        out["home"] = str(self.home)
        out["backend"] = self.store.backend
        out["migrations"] = self.store.applied_migrations()
        out["embedding_model"] = self.embeddings.stored_model()
        out["vectors"] = self.store.vector_models()
        return out


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def read_only_from_env() -> bool:
    """``$GRAPHMEM_READ_ONLY`` as a switch. A value that is neither on nor off is InvalidInput: "2" or a typo
    used to mean writable without a word, the opposite of what whoever set it wanted."""
    raw = os.environ.get("GRAPHMEM_READ_ONLY", "")
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InvalidInput(f"GRAPHMEM_READ_ONLY={raw!r} is neither on nor off: set it to 1 (or true, yes, on) to open "
                       "knowledge bases read-only, or to 0 or nothing")


def _read_only_reason(path: Path, read_only: bool | None, url: str) -> str | None:
    """Why the knowledge base at ``path`` opens read-only (None: it opens read-write)."""
    if read_only:
        return "opened with read_only=True"
    if read_only is None and read_only_from_env():
        return "GRAPHMEM_READ_ONLY is set"
    if url:  # the store is on a server: its own permissions decide
        return None
    db = path / "graph.db"
    if db.exists() and not os.access(path, os.W_OK):
        return f"you may not write to the folder {path}"
    if db.exists() and not os.access(db, os.W_OK):
        return f"you may not write to {db}"
    return None


def _remove_created(paths: list[Path]) -> None:
    for p in reversed(paths):
        try:
            p.rmdir() if p.is_dir() else p.unlink()
        except OSError:
            pass  # not empty (someone else's files): left alone


def _exists(path: Path, url: str) -> bool:
    """A knowledge base is there: its graph.db, or (store on a server) its config.toml."""
    return (path / ("config.toml" if url else "graph.db")).exists()


def open(
    home: str | os.PathLike[str] | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    create: bool = True,
    clock: Callable[[], datetime] | None = None,
    read_only: bool | None = None,
) -> KnowledgeBase:
    """Open the knowledge base in folder ``home`` (default ``$GRAPHMEM_HOME`` or ``./.graphmem``).

    Creates it (folder, ``config.toml``, ``graph.db``, ``wiki/``) when absent unless
    ``create=False``. ``config`` overrides file and environment settings, e.g.
    ``{"graph": {"max_depth": 3}}``. Usable as a context manager.

    The store is the folder's ``graph.db`` unless ``[store] url`` (or ``$GRAPHMEM_STORE``, which
    wins over the file) names a PostgreSQL server: then the folder holds config.toml and wiki/, a
    copy of the pages the store holds (several folders, on several hosts, may share one database).

    Read-only (``read_only=True``, ``$GRAPHMEM_READ_ONLY``, or automatically when the folder or
    ``graph.db`` is not writable): every read works, nothing is created, memory use counts,
    decay and wiki autosync are skipped (one note says so), and a write raises BackendError
    naming the folder. ``read_only=False`` ignores ``$GRAPHMEM_READ_ONLY``.
    """
    check_input("open", "config", config)
    path = Path(home) if home is not None else default_home()
    if path.exists() and not path.is_dir():
        raise InvalidInput(f"knowledge base home {path} exists and is not a folder")
    # Bad settings (argument, environment or file) are refused before anything is created.
    url = load_config(path if (path / "config.toml").exists() else None, config).store.url
    reason = _read_only_reason(path, read_only, url)
    if reason is not None:
        if not _exists(path, url):
            raise InvalidInput(f"no knowledge base at {path} (and it is opened read-only, {reason}, so none is "
                               f"created); create one with `graphmem init --home {path}`")
        cfg = load_config(path, config)
        store = open_store(path, busy_timeout=cfg.store.busy_timeout, read_only=reason, url=url or None)
        kb = KnowledgeBase(path, cfg, store, clock or utc_now)
        kb.warn(f"knowledge base {path} is read-only ({reason}): reads work; memory use counts, decay and "
                "wiki autosync are skipped, and writes are refused")
        return kb
    created: list[Path] = []  # what this call made, removed again when the store does not open
    if not _exists(path, url):
        if not create:
            raise InvalidInput(f"no knowledge base at {path}; create one with `graphmem init --home {path}`")
        try:
            created += [p for p in (path, path / "wiki") if not p.exists()]
            path.mkdir(parents=True, exist_ok=True)
            (path / "wiki").mkdir(exist_ok=True)
            cfg_path = path / "config.toml"
            if not cfg_path.exists():
                tmp = path / ".config.toml.tmp"
                tmp.write_text(DEFAULT_CONFIG_TOML, encoding="utf-8")
                tmp.replace(cfg_path)
                created.append(cfg_path)
        except OSError as exc:
            raise BackendError(f"cannot create knowledge base at {path}: {exc.strerror}") from None
    cfg = load_config(path, config)
    try:
        store = open_store(path, busy_timeout=cfg.store.busy_timeout, url=url or None)
    except GraphmemError:
        if url:  # a server that cannot be reached leaves no half-made folder behind
            _remove_created(created)
        raise
    kb = KnowledgeBase(path, cfg, store, clock or utc_now)
    if url and (path / "graph.db").exists():
        kb.warn(f"{path / 'graph.db'} is not used: the store is at {redact_url(url)} ([store] url or "
                "GRAPHMEM_STORE); copy it there with `graphmem migrate --to URL`")
    return kb
