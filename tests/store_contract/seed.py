"""Rows for the contract tests, written through the store's own write methods."""

from __future__ import annotations

from graphmem.models import Chunk, Document, Edge, Mention, Node, Provenance
from graphmem.store import Store

T0 = "2026-01-01T00:00:00.000Z"
T1 = "2026-01-02T00:00:00.000Z"
T2 = "2026-01-03T00:00:00.000Z"


def document(store: Store, doc_id: str, texts: list[str], version: int = 1, title: str = "Title",
             source: str = "src", metadata: dict[str, object] | None = None,
             content_hash: str | None = None) -> tuple[Document, list[Chunk]]:
    """A document version whose chunks are ``texts`` (joined by a space), stored in one transaction."""
    content = " ".join(texts)
    chunks: list[Chunk] = []
    pos = 0
    for i, text in enumerate(texts):
        chunks.append(Chunk(f"{doc_id}:v{version}:c{i}", doc_id, version, i, pos, pos + len(text), text))
        pos += len(text) + 1
    doc = Document(doc_id, version, title, source, content, content_hash or f"h-{doc_id}-{version}",
                   dict(metadata or {}), T0)
    with store.transaction():
        store.insert_document(doc, chunks)
    return doc, chunks


def node(store: Store, node_id: str, name: str, kind: str = "entity", type: str = "thing",
         aliases: tuple[str, ...] = (), manual: bool = False) -> Node:
    """A node named ``name`` (normalised: lower case) with ``aliases``."""
    n = Node(node_id, kind, name, type, created_at=T0, updated_at=T0, manual=manual)
    with store.transaction():
        store.insert_node(n, [(a, a.lower()) for a in (name, *aliases)])
    return n


def edge(store: Store, source: str, type: str, target: str, confidence: float = 0.8, manual: bool = False,
         edge_id: str | None = None) -> Edge:
    """An edge ``source --type--> target``."""
    e = Edge(edge_id or f"e:{source}:{type}:{target}", source, target, type, confidence, T0, T0, manual=manual)
    with store.transaction():
        store.insert_edge(e)
    return e


def evidence(store: Store, item_kind: str, item_id: str, chunk: Chunk, text: str | None = None,
             confidence: float | None = 0.9) -> Provenance:
    """One evidence record citing ``chunk``."""
    quote = chunk.text if text is None else text
    start = chunk.text.find(quote)
    p = Provenance(item_kind, item_id, chunk.doc_id, chunk.version, chunk.chunk_id, chunk.start + start,
                   chunk.start + start + len(quote), quote, confidence, created_at=T0)
    with store.transaction():
        store.insert_provenance([p])
    return p


def mention(store: Store, node_id: str, chunk: Chunk, word: str) -> Mention:
    """An occurrence of ``word`` in ``chunk`` naming ``node_id``."""
    start = chunk.start + chunk.text.index(word)
    m = Mention(node_id, chunk.chunk_id, chunk.doc_id, chunk.version, start, start + len(word))
    with store.transaction():
        store.insert_mentions([m])
    return m


def raw_sql(store: Store, sql: str) -> None:
    """Run ``sql`` on the store's database behind its back (inside its transaction): for the tests that
    damage a store on purpose. Backend-specific by nature."""
    if store.backend == "postgres":
        store._exec(sql)  # type: ignore[attr-defined]
    else:
        store.conn.execute(sql)  # type: ignore[attr-defined]
