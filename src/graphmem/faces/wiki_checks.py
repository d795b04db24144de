"""Small checks the wiki face makes before reading: counts given by the caller, a file's stat key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import GraphmemError, InvalidInput
from ..wiki.files import lstat

__all__ = ["check_count", "stat_key"]


def stat_key(root: Path, path: Path) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of a page file, None when absent or a link (sync reports links)."""
    try:
        st = lstat(root, path)
    except GraphmemError:  # a link there: sync reports it
        return None
    return None if st is None else (st.st_size, st.st_mtime_ns)


def check_count(name: str, value: Any, allow_none: bool = False) -> None:
    """InvalidInput naming ``name`` unless ``value`` is a non-negative integer (or None if allowed)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{name}: expected a non-negative integer, got {value!r}")
