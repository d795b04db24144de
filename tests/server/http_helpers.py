"""Helpers shared by the HTTP server tests (a module of its own: conftest modules are not importable)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import graphmem

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
QUESTION = "Why did dispatch fail during INC-2041?"


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
    return TestClient(create_app(kb, **app_options)), kb


def error_of(resp: Any, status: int, type_: str) -> dict[str, Any]:
    """Assert ``resp`` is the JSON error ``type_`` with ``status``; return its ``error`` object."""
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"}, body
    assert body["error"]["type"] == type_, body
    assert body["error"]["message"], body
    return body["error"]
