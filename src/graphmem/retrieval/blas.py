"""Matrix-vector products of a search on one BLAS thread, for the calling thread only.

OpenBLAS splits even a 9,530 x 256 matrix-vector product over its threads, and on a busy machine
the hand-off costs 20-50x the product itself (8-18 ms against 0.35 ms). OpenBLAS 0.3.27+ has a
per-thread setting (``openblas_set_num_threads_local``): a search sets it to 1 around its own
products and puts the previous value back, so the user's thread settings for their other work, and
other threads' products, are untouched. Where that call is not available (another BLAS, an older
OpenBLAS, not Linux) products run as they always did.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["matvec", "local_thread_setter"]

_SETTER_NAMES = ("openblas_set_num_threads_local", "scipy_openblas_set_num_threads_local")
_found: list[Callable[[int], int] | None] = []
_lock = threading.Lock()


def _openblas_paths() -> list[str]:
    """Paths of the OpenBLAS libraries loaded in this process (numpy's own first)."""
    paths: list[str] = []
    libs = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    paths += [str(p) for p in sorted(libs.glob("*openblas*"))]
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            paths += [line.split()[-1] for line in fh if "openblas" in line.lower() and "/" in line]
    except OSError:
        pass
    return list(dict.fromkeys(paths))


def local_thread_setter() -> Callable[[int], int] | None:
    """OpenBLAS's per-thread ``set_num_threads_local`` (returns the previous value), or None."""
    with _lock:
        if not _found:
            _found.append(_lookup())
        return _found[0]


def _lookup() -> Callable[[int], int] | None:
    for path in _openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTER_NAMES:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
                return fn
    return None


def matvec(mat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """``mat @ vec`` on one BLAS thread of the calling thread (see the module docstring)."""
    setter = local_thread_setter()
    if setter is None:
        return mat @ vec
    previous = setter(1)
    try:
        return mat @ vec
    finally:
        setter(previous)
