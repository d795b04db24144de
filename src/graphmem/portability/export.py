"""One entry point for every export format."""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from ..context import Context
from ..errors import InvalidInput
from ..wiki.files import remove_abandoned
from .graphs import graph_rows, write_cypher, write_graphml, write_memory_jsonl, write_neo4j_csv
from .jsonl import export_jsonl

__all__ = ["FORMATS", "export"]

FORMATS = ("jsonl", "graphml", "cypher", "csv", "memory-jsonl")


def _write(ctx: Context, fmt: str, scope: Mapping[str, Any] | None, f: IO[bytes]) -> dict[str, int]:
    if fmt == "graphml":
        return write_graphml(graph_rows(ctx, scope), f)
    text = io.TextIOWrapper(f, encoding="utf-8", newline="")
    try:
        if fmt == "jsonl":
            return export_jsonl(ctx, text)
        if fmt == "cypher":
            return write_cypher(graph_rows(ctx, scope), text)
        return write_memory_jsonl(graph_rows(ctx, scope), text)
    finally:
        text.flush()
        text.detach()


def _write_whole(out: Path, write: Callable[[IO[bytes]], dict[str, int]]) -> dict[str, int]:
    """``write`` into a temporary file beside ``out``, renamed over it once complete: a failed export
    (a full disk, an unreadable knowledge base, Ctrl-C) leaves no partial file, nor a damaged older one.

    Written in place instead where a rename would change what ``out`` is: a symbolic link (its target is
    rewritten, the link kept), a FIFO or device (``/dev/stdout``), or a file in a folder this user may not
    write (the file itself may be writable)."""
    if out.is_symlink() or (out.exists() and not out.is_file()) or not os.access(out.parent, os.W_OK):
        with out.open("wb") as f:
            return write(f)
    # a killed export's temporary file (its process is gone): one whole export each
    remove_abandoned((old, int(pid)) for old in out.parent.glob(f".{out.name}.*-*.tmp")
                     if (pid := old.name[len(out.name) + 2:].partition("-")[0]).isdigit())
    tmp = out.parent / f".{out.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    # O_EXCL with mode 0666: the umask applies, as it does to any file the user writes (mkstemp's is 0600)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            counts = write(f)
        if out.exists():  # an export written over an older one keeps that file's mode
            os.chmod(tmp, stat.S_IMODE(out.stat().st_mode))
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return counts


def export(ctx: Context, fmt: str, out: Path, scope: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write the knowledge base to ``out`` in ``fmt``; ``scope`` keeps one user's/agent's/run's memories
    (graph formats only: the JSONL export is the whole knowledge base, lossless)."""
    if fmt not in FORMATS:
        raise InvalidInput(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "jsonl" and scope:
        raise InvalidInput("scope: the jsonl export is the whole knowledge base; use a graph format "
                           "(graphml, cypher, csv, memory-jsonl) for one scope's memories")
    if fmt != "csv" and out.is_dir():
        raise InvalidInput(f"out: {out} is a folder; give a file name for the {fmt} export")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "csv":
            counts = write_neo4j_csv(graph_rows(ctx, scope), out)
        else:
            counts = _write_whole(out, lambda f: _write(ctx, fmt, scope, f))
    except OSError as exc:
        raise InvalidInput(f"out: cannot write {out} ({exc.strerror or exc}); choose a folder you may write "
                           "to") from None
    return {"format": fmt, "out": str(out), "counts": counts}
