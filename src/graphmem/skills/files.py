"""Finding and reading SKILL.md files without following links you did not ask for.

A skills folder is often a checkout someone else controls, so by default a build does not
follow symlinks below the folder it was given: a ``SKILL.md`` that is a link (to
``~/.ssh/id_rsa``, say) and a folder that is a link are skipped and reported, naming the flag
that follows them (``--follow-symlinks``, ``follow_symlinks=True``). The folder given itself may
be a link: you named it. When links are followed, every real folder is walked once, so a link
back to an ancestor ends the walk instead of looping.

A file is read only when it is a regular file no larger than the cap, checked on the open file
before anything is read (and the read stops at the cap, should the file grow meanwhile). A FIFO
or device named SKILL.md is opened non-blocking and skipped, so it never hangs a build.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SKIP_DIRS", "FOLLOW_HINT", "Skip", "find_skill_files", "read_skill_file", "TooBig", "NotRegular"]

SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv"}
FOLLOW_HINT = "not followed; pass --follow-symlinks (follow_symlinks=True) to index it"


@dataclass(frozen=True)
class Skip:
    """A file or folder a build did not index, and why."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


class TooBig(Exception):
    """The file is larger than the cap (``size`` bytes, as far as known)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def find_skill_files(root: Path, follow_symlinks: bool = False, skipped: list[Skip] | None = None
                     ) -> list[tuple[str, Path]]:
    """``(skill id, path of SKILL.md)`` under ``root``, sorted; the id is the skill folder
    relative to the root (the root's own name when SKILL.md sits at the top). Symlinked folders
    and SKILL.md files are left out (and added to ``skipped``) unless ``follow_symlinks``."""
    out: list[tuple[str, Path]] = []
    walked: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=follow_symlinks):
        folder = Path(dirpath)
        if follow_symlinks:
            try:
                st = folder.stat()
            except OSError:
                dirnames[:] = []
                continue
            if (st.st_dev, st.st_ino) in walked:  # reached again through a link: a loop or a twin
                dirnames[:] = []
                continue
            walked.add((st.st_dev, st.st_ino))
        keep = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS or d.startswith("."):
                continue
            if not follow_symlinks and (folder / d).is_symlink():
                if skipped is not None:
                    skipped.append(Skip(str(folder / d), f"symlinked folder, {FOLLOW_HINT}"))
                continue
            keep.append(d)
        dirnames[:] = keep
        if "SKILL.md" in filenames:
            path = folder / "SKILL.md"
            if not follow_symlinks and path.is_symlink():
                if skipped is not None:
                    skipped.append(Skip(str(path), f"symlinked SKILL.md, {FOLLOW_HINT}"))
                continue
            rel = folder.relative_to(root).as_posix()
            out.append((root.name if rel == "." else rel, path))
    return sorted(out)


class NotRegular(Exception):
    """The path is not a regular file (a FIFO, a device, a folder)."""


def read_skill_file(path: Path, max_bytes: int, follow_symlinks: bool = False) -> bytes:
    """The bytes of ``path``, at most ``max_bytes``. Raises :class:`TooBig` (nothing read),
    :class:`NotRegular`, or ``OSError`` (a link when ``follow_symlinks`` is off: ELOOP)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(str(path))
        if st.st_size > max_bytes:
            raise TooBig(st.st_size)
        chunks: list[bytes] = []
        remaining = max_bytes + 1  # one byte more tells a file that grew past the cap
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise TooBig(max(st.st_size, len(data)))
        return data
    finally:
        os.close(fd)
