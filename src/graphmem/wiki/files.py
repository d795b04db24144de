"""Every file graphmem touches under ``wiki/``, and atomic file changes that go with a store
transaction.

**No symlinks.** Every path under ``wiki/`` goes through :func:`checked` before it is read,
written, renamed or deleted: it must lie inside the wiki folder, and neither the wiki folder
itself nor any existing part of the path below it may be a symbolic link (UnsafePath, a
BackendError naming the link, otherwise). Files are then opened with ``O_NOFOLLOW`` and temp
files created with ``O_EXCL``, so a link planted at the last component after the check is
refused too; a rename or unlink acts on a link itself, never on what it points to.

**Atomic changes.** A page write stages every file it will change (the page, the index files)
as temp files next to their targets, then — inside the store transaction, as its last step
before commit — renames them into place. If a rename fails, the files already renamed are
put back from their previous bytes and the exception aborts the transaction; if the commit
itself fails, the caller calls :meth:`FileTxn.undo` and the files are put back the same way. A
process killed between the renames and the commit leaves files newer than the store: the stat
check of the next sync sees them and re-indexes them, so the store catches up with the files.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import BackendError

__all__ = ["FileTxn", "TEMP_NAME", "UnsafePath", "append_line", "checked", "exists", "log_entries", "lstat",
           "open_read", "read_bytes", "read_file", "remove_abandoned", "remove_stale_temps", "tail_lines",
           "writer_gone"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# ``.<name>.<pid>-<n>.tmp`` / ``.<name>.<pid>-undo.tmp`` (+ ``x<k>`` when the name was taken).
TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-(?:\d+|undo)(?:x\d+)?\.tmp$")


class UnsafePath(BackendError):
    """A path under ``wiki/`` goes through a symbolic link or leaves the wiki folder."""


def _link_error(path: Path, root: Path) -> UnsafePath:
    if path == root:
        return UnsafePath(f"the wiki folder {root} is a symbolic link; graphmem does not follow links inside a "
                          "knowledge base: replace the link with a real folder (move its target there)")
    return UnsafePath(f"{path} is a symbolic link; graphmem never reads, writes or deletes through links inside "
                      f"wiki/: replace it with a real {'folder' if path.suffix != '.md' else 'file'} or remove it")


def checked(root: Path, path: Path) -> Path:
    """``path`` once it is known to lie inside the wiki folder ``root`` with no symbolic link
    on the way: ``root`` itself and every existing part of ``path`` below it (the last one
    included) are checked with lstat. Raises UnsafePath naming the link otherwise."""
    # Plain strings, not pathlib: this runs several times per file of every page write.
    top, full = os.fspath(root), os.fspath(path)
    if full == top:
        parts: list[str] = []
    elif full.startswith(top + os.sep):
        parts = full[len(top) + 1:].split(os.sep)
    else:
        raise UnsafePath(f"{path} is outside the wiki folder {root}; graphmem only touches files inside it")
    if any(part in ("", ".", "..") for part in parts):
        raise UnsafePath(f"{path}: '.' and '..' are not allowed in a wiki path")
    current = top
    for i in range(len(parts) + 1):
        if i:
            current = current + os.sep + parts[i - 1]
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            break  # the rest does not exist yet: nothing to follow
        except OSError as exc:
            raise BackendError(f"cannot read {current}: {exc.strerror}") from None
        if stat.S_ISLNK(mode):
            raise _link_error(Path(current), root)
    return path


def _open(root: Path, path: Path, flags: int, mode: int = 0o644) -> int | None:
    """An fd of ``path`` (checked, last component not followed); None when it does not exist."""
    try:
        return os.open(checked(root, path), flags | _NOFOLLOW, mode)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link appeared after the check
            raise _link_error(path, root) from None
        raise BackendError(f"cannot open {path}: {exc.strerror}") from None


def read_file(root: Path, path: Path) -> tuple[bytes, os.stat_result] | None:
    """The file's bytes with the stat of the same open file (so the two agree), or None
    when it does not exist."""
    fd = _open(root, path, os.O_RDONLY)
    if fd is None:
        return None
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


def read_bytes(root: Path, path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist."""
    got = read_file(root, path)
    return None if got is None else got[0]


def open_read(root: Path, path: Path) -> BinaryIO | None:
    """``path`` opened for reading (binary), or None when it does not exist."""
    fd = _open(root, path, os.O_RDONLY)
    return None if fd is None else os.fdopen(fd, "rb")


def lstat(root: Path, path: Path) -> os.stat_result | None:
    """The stat of ``path`` (checked; None when it does not exist)."""
    try:
        return os.lstat(checked(root, path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BackendError(f"cannot read {path}: {exc.strerror}") from None


def exists(root: Path, path: Path) -> bool:
    """Whether anything is at ``path`` (checked: a link there raises UnsafePath)."""
    return lstat(root, path) is not None


def _make_dirs(root: Path, folder: Path) -> None:
    """Create ``folder`` and its missing parents below ``root`` one at a time, refusing a
    link that appears on the way (``mkdir -p`` would follow it)."""
    checked(root, folder)
    current = root
    for part in ("", *folder.relative_to(root).parts):
        current = current / part if part else root
        try:
            os.mkdir(current)
        except FileExistsError:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                raise _link_error(current, root) from None


def _write_temp(root: Path, path: Path, data: bytes, tag: str) -> tuple[Path, os.stat_result]:
    """``data`` in a new temp file ``.<name>.<pid>-<tag>.tmp`` next to ``path``; its stat.
    ``O_EXCL`` never opens an existing file or link; a name already taken (a planted link, a
    leftover) gets a suffix."""
    checked(root, path)
    for attempt in range(100):
        temp = path.with_name(f".{path.name}.{os.getpid()}-{tag}{'' if not attempt else f'x{attempt}'}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        try:
            try:
                fd = os.open(temp, flags, 0o644)
            except FileNotFoundError:
                _make_dirs(root, path.parent)
                fd = os.open(temp, flags, 0o644)
        except FileExistsError:
            continue
        except OSError as exc:
            raise BackendError(f"cannot write {path}: {exc.strerror}") from None
        try:
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
        return temp, st
    raise BackendError(f"cannot write {path}: 100 temp file names next to it are taken; remove the "
                       f".{path.name}.*.tmp files")


@dataclass
class _Change:
    path: Path
    temp: Path | None  # None: delete
    old: bytes | None  # previous bytes (None: the file did not exist)
    done: bool = False
    pending: bool = False  # another FileTxn of the same store transaction changes it first
    keep_edits: bool = False  # a page: left alone at commit if a person changed it since it was read


class FileTxn:
    """A set of file writes and deletes under the wiki folder ``root``, applied together (see
    the module docstring)."""

    def __init__(self, root: Path, pending: Callable[[Path], bool] | None = None) -> None:
        self.root = root
        # Paths that an earlier FileTxn of the same outer transaction renames first: what is on
        # disk now is not what this one replaces, so neither "unchanged" nor "absent" holds.
        self._pending = pending or (lambda path: False)
        self._changes: dict[Path, _Change] = {}
        self._seq = 0
        self.committed = False
        self.kept: list[Path] = []  # pages a person changed meanwhile, left as they saved them (see commit)

    def __len__(self) -> int:
        return len(self._changes)

    def write(self, path: Path, data: bytes, old: bytes | None | bool = False,
              keep_edits: bool = False) -> os.stat_result | None:
        """Stage ``data`` for ``path`` and return the temp file's stat (a rename keeps the
        size and mtime, so this is the final file's stat). ``old``: the current bytes when
        the caller has them (else they are read here, for undo). A file that already holds
        exactly ``data`` is left alone (returns None). ``keep_edits``: see :meth:`commit`."""
        if old is False:
            old = read_bytes(self.root, path)
        if old == data and path not in self._changes and not self._pending(path):
            return None
        self._seq += 1
        temp, st = _write_temp(self.root, path, data, str(self._seq))
        self._stage(path, temp, lambda: old if isinstance(old, bytes) else None, keep_edits)
        return st

    def delete(self, path: Path, keep_edits: bool = False) -> None:
        """Stage the removal of ``path`` (nothing happens if it does not exist)."""
        checked(self.root, path)
        self._stage(path, None, lambda: read_bytes(self.root, path), keep_edits)

    def _stage(self, path: Path, temp: Path | None, original: Callable[[], bytes | None],
               keep_edits: bool = False) -> None:
        """Record ``temp`` (None: removal) as what ``path`` becomes; the first change of a path
        keeps its original bytes for undo, a later one replaces the earlier temp file."""
        prev = self._changes.get(path)
        if prev is not None:
            if prev.temp is not None:
                _unlink(prev.temp)
            prev.temp = temp
            prev.keep_edits = prev.keep_edits or keep_edits
        else:
            self._changes[path] = _Change(path, temp, original(), pending=self._pending(path),
                                          keep_edits=keep_edits)

    def _edited_since(self, ch: _Change) -> bool:
        """Whether a person changed the page of ``ch`` since its bytes were read (an editor's save during an
        ingest): a rename then would throw away what they saved. A page another FileTxn of the transaction
        changes first is graphmem's own change, not an edit."""
        if not ch.keep_edits or ch.pending:
            return False
        # the caller has just checked the path (commit): opened here without a second walk, never through a link
        try:
            fd = os.open(ch.path, os.O_RDONLY | _NOFOLLOW)
        except FileNotFoundError:
            return ch.old is not None
        except OSError:
            return False  # the rename that follows reports what is wrong
        try:
            size = os.fstat(fd).st_size
            if ch.old is None or size != len(ch.old):
                return True
            return os.read(fd, size + 1) != ch.old
        except OSError:
            return False
        finally:
            os.close(fd)

    def commit(self) -> None:
        """Rename every staged file into place (deletions last); on a failure put back what
        was already changed and raise BackendError. Each target is checked again just before
        (a rename replaces a link at the target itself, but a linked folder would redirect it).
        A change staged with ``keep_edits`` whose file a person saved since it was read is skipped and
        listed in ``kept``: their version stays, and the next sync indexes it."""
        order = sorted(self._changes.values(), key=lambda c: c.temp is None)
        try:
            for ch in order:
                checked(self.root, ch.path)
                if self._edited_since(ch):
                    if ch.temp is not None:
                        _unlink(ch.temp)
                        ch.temp = None
                    ch.old = None  # nothing of this path is graphmem's to put back
                    self.kept.append(ch.path)
                    continue
                if ch.temp is not None:
                    os.replace(ch.temp, ch.path)
                elif ch.old is not None or ch.pending:
                    try:
                        os.unlink(ch.path)
                    except FileNotFoundError:
                        pass
                ch.done = True
        except UnsafePath:
            self.undo()
            raise
        except OSError as exc:
            self.undo()
            raise BackendError(f"cannot update {exc.filename or 'a wiki file'}: {exc.strerror}; nothing was "
                               "changed") from None
        self.committed = True

    def touches(self, path: Path) -> bool:
        """Whether ``path`` is staged here."""
        return path in self._changes

    def undo(self) -> None:
        """Put every changed file back as it was and remove the temp files (best effort:
        whatever cannot be restored is left for the next sync to reconcile)."""
        for ch in self._changes.values():
            if ch.done:
                try:
                    if ch.old is None:
                        _unlink(ch.path)
                    else:
                        tmp, _ = _write_temp(self.root, ch.path, ch.old, "undo")
                        os.replace(tmp, ch.path)
                except (OSError, BackendError):
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


def append_line(root: Path, path: Path, text: str) -> None:
    """Append ``text`` to ``path`` with one write (O_APPEND keeps concurrent appends whole)."""
    data = text.encode("utf-8")
    fd = _open(root, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    if fd is None:  # a folder on the way vanished
        raise BackendError(f"cannot append to {path}: the folder is gone")
    try:
        os.write(fd, data)
    except OSError as exc:
        raise BackendError(f"cannot append to {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


# -- temp files of dead processes ---------------------------------------------------------------------


def remove_stale_temps(root: Path, candidates: Iterable[Path]) -> list[Path]:
    """Remove the temp files among ``candidates`` (names matching :data:`TEMP_NAME`) whose
    writer is gone; returns the removed ones. A temp file is stale when no process has its
    pid, or when the process that has it now started after the file was last written (the
    pid was reused). A live process's temp file is never touched: it may be about to be
    renamed into place."""
    removed: list[Path] = []
    boot = _boot_time()
    for path in candidates:
        m = TEMP_NAME.match(path.name)
        if m is None:
            continue
        try:
            mtime = os.lstat(checked(root, path.parent) / path.name).st_mtime
        except (OSError, BackendError):
            continue
        if not writer_gone(int(m.group("pid")), mtime, boot):
            continue
        try:
            os.unlink(path)  # a link with a temp name is removed itself, never its target
            removed.append(path)
        except OSError:
            pass  # read-only folder, or another process removed it first
    return removed


def writer_gone(pid: int, mtime: float, boot: float | None = None) -> bool:
    """Whether the process ``pid`` that last wrote a file at ``mtime`` is gone: no process has that pid,
    or the one that has it started after the file was written (the pid was reused)."""
    return not _pid_alive(pid) or _started_after(pid, mtime, _boot_time() if boot is None else boot)


def remove_abandoned(left: Iterable[tuple[Path, int]]) -> list[Path]:
    """Remove each ``(path, pid of its writer)`` whose writer is gone: the temporary file of a killed export,
    the hidden folder of a killed backup (each a whole copy). Never one a running process is still writing;
    returns the removed ones."""
    removed: list[Path] = []
    boot = _boot_time()
    for path, pid in left:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not writer_gone(pid, st.st_mtime, boot):
            continue
        try:
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed.append(path)
        except OSError:
            pass  # read-only folder, or another process removed it first
    return removed


def _pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (another user's too)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        return True
    return True


def _boot_time() -> float | None:
    try:
        with open("/proc/stat", "rb") as fh:
            for line in fh:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _started_after(pid: int, mtime: float, boot: float | None) -> bool:
    """Whether process ``pid`` started after ``mtime`` (so it cannot have written the file);
    False when that cannot be told (no /proc)."""
    if boot is None:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        start_ticks = int(data.rsplit(b")", 1)[1].split()[19])  # field 22, starttime
        start = boot + start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return False
    return mtime < start - 2.0  # btime has a 1 s resolution


def tail_lines(root: Path, path: Path, n: int, block: int = 65536) -> list[str]:
    """The last ``n`` lines starting with ``## [`` of a file, read backwards in blocks."""
    fh = open_read(root, path)
    if fh is None:
        return []
    with fh:
        fh.seek(0, os.SEEK_END)
        pos = fh.tell()
        data = b""
        while pos > 0:
            step = min(block, pos)
            pos -= step
            fh.seek(pos)
            data = fh.read(step) + data
            if data.count(b"\n## [") >= n + 1:
                break
    lines = [ln for ln in data.decode("utf-8", errors="replace").split("\n") if ln.startswith("## [")]
    return lines[-n:]


_LOG_LINE = re.compile(r"^## \[(?P<ts>[^\]]+)\] (?P<op>\S+) \| (?P<rest>.*)$")


def log_entries(wiki_dir: Path, last_n: int) -> list[tuple[str, str, str, str, str]]:
    """``(timestamp, operation, target, summary, line)`` of the last ``last_n`` entries of ``log.md``, oldest
    first (read from the end of the file: the cost does not grow with the log)."""
    out = []
    for line in tail_lines(wiki_dir, wiki_dir / "log.md", last_n) if last_n else []:
        m = _LOG_LINE.match(line)
        if m:
            target, _, summary = m.group("rest").partition(" — ")
            out.append((m.group("ts"), m.group("op"), target.strip(), summary.strip(), line))
    return out

