"""Plain text: the whole file is the document; the title is the file name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..extractors.base import SourceDocument
from .base import Skipped, decode_text

__all__ = ["read"]


def read(path: Path, doc_id: str, raw: bytes) -> Iterator[SourceDocument | Skipped]:
    """One document from a text file."""
    text = decode_text(raw, path)
    yield SourceDocument(doc_id, path.name, doc_id, text, {"path": doc_id, "format": "text"})
