"""Search products on one BLAS thread: the same numbers, and the thread setting put back."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from graphmem.retrieval.blas import local_thread_setter, matvec


def test_matvec_equals_the_plain_product() -> None:
    rng = np.random.default_rng(3)
    mat = rng.standard_normal((300, 64)).astype(np.float32)
    vec = rng.standard_normal(64).astype(np.float32)
    got = matvec(mat, vec)
    assert got.shape == (300,) and got.dtype == np.float32
    assert np.array_equal(got, mat @ vec)
    assert matvec(mat[:0], vec).shape == (0,)


def test_matvec_restores_the_calling_threads_setting_and_leaves_other_threads_alone() -> None:
    setter = local_thread_setter()
    if setter is None:
        pytest.skip("no OpenBLAS with a per-thread thread count here")
    mat = np.ones((50, 8), dtype=np.float32)
    before = setter(3)
    matvec(mat, np.ones(8, dtype=np.float32))
    assert setter(before) == 3  # what the caller had, not the 1 used inside
    seen: list[int] = []

    def other() -> None:
        mine = setter(2)
        matvec(mat, np.ones(8, dtype=np.float32))
        seen.append(setter(mine))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [2]
