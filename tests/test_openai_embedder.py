"""The OpenAI-compatible embeddings backend against the local fake server (no network)."""

from __future__ import annotations

import math
import socket
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from fake_openai import FakeOpenAI, Recorded, Reply, embedding_reply
from graphmem.embeddings.base import Embedder, EmbedderUnavailable
from graphmem.embeddings.openai_backend import DEFAULT_BASE_URL, OpenAIEmbedder
from graphmem.errors import BackendError

KEY = "sk-test-EMBED-456"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


def make(server: FakeOpenAI, **kwargs: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {"base_url": server.base_url, "api_key": KEY, "timeout": 5.0, "backoff_base": 0.0}
    options.update(kwargs)
    return OpenAIEmbedder(options.pop("model", "test-embedder"), **options)


def vector_for(text: str) -> list[float]:
    """A deterministic, unnormalised 3-d vector per text: [len, 1, 0] * 2 (norm != 1)."""
    return [2.0 * len(text), 2.0, 0.0]


def unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def echo(req: Recorded) -> Reply:
    """Embeds each input with vector_for, listing the items in reverse index order."""
    texts = req.body["input"]
    return embedding_reply([vector_for(t) for t in texts], order=reversed(range(len(texts))))


# ------------------------------------------------------------------ request shape, batching, order

def test_batches_keep_input_order_and_send_the_key(server: FakeOpenAI) -> None:
    server.responder = echo
    emb = make(server, batch_size=2)
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    out = emb.encode(texts)

    assert [r.body for r in server.requests] == [
        {"model": "test-embedder", "input": ["a", "bb"]},
        {"model": "test-embedder", "input": ["ccc", "dddd"]},
        {"model": "test-embedder", "input": ["eeeee"]},
    ]
    assert {r.path for r in server.requests} == {"/v1/embeddings"}
    assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in server.requests)
    assert server.requests[0].headers["Content-Type"] == "application/json"
    assert out.dtype == np.float32 and out.shape == (5, 3)
    expected = np.array([unit(vector_for(t)) for t in texts], dtype=np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert out[0].tolist() == pytest.approx([1 / math.sqrt(2), 1 / math.sqrt(2), 0.0])
    assert emb.dim == 3 and len(server.requests) == 3  # learnt from the answers: no probe


def test_items_are_placed_by_index_not_list_order(server: FakeOpenAI) -> None:
    server.replies.append(embedding_reply([[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]], order=[2, 0, 1]))
    out = make(server).encode(["x", "y", "z"])
    np.testing.assert_allclose(out, [[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], rtol=1e-6)
    assert server.requests[0].body["input"] == ["x", "y", "z"]


def test_rows_are_normalised_and_zero_rows_stay_zero(server: FakeOpenAI) -> None:
    server.replies.append(embedding_reply([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [0.0, -2.0, 0.0]]))
    out = make(server).encode(["p", "q", "r"])
    np.testing.assert_allclose(out, [[0.6, 0.8, 0.0], [0.0, 0.0, 0.0], [0.0, -1.0, 0.0]], rtol=1e-6)
    assert np.linalg.norm(out, axis=1).tolist() == pytest.approx([1.0, 0.0, 1.0])


def test_model_id_repr_and_protocol(server: FakeOpenAI) -> None:
    emb = make(server, model="text-embedding-3-small")
    assert emb.model_id == "openai:text-embedding-3-small"
    assert emb.url == f"{server.base_url}/embeddings"
    assert KEY not in repr(emb)
    server.replies.append(embedding_reply([[1.0, 2.0, 2.0, 4.0]]))
    assert isinstance(emb, Embedder)  # may read dim (Python < 3.12 uses hasattr): one probe at most
    assert emb.dim == 4


# ------------------------------------------------------------------ dimension probe

def test_dim_probes_once_then_caches(server: FakeOpenAI) -> None:
    server.responder = echo
    emb = make(server)
    assert server.requests == []  # construction sends nothing
    assert emb.dim == 3
    assert emb.dim == 3
    (probe,) = server.requests
    assert probe.body["model"] == "test-embedder" and len(probe.body["input"]) == 1
    assert isinstance(probe.body["input"][0], str) and probe.body["input"][0].strip()


def test_empty_input_sends_no_texts(server: FakeOpenAI) -> None:
    server.responder = echo
    emb = make(server)
    assert emb.dim == 3
    out = emb.encode([])
    assert out.shape == (0, 3) and out.dtype == np.float32
    assert len(server.requests) == 1  # only the probe
    fresh = make(server)
    assert fresh.encode([]).shape == (0, 3)
    assert len(server.requests) == 2  # a fresh embedder must probe to know the width
    assert all(len(r.body["input"]) == 1 for r in server.requests)


def test_wrong_dimension_in_a_later_batch_is_an_error(server: FakeOpenAI) -> None:
    server.replies.extend([embedding_reply([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
                           embedding_reply([[1.0, 0.0], [0.0, 1.0]])])
    emb = make(server, batch_size=2)
    with pytest.raises(BackendError) as info:
        emb.encode(["a", "b", "c", "d"])
    message = str(info.value)
    assert message.startswith("embedding model openai:test-embedder: ")
    assert "2-dimensional vectors for texts 2-3" in message and "3-dimensional" in message
    assert "dimension" in message and len(server.requests) == 2


def test_wrong_dimension_after_the_probe_is_an_error(server: FakeOpenAI) -> None:
    server.replies.extend([embedding_reply([[1.0, 0.0, 0.0, 0.0]]), embedding_reply([[1.0, 0.0, 0.0]])])
    emb = make(server)
    assert emb.dim == 4
    with pytest.raises(BackendError, match=r"3-dimensional vectors for text 0, but 4-dimensional"):
        emb.encode(["hello"])


def test_malformed_answers_are_clear_errors(server: FakeOpenAI) -> None:
    server.replies.extend([
        Reply(200, {"data": [{"index": 0, "embedding": [1.0]}]}),  # one item for two texts
        Reply(200, {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}),
        Reply(200, "<html>not json</html>"),
        Reply(200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]}),
    ])
    emb = make(server)
    with pytest.raises(EmbedderUnavailable, match=r"returned 1 embeddings for 2 input texts \(texts 0-1\)"):
        emb.encode(["a", "b"])
    with pytest.raises(EmbedderUnavailable, match="returned index 0 twice"):
        emb.encode(["a", "b"])
    with pytest.raises(EmbedderUnavailable, match="did not answer JSON; is base_url an OpenAI-compatible API"):
        emb.encode(["a", "b"])
    with pytest.raises(EmbedderUnavailable, match=r"different dimensions \[1, 2\]"):
        emb.encode(["a", "b"])


# ------------------------------------------------------------------ HTTP failures

def test_429_then_200_is_retried_honouring_retry_after(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []  # the retry loop's sleeps, recorded: the delay chosen is checked, not the wall clock
    monkeypatch.setattr("graphmem.openai_http.time.sleep", waits.append)
    server.replies.extend([Reply(429, {"error": {"message": "rate limited"}}, headers={"Retry-After": "0"}),
                           embedding_reply([[0.0, 5.0]])])
    out = make(server, backoff_base=5.0).encode(["only"])  # Retry-After: 0 wins over the 5 s backoff
    assert waits == [0.0]
    assert out.tolist() == [[0.0, 1.0]]
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body == {"model": "test-embedder", "input": ["only"]}


def test_500_exhausted_before_any_answer_is_unavailable(server: FakeOpenAI) -> None:
    server.replies.extend([Reply(500, {"error": {"message": "upstream overloaded"}})] * 3)
    emb = make(server)
    with pytest.raises(EmbedderUnavailable) as info:
        _ = emb.dim
    message = str(info.value)
    assert message.startswith("embedding model openai:test-embedder: ")
    assert "failed after 3 attempts: HTTP 500: upstream overloaded" in message
    assert len(server.requests) == 3


def test_500_exhausted_after_the_probe_is_a_backend_error(server: FakeOpenAI) -> None:
    server.replies.extend([embedding_reply([[1.0, 1.0]]),
                           *[Reply(503, {"error": {"message": "try later"}})] * 2])
    emb = make(server, max_attempts=2)
    assert emb.dim == 2
    with pytest.raises(BackendError) as info:
        emb.encode(["a"])
    assert not isinstance(info.value, EmbedderUnavailable)
    assert f"request to {server.base_url}/embeddings failed after 2 attempts: HTTP 503: try later" in str(info.value)
    assert len(server.requests) == 3


def test_401_names_openai_api_key_without_leaking_it(server: FakeOpenAI) -> None:
    server.replies.append(Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}."}}))
    emb = make(server)
    with pytest.raises(EmbedderUnavailable) as info:
        emb.encode(["a"])
    message = str(info.value)
    assert "HTTP 401" in message and "OPENAI_API_KEY" in message and "missing or wrong" in message
    assert KEY not in message and "Incorrect API key provided: ***." in message
    assert len(server.requests) == 1  # an auth failure is not retried


def test_404_model_is_unavailable_with_a_hint(server: FakeOpenAI) -> None:
    server.replies.append(Reply(404, {"error": {"message": "model 'nope' not found"}}))
    with pytest.raises(EmbedderUnavailable, match=r"HTTP 404: model 'nope' not found; are the model name and base_url"):
        make(server, model="nope").encode(["a"])
    assert len(server.requests) == 1


def test_unreachable_server_is_unavailable() -> None:
    with socket.socket() as s:  # a port that nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    emb = OpenAIEmbedder("m", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, timeout=2.0, backoff_base=0.0)
    unreachable = rf"cannot reach http://127.0.0.1:{port}/v1/embeddings .*server running"
    with pytest.raises(EmbedderUnavailable, match=unreachable):
        _ = emb.dim


# ------------------------------------------------------------------ configuration

def test_environment_defaults_and_no_key(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_OPENAI_BASE_URL", server.base_url + "/embeddings/")  # a full URL is tolerated
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.responder = echo
    emb = OpenAIEmbedder("m", backoff_base=0.0)
    assert (emb.base_url, emb.url) == (server.base_url, f"{server.base_url}/embeddings")
    emb.encode(["a"])
    assert server.requests[-1].headers["Authorization"] == "Bearer sk-from-env"

    monkeypatch.delenv("GRAPHMEM_OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert OpenAIEmbedder("m").base_url == DEFAULT_BASE_URL == "https://api.openai.com/v1"
    keyless = OpenAIEmbedder("m", base_url=server.base_url, backoff_base=0.0)
    keyless.encode(["a"])
    assert "Authorization" not in server.requests[-1].headers


def test_bad_configuration_is_unavailable() -> None:
    with pytest.raises(EmbedderUnavailable, match="not an http"):
        OpenAIEmbedder("m", base_url="localhost:11434/v1")
    with pytest.raises(EmbedderUnavailable, match="no model"):
        OpenAIEmbedder("  ", base_url=DEFAULT_BASE_URL)
    with pytest.raises(EmbedderUnavailable, match="batch_size"):
        OpenAIEmbedder("m", base_url=DEFAULT_BASE_URL, batch_size=0)
