"""The id a file's document gets, the same wherever the command runs.

Rule: a file's id is its path relative to the *parent* of the path given on the command line —
a file given directly is its name (``dispatch-api.md``), the files of a folder begin with the
folder's name (``examples/dispatch-api.md``, whether the command said ``examples/``,
``../examples`` or ``/abs/examples``). Folders ingested before are remembered (absolute paths, in
the knowledge base): a file inside one keeps that folder's ids, so re-ingesting a subfolder, or
one file of an ingested folder, never makes a second document; where several remembered
folders contain a file, the earliest one remembered wins (ingesting the parent of a folder
ingested alone keeps the ids that folder's documents already have).

Older knowledge bases named files by their path relative to the working directory: a file
whose new id is not stored but whose old id is keeps the old id (re-ingest from the same folder
as before adds nothing). Two different files that would get one id in the same command (two
folders both named ``docs`` given together) are refused before anything is written.

Across commands, each stored document records the absolute path of the file it came from
(metadata ``source_file``). A file whose id belongs to a document recorded from a *different*
file (``p2/docs/x.md`` after ``p1/docs/x.md``) refuses the whole command before anything is
written: replacing the document would turn one file's text into another's version 2, and
``--prune`` of either folder would then delete the other's documents. Refusing is the simplest
rule that cannot lose data (a distinct automatic id would differ depending on which folder came
first); a moved file is refused too -- the message says how to go on. Documents stored before
the path was recorded have none: for them the id alone decides, as before.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from .discover import doc_id_for as cwd_relative_id
from .discover import probe

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["DocIds", "ROOTS_KEY", "SOURCE_FILE_KEY", "absolute", "same_file"]

ROOTS_KEY = "ingest.roots"
SOURCE_FILE_KEY = "source_file"  # document metadata: absolute path of the file it was read from
_MAX_ROOTS = 1000  # remembered folders (an ingest of one folder inside another adds none)


def absolute(path: str | os.PathLike[str]) -> Path:
    """Absolute without resolving symbolic links (a followed link keeps its own name)."""
    return Path(os.path.abspath(path))


def same_file(recorded: str, path: Path) -> bool:
    """Whether ``recorded`` (a stored absolute path) names the file ``path``: equal paths, or two
    spellings of one existing file (a symbolic link in the folder part, a case-insensitive disk)."""
    if recorded == str(path):
        return True
    try:
        return os.path.samefile(recorded, path)
    except OSError:  # one of them is gone: different files
        return False


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _posix(rel: str) -> str:
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


class DocIds:
    """The id rule of one ingest command (see the module docstring)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        raw = ctx.store.get_meta(ROOTS_KEY)
        try:
            self.roots: list[Path] = [Path(p) for p in json.loads(raw)] if raw else []
        except (ValueError, TypeError):  # a damaged value only loses the memory of past folders
            self.roots = []
        self._ids: dict[str, Path] = {}
        self._prefixes: list[tuple[str, int]] | None = None

    def _root_prefixes(self) -> list[tuple[str, int]]:
        """``(prefix of files inside a remembered folder, length of its parent's prefix)``."""
        if self._prefixes is None or len(self._prefixes) != len(self.roots):
            self._prefixes = [(str(r).rstrip(os.sep) + os.sep, len(str(r.parent).rstrip(os.sep) + os.sep))
                              for r in self.roots]
        return self._prefixes

    def anchor_for(self, given: str | os.PathLike[str]) -> Path:
        """The folder ids of files under ``given`` are relative to, unless a remembered folder
        contains the file (see :meth:`id_for`)."""
        path = absolute(given)
        for root in self.roots:
            if _inside(path, root):
                return root.parent
        return path.parent

    def id_for(self, path: Path, anchor: Path) -> str:
        """The id of the file ``path`` found under a given path whose anchor is ``anchor``."""
        # On strings: this runs once per discovered file, and pathlib's parents/relative_to
        # made re-ingesting 3,000 unchanged files ~25% slower.
        p = os.path.abspath(path)
        for inside, strip in self._root_prefixes():
            if p.startswith(inside):
                return _posix(p[strip:])
        base = str(anchor).rstrip(os.sep) + os.sep
        return _posix(p[len(base):]) if p.startswith(base) else Path(p).as_posix()

    def claim(self, doc_id: str, path: Path) -> bool:
        """Register ``doc_id`` for ``path`` in this command: False when the same file was already
        listed (given twice); InvalidInput when another file has the id."""
        p = absolute(path)
        other = self._ids.get(doc_id)
        if other is None:
            self._ids[doc_id] = p
            return True
        if other == p:
            return False
        raise InvalidInput(
            f"'{other}' and '{p}' would both be document '{doc_id}' (ids are paths relative to the folder "
            f"that holds each folder you give); give folders whose names differ -- e.g. their parent "
            f"folders -- so that their ids differ (ingested separately, one would replace the other)")

    def refuse_other_files(self, files: Sequence[tuple[Path, str]]) -> None:
        """InvalidInput when a file's id belongs to a stored document recorded from another file
        (see the module docstring); documents without a recorded file are not checked."""
        clashes: list[tuple[str, str, Path]] = []
        for start in range(0, len(files), 500):
            part = files[start:start + 500]
            recorded = self.ctx.store.document_source_files(doc_id for _, doc_id in part)
            if not recorded:
                continue
            for path, doc_id in part:
                old = recorded.get(doc_id)
                if old is not None and not same_file(old, absolute(path)):
                    clashes.append((doc_id, old, absolute(path)))
        if not clashes:
            return
        doc_id, old, new = clashes[0]
        more = f" (and {len(clashes) - 1} more file(s) like it)" if len(clashes) > 1 else ""
        raise InvalidInput(
            f"'{new}' would be document '{doc_id}', which was ingested from '{old}'{more}; nothing was "
            f"ingested (ids are paths relative to the folder that holds each PATH). To keep both, ingest "
            f"from a folder whose name differs -- e.g. the parent folder, so the ids begin with its name; "
            f"to replace the old document, delete it first (graphmem docs rm '{doc_id}')")

    def keep_older_ids(self, files: Sequence[tuple[Path, str]]) -> dict[str, str]:
        """``new id -> old id`` for files stored by an older graphmem under their path relative
        to the working directory, whose new id is not stored yet."""
        pairs = [(new, cwd_relative_id(path)) for path, new in files]
        pairs = [(new, old) for new, old in pairs if new != old]
        keep: dict[str, str] = {}
        store = self.ctx.store
        for start in range(0, len(pairs), 500):
            part = pairs[start:start + 500]
            known = store.document_hashes([x for pair in part for x in pair])
            keep.update({new: old for new, old in part if new not in known and old in known})
        return keep

    def remember(self, folders: Iterable[str | os.PathLike[str]]) -> None:
        """Remember folders just ingested (those not inside one remembered already)."""
        added = False
        for f in folders:
            p = absolute(f)
            if probe(p.is_dir) and not any(_inside(p, r) for r in self.roots) and len(self.roots) < _MAX_ROOTS:
                self.roots.append(p)
                added = True
        # A read-only knowledge base (an ingest of unchanged files works there) stays untouched.
        if added and not self.ctx.read_only:
            with self.ctx.store.transaction():
                self.ctx.store.set_meta(ROOTS_KEY, json.dumps([str(r) for r in self.roots]))

    def prune_bases(self, given: str | os.PathLike[str]) -> list[tuple[str, Path]]:
        """``(id prefix, folder the ids are relative to)`` of the documents that came from files
        under the folder ``given``: the current rule, remembered folders inside it, and the older
        working-directory rule."""
        root = absolute(given)
        out: list[tuple[str, Path]] = []

        def add(folder: Path, base: Path) -> None:
            entry = (folder.relative_to(base).as_posix().rstrip("/") + "/", base)
            if entry not in out:
                out.append(entry)

        add(root, self.anchor_for(root))
        for r in self.roots:
            if _inside(r, root):
                add(r, r.parent)
        # an absolute old id joins onto the working directory as itself
        entry = (cwd_relative_id(root).rstrip("/") + "/", Path.cwd())
        if entry not in out:
            out.append(entry)
        return out
