"""Discovery: the files under the paths given to a bulk ingest, and the ids they get.

Rules: hidden files and folders are skipped, ``.gitignore`` / ``.graphmemignore`` patterns of
each root honoured; symbolic links are reported and not followed unless asked; nothing that is
not a regular file is ever opened.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from ..errors import InvalidInput
from .readers import Skipped

__all__ = ["discover", "doc_id_for", "SYMLINK_SKIPPED"]


def doc_id_for(path: Path) -> str:
    """The path relative to the working directory (else absolute): the id rule of graphmem before
    issue 13, kept to find the documents of older knowledge bases (ingest/doc_ids.py has the
    current rule) and to name skipped files. The path is made absolute lexically: a followed
    symbolic link keeps its own name as its id (resolving it named the document after wherever
    the link pointed)."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_posix()


def probe(test: Callable[[], bool], unknown: bool = False) -> bool:
    """``path.is_dir()`` and friends, ``unknown`` where the answer cannot be read: pathlib swallows "no
    such file" but raises PermissionError, e.g. for a link to a folder this user may not look into."""
    try:
        return test()
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return unknown


def _ignore_patterns(root: Path, follow_symlinks: bool = False) -> list[str]:
    pats: list[str] = []
    for name in (".gitignore", ".graphmemignore"):
        f = root / name
        if not (probe(f.is_file) and (follow_symlinks or not f.is_symlink())):
            continue
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:  # ingesting what it meant to leave out would be worse than stopping
            raise InvalidInput(f"cannot read {f} ({exc.strerror}); fix its permissions or remove it, "
                               "then ingest again") from None
        if text:
            for line in text.splitlines():
                line = line.strip()
                if line and not line.startswith(("#", "!")):
                    pats.append(line)
    return pats


def _ignored(rel: str, is_dir: bool, patterns: Sequence[str]) -> bool:
    """A small, predictable subset of .gitignore: globs, trailing ``/`` for folders, leading
    ``/`` anchors to the root; a pattern without ``/`` matches a name at any depth."""
    name = rel.rsplit("/", 1)[-1]
    for p in patterns:
        dir_only = p.endswith("/")
        p = p.rstrip("/")
        if dir_only and not is_dir:
            continue
        if p.startswith("/"):
            if fnmatch.fnmatch(rel, p[1:]):
                return True
        elif "/" in p:
            if fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, "*/" + p):
                return True
        elif fnmatch.fnmatch(name, p):
            return True
    return False


SYMLINK_SKIPPED = ("symbolic link, not followed (pass --follow-symlinks, or follow_symlinks=True, "
                   "to ingest what it points to)")


OWN_FOLDER = ("the knowledge base's own folder (--home): never ingested (its wiki pages would be read back "
              "as documents, and grow on every run)")


def _folder_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def discover(paths: Iterable[str | os.PathLike[str]], glob: str | None = None,
             excludes: Sequence[str] = (), follow_symlinks: bool = False,
             id_of: Callable[[Path], str] = doc_id_for, leave_out: Path | None = None) -> Iterator[Path | Skipped]:
    """Files under ``paths`` (recursive, sorted: a folder's files, then its subfolders), minus
    hidden and ignored ones.

    Symbolic links -- inside a folder or given as a path -- are reported as Skipped and not
    followed unless ``follow_symlinks``; with it, every real folder is walked at most once, so a
    link loop cannot hang the walk. Anything that is not a regular file (FIFO, socket, device)
    is reported, never opened (reading a FIFO blocks forever). Skipped entries inside a folder
    are named by ``id_of`` (the id their file would have had). ``leave_out`` (the knowledge base's
    own folder) is never walked, nor anything under it.
    """
    own = _folder_key(leave_out) if leave_out is not None else None
    own_real = Path(os.path.realpath(leave_out)) if leave_out is not None else None
    for raw in paths:
        root = Path(raw)
        if "\x00" in str(root):  # os calls raise ValueError for it, not OSError
            yield Skipped(str(raw), "no such file or folder (the path holds a NUL character)")
            continue
        # by the real path, so that a link to the folder or to a folder above it is caught too
        real = Path(os.path.realpath(root))
        if own_real is not None and (own_real == real or own_real in real.parents):
            yield Skipped(str(raw), OWN_FOLDER)
            continue
        if probe(root.is_symlink) and not follow_symlinks:
            yield Skipped(str(raw), SYMLINK_SKIPPED)
            continue
        try:
            root.stat()
        except FileNotFoundError:
            yield Skipped(str(raw), "broken symbolic link" if probe(root.is_symlink) else "no such file or folder")
            continue
        except OSError as exc:
            yield Skipped(str(raw), f"cannot read ({exc.strerror})")
            continue
        if not probe(root.is_dir):
            yield root if probe(root.is_file) else Skipped(str(raw), _NOT_REGULAR)
            continue
        yield from _walk(root, glob, list(excludes) + _ignore_patterns(root, follow_symlinks), follow_symlinks,
                         id_of, own)


_NOT_REGULAR = "not a regular file (FIFO, socket or device); not read"


def _walk(root: Path, glob: str | None, patterns: Sequence[str], follow: bool,
          id_of: Callable[[Path], str], own: tuple[int, int] | None = None) -> Iterator[Path | Skipped]:
    st = root.stat()
    visited = {(st.st_dev, st.st_ino)}
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        folder, rel_base = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield Skipped(id_of(folder), f"cannot read folder ({exc.strerror})")
            continue
        subfolders: list[tuple[Path, str]] = []
        for entry in entries:
            name, rel = entry.name, rel_base + entry.name
            if name.startswith("."):
                continue
            path = Path(entry.path)
            try:
                link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=follow)
            except OSError as exc:
                yield Skipped(id_of(path), f"cannot read ({exc.strerror})")
                continue
            if _ignored(rel, is_dir or (link and not follow and probe(path.is_dir)), patterns):
                continue
            if link and not follow:
                if glob and not probe(path.is_dir) and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(rel, glob)):
                    continue
                yield Skipped(id_of(path), SYMLINK_SKIPPED)
                continue
            if is_dir:
                try:
                    st = entry.stat()
                except OSError as exc:
                    yield Skipped(id_of(path), f"cannot read ({exc.strerror})")
                    continue
                if (st.st_dev, st.st_ino) == own:
                    yield Skipped(id_of(path), OWN_FOLDER)
                    continue
                if (st.st_dev, st.st_ino) in visited:  # a link back to a folder already walked (a loop)
                    yield Skipped(id_of(path), "symbolic link to a folder that is already being ingested; "
                                             "not walked again")
                    continue
                visited.add((st.st_dev, st.st_ino))
                subfolders.append((path, rel + "/"))
                continue
            if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(rel, glob)):
                continue
            try:
                regular = entry.is_file(follow_symlinks=follow)
            except OSError:
                regular = False
            if not regular:
                yield Skipped(id_of(path), "broken symbolic link" if link and not probe(path.exists) else _NOT_REGULAR)
                continue
            yield path
        stack.extend(reversed(subfolders))
