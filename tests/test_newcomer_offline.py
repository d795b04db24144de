"""Issue 13 item 1: offline, the configured model that cannot load degrades to BM25 + graph with
ONE short line on stderr per command naming the fix -- no traceback, nothing on stdout, whatever
the loader raised (no network, dead proxy, missing folder, broken model files)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphmem
from graphmem.embeddings import EmbedderUnavailable, load_embedder

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / ("graphmem.exe" if os.name == "nt" else "graphmem")


def _offline_env(tmp: Path, **extra: str) -> dict[str, str]:
    """No network: a dead proxy (loopback port 9, nothing listens), an empty model cache, and
    GRAPHMEM_EMBED_MODEL unset (the suite's autouse fixture sets it to none)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")
           and k.lower() not in ("no_proxy", "hf_hub_offline", "transformers_offline")}
    home = tmp / "home"
    env.update(HOME=str(home), HF_HOME=str(home / "hf"), XDG_CACHE_HOME=str(home / "cache"),
               HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               https_proxy="http://127.0.0.1:9", http_proxy="http://127.0.0.1:9", **extra)
    return env


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _model_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if "embedding" in ln or "potion" in ln or "model" in ln.lower()]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("offline")
    shutil.copytree(REPO / "examples", work / "examples")
    return work


@pytest.mark.parametrize("offline_flag", ["0", "1"], ids=["dead-proxy", "hf-hub-offline"])
def test_default_model_offline_degrades_with_one_short_stderr_line(corpus, offline_flag):
    env = _offline_env(corpus / offline_flag, HF_HUB_OFFLINE=offline_flag)
    home = f"kb-{offline_flag}"
    ing = _run(env, corpus, "--home", home, "ingest", "examples/")
    assert ing.returncode == 0, ing.stderr[-2000:]
    for p in (ing, _run(env, corpus, "--home", home, "search", "dispatch outage"),
              _run(env, corpus, "--home", home, "memory", "search", "dispatch", "--user", "u1")):
        assert "Traceback" not in p.stderr + p.stdout, p.stderr[-2000:]
        assert _model_lines(p.stdout) == [], p.stdout  # nothing about the model on stdout
        lines = _model_lines(p.stderr)
        assert len(lines) == 1, lines  # once per command
        line = lines[0]
        assert len(line) <= 200, line
        assert "BM25 + graph" in line and "graphmem init --embedder model2vec:DIR" in line, line
    search = _run(env, corpus, "--home", home, "search", "dispatch outage")
    assert search.returncode == 0 and "INC-2041" in search.stdout


@pytest.mark.parametrize("breakage", ["missing", "empty-folder", "bad-safetensors", "bad-tokenizer", "bad-config"])
def test_any_load_failure_is_embedder_unavailable(tmp_path, breakage, request):
    """What the loaders really raise for a bad folder (ValueError, SafetensorError, tokenizers'
    plain Exception, AttributeError on a config that is not an object) becomes EmbedderUnavailable."""
    folder = tmp_path / "model"
    if breakage != "missing":
        folder.mkdir()
    if breakage.startswith("bad-"):
        model = request.getfixturevalue("model_dir")  # skips, with the reason, where ../shared is absent
        shutil.rmtree(folder)
        shutil.copytree(model, folder)
        name = {"bad-safetensors": "model.safetensors", "bad-tokenizer": "tokenizer.json",
                "bad-config": "config.json"}[breakage]
        (folder / name).write_text({"bad-config": "[1]"}.get(breakage, "{"), encoding="utf-8")
    with pytest.raises(EmbedderUnavailable) as err:
        load_embedder(f"model2vec:{folder}")
    assert str(folder) in str(err.value) or folder.name in str(err.value)


def test_library_reports_once_per_process_and_search_still_answers(tmp_path):
    spec = f"model2vec:{tmp_path / 'no-such-model'}"
    for i in range(2):
        with graphmem.open(tmp_path / f"kb{i}", config={"embeddings": {"model": spec}}) as kb:
            import warnings

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                kb.ingest_with_content("d1", "Dispatch outage", "s", "The dispatch API failed during INC-2041.")
                r = kb.search("dispatch outage", k=2)
            said = [str(w.message) for w in caught if "no embedding model" in str(w.message)]
            assert said == ([] if i else [kb.embedder_note]), said  # the second knowledge base stays quiet
            assert r.hits and r.hits[0].doc_id == "d1"
            assert sum("no embedding model" in n for n in kb.notes) == 1  # still in the library's notes
