"""Ingest one document with its extraction: the document, its chunks, entities, relations and
the evidence tying each of them to the exact text that supports it — in ONE transaction.

Rules (DESIGN.md, extraction contract):

* the same content (and title, when one is given) under the same id again is a no-op that says so;
  new content or a new title is a new version, and the old version with its evidence stays readable;
* relations below ``graph.min_confidence`` are skipped and reported; so are relations naming
  an entity that is neither in the document's entity list nor in the graph;
* evidence spans are character offsets of the supporting text in the document, found
  exactly, else after case/whitespace folding; a quote that cannot be found is reported and
  gets no span (its provenance points at the best-overlapping chunk, never at made-up offsets);
* inverse relation phrases swap the ends ("wheel is part of car" -> car contains wheel).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..context import AFTER_INGEST
from ..errors import InvalidInput
from ..extraction import EntitySpec, Extraction, RelationSpec, check_json_depth
from ..models import ENTITY, Chunk, Document, Edge, Mention, Node, Provenance
from ..ontology import GENERIC_TYPE
from ..text import content_hash, normalize_name, short_id, unique_names
from .chunking import chunk_spans, embedding_text
from .extractors.base import require_names
from .locate import Locator
from .mention_spans import mention_spans

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["IngestResult", "ingest_document", "validate_document_fields"]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# An id is one line: a newline, CR or tab in it (a file named "new\nline.md") broke every listing that prints ids.
_ID_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class IngestResult:
    """What one ingest did. ``to_dict()`` has the seed's keys plus the rest."""

    doc_id: str
    status: str  # "added" | "new_version" | "unchanged"
    version: int
    chunk_count: int = 0
    nodes_added: int = 0
    edges_added: int = 0
    nodes_linked: int = 0
    edges_supported: int = 0
    provenance_added: int = 0
    mentions_added: int = 0
    vectors_added: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: ``{doc_id, chunk_count, nodes_added, edges_added, warnings, ...}``."""
        return {
            "doc_id": self.doc_id,
            "chunk_count": self.chunk_count,
            "nodes_added": self.nodes_added,
            "edges_added": self.edges_added,
            "warnings": list(self.warnings),
            "status": self.status,
            "version": self.version,
            "nodes_linked": self.nodes_linked,
            "edges_supported": self.edges_supported,
            "provenance_added": self.provenance_added,
            "mentions_added": self.mentions_added,
            "vectors_added": self.vectors_added,
        }


def validate_document_fields(
    doc_id: Any, title: Any, source: Any, raw_content: Any, metadata: Any
) -> tuple[str, str, str, str, dict[str, Any]]:
    """Check the document's own fields; raise InvalidInput naming the bad one."""
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise InvalidInput("doc_id: expected a non-empty string (e.g. 'doc_001')")
    if _ID_CONTROL.search(doc_id) or len(doc_id) > 512:
        raise InvalidInput(f"doc_id {doc_id!r}: must be at most 512 characters with no control characters")
    for name, value in (("title", title), ("source", source)):
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"{name}: expected a string, got {type(value).__name__}")
    if not isinstance(raw_content, str):
        raise InvalidInput(f"raw_content: expected a string, got {type(raw_content).__name__}")
    if not raw_content.strip():
        raise InvalidInput(f"raw_content of document '{doc_id}' is empty; there is nothing to ingest")
    if "\x00" in raw_content:
        raise InvalidInput(f"raw_content of document '{doc_id}' contains NUL bytes; is it a binary file?")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput(f"metadata: expected an object/dict, got {type(metadata).__name__}")
    check_json_depth(metadata, f"metadata of document '{doc_id}'")
    try:
        metadata = json.loads(json.dumps(dict(metadata), allow_nan=False))  # NaN is not JSON: exports would break
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata of document '{doc_id}' is not JSON-serialisable ({exc})") from None
    return doc_id.strip(), (title or doc_id).strip() or doc_id, (source or "").strip(), raw_content, metadata


def same_version(latest: Document, digest: str, doc_id: str, title: str | None) -> bool:
    """Is a document of content hash ``digest`` and ``title`` what ``latest`` already stores? The title is
    part of what a version indexes (its BM25F column, every chunk's embedding header), so a new title on
    the same text is a new version. No title (None, blank, or the document id, which callers without
    one put in its place: MCP, HTTP, a JSONL record without a title) keeps the stored one."""
    if latest.content_hash != digest:
        return False
    return not _title_given(doc_id, title) or (title or "").strip() == latest.title


def _title_given(doc_id: str, title: str | None) -> bool:
    given = (title or "").strip()
    return bool(given) and given != doc_id.strip()


def _chunks_for(doc: Document, size: int, overlap: int) -> list[Chunk]:
    return [
        Chunk(f"{doc.doc_id}:v{doc.version}:c{i}", doc.doc_id, doc.version, i, s, e, doc.content[s:e])
        for i, (s, e) in enumerate(chunk_spans(doc.content, size, overlap))
    ]


def ingest_document(
    ctx: Context,
    doc_id: str,
    title: str | None,
    source: str | None,
    raw_content: str,
    extraction: Extraction,
    metadata: Mapping[str, Any] | None = None,
) -> IngestResult:
    """Store a document and its extraction with provenance, in one transaction.

    Calls the ``after_ingest(doc_id, node_ids, warnings)`` hook inside the transaction (the wiki
    regenerates the document's pages there)."""
    doc_id, title_s, source_s, content, meta = validate_document_fields(doc_id, title, source, raw_content, metadata)
    require_names(extraction)  # an empty name keys no name row; two of them collided at commit
    store, cfg = ctx.store, ctx.config
    digest = content_hash(content)
    if ctx.embeddings.model_id:  # without a model (embeddings off) there is nothing to mix: no read of the meta row
        ctx.embeddings.check_model()  # refuse to mix embedding models before writing anything
    with store.transaction():
        latest = store.latest_documents([doc_id]).get(doc_id)  # its hash, not its text (rebuilt from chunks)
        if latest is not None and same_version(latest, digest, doc_id, title):
            return IngestResult(
                doc_id, "unchanged", latest.version, chunk_count=latest.chunk_count,
                warnings=[f"document '{doc_id}' is unchanged (same content as version {latest.version}); "
                          "nothing added"],
            )
        if latest is not None and not _title_given(doc_id, title):
            title_s = latest.title  # a new version without a title keeps the one the document has
        now = ctx.now()
        version = 1 if latest is None else latest.version + 1
        doc = Document(doc_id, version, title_s, source_s, content, digest, meta, now)
        chunks = _chunks_for(doc, cfg.chunking.size, cfg.chunking.overlap)
        store.insert_document(doc, chunks)
        result = IngestResult(doc_id, "added" if version == 1 else "new_version", version, chunk_count=len(chunks))
        writer = _GraphWriter(ctx, doc, Locator(content, chunks), result, now)
        writer.add_entities(extraction.entities)
        writer.add_relations(extraction.relations)
        store.insert_provenance(writer.provenance)
        result.provenance_added = len(writer.provenance)
        mentions = writer.mentions(cfg.ingest.max_mentions_per_entity)
        store.insert_mentions(mentions)
        result.mentions_added = len(mentions)
        result.vectors_added = ctx.embeddings.embed_items(
            "chunk", [(c.chunk_id, embedding_text(doc.title, c.text)) for c in chunks])
        if writer.new_nodes and cfg.embeddings.embed_entities:
            result.vectors_added += ctx.embeddings.embed_items("entity", writer.new_nodes)
        if writer.new_edges and cfg.embeddings.embed_relations:
            result.vectors_added += ctx.embeddings.embed_items("relation", writer.new_edges)
        # The document's summary page and its entities' pages (the wiki's hook; per batch in bulk ingest);
        # before the document event, so that the document's event closes its ingest in the log.
        ctx.hooks.call(AFTER_INGEST, doc_id, list(dict.fromkeys(writer.local.values())), result.warnings)
        store.append_event(
            "document.added" if version == 1 else "document.versioned",
            doc_id,
            now,
            {
                "version": version, "title": title_s, "source": source_s, "content_hash": digest,
                "chunks": len(chunks), "nodes_added": result.nodes_added, "edges_added": result.edges_added,
                "provenance_added": result.provenance_added, "warnings": len(result.warnings),
            },
        )
        return result


class _GraphWriter:
    """Resolves entities and relations of one document against the graph and writes them."""

    def __init__(self, ctx: Context, doc: Document, locator: Locator, result: IngestResult, now: str) -> None:
        self.ctx = ctx
        self.store = ctx.store
        self.ontology = ctx.config.ontology
        self.doc = doc
        self.locator = locator
        self.result = result
        self.now = now
        self.local: dict[str, str] = {}  # normalised name/alias -> node id, this document
        self.new_nodes: list[tuple[str, str]] = []  # (node id, name) created by this ingest
        self.new_edges: list[tuple[str, str]] = []  # (edge id, fact text) created by this ingest
        self.provenance: list[Provenance] = []
        self._seen_prov: set[tuple[str, str, int | None, int | None, str]] = set()
        self._types: list[str] | None = None
        self._node_types: dict[str, str] = {}  # node id -> its type, as this ingest knows it
        self._rel_types: set[str] | None = None
        self._type_memo: dict[str, str] = {}  # entity type as given -> as stored
        self._local_ids: set[str] = set()  # the values of self.local
        self._pending_nodes: list[tuple[Node, Sequence[tuple[str, str]]]] = []

    # -- evidence ---------------------------------------------------------------------------

    def _evidence(self, kind: str, item_id: str, quote: str, fallback: str, label: str,
                  confidence: float | None = None) -> None:
        text = quote or fallback
        span = self.locator.span(text) if text else None
        if not text:
            self.result.warnings.append(
                f"{label}: no supporting_text; its evidence cites document '{self.doc.doc_id}' without a span"
            )
        elif span is None and not quote:
            # no quote and the name itself is not in the text: evidence without a span
            self.result.warnings.append(
                f"{label}: no supporting_text and the name does not occur in document '{self.doc.doc_id}'; "
                "stored without an evidence span"
            )
        elif span is None:
            self.result.warnings.append(
                f"{label}: supporting_text not found in document '{self.doc.doc_id}' "
                f"({_clip(quote)!r}); stored without an evidence span"
            )
        pieces: list[tuple[Chunk | None, int | None, int | None]]
        chunks = self.locator.chunks
        if span is not None and len(chunks) == 1 and chunks[0].start <= span[0] and span[1] <= chunks[0].end:
            pieces = [(chunks[0], *span)]  # what pieces() gives for a span inside the only chunk
        elif span is not None:
            # A quote across a chunk boundary is cited once per chunk, each piece inside its chunk:
            # a reader shown a chunk must find the quote in it.
            pieces = list(self.locator.pieces(*span))
        else:
            best = self.locator.best_overlap_chunk(text) if text else None
            pieces = [(best, None, None)]
        for chunk, start, end in pieces:
            piece = text if start is None else self.doc.content[start:end]
            key = (kind, item_id, start, end, piece)
            if key in self._seen_prov:
                continue
            self._seen_prov.add(key)
            self.provenance.append(
                Provenance(kind, item_id, self.doc.doc_id, self.doc.version, chunk.chunk_id if chunk else None,
                           start, end, piece, confidence, created_at=self.now)
            )

    # -- entities ---------------------------------------------------------------------------

    def _entity_type(self, raw: str) -> str:
        known = self._type_memo.get(raw)
        if known is not None:
            return known
        canonical = self.ontology.normalize_type(raw)
        if self._types is None:
            self._types = self.store.ontology_types(ENTITY)
        chosen, note = self.ontology.cap_type(canonical, self._types)
        if note:
            self.result.warnings.append(note)
        if chosen not in self._types:
            self.store.add_ontology_type(ENTITY, chosen, self.now)
            self._types.append(chosen)
        if not note:  # a registered type stays what it is for the rest of the document (a remap warns each time)
            self._type_memo[raw] = chosen
        return chosen

    def add_entities(self, entities: Sequence[EntitySpec]) -> None:
        """Resolve each entity against this document and the graph, create the new ones, attach new aliases.

        The graph is asked once for every name of the document, and the new nodes are written in one batch
        (before the next alias write, so that rows are numbered as one call per entity would number them):
        what a name resolves to follows from the names seen so far, which ``owner`` tracks.

        An entity is found by its own name first (in this document or the graph), then by its aliases. A name
        another entity owns is refused (with a warning naming the owner) and stays out of this document's name
        map: the document's relations naming it resolve, through the graph, to the entity that owns it — the
        one owner the store knows — never to the entity that claimed it."""
        specs = [(ent, [(ent.name, normalize_name(ent.name))] + [(a, normalize_name(a)) for a in ent.aliases])
                 for ent in entities]
        owner = self.store.find_nodes(ENTITY, list(dict.fromkeys(n for _, names in specs for _, n in names)))
        type_memo = self._type_memo
        for i, (ent, names) in enumerate(specs):
            label = f"entities[{i}] '{ent.name}'"
            # _resolve's first rule and _entity_type's memo written out: most entities are settled by them
            node_id = owner.get(names[0][1])
            if node_id is None and len(names) > 1:
                node_id = self._resolve(names, owner)
            etype = type_memo.get(ent.type)
            if etype is None:
                etype = self._entity_type(ent.type)
            if node_id is None:
                node_id = short_id("n_", ENTITY, names[0][1])
                node = Node(node_id, ENTITY, ent.name, etype, created_at=self.now, updated_at=self.now)
                own = unique_names(names)
                self._pending_nodes.append((node, own))
                for _, n in own:
                    owner[n] = node_id
                self._node_types[node_id] = etype
                self.new_nodes.append((node_id, ent.name))
                self.store.append_event("node.added", node_id, self.now,
                                        {"kind": ENTITY, "name": ent.name, "type": etype, "doc_id": self.doc.doc_id})
                self.result.nodes_added += 1
            else:
                fresh = [(a, n) for a, n in unique_names(names) if owner.get(n) != node_id]
                taken = [n for _, n in fresh if n in owner]
                if len(taken) < len(fresh):  # names no node has yet: written now, in order
                    self._flush_nodes()
                    self.store.add_names(node_id, ENTITY, [(a, n) for a, n in fresh if n not in owner])
                    owner.update((n, node_id) for _, n in fresh if n not in owner)
                if taken:
                    owners = self._names_of({owner[n] for n in taken})
                    self.result.warnings.append(
                        f"{label}: alias(es) {taken} already name another entity ({owners}); not added as aliases "
                        "(this document's relations naming them go to that entity)"
                    )
                first_here = node_id not in self._local_ids
                if first_here:
                    self.result.nodes_linked += 1
                self._settle_type(node_id, etype, label, report=first_here)
            # Only the names this node owns: a refused alias would send the document's relations (and mentions)
            # naming it to the claimant instead of its owner. Every value of ``local`` is thus its ``owner`` value.
            for _, n in names:
                if owner.get(n) == node_id:
                    self.local.setdefault(n, node_id)
            self._local_ids.add(node_id)
            self._evidence("node", node_id, ent.supporting_text, ent.name, label)
        self._flush_nodes()

    def _resolve(self, names: Sequence[tuple[str, str]], owner: Mapping[str, str]) -> str | None:
        """The node an entity is: its own name's owner (this document's or the graph's), else its first alias
        known to this document, else its first alias known to the graph. The name before the aliases, so that an
        alias an earlier entity of the document claimed does not decide which node a known name is."""
        first = names[0][1]
        if first in owner:
            return owner[first]
        aliases = [n for _, n in names[1:]]
        return next((self.local[n] for n in aliases if n in self.local), None) or next(
            (owner[n] for n in aliases if n in owner), None)

    def _names_of(self, node_ids: set[str]) -> str:
        """``'name'`` of each node, for a warning (nodes created by this ingest may not be written yet)."""
        created = {nid: name for nid, name in self.new_nodes if nid in node_ids}
        rest = self.store.node_labels(node_ids - created.keys()) if node_ids - created.keys() else {}
        labels = {**created, **{nid: label[0] for nid, label in rest.items()}}
        return ", ".join(repr(labels.get(nid, nid)) for nid in sorted(node_ids, key=lambda x: labels.get(x, x)))

    def _flush_nodes(self) -> None:
        """Write the nodes created since the last flush (before anything reads or extends them)."""
        pending, self._pending_nodes = self._pending_nodes, []
        self.store.insert_nodes(pending)

    def _settle_type(self, node_id: str, etype: str, label: str, report: bool) -> None:
        """An existing entity meets a type: a specific type replaces the generic one (an agent's
        "service" beats the offline extractor's "concept"), the generic one never replaces a
        specific type, and two specific types keep the stored one (with a warning the first time
        this document names the entity, if ``report``)."""
        if etype == GENERIC_TYPE or self._node_types.get(node_id) == etype:
            return
        self._flush_nodes()
        existing = self.store.get_nodes([node_id])[node_id]
        self._node_types[node_id] = existing.type
        if existing.type == etype:
            return
        if existing.type == GENERIC_TYPE:
            existing.type, existing.updated_at = etype, self.now
            self.store.update_node(existing)
            self._node_types[node_id] = etype
            self.store.append_event("node.retyped", node_id, self.now,
                                    {"old_type": GENERIC_TYPE, "type": etype, "doc_id": self.doc.doc_id})
            return
        if not report:
            return
        self.result.warnings.append(
            f"{label}: type '{etype}' differs from the stored type '{existing.type}'; kept '{existing.type}' "
            f"(to change it: `graphmem entity retype '{existing.name}' {etype}` or kb.graph.retype)"
        )

    # -- mentions -----------------------------------------------------------------------------

    def mentions(self, per_entity: int) -> list[Mention]:
        """Every occurrence (whole words, any case, optional plural) of each entity's names
        (:func:`.mention_spans.mention_spans`: longer names first; an entity only written inside
        longer names is mentioned there)."""
        if not self.local:
            return []
        # Most documents are one chunk: a span inside it needs no search (chunk_for_span would return it).
        one = self.locator.chunks[0] if len(self.locator.chunks) == 1 else None
        chunk_for_span = self.locator.chunk_for_span

        def chunk_of(i: int, j: int) -> Chunk | None:
            return one if one is not None and one.start <= i and j <= one.end else chunk_for_span(i, j)

        doc_id, version = self.doc.doc_id, self.doc.version
        return [Mention(nid, chunk.chunk_id, doc_id, version, i, j)
                for nid, i, j, chunk in mention_spans(self.doc.content, self.local, per_entity, chunk_of)]

    # -- relations --------------------------------------------------------------------------

    def add_relations(self, relations: Sequence[RelationSpec]) -> None:
        """Check each relation, then create the new edges in one batch and strengthen the existing ones.

        The first pass resolves ends and types (the graph asked once for the names this document does not
        define, once for the edges), the second writes in the relations' order, so warnings and rows come
        out as one relation at a time would give them."""
        min_conf = self.ctx.config.graph.min_confidence
        unknown = {normalize_name(n) for rel in relations for n in (rel.source, rel.target)} - self.local.keys()
        found = self.store.find_nodes(ENTITY, sorted(unknown)) if unknown else {}
        checked: list[tuple[str, RelationSpec, str | None, tuple[str, str, str] | None]] = []
        for i, rel in enumerate(relations):
            label = f"relations[{i}] '{rel.source} --[{rel.type}]--> {rel.target}'"
            checked.append((label, rel, *self._check_relation(rel, label, min_conf, found)))
        existing = self.store.find_edges(t for *_, t in checked if t is not None)
        new_edges: dict[tuple[str, str, str], Edge] = {}
        for label, rel, skipped, triple in checked:
            if skipped is not None or triple is None:
                self.result.warnings.append(skipped or f"{label}: skipped")
                continue
            src, rtype, dst = triple
            if rtype not in self._relation_types():
                self.store.add_ontology_type("relation", rtype, self.now)
                self._relation_types().add(rtype)
            edge = new_edges.get(triple) or existing.get(triple)
            if edge is None:
                edge = Edge(short_id("r_", src, rtype, dst), src, dst, rtype, rel.confidence,
                            created_at=self.now, updated_at=self.now)
                new_edges[triple] = edge
                self.new_edges.append((edge.id, fact_text(rel.source, rel.type, rel.target)))
                self.store.append_event("edge.added", edge.id, self.now, {
                    "source": src, "target": dst, "type": rtype, "confidence": rel.confidence,
                    "doc_id": self.doc.doc_id,
                })
                self.result.edges_added += 1
            else:
                if rel.confidence > edge.confidence:
                    edge.confidence = rel.confidence
                    edge.updated_at = self.now
                    if triple not in new_edges:  # a new edge is written below with what it has by then
                        self.store.update_edge(edge)
                self.result.edges_supported += 1
            self._evidence("edge", edge.id, rel.supporting_text, "", label, rel.confidence)
        self.store.insert_edges(list(new_edges.values()))

    def _check_relation(self, rel: RelationSpec, label: str, min_conf: float, found: Mapping[str, str]
                        ) -> tuple[str | None, tuple[str, str, str] | None]:
        """``(why it is skipped, None)`` or ``(None, (source id, normalised type, target id))``."""
        if rel.confidence < min_conf:
            return f"{label}: confidence {rel.confidence:g} is below the minimum {min_conf:g}; skipped", None
        norm = self.ontology.normalize_relation(rel.type)
        if not norm.type:
            return f"{label}: relation type is empty after normalisation; skipped", None
        ends = [self.local.get(n) or found.get(n) for n in (normalize_name(rel.source), normalize_name(rel.target))]
        missing = [n for n, v in zip((rel.source, rel.target), ends) if v is None]
        if missing:
            return (f"{label}: entity {', '.join(repr(m) for m in missing)} is neither in this document's entity "
                    "list nor in the graph; skipped (add it to 'entities')"), None
        src, dst = ends
        assert src is not None and dst is not None
        if norm.swapped:
            src, dst = dst, src
        if src == dst:
            return f"{label}: source and target are the same entity; skipped", None
        return None, (src, norm.type, dst)

    def _relation_types(self) -> set[str]:
        if self._rel_types is None:
            self._rel_types = set(self.store.ontology_types("relation"))
        return self._rel_types


def fact_text(source: str, relation_type: str, target: str) -> str:
    """What a relation's vector encodes: "subject relation object" as stated (HippoRAG 2's fact
    form); reindex rebuilds it from the stored names and type."""
    return f"{source} {relation_type.replace('_', ' ')} {target}"


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
