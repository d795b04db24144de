"""Bulk JSON / JSONL: one document per record.

A record is ``{id, title, text | content, source?, metadata?, entities?, relations?}``;
``entities``/``relations`` in the extraction format are used as given (agent-supplied).
A JSON file may hold a list of records (also the ``[{title, text}]`` shape of the HippoRAG
corpora) or an object with a ``documents`` list. A bad record is skipped with its line;
the rest of the file is ingested.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...errors import InvalidInput
from ...extraction import MAX_JSON_DEPTH, check_json_depth, loads_json, parse_extraction
from ..extractors.base import SourceDocument
from .base import Skipped, decode_text

__all__ = ["read", "record_to_document"]

_WS = " \t\r\n"
# A JSON string or one bracket: enough to find where a value ends without parsing it.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels of lists/objects"


def _value_end(text: str, i: int) -> int | None:
    """End of the list/object starting at ``text[i]`` (strings and brackets only), or None."""
    depth = 0
    for m in _STRING_OR_BRACKET.finditer(text, i):
        tok = m.group()
        if tok[0] == '"':
            continue
        depth += 1 if tok in "[{" else -1
        if depth == 0:
            return m.end()
    return None


def record_to_document(rec: Any, file_id: str, index: int, seen: set[str],
                       max_chars: int) -> SourceDocument:
    """Turn one bulk record into a document; InvalidInput names the bad field."""
    if not isinstance(rec, Mapping):
        raise InvalidInput(f"expected an object with 'text', got {type(rec).__name__}")
    text = rec.get("text", rec.get("content"))
    if not isinstance(text, str):
        raise InvalidInput("missing 'text' (or 'content'): every record needs the document's text as a string")
    if not text.strip():
        raise InvalidInput("'text' is empty")
    if len(text) > max_chars:
        raise InvalidInput(f"'text' has {len(text):,} characters, over ingest.max_record_chars ({max_chars:,})")
    title = rec.get("title")
    if title is not None and not isinstance(title, str):
        raise InvalidInput("'title' must be a string")
    raw_id = rec.get("id", rec.get("doc_id"))
    if raw_id is not None and not isinstance(raw_id, (str, int)):
        raise InvalidInput("'id' must be a string or an integer")
    doc_id = str(raw_id) if raw_id is not None else (title or f"{file_id}#{index}")
    if raw_id is None and doc_id in seen:  # titles may repeat (e.g. MuSiQue); keep both
        doc_id = f"{doc_id}#{index}"
    seen.add(doc_id)
    meta = rec.get("metadata") or {}
    if not isinstance(meta, Mapping):
        raise InvalidInput("'metadata' must be an object")
    source = rec.get("source")
    if source is not None and not isinstance(source, str):
        raise InvalidInput("'source' must be a string")
    extraction = None
    if rec.get("entities") is not None or rec.get("relations") is not None:
        extraction = parse_extraction(rec.get("entities"), rec.get("relations"))
    metadata = {**meta, "path": file_id, "record": index}
    return SourceDocument(doc_id, title or doc_id, source or f"{file_id}#{index}", text, metadata, extraction)


def _json_records(text: str) -> Iterator[tuple[int, Any] | tuple[int, Exception]]:
    """Yield ``(line, record)`` of a JSON list, parsed element by element (line numbers kept)."""
    dec = json.JSONDecoder()
    i = len(text) - len(text.lstrip(_WS))
    if text.startswith("{", i):
        try:
            obj, _ = dec.raw_decode(text, i)
        except RecursionError:
            raise InvalidInput(f"the file is {_TOO_DEEP}; give records as a list or JSONL") from None
        docs = obj.get("documents", obj.get("docs")) if isinstance(obj, dict) else None
        if not isinstance(docs, list):
            raise InvalidInput("a JSON object file needs a 'documents' list (or give a list of records)")
        for rec in docs:
            try:
                check_json_depth(rec, "record")
            except InvalidInput as exc:
                rec = exc
            yield 0, rec
        return
    if not text.startswith("[", i):
        raise InvalidInput("expected a JSON list of records")
    i += 1
    line = text.count("\n", 0, i) + 1
    last = i
    while True:
        while i < len(text) and text[i] in _WS + ",":
            i += 1
        if i >= len(text):
            raise InvalidInput("unterminated JSON list")
        if text[i] == "]":
            return
        line += text.count("\n", last, i)
        last = i
        try:
            rec, end = dec.raw_decode(text, i)
            check_json_depth(rec, "record")
        except (RecursionError, InvalidInput) as exc:
            # One hostile record (100k brackets) must not cost the others: step over it.
            end = _value_end(text, i) if text[i] in "[{" else None
            if end is None:
                raise InvalidInput(f"the record at line {line} is {_TOO_DEEP} and never closed; "
                                   "records after this point were not read") from None
            yield line, (InvalidInput(f"record: {_TOO_DEEP}; flatten it") if isinstance(exc, RecursionError)
                         else exc)
            i = end
            continue
        i = end
        yield line, rec


def read(path: Path, file_id: str, raw: bytes, max_chars: int = 5_000_000,
         jsonl: bool | None = None) -> Iterator[SourceDocument | Skipped]:
    """Documents from a .json or .jsonl file (``jsonl=True`` forces JSONL); bad records are
    Skipped with their line."""
    text = decode_text(raw, path)
    seen: set[str] = set()
    if jsonl or (jsonl is None and path.suffix.lower() == ".jsonl"):
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = loads_json(line, "record")
            except json.JSONDecodeError as exc:
                yield Skipped(file_id, f"not JSON ({exc.msg} at column {exc.colno})", n)
                continue
            except InvalidInput as exc:
                yield Skipped(file_id, str(exc), n)
                continue
            try:
                yield record_to_document(rec, file_id, n, seen, max_chars)
            except InvalidInput as exc:
                yield Skipped(file_id, str(exc), n)
        return
    try:
        for index, (line, rec) in enumerate(_json_records(text)):
            try:
                if isinstance(rec, InvalidInput):
                    raise rec
                yield record_to_document(rec, file_id, index, seen, max_chars)
            except InvalidInput as exc:
                yield Skipped(file_id, f"record {index}: {exc}", line or None)
    except json.JSONDecodeError as exc:
        yield Skipped(file_id, f"not valid JSON ({exc.msg}); records after this point were not read", exc.lineno)
    except InvalidInput as exc:
        yield Skipped(file_id, str(exc))
