"""Turning text into documents, chunks, entities and relations with provenance."""

from .chunking import chunk_spans, split_sentences
from .core import IngestResult, ingest_document

__all__ = ["IngestResult", "chunk_spans", "ingest_document", "split_sentences"]
