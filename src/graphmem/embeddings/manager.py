"""One knowledge base's embeddings: the configured model (loaded lazily), the model lock, the
in-memory vector indexes, embedding at ingest, and reindexing.

A knowledge base never mixes models: the first model that stores vectors is recorded; a
different configured model is refused with a message naming both and the reindex command.
Texts already embedded (same text hash, same model) are never embedded again. Without a
usable model, retrieval runs on BM25 + graph and says so once.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import Conflict
from ..ingest.chunking import embedding_text
from ..text import content_hash
from ..trust import endpoint_api_key
from .base import Embedder, EmbedderUnavailable
from .registry import backend_for, load_embedder, model_id_for, parse_spec

if TYPE_CHECKING:
    from ..context import Context
    from ..retrieval.vector_index import VectorIndex

__all__ = ["EmbeddingManager", "META_KEY", "FIX_HINT"]

FIX_HINT = "fix: go online once, or `graphmem init --embedder model2vec:DIR`"

# Specs whose load failure this process has already reported: one line per command, not one per
# knowledge base opened (the compat layers and the CLI may open several).
_REPORTED: set[str] = set()

META_KEY = "embeddings.model"


_EMBED_SLICE = 4096  # items embedded and stored per step (bounds the vectors held at once)


class EmbeddingManager:
    """Embedding services of one open knowledge base."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.spec: str = ctx.config.embeddings.model
        parsed = parse_spec(self.spec)
        self.model_id: str | None = model_id_for(*parsed) if parsed else None
        self._embedder: Embedder | None = None
        self._loaded = False
        self._lock = threading.Lock()
        self._indexes: dict[str, VectorIndex] = {}
        self._prefetched: dict[str, np.ndarray] = {}  # text hash -> vector, for the next writes
        self._stored_model: tuple[object, str | None] | None = None  # (read stamp, stored model)
        # Item kinds other faces embed (skills, memories): kind -> fetch(after_rowid, limit)
        # returning ``[(rowid, item_id, text)]`` in rowid order, for reindex.
        self._sources: dict[str, Callable[[int, int], Sequence[tuple[int, str, str]]]] = {}
        self.note: str | None = None if parsed else "embeddings are off (embeddings.model = none); " \
                                                    "searching with BM25 + graph"
        # True once the note went out as a warning (this knowledge base or an earlier one in
        # this process): search results and other faces then do not repeat it.
        self.note_reported = False

    # -- the model --------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder | None:
        """The loaded model, or None when off or unavailable (the reason is in ``note``)."""
        with self._lock:
            if not self._loaded:
                cfg = dataclasses.asdict(self.ctx.config.embeddings)  # the backend's options, as plain data
                parsed = parse_spec(self.spec)
                if parsed is not None and parsed[0] == "openai":
                    # Raises (and loads nothing) when config.toml chose the address and the user
                    # has not trusted it; asked again on every use until they do.
                    cfg["api_key"] = endpoint_api_key(self.ctx.config, self.ctx.home, "embeddings") or ""
                self._loaded = True
                try:
                    self._embedder = load_embedder(self.spec, cfg)
                except EmbedderUnavailable as exc:
                    self.note = f"no embedding model ({exc}); searching with BM25 + graph; {FIX_HINT}"
                    self.note_reported = True
                    if self.spec in _REPORTED:
                        self.ctx.notes.append(self.note)
                    else:
                        _REPORTED.add(self.spec)
                        self.ctx.warn(self.note)
                if self._embedder is not None:
                    self.model_id = self._embedder.model_id
            return self._embedder

    @property
    def contextual(self) -> bool:
        """Whether the configured backend declares contextual vectors (False when embeddings are off)."""
        backend = backend_for(self.spec)
        return bool(backend and backend.contextual)

    def stored_model(self) -> str | None:
        """The model this knowledge base's vectors were made with (None before any)."""
        # asked several times per search: read again only when the store's read stamp moved
        stamp = self.ctx.store.read_stamp()
        if stamp is not None and self._stored_model is not None and self._stored_model[0] == stamp:
            return self._stored_model[1]
        model = self.ctx.store.get_meta(META_KEY)
        self._stored_model = None if stamp is None else (stamp, model)
        return model

    def check_model(self) -> None:
        """Raise Conflict when the configured model differs from the stored vectors' model."""
        stored = self.stored_model()
        if stored and self.model_id and stored != self.model_id:
            raise Conflict(
                f"this knowledge base's vectors were made with '{stored}' but the configured embedding model is "
                f"'{self.model_id}'; run `graphmem reindex` to re-embed everything with '{self.model_id}', or set "
                f"embeddings.model back to the model of '{stored}'"
            )

    # -- encoding and storing ------------------------------------------------------------------

    def embed_query(self, text: str) -> np.ndarray | None:
        """Unit query vector, or None without a usable model."""
        if self.model_id is None:
            return None
        self.check_model()
        emb = self.embedder
        if emb is None:
            return None
        return emb.encode([text])[0]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Encode texts ahead of the writes that will store them: one batched model call for a
        whole ingest batch (outside its transaction) instead of one small call per document."""
        if self.model_id is None or not texts:
            return
        emb = self.embedder
        if emb is None:
            return
        todo = {content_hash(t): t for t in texts}
        todo = {h: t for h, t in todo.items() if h not in self._prefetched}
        if todo:
            vecs = emb.encode(list(todo.values()))
            self._prefetched.update(zip(todo, vecs))

    def clear_prefetched(self) -> None:
        """Forget prefetched vectors (after the batch that used them)."""
        self._prefetched.clear()

    def embed_items(self, item_kind: str, items: Sequence[tuple[str, str]]) -> int:
        """Embed and store ``(item_id, text)`` pairs not yet embedded with this text.

        Call inside the write transaction of the operation that created the items.
        """
        if not items or self.model_id is None:
            return 0
        self.check_model()
        emb = self.embedder
        if emb is None:
            return 0
        store = self.ctx.store
        done = 0
        # In slices: one 200 MB document has 500k chunks, and their vectors (float32 from the
        # model, then float16 rows and their bytes) all at once took over 1 GB.
        for start in range(0, len(items), _EMBED_SLICE):
            done += self._embed_slice(item_kind, items[start:start + _EMBED_SLICE], emb)
        if done and self.stored_model() is None:
            store.set_meta(META_KEY, emb.model_id)
        return done

    def _embed_slice(self, item_kind: str, items: Sequence[tuple[str, str]], emb: Any) -> int:
        store = self.ctx.store
        hashes = {i: content_hash(t) for i, t in items}
        have = store.vector_hashes(item_kind, [i for i, _ in items], emb.model_id)
        todo = [(i, t) for i, t in items if have.get(i) != hashes[i]]
        if not todo:
            return 0
        missing = [t for i, t in todo if hashes[i] not in self._prefetched]
        fresh = dict(zip((content_hash(t) for t in missing), emb.encode(missing))) if missing else {}
        # Every hash is in one of the two: prefetched earlier or encoded just now.
        rows = [self._prefetched[hashes[i]] if hashes[i] in self._prefetched else fresh[hashes[i]] for i, _ in todo]
        vecs = np.stack(rows).astype(np.float16)
        store.upsert_vectors(item_kind, emb.model_id, emb.dim,
                             [(i, hashes[i], v.tobytes()) for (i, _), v in zip(todo, vecs)])
        return len(todo)

    def vector_index(self, item_kind: str) -> VectorIndex | None:
        """The in-memory index of one kind for the stored model (None without vectors)."""
        model = self.stored_model()
        if model is None:
            return None
        from ..retrieval.vector_index import VectorIndex

        idx = self._indexes.get(item_kind)
        if idx is None or idx.model != model:
            idx = self._indexes[item_kind] = VectorIndex(
                self.ctx.store, item_kind, model, self.ctx.config.embeddings.ann_threshold,
                self.ctx.home / "vectors")
        return idx

    # -- reindex ----------------------------------------------------------------------------------

    def register_source(self, item_kind: str,
                        fetch: Callable[[int, int], Sequence[tuple[int, str, str]]]) -> None:
        """Let :meth:`reindex` re-embed another item kind: ``fetch(after_rowid, limit)`` returns
        ``[(rowid, item_id, text)]`` with rowid > after_rowid, in rowid order."""
        self._sources[item_kind] = fetch

    def reindex(self, on_progress: Callable[[int, int], None] | None = None, batch: int = 512) -> dict[str, int]:
        """Drop every vector and re-embed chunks (latest versions) and entities with the
        configured model. Each batch is one transaction; the model is recorded first."""
        emb = self.embedder
        if emb is None:
            raise Conflict(f"cannot reindex: {self.note or 'no embedding model configured'}")
        store = self.ctx.store
        stats = store.stats()
        total = stats["chunks"] + stats["entities"]
        with store.transaction():
            dropped = store.delete_vectors()
            store.set_meta(META_KEY, emb.model_id)
        self._indexes.clear()
        done = 0

        def embed_all(kind: str, fetch: Callable[[int], Sequence[tuple[int, str, str]]]) -> int:
            # Batches in row order, one transaction each: an interrupted reindex keeps what it did.
            nonlocal done
            count, after = 0, 0
            while rows := fetch(after):
                with store.transaction():
                    count += self.embed_items(kind, [(item_id, text) for _, item_id, text in rows])
                after = rows[-1][0]
                done += len(rows)
                if on_progress:
                    on_progress(min(done, total), total)
            return count

        def chunk_rows(after: int) -> Sequence[tuple[int, str, str]]:
            # The text a chunk was embedded from at ingest: its document's title as a header.
            rows = store.chunks_to_embed(True, after, batch)
            info = store.chunk_info([r[1] for r in rows])
            return [(r[0], r[1], embedding_text(info[r[1]][2], r[2]) if r[1] in info else r[2]) for r in rows]

        chunks = embed_all("chunk", chunk_rows)
        entities = 0
        if self.ctx.config.embeddings.embed_entities:
            entities = embed_all("entity", lambda after: store.nodes_to_embed("entity", after, batch))
        relations = 0
        if self.ctx.config.embeddings.embed_relations:
            relations = embed_all("relation", lambda after: store.relations_to_embed(after, batch))
        others = {kind: embed_all(kind, lambda after, f=fetch: f(after, batch))  # type: ignore[misc]
                  for kind, fetch in self._sources.items()}
        with store.transaction():
            store.append_event("vectors.reindexed", emb.model_id, self.ctx.now(),
                               {"chunks": chunks, "entities": entities, "relations": relations,
                                "dropped": dropped, **others})
        return {"model": emb.model_id, "chunks": chunks, "entities": entities, "relations": relations,  # type: ignore[dict-item]
                "dropped": dropped, **others}
