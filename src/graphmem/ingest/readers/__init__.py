"""Readers: one small module per format, chosen by file extension (overridable)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from ..extractors.base import SourceDocument
from . import bulk, html, markdown, pdf, text
from .base import NotText, Skipped, decode_text

__all__ = ["READERS", "Reader", "Skipped", "NotText", "decode_text", "reader_for", "BULK_SUFFIXES"]

Reader = Callable[[Path, str, bytes], Iterator[SourceDocument | Skipped]]

READERS: dict[str, Reader] = {
    ".md": markdown.read,
    ".markdown": markdown.read,
    ".txt": text.read,
    ".text": text.read,
    # Plain-text formats a newcomer's folder holds, read as they are (no markup parsing):
    # reStructuredText, tables and Python sources.
    ".rst": text.read,
    ".csv": text.read,
    ".tsv": text.read,
    ".py": text.read,
    ".html": html.read,
    ".htm": html.read,
    ".pdf": pdf.read,
    ".json": bulk.read,
    ".jsonl": bulk.read,
}
_BY_NAME: dict[str, Reader] = {"markdown": markdown.read, "text": text.read, "html": html.read,
                               "pdf": pdf.read, "json": bulk.read}
BULK_SUFFIXES = {".json", ".jsonl"}


def reader_for(path: Path, overrides: Mapping[str, str] | None = None) -> Reader | None:
    """The reader for ``path`` by extension; ``overrides`` maps ``.ext`` to a reader name."""
    suffix = path.suffix.lower()
    if overrides and suffix in overrides:
        name = overrides[suffix]
        if name not in _BY_NAME:
            from ...errors import InvalidInput

            raise InvalidInput(f"ingest.readers: unknown reader '{name}' for '{suffix}'; "
                               f"choose one of {sorted(_BY_NAME)}")
        return _BY_NAME[name]
    return READERS.get(suffix)
