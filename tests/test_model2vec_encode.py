"""The static backend's own encode path gives the vectors of model2vec's ``StaticModel.encode``, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem.embeddings.base import normalise_rows
from graphmem.embeddings.model2vec_backend import Model2VecEmbedder

TEXTS = [
    "Ada Lovelace\nAda Lovelace was an English mathematician and writer.",
    "Charles Babbage",
    "Charles Babbage",  # the same text twice in one call
    "the city of London",
    "",  # no tokens: a zero row
    "   \n\t ",
    "[UNK] [UNK]",  # the unknown token's own spelling
    "日本語のテキストと English words mixed",
    "Émile Zola, naïve café — “quotes” and ‘marks’",
    "😀🙃 emoji only",
    "\u0000 control \u0007 characters \ufffd",
    "x" * 5000,  # one word longer than WordPiece takes: unknown, so a zero row
    "word " * 2000,  # more tokens than max_length: truncated
    "a b",
    "c d",  # same token count as the one before: averaged together
]


@pytest.fixture(scope="module")
def embedder(model_dir: Path) -> Model2VecEmbedder:
    return Model2VecEmbedder(str(model_dir), "minilm-static-256")


def _library(e: Model2VecEmbedder, texts: list[str]) -> np.ndarray:
    return normalise_rows(e._model.encode(list(texts), show_progress_bar=False))


def test_plain_path_is_taken_for_the_static_model(embedder: Model2VecEmbedder) -> None:
    assert embedder._plain


def test_vectors_equal_the_librarys_bit_for_bit(embedder: Model2VecEmbedder) -> None:
    ours = embedder.encode(TEXTS)
    theirs = _library(embedder, TEXTS)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), embedder.dim)
    assert np.array_equal(ours, theirs)
    assert not ours[4].any() and not ours[5].any() and not ours[11].any()  # no (known) tokens
    norms = np.linalg.norm(ours[[0, 1, 3, 7, 12]], axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


def test_a_vector_does_not_depend_on_the_other_texts_of_the_call(embedder: Model2VecEmbedder) -> None:
    together = embedder.encode(TEXTS)
    alone = np.stack([embedder.encode([t])[0] for t in TEXTS])
    assert np.array_equal(together, alone)
    assert np.array_equal(together[1], together[2])


def test_truncation_matches_the_library_at_the_token_limit(embedder: Model2VecEmbedder) -> None:
    limit = embedder._model.max_length
    assert limit is not None
    words = [f"w{i}" for i in range(limit + 300)]
    texts = [" ".join(words[:n]) for n in (limit - 1, limit, limit + 1, limit + 300)]
    assert np.array_equal(embedder.encode(texts), _library(embedder, texts))


def test_corpus_sample_matches(embedder: Model2VecEmbedder, model_dir: Path) -> None:
    # Many lengths at once (each its own group of rows), as an ingest batch's chunks and names are.
    texts = [f"Title {i}\n" + " ".join(f"token{j % 97} word{(i * j) % 31}" for j in range(i % 60)) for i in range(300)]
    assert np.array_equal(embedder.encode(texts), _library(embedder, texts))


def test_other_models_use_the_librarys_encode(embedder: Model2VecEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder, "_plain", False)
    seen: list[list[str]] = []
    original = embedder._model.encode

    def spy(texts: list[str], **kwargs: object) -> np.ndarray:
        seen.append(list(texts))
        return original(texts, **kwargs)

    monkeypatch.setattr(embedder._model, "encode", spy)
    got = embedder.encode(TEXTS[:4])
    assert seen == [TEXTS[:4]]
    monkeypatch.setattr(embedder, "_plain", True)
    assert np.array_equal(got, embedder.encode(TEXTS[:4]))
