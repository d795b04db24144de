"""Fixtures of the HTTP server tests: a knowledge base of the example corpus, in-process clients."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the 'server' extra (FastAPI) is not installed")
pytest.importorskip("httpx", reason="httpx (FastAPI's TestClient) is not installed")

from http_helpers import build_corpus, make_client  # noqa: E402


@pytest.fixture(scope="module")
def corpus_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A knowledge base of examples/ shared by a module's read-only tests."""
    return build_corpus(tmp_path_factory.mktemp("corpus") / "kb")


@pytest.fixture()
def corpus_client(corpus_home: Path) -> Iterator[Any]:
    """A client of a server over the example corpus (for reads: the corpus is shared by the module)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client, kb = make_client(corpus_home)
    try:
        yield client
    finally:
        kb.close()


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[Any]:
    """A client of a server over an empty knowledge base of its own."""
    c, kb = make_client(tmp_path / "kb")
    try:
        yield c
    finally:
        kb.close()
