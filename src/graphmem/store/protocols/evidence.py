"""Evidence: provenance records behind nodes and edges, and entity mentions in chunks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from ...models import Mention, Provenance
from ..rows import ChunkOffset, Claim, NodeDocuments, PruneResult

__all__ = ["EvidenceStore"]


@runtime_checkable
class EvidenceStore(Protocol):
    """Which text supports which node or edge (``item_kind`` is ``"node"`` or ``"edge"``), and where
    entities occur."""

    # -- provenance -------------------------------------------------------------------------

    def insert_provenance(self, records: Sequence[Provenance]) -> None:
        """Append evidence records (``id`` and nothing else is assigned by the store). A record
        naming a missing document version: BackendError."""
        ...

    def provenance_for(self, item_kind: str, item_ids: Iterable[str], limit_per_item: int | None = None
                       ) -> dict[str, list[Provenance]]:
        """Evidence per item, newest first, at most ``limit_per_item`` each (None: all); items
        without evidence absent."""
        ...

    def first_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, Provenance]:
        """The oldest evidence record of each item that has one."""
        ...

    def count_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, int]:
        """Evidence count per item that has any."""
        ...

    def prune_unsupported(self, node_ids: Iterable[str], edge_ids: Iterable[str]) -> PruneResult:
        """Among the given items, delete edges left without evidence, then nodes left without
        evidence and without edges (the ends of removed edges are considered too); ``manual`` items
        stay. Surviving non-manual edges take the confidence of their best remaining evidence.
        Returns the removed ids; missing ids are ignored."""
        ...

    # -- mentions ---------------------------------------------------------------------------

    def insert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Record entity occurrences. A mention of a missing node or chunk: BackendError."""
        ...

    def mentions_of(self, node_ids: Iterable[str], limit_per_node: int | None = None) -> dict[str, list[Mention]]:
        """Occurrences per entity, newest first, at most ``limit_per_node`` each."""
        ...

    def chunk_mentions(self, chunk_ids: Iterable[str]) -> dict[str, list[Mention]]:
        """Occurrences per chunk, in insertion order."""
        ...

    def entities_chunks(self, node_ids: Iterable[str], limit_per_node: int) -> dict[str, list[ChunkOffset]]:
        """Distinct chunks of latest document versions mentioning each entity, most recently
        mentioned first, at most ``limit_per_node``, with the entity's first offset there."""
        ...

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        """Distinct entities mentioned per chunk."""
        ...

    def entity_chunk_counts(self, node_ids: Iterable[str]) -> dict[str, int]:
        """Number of distinct chunks (any version) mentioning each entity that has a mention."""
        ...

    # -- per-document evidence (bounded reads for generated pages) ---------------------------

    def node_documents(self, node_id: str, limit: int) -> NodeDocuments:
        """Documents whose evidence names the node, first named first, at most ``limit``, each with the
        highest version naming it; ``more`` when there are others. Missing: ``([], False)``."""
        ...

    def document_claims(self, doc_id: str, version: int, limit: int) -> list[Claim]:
        """Edges a document version gives evidence for, in the order first stated, at most ``limit``,
        each with that version's first evidence."""
        ...

    def document_claim_ids(self, doc_id: str, version: int) -> set[str]:
        """Ids of the edges a document version gives evidence for."""
        ...

    def document_entity_ids(self, doc_id: str, version: int, limit: int) -> list[str]:
        """Nodes a document version gives evidence for, in the order first named, at most ``limit``."""
        ...

    def edges_supported_by(self, edge_ids: Iterable[str], doc_id: str, version: int) -> set[str]:
        """Those of ``edge_ids`` with evidence in this document version."""
        ...
