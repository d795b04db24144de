"""Shared fixtures: a fresh knowledge base in a temp dir, the seed's quick-start data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmem

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL_DIR = REPO.parent / "shared" / "models" / "minilm-static-256"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--model-dir", default=None,
                     help="Model2Vec model folder for embedding tests (default: $GRAPHMEM_TEST_MODEL or "
                          "../shared/models/minilm-static-256)")


def pytest_configure(config: pytest.Config) -> None:
    _hypothesis_profile()
    # No test may reach the network: model hubs are told to stay offline.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def _hypothesis_profile() -> None:
    """Property tests: no per-example deadline (a shared 2-core machine is noisy), a bounded
    number of examples so the suite stays within minutes, and no example database in the
    checkout (CI runs on a fresh clone)."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # the dev extra is not installed: property tests are skipped by importorskip
        return
    settings.register_profile("graphmem", deadline=None, max_examples=60, database=None,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    settings.load_profile("graphmem")


@pytest.fixture(autouse=True)
def _no_default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run without an embedding model unless they ask for one (the default model would
    be downloaded from a hub)."""
    monkeypatch.setenv("GRAPHMEM_EMBED_MODEL", "none")


@pytest.fixture(scope="session")
def model_dir(request: pytest.FixtureRequest) -> Path:
    """The offline static model; tests using it are skipped (with the reason) where it is absent."""
    raw = request.config.getoption("--model-dir") or os.environ.get("GRAPHMEM_TEST_MODEL") or DEFAULT_MODEL_DIR
    path = Path(raw)
    if not (path / "model.safetensors").exists():
        pytest.skip(f"embedding model folder {path} not found; pass --model-dir or set GRAPHMEM_TEST_MODEL")
    return path

QUICKSTART_TEXT = "System crashes due to memory leaks. Memory leaks occur when objects are not released."
QUICKSTART_ENTITIES: list[dict[str, Any]] = [
    {"name": "memory leak", "type": "issue", "supporting_text": "Memory leaks occur when objects are not released."},
    {"name": "system crash", "type": "issue", "supporting_text": "System crashes due to memory leaks."},
]
QUICKSTART_RELATIONS: list[dict[str, Any]] = [
    {"source": "memory leak", "target": "system crash", "type": "causes", "confidence": 1.0,
     "supporting_text": "System crashes due to memory leaks."},
]


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[graphmem.KnowledgeBase]:
    with graphmem.open(tmp_path / "kb") as k:
        yield k


@pytest.fixture
def quickstart(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    return kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", QUICKSTART_TEXT,
                                  QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)


def snapshot(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    """Everything countable in the store, to prove a rejected operation changed nothing."""
    s = kb.stats()
    s.pop("size_bytes")
    s["event_ids"] = [e.id for e in kb.events.list(limit=100000)]
    return s


def write_tree(folder: Path, files: dict[str, str]) -> Path:
    """``folder`` holding ``files`` (name -> UTF-8 text); returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder

