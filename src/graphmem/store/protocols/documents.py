"""Documents (immutable versions) and their chunks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from ...models import Chunk, ChunkHit, Document
from ..rows import ChunkInfo, DocSource, LostEvidence

__all__ = ["DocumentStore", "DEFAULT_TITLE_WEIGHT"]

DEFAULT_TITLE_WEIGHT = 4.0
"""BM25F weight of a chunk's title against its text (1.0 = a title word counts as a text word).
Measured on MuSiQue and 2Wiki together (docs/benchmarks.md, "Retrieval on unseen data")."""


@runtime_checkable
class DocumentStore(Protocol):
    """Document versions, their chunks, and full-text search over chunks."""

    def insert_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Store a new version with its chunks; it becomes the latest (the previous latest stays,
        ``is_latest`` False). The same ``(doc_id, version)`` twice, or a chunk id twice: BackendError."""
        ...

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """A version with its content; the latest when ``version`` is None. Missing: None."""
        ...

    def document_versions(self, doc_id: str) -> list[Document]:
        """Every version, oldest first, content omitted (``""``). Missing: ``[]``."""
        ...

    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        """Latest versions by doc id, content omitted; ``limit`` None: all."""
        ...

    def latest_documents(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        """Latest version per id, content and metadata omitted."""
        ...

    def delete_document(self, doc_id: str) -> LostEvidence:
        """Delete every version with its chunks, mentions and evidence; returns the nodes and edges
        that lost evidence (for :meth:`~graphmem.store.protocols.EvidenceStore.prune_unsupported`).
        Missing: nothing deleted, empty sets."""
        ...

    def document_hashes(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Content hash of each latest version."""
        ...

    def document_source_files(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Absolute source file per latest version (metadata ``source_file``), only where recorded
        as a non-empty string."""
        ...

    def documents_by_source_prefix(self, prefix: str) -> list[DocSource]:
        """Latest versions whose source starts with ``prefix`` literally (``%`` and ``_`` are plain
        characters), any order."""
        ...

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """Chunks by id (any version)."""
        ...

    def document_chunks(self, doc_id: str, version: int) -> list[Chunk]:
        """Chunks of one version, by ordinal. Missing: ``[]``."""
        ...

    def chunk_info(self, chunk_ids: Iterable[str]) -> dict[str, ChunkInfo]:
        """``(doc_id, version, title, is_latest)`` per chunk."""
        ...

    def search_chunks(self, text: str, k: int = 10, latest_only: bool = True,
                      title_weight: float = DEFAULT_TITLE_WEIGHT) -> list[ChunkHit]:
        """BM25F over two fields of every chunk, its text and its document's title, best first, at
        most ``k``, with a snippet of the text marking matched words in ``[...]``; ``latest_only``:
        chunks of latest versions only.

        The rule (every backend the same): ``score = sum over matched query words t of idf(t) *
        tf'(t) * (k1 + 1) / (tf'(t) + k1 * (1 - b + b * len / avg_len))`` with ``tf' = tf(text) +
        title_weight * tf(title)``, ``len`` = words of text + title, ``idf(t) = max(ln((N - n(t) +
        0.5) / (n(t) + 0.5)), 1e-6)`` (n: chunks with t in either field), k1 = 1.2, b = 0.75. A chunk
        matches when any query word is in its text or its title."""
        ...

    def rank_chunks(self, text: str, k: int = 10, latest_only: bool = True,
                    keep_scores: bool = False, title_weight: float = DEFAULT_TITLE_WEIGHT
                    ) -> list[tuple[str, float]]:
        """``(chunk id, score)`` of :meth:`search_chunks`' hits, in its order, without snippets;
        ``keep_scores``: :meth:`chunk_bm25` of the same text follows (a hint, never a change of
        the answer)."""
        ...

    def chunk_bm25(self, text: str, chunk_ids: Sequence[str],
                   title_weight: float = DEFAULT_TITLE_WEIGHT) -> dict[str, float]:
        """:meth:`search_chunks`' score of ``text`` for the given chunks (chunks matching no word,
        and missing ids, absent)."""
        ...
