"""The lossless export: every stored row (documents with their versions, chunks, entities, relations with
every evidence record and span, mentions, pages, memories with their edges and history, skills' index rows,
vectors, events) and every file of the wiki folder, one JSON object per line.

Lines: a header ``{"format": "graphmem-jsonl", "version": 2, ...}``, then ``{"table": T, "row": {...}}`` for
rows and ``{"file": "wiki/<path>", "text": ...}`` for wiki files, and last ``{"end": {"rows": {T: n}, "files": n}}``.
Importing it into an empty knowledge base gives back the same rows, so searches answer the same (the full-text
indexes are rebuilt as rows load).

The last line is what tells a whole file from one cut at a line boundary (a copy that ran out of disk, a
download stopped early): version 1 files had none and loaded whatever lines there were. They are still read.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..context import Context
from ..errors import Conflict, InvalidInput

__all__ = ["FORMAT", "Export", "export_jsonl", "import_jsonl", "read_export", "wiki_files"]

FORMAT = "graphmem-jsonl"
VERSION = 2
READS = (1, 2)  # version 1: no end line


def wiki_files(home: Path) -> Iterator[tuple[str, str]]:
    """``(path relative to home, text)`` of every regular file under ``home/wiki`` (symlinks are not
    followed: nothing outside the folder is read)."""
    root = home / "wiki"
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.name.endswith(".tmp"):
            continue
        yield path.relative_to(home).as_posix(), path.read_text(encoding="utf-8")


def export_jsonl(ctx: Context, out: IO[str]) -> dict[str, int]:
    """Write the whole knowledge base to ``out``; returns lines written per table (and ``files``)."""
    store = ctx.store
    # the embedding model the vectors were made with, as configured (a folder's full path): an import into a
    # new folder adopts it, or the copy's searches would refuse the vectors as another model's
    header = {"format": FORMAT, "version": VERSION, "exported_at": ctx.now(),
              "migrations": store.applied_migrations(), "last_event_id": store.last_event_id(),
              "embeddings_model": str(ctx.config.embeddings.model)}
    out.write(json.dumps(header, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for table, row in store.dump_rows():
        out.write(json.dumps({"table": table, "row": row}, ensure_ascii=False) + "\n")
        counts[table] = counts.get(table, 0) + 1
    files = 0
    for rel, text in wiki_files(ctx.home):
        out.write(json.dumps({"file": rel, "text": text}, ensure_ascii=False) + "\n")
        files += 1
    out.write(json.dumps({"end": {"rows": counts, "files": files}}) + "\n")
    return {**counts, **({"files": files} if files else {})}


Export = tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], list[tuple[str, str]]]  # header, rows, files


def read_export(path: Path) -> Export:
    """Read and check a whole export file (InvalidInput naming the line when it is not one): done before a
    knowledge base is opened, a bad file creates nothing."""
    if not path.is_file():
        raise InvalidInput(f"file: {path} does not exist or is not a file")
    return _records(path)


def _records(path: Path) -> Export:
    rows: list[tuple[str, dict[str, Any]]] = []
    files: list[tuple[str, str]] = []
    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    counts: dict[str, int] = {}
    with path.open(encoding="utf-8") as src:
        for n, line in enumerate(src, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{path}:{n}: not JSON ({exc.msg}); nothing was imported") from None
            if end is not None:
                raise InvalidInput(f"{path}:{n}: a record after the export's end line; nothing was imported")
            if header is None:
                if not isinstance(rec, dict) or rec.get("format") != FORMAT:
                    raise InvalidInput(f"{path}:1: not a graphmem JSONL export (no {FORMAT!r} header); export "
                                       "with `graphmem export --format jsonl`; nothing was imported")
                if rec.get("version") not in READS:
                    raise InvalidInput(f"{path}:1: export format version {rec.get('version')!r}, this graphmem "
                                       f"reads {', '.join(map(str, READS))}; nothing was imported")
                header = rec
            elif isinstance(rec, dict) and isinstance(rec.get("table"), str) and isinstance(rec.get("row"), dict):
                if rec["table"] == "vectors":
                    _check_vector(rec["row"], path, n)
                rows.append((rec["table"], rec["row"]))
                counts[rec["table"]] = counts.get(rec["table"], 0) + 1
            elif isinstance(rec, dict) and isinstance(rec.get("file"), str) and isinstance(rec.get("text"), str):
                files.append((_safe_rel(rec["file"], path, n), rec["text"]))
            elif isinstance(rec, dict) and set(rec) == {"end"} and header.get("version", 1) >= 2:
                end = rec["end"]
                if not isinstance(end, dict) or end.get("rows") != counts or end.get("files") != len(files):
                    raise InvalidInput(f"{path}:{n}: the end line counts {end!r}, the file holds {counts} and "
                                       f"{len(files)} files: lines are missing or were added; nothing was imported")
            else:
                raise InvalidInput(f"{path}:{n}: expected a table row or a wiki file record; nothing was imported")
    if header is None:
        raise InvalidInput(f"{path}: empty file, not a graphmem export; nothing was imported")
    if end is None and header.get("version", 1) >= 2:
        raise InvalidInput(f"{path}: the file ends without the export's end line (cut short: a full disk or an "
                           "interrupted copy?); export again; nothing was imported")
    return header, rows, files


def _check_vector(row: dict[str, Any], path: Path, n: int) -> None:
    """A vector's bytes are float16, two per dimension: a shorter or longer blob would load and then fail
    every search that reads it."""
    dim, vec = row.get("dim"), row.get("vec")
    try:
        size = len(base64.b64decode(vec["$b64"], validate=True)) if isinstance(vec, dict) else -1
    except (binascii.Error, TypeError, KeyError):
        size = -1
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1 or size != 2 * dim:
        raise InvalidInput(f"{path}:{n}: vectors row {row.get('item_kind')!r} {row.get('item_id')!r}: "
                           f"{'no readable vector' if size < 0 else f'{size} bytes'} for dim {dim!r} (float16: "
                           f"2 bytes per dimension); the file is damaged; export again; nothing was imported")


def _safe_rel(rel: str, path: Path, n: int) -> str:
    parts = Path(rel).parts
    if not parts or parts[0] != "wiki" or Path(rel).is_absolute() or ".." in parts:
        raise InvalidInput(f"{path}:{n}: file {rel!r} is not inside wiki/; nothing was imported")
    return rel


def import_jsonl(ctx: Context, path: Path, records: Export | None = None) -> dict[str, Any]:
    """Load an export into this (empty) knowledge base in one transaction; the wiki files are written only
    once the rows are committed, never outside ``wiki/``. ``records``: what :func:`read_export` read from
    ``path`` already. Returns what was loaded."""
    store = ctx.store
    store.refuse_write()
    header, rows, files = records if records is not None else read_export(path)
    missing = [m for m in header.get("migrations", []) if m not in store.applied_migrations()]
    if missing:
        raise InvalidInput(f"{path}: exported by a newer graphmem (schema {missing[0]}); upgrade graphmem; "
                           "nothing was imported")
    stats = store.stats()
    if stats["documents"] or stats["nodes"] or store.last_event_id():
        raise Conflict(f"knowledge base {ctx.home} is not empty; import into a new folder (--home NEW) so that "
                       "nothing is mixed; nothing was imported")
    home = ctx.home.resolve()
    for rel, _ in files:
        target = (home / rel).resolve()
        if not target.is_relative_to(home / "wiki"):
            raise InvalidInput(f"{path}: file {rel!r} resolves outside the wiki folder; nothing was imported")
    with store.transaction():
        counts = store.load_rows(rows)
        # The replay log is not exported: this knowledge base can be replayed only from here on.
        store.set_meta("replay.since_event", str(store.last_event_id()))

        def write_files() -> None:  # last step before COMMIT: a failure here rolls the rows back too
            for rel, text in files:
                target = home / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")

        store.on_commit(before=write_files)
        store.append_event("kb.imported", str(path.name), ctx.now(), {
            "source": str(path), "exported_at": header.get("exported_at"), "rows": sum(counts.values()),
            "files": len(files), "last_event_id": header.get("last_event_id")})
    return {"file": str(path), "rows": counts, "files": len(files), "exported_at": header.get("exported_at")}
