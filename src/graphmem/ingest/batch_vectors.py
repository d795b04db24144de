"""The vectors of an ingest batch, computed ahead of its transaction: its chunks, entity names and
relation facts embedded in one model call (the writer then stores them without calling the model again)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, wait
from typing import TYPE_CHECKING, Any

from .chunking import chunk_spans, embedding_text
from .core import fact_text
from .extractors.base import ExtractionError, SourceDocument

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["PREFETCH_MAX", "await_extractions", "prefetch_vectors"]

PREFETCH_MAX = 8192  # texts embedded ahead of a batch (their vectors are held until it is written)


def await_extractions(ctx: Context, batch: Sequence[tuple[SourceDocument, Future[Any]]]) -> bool:
    """Wait for the batch's extractions when its prefetch will embed their names (the writer waits for them
    right after anyway): skipping the unfinished ones left their names to ~20 small model calls per batch,
    each paying the tokenizer's and the model's per-call cost. True when Ctrl-C came during the wait (a slow
    extractor, e.g. an LLM): caught here, so that the documents already extracted are still written."""
    wants_names = ctx.config.embeddings.embed_entities or ctx.config.embeddings.embed_relations
    if ctx.embeddings.model_id is None or not wants_names:
        return False
    try:
        wait([fut for _, fut in batch])
    except KeyboardInterrupt:
        return True
    return False


def prefetch_vectors(ctx: Context, batch: Sequence[tuple[SourceDocument, Future[Any]]]) -> None:
    """Embed the batch's chunks, entity names and relation facts in one model call, before its transaction
    (the names of the finished extractions: all of them, after :func:`await_extractions`)."""
    ctx.embeddings.clear_prefetched()
    if ctx.embeddings.model_id is None:
        return
    wants_names = ctx.config.embeddings.embed_entities or ctx.config.embeddings.embed_relations
    size, overlap = ctx.config.chunking.size, ctx.config.chunking.overlap
    texts: list[str] = []
    for doc, fut in batch:
        if len(texts) >= PREFETCH_MAX:  # a huge document: embed_items encodes the rest in slices
            break
        texts += [embedding_text((doc.title or doc.doc_id).strip() or doc.doc_id, doc.text[s:e])
                  for s, e in chunk_spans(doc.text, size, overlap)[:PREFETCH_MAX - len(texts)]]
        if wants_names and fut.done() and not fut.cancelled() and fut.exception() is None:
            outcome = fut.result()
            if not isinstance(outcome, ExtractionError) and ctx.config.embeddings.embed_entities:
                texts += [e.name for e in outcome[0].entities]
            if not isinstance(outcome, ExtractionError) and ctx.config.embeddings.embed_relations:
                texts += [fact_text(r.source, r.type, r.target) for r in outcome[0].relations]
    ctx.embeddings.prefetch(texts)
