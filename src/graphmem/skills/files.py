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
    and SKILL.md files are left out (and added to ``skipped``, sorted) unless ``follow_symlinks``."""
    out: list[tuple[str, Path]] = []
    links: list[Skip] = []
    walked: set[tuple[int, int]] = set()
    # Real folders first, linked ones after: a folder reachable both ways keeps its real path as id.
    pending: list[Path] = [root]
    linked: list[Path] = []
    while pending or linked:
        folder = pending.pop() if pending else linked.pop()
        try:
            if follow_symlinks:
                st = folder.stat()
                if (st.st_dev, st.st_ino) in walked:  # reached again through a link: a loop or a twin
                    continue
                walked.add((st.st_dev, st.st_ino))
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)  # popped in name order
        except OSError:  # unreadable or vanished folder: nothing to index there
            continue
        for entry in entries:
            # DirEntry answers is_symlink/is_dir from the directory listing (no extra system call).
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if entry.name in SKIP_DIRS or entry.name.startswith("."):
                    continue
                if is_link and not follow_symlinks:
                    links.append(Skip(entry.path, f"symlinked folder, {FOLLOW_HINT}"))
                    continue
                (linked if is_link else pending).append(Path(entry.path))
            elif entry.name == "SKILL.md":
                if is_link and not follow_symlinks:
                    links.append(Skip(entry.path, f"symlinked SKILL.md, {FOLLOW_HINT}"))
                    continue
                rel = folder.relative_to(root).as_posix()
                out.append((root.name if rel == "." else rel, folder / "SKILL.md"))
    if skipped is not None:
        skipped.extend(sorted(links, key=lambda s: s.path))
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
