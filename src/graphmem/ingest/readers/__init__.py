"""Readers: one small module per format, chosen by file extension (overridable)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from ..extractors.base import SourceDocument
from . import bulk, html, markdown, pdf, text
from .base import NotText, Skipped, decode_text

__all__ = ["READERS", "Reader", "Skipped", "NotText", "decode_text", "reader_for", "reader_overrides",
           "BULK_SUFFIXES", "BULK_READERS"]

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
    ".ndjson": bulk.read,  # JSON Lines under its other common name
}
_BY_NAME: dict[str, Reader] = {"markdown": markdown.read, "text": text.read, "html": html.read,
                               "pdf": pdf.read, "json": bulk.read, "jsonl": bulk.read_jsonl}
BULK_SUFFIXES = {".json", ".jsonl", ".ndjson"}
BULK_READERS = (bulk.read, bulk.read_jsonl)


def reader_overrides(table: Mapping[str, str]) -> dict[str, str]:
    """``[ingest.readers]`` as ``{".ext": reader name}``: a key is the extension however it is written
    (``"NDJSON"``, ``"ndjson"``, ``".Ndjson"``); an unknown reader name is InvalidInput naming its key (checked
    before an ingest reads anything, so a typo never leaves part of a folder ingested)."""
    from ...errors import InvalidInput

    out: dict[str, str] = {}
    for key, raw_name in table.items():
        name = raw_name.strip().lower()  # "JSONL" as "jsonl"
        suffix = key.strip().lower()
        suffix = suffix if suffix.startswith(".") else "." + suffix
        if suffix == "." or name not in _BY_NAME:
            what = "an empty extension" if suffix == "." else f"unknown reader '{raw_name}'"
            raise InvalidInput(f"ingest.readers: {what} for '{key}' in config.toml; map an extension such as "
                               f"\".log\" to one of {sorted(_BY_NAME)}")
        out[suffix] = name
    return out


def reader_for(path: Path, overrides: Mapping[str, str] | None = None) -> Reader | None:
    """The reader for ``path`` by extension; ``overrides``: :func:`reader_overrides`' mapping."""
    suffix = path.suffix.lower()
    if overrides and suffix in overrides:
        name = overrides[suffix].strip().lower()
        if name not in _BY_NAME:
            reader_overrides({suffix: name})  # raises, naming the key
        return _BY_NAME[name]
    return READERS.get(suffix)
