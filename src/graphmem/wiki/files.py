"""Atomic file changes that go with a store transaction.

A page write stages every file it will change (the page, the index files) as temp files
next to their targets, then — inside the store transaction, as its last step before commit —
renames them into place. If a rename fails, the files already renamed are put back from
their previous bytes and the exception aborts the transaction; if the commit itself fails,
the caller calls :meth:`FileTxn.undo` and the files are put back the same way. A process
killed between the renames and the commit leaves files newer than the store: the stat check
of the next sync sees them and re-indexes them, so the store catches up with the files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import BackendError

__all__ = ["FileTxn", "append_line", "read_bytes", "read_file"]


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BackendError(f"cannot read {path}: {exc.strerror}") from None


def read_file(path: Path) -> tuple[bytes, os.stat_result] | None:
    """The file's bytes with the stat of the same open file (so the two agree), or None
    when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BackendError(f"cannot read {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        chunks = []
        while chunk := os.read(fd, max(st.st_size, 65536)):
            chunks.append(chunk)
        return b"".join(chunks), st
    except OSError as exc:
        raise BackendError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


@dataclass
class _Change:
    path: Path
    temp: Path | None  # None: delete
    old: bytes | None  # previous bytes (None: the file did not exist)
    done: bool = False


class FileTxn:
    """A set of file writes and deletes applied together (see the module docstring)."""

    def __init__(self) -> None:
        self._changes: dict[Path, _Change] = {}
        self._seq = 0
        self.committed = False

    def __len__(self) -> int:
        return len(self._changes)

    def write(self, path: Path, data: bytes, old: bytes | None | bool = False) -> os.stat_result | None:
        """Stage ``data`` for ``path`` and return the temp file's stat (a rename keeps the
        size and mtime, so this is the final file's stat). ``old``: the current bytes when
        the caller has them (else they are read here, for undo). A file that already holds
        exactly ``data`` is left alone (returns None)."""
        if old is False:
            old = read_bytes(path)
        if old == data and path not in self._changes:
            return None
        self._seq += 1
        temp = path.with_name(f".{path.name}.{os.getpid()}-{self._seq}.tmp")
        try:
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileNotFoundError:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                st = os.fstat(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            _unlink(temp)
            raise BackendError(f"cannot write {path}: {exc.strerror}") from None
        self._stage(path, temp, lambda: old if isinstance(old, bytes) else None)
        return st

    def delete(self, path: Path) -> None:
        """Stage the removal of ``path`` (nothing happens if it does not exist)."""
        self._stage(path, None, lambda: read_bytes(path))

    def _stage(self, path: Path, temp: Path | None, original: Callable[[], bytes | None]) -> None:
        """Record ``temp`` (None: removal) as what ``path`` becomes; the first change of a path
        keeps its original bytes for undo, a later one replaces the earlier temp file."""
        prev = self._changes.get(path)
        if prev is not None:
            if prev.temp is not None:
                _unlink(prev.temp)
            prev.temp = temp
        else:
            self._changes[path] = _Change(path, temp, original())

    def commit(self) -> None:
        """Rename every staged file into place (deletions last); on a failure put back what
        was already changed and raise BackendError."""
        order = sorted(self._changes.values(), key=lambda c: c.temp is None)
        try:
            for ch in order:
                if ch.temp is not None:
                    os.replace(ch.temp, ch.path)
                elif ch.old is not None:
                    os.unlink(ch.path)
                ch.done = True
        except OSError as exc:
            self.undo()
            raise BackendError(f"cannot update {exc.filename or 'a wiki file'}: {exc.strerror}; nothing was "
                               "changed") from None
        self.committed = True

    def undo(self) -> None:
        """Put every changed file back as it was and remove the temp files (best effort:
        whatever cannot be restored is left for the next sync to reconcile)."""
        for ch in self._changes.values():
            if ch.done:
                try:
                    if ch.old is None:
                        _unlink(ch.path)
                    else:
                        tmp = ch.path.with_name(f".{ch.path.name}.{os.getpid()}-undo.tmp")
                        tmp.write_bytes(ch.old)
                        os.replace(tmp, ch.path)
                except OSError:
                    pass
                ch.done = False
            if ch.temp is not None:
                _unlink(ch.temp)
        self.committed = False

    def discard(self) -> None:
        """Drop staged temp files without touching their targets."""
        for ch in self._changes.values():
            if ch.temp is not None and not ch.done:
                _unlink(ch.temp)
        self._changes.clear()


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def append_line(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` with one write (O_APPEND keeps concurrent appends whole)."""
    data = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        raise BackendError(f"cannot append to {path}: {exc.strerror}") from None
