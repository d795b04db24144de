"""Helpers and fixtures shared by the HTTP server tests. Not a conftest.py: the suite's tests import
``conftest`` by name, and a second conftest module would shadow tests/conftest.py; the test modules
import the fixtures they use from here."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmem

pytest.importorskip("fastapi", reason="the 'server' extra (FastAPI) is not installed")
pytest.importorskip("httpx", reason="httpx (FastAPI's TestClient) is not installed")

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
QUESTION = "Why did dispatch fail during INC-2041?"
# The test clients talk to the server as a local browser would: a tokenless server accepts only loopback
# Host headers (and its own Origin), so "http://testserver" would be refused.
LOCAL_URL = "http://127.0.0.1:8765"


def build_corpus(home: Path) -> Path:
    """Ingest the example corpus into ``home`` (offline extractor, no embedding model)."""
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mp.setenv("GRAPHMEM_EMBED_MODEL", "none")
        with graphmem.open(home) as kb:
            kb.ingest_paths([EXAMPLES])
    return home


def make_client(home: Path, **app_options: Any) -> tuple[Any, Any]:
    """A TestClient of a server over the knowledge base at ``home`` (created if absent), and the kb."""
    from fastapi.testclient import TestClient

    from graphmem.server.http import create_app

    kb = graphmem.open(home)
    return TestClient(create_app(kb, **app_options), base_url=LOCAL_URL), kb


def error_of(resp: Any, status: int, type_: str) -> dict[str, Any]:
    """Assert ``resp`` is the JSON error ``type_`` with ``status``; return its ``error`` object."""
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"}, body
    assert body["error"]["type"] == type_, body
    assert body["error"]["message"], body
    return body["error"]


@pytest.fixture(scope="module", name="corpus_home")
def corpus_home_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A knowledge base of examples/ shared by a module's read-only tests."""
    return build_corpus(tmp_path_factory.mktemp("corpus") / "kb")


@pytest.fixture(name="corpus_client")
def corpus_client_fixture(corpus_home: Path) -> Iterator[Any]:
    """A client of a server over the example corpus (for reads: the corpus is shared by the module)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client, kb = make_client(corpus_home)
    try:
        yield client
    finally:
        kb.close()


@pytest.fixture(name="client")
def client_fixture(tmp_path: Path) -> Iterator[Any]:
    """A client of a server over an empty knowledge base of its own."""
    c, kb = make_client(tmp_path / "kb")
    try:
        yield c
    finally:
        kb.close()
