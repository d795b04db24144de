"""Bulk JSON / JSONL: one document per record.

A record is ``{id, title, text | content, source?, metadata?, entities?, relations?}``;
``entities``/``relations`` in the extraction format are used as given (agent-supplied).
A JSON file may hold a list of records (also the ``[{title, text}]`` shape of the HippoRAG
corpora) or an object with a ``documents`` list. A bad record is skipped with its line;
the rest of the file is ingested. JSONL and JSON lists are streamed (memory holds a record,
not the file); an object file is read whole, so give big corpora as a list or JSONL.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from ...errors import InvalidInput
from ...extraction import MAX_JSON_DEPTH, check_json_depth, check_json_text, loads_json, parse_extraction
from ..extractors.base import SourceDocument
from .base import NotText, Skipped

__all__ = ["read", "read_file", "read_stream", "record_to_document"]

_WS = " \t\r\n"
# A JSON string or one bracket: enough to find where a value ends without parsing it.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{}]')
_TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels of lists/objects"


def _value_end(text: str, i: int) -> int | None:
    """End of the list/object starting at ``text[i]`` (strings and brackets only), or None."""
    depth = 0
    for m in _STRING_OR_BRACKET.finditer(text, i):
        tok = m.group()
        if tok == '"':  # a string that does not end (here): no end known
            return None
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
    for key, value in rec.items():
        check_json_text(value, f"'{key}'")
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


_CHUNK = 1 << 20  # characters read at a time from a JSON list


class _Stop(Exception):
    """The rest of a JSON list cannot be read (broken JSON); carries the line."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def _refuse_binary(head: bytes) -> None:
    if b"\x00" in head:
        raise NotText("binary file (NUL bytes); not a text document")


class _Text:
    """The decoded text of a binary stream, read in pieces (UTF-8, BOM tolerated)."""

    def __init__(self, fh: BinaryIO, path: Path) -> None:
        self.fh = fh
        self.path = path
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.eof = False
        self.lines = 0  # newlines in the text returned so far
        self.started = False

    def read(self, n: int) -> str:
        raw = self.fh.read(n)
        if not self.started:
            self.started = True
            _refuse_binary(raw[:8192])
        try:
            text = self.decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            line = self.lines + raw.count(b"\n", 0, max(0, exc.start)) + 1
            raise NotText(f"not UTF-8 text (invalid byte on line {line}); convert it to UTF-8; "
                          "records after this point were not read") from None
        self.eof = not raw
        self.lines += text.count("\n")
        return text


def _json_records(src: _Text) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, record or InvalidInput)`` of a JSON list, parsed element by element from
    a window of the text that grows only as far as one record needs (an object file -- one with
    a 'documents' list -- is read whole)."""
    dec = json.JSONDecoder()
    buf, i = "", 0
    line, last = 1, 0  # line number of buf[last]

    def grow() -> bool:
        nonlocal buf, i, line, last
        line += buf.count("\n", last, i)
        buf, last = buf[i:], 0
        i = 0
        piece = src.read(max(_CHUNK, len(buf)))  # doubling: a long record is re-parsed O(log n) times
        buf += piece
        return bool(piece)

    def skip(chars: str) -> None:
        nonlocal i
        while True:
            while i < len(buf) and buf[i] in chars:
                i += 1
            if i < len(buf) or not grow():
                return

    skip(_WS)
    if buf.startswith("{", i):
        while grow():
            pass
        try:
            obj, _ = dec.raw_decode(buf, i)
        except RecursionError:
            raise InvalidInput(f"the file is {_TOO_DEEP}; give records as a list or JSONL") from None
        except json.JSONDecodeError as exc:
            raise _Stop(f"not valid JSON ({exc.msg}); records after this point were not read",
                        line + exc.lineno - 1) from None
        except ValueError as exc:  # a number of more than 4,300 digits (Python's int limit)
            raise InvalidInput(f"the file cannot be read as JSON ({exc})") from None
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
    if not buf.startswith("[", i):
        raise InvalidInput("expected a JSON list of records")
    i += 1
    while True:
        skip(_WS + ",")
        if i >= len(buf):
            raise InvalidInput("unterminated JSON list")
        if buf[i] == "]":
            return
        line += buf.count("\n", last, i)
        last = i
        try:
            rec, end = dec.raw_decode(buf, i)
        except json.JSONDecodeError as exc:
            # At the end of the window (or inside a string running past it) the record may just
            # be cut: read more. Anywhere else the JSON is broken.
            if not src.eof and (exc.pos >= len(buf) - 1 or exc.msg.startswith("Unterminated string")):
                grow()
                continue
            raise _Stop(f"not valid JSON ({exc.msg}); records after this point were not read",
                        line + buf.count("\n", i, exc.pos)) from None
        except (RecursionError, ValueError) as exc:
            # One hostile record (100k brackets, a 5,000-digit number: Python's int limit) must not cost the
            # others: step over it.
            why = _TOO_DEEP if isinstance(exc, RecursionError) else f"unreadable ({exc})"
            skip_to = _value_end(buf, i) if buf[i] in "[{" else None
            if skip_to is None:
                if grow():
                    continue
                raise _Stop(f"the record is {why} and never closed; records after this point "
                            "were not read", line) from None
            yield line, InvalidInput(f"record: {why}" + ("; flatten it" if why == _TOO_DEEP else ""))
            i = skip_to
            continue
        if end >= len(buf) and not src.eof:  # a value that ends the window may go on
            grow()
            continue
        try:
            check_json_depth(rec, "record")
        except InvalidInput as exc:
            rec = exc
        i = end
        yield line, rec


def _jsonl(fh: BinaryIO, path: Path, file_id: str, max_chars: int) -> Iterator[SourceDocument | Skipped]:
    """One record a line, read line by line (a line is never longer in memory than the limit)."""
    _refuse_binary(fh.read(8192))
    fh.seek(0)
    limit = 6 * max_chars + (1 << 20)  # \uXXXX escapes take 6 bytes a character
    seen: set[str] = set()
    n = 0
    while True:
        raw = fh.readline(limit + 1)
        if not raw:
            return
        n += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            while (rest := fh.readline(_CHUNK)) and not rest.endswith(b"\n"):
                pass
            yield Skipped(file_id, f"line is over {limit / 1e6:.0f} MB; raise ingest.max_record_chars "
                                   f"({max_chars:,}) to read it", n)
            continue
        try:
            line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            yield Skipped(file_id, f"not UTF-8 (invalid byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} "
                                   "of the line); convert the file to UTF-8", n)
            continue
        del raw
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
        del line
        try:
            yield record_to_document(rec, file_id, n, seen, max_chars)
        except InvalidInput as exc:
            yield Skipped(file_id, str(exc), n)


def read_stream(fh: BinaryIO, path: Path, file_id: str, max_chars: int = 5_000_000,
                jsonl: bool | None = None) -> Iterator[SourceDocument | Skipped]:
    """Documents from an open .json or .jsonl file, read incrementally: memory holds one record
    (or one JSON-list window), not the file. ``jsonl=True`` forces JSONL. Bad records are
    Skipped with their line; NotText for a binary or non-UTF-8 file."""
    if jsonl or (jsonl is None and path.suffix.lower() in (".jsonl", ".ndjson")):
        yield from _jsonl(fh, path, file_id, max_chars)
        return
    seen: set[str] = set()
    try:
        for index, (line, rec) in enumerate(_json_records(_Text(fh, path))):
            try:
                if isinstance(rec, InvalidInput):
                    raise rec
                yield record_to_document(rec, file_id, index, seen, max_chars)
            except InvalidInput as exc:
                yield Skipped(file_id, f"record {index}: {exc}", line or None)
    except _Stop as exc:
        yield Skipped(file_id, str(exc), exc.line)
    except InvalidInput as exc:
        yield Skipped(file_id, str(exc))


def read_file(path: Path, file_id: str, max_chars: int = 5_000_000,
              jsonl: bool | None = None) -> Iterator[SourceDocument | Skipped]:
    """Documents from the .json/.jsonl file at ``path``, streamed (see :func:`read_stream`)."""
    with path.open("rb") as fh:
        yield from read_stream(fh, path, file_id, max_chars, jsonl)


def read(path: Path, file_id: str, raw: bytes, max_chars: int = 5_000_000,
         jsonl: bool | None = None) -> Iterator[SourceDocument | Skipped]:
    """Documents from the bytes of a .json or .jsonl file (the reader interface; bulk ingest
    streams the file with :func:`read_file` instead)."""
    yield from read_stream(io.BytesIO(raw), path, file_id, max_chars, jsonl)


def read_jsonl(path: Path, file_id: str, raw: bytes, max_chars: int = 5_000_000,
               jsonl: bool | None = True) -> Iterator[SourceDocument | Skipped]:
    """:func:`read` for a file of JSON Lines whatever its extension (the reader named ``jsonl``)."""
    yield from read_stream(io.BytesIO(raw), path, file_id, max_chars, True)
