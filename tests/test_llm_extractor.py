"""The LLM extractor against a local fake OpenAI-compatible server (no network)."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT
from fake_openai import FakeOpenAI, Recorded, Reply, chat_reply, extraction_reply
from graphmem.errors import InvalidInput
from graphmem.extraction import Extraction
from graphmem.ingest.extractors.base import ExtractionError, Extractor, SourceDocument
from graphmem.ingest.extractors.llm import (
    DEFAULT_BASE_URL,
    PROMPT_VERSION,
    RESPONSE_SCHEMA,
    SYSTEM_PROMPT,
    LLMExtractor,
)
from graphmem.openai_http import RateLimiter, retry_after

KEY = "sk-test-SECRET-123"
TEXT = QUICKSTART_TEXT
DOC = SourceDocument("doc_1", "System Crash Analysis", "notes/crash.txt", TEXT)
ENTITIES: list[dict[str, Any]] = QUICKSTART_ENTITIES
RELATIONS: list[dict[str, Any]] = QUICKSTART_RELATIONS


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


@pytest.fixture
def retry_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits of the HTTP retry loop, recorded instead of slept (the test checks the delays chosen,
    not the wall clock, which a loaded machine stretches)."""
    waits: list[float] = []
    monkeypatch.setattr("graphmem.openai_http.time.sleep", waits.append)
    return waits


def make(server: FakeOpenAI, **kwargs: Any) -> LLMExtractor:
    options: dict[str, Any] = {"api_key": KEY, "timeout": 5.0, "backoff_base": 0.0}
    options.update(kwargs)
    return LLMExtractor(server.base_url, options.pop("model", "test-model"), **options)


def names(extraction: Extraction) -> list[str]:
    return [e.name for e in extraction.entities]


# ------------------------------------------------------------------ happy path and request shape

def test_valid_answer_gives_items_with_supporting_text(server: FakeOpenAI) -> None:
    server.replies.append(extraction_reply(ENTITIES, RELATIONS))
    ex = make(server)
    result = ex.extract(DOC)

    assert isinstance(ex, Extractor) and ex.name == "llm"
    assert names(result) == ["memory leak", "system crash"]
    assert [e.supporting_text for e in result.entities] == [
        "Memory leaks occur when objects are not released.", "System crashes due to memory leaks."]
    (rel,) = result.relations
    assert (rel.source, rel.type, rel.target, rel.confidence) == ("memory leak", "causes", "system crash", 1.0)
    assert rel.supporting_text == "System crashes due to memory leaks."
    assert result.extra == {"warnings": [], "extractor": "llm", "model": "test-model",
                            "prompt_version": PROMPT_VERSION, "cached": False}

    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.headers["Content-Type"] == "application/json"
    assert req.body["model"] == "test-model"
    assert req.body["temperature"] == 0.0
    assert req.body["response_format"] == {"type": "json_schema", "json_schema": RESPONSE_SCHEMA}
    assert [m["role"] for m in req.messages] == ["system", "user"]
    assert req.messages[0]["content"] == SYSTEM_PROMPT
    user = req.messages[1]["content"]
    assert "System Crash Analysis" in user and TEXT in user


def test_system_prompt_states_the_rules() -> None:
    for canonical_type in ("issue", "component", "software", "storage", "infrastructure", "actor"):
        assert f"- {canonical_type} (not:" in SYSTEM_PROMPT
    for canonical_relation in ("causes", "contains", "depends on", "uses", "is a", "writes to", "prevents"):
        assert f"- {canonical_relation} (not:" in SYSTEM_PROMPT
    assert "EXACT quote" in SYSTEM_PROMPT
    assert "1.0 when the document states the relation explicitly; 0.8" in SYSTEM_PROMPT
    assert "Below 0.6: do not include" in SYSTEM_PROMPT
    assert "Never return a relation whose source or target is not in that list" in SYSTEM_PROMPT
    assert "'is part of'" in SYSTEM_PROMPT and "JSON" in SYSTEM_PROMPT  # json_object mode needs "JSON"
    assert PROMPT_VERSION == "1"
    schema = RESPONSE_SCHEMA["schema"]
    assert RESPONSE_SCHEMA["strict"] is True
    assert schema["properties"]["relations"]["items"]["required"] == [
        "source", "target", "type", "confidence", "supporting_text"]
    assert schema["properties"]["entities"]["items"]["additionalProperties"] is False


def test_fenced_json_answer_is_accepted(server: FakeOpenAI) -> None:
    content = "```json\n" + json.dumps({"entities": ENTITIES, "relations": RELATIONS}) + "\n```"
    server.replies.append(chat_reply(content))
    result = make(server).extract(DOC)
    assert names(result) == ["memory leak", "system crash"] and len(result.relations) == 1
    assert len(server.requests) == 1


def test_no_api_key_sends_no_authorization_header(server: FakeOpenAI) -> None:
    server.replies.append(extraction_reply(ENTITIES, []))
    make(server, api_key=None).extract(DOC)
    assert "Authorization" not in server.requests[0].headers


def test_empty_document_makes_no_request(server: FakeOpenAI) -> None:
    result = make(server).extract(SourceDocument("empty", "Empty", "e.txt", "  \n"))
    assert result.entities == () and result.extra["warnings"] == []
    assert server.requests == []


# ------------------------------------------------------------------ response_format fallback

def test_json_schema_rejection_falls_back_to_json_object_and_remembers(server: FakeOpenAI) -> None:
    server.replies.extend([
        Reply(400, {"error": {"message": "Invalid parameter: 'response_format' of type 'json_schema' "
                                         "is not supported with this model."}}),
        extraction_reply(ENTITIES, RELATIONS),
        extraction_reply(ENTITIES, []),
    ])
    ex = make(server)
    first = ex.extract(DOC)
    second = ex.extract(SourceDocument("doc_2", "Again", "b.txt", TEXT + " Again."))
    assert names(first) == ["memory leak", "system crash"] and len(first.relations) == 1
    assert names(second) == ["memory leak", "system crash"] and second.relations == ()
    assert [r.body["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object", "json_object"]


def test_other_400_is_an_error_without_retry(server: FakeOpenAI) -> None:
    server.replies.append(Reply(400, {"error": {"message": "maximum context length is 8192 tokens"}}))
    with pytest.raises(ExtractionError, match=r"^doc_1: .*HTTP 400: maximum context length is 8192 tokens"):
        make(server).extract(DOC)
    assert len(server.requests) == 1


# ------------------------------------------------------------------ malformed answers

def test_malformed_then_valid_retries_once_with_the_error(server: FakeOpenAI) -> None:
    server.replies.extend([chat_reply("Sure! Here are the entities: memory leak"),
                           extraction_reply(ENTITIES, RELATIONS)])
    result = make(server).extract(DOC)
    assert names(result) == ["memory leak", "system crash"] and len(result.relations) == 1
    assert len(server.requests) == 2
    retry = server.requests[1].messages
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "Sure! Here are the entities: memory leak"
    assert "not valid JSON" in retry[3]["content"] and "corrected JSON" in retry[3]["content"]


def test_malformed_twice_raises_naming_the_document(server: FakeOpenAI) -> None:
    server.replies.extend([chat_reply("not json at all"),
                           chat_reply(json.dumps({"entities": [{"type": "issue"}], "relations": []}))])
    with pytest.raises(ExtractionError) as info:
        make(server).extract(DOC)
    message = str(info.value)
    assert message.startswith("doc_1: ")
    assert "malformed extraction twice" in message and "entities[0].name: missing" in message
    assert len(server.requests) == 2
    assert "entities[0].name" not in json.dumps(server.requests[0].body)  # first ask had no error text


def test_invented_items_are_dropped_and_reported_not_retried(server: FakeOpenAI) -> None:
    invented = {"name": "quantum flux", "type": "concept", "supporting_text": "Quantum flux destabilises the kernel."}
    relations = [
        *RELATIONS,
        {"source": "quantum flux", "target": "system crash", "type": "causes", "confidence": 1.0,
         "supporting_text": "System crashes due to memory leaks."},
        {"source": "system crash", "target": "memory leak", "type": "affects", "confidence": 0.4,
         "supporting_text": "System crashes due to memory leaks."},
    ]
    server.replies.append(extraction_reply([*ENTITIES, invented], relations))
    result = make(server).extract(DOC)
    assert names(result) == ["memory leak", "system crash"]
    assert [(r.source, r.type, r.target) for r in result.relations] == [("memory leak", "causes", "system crash")]
    assert result.extra["warnings"] == [
        "doc_1 (llm): entities[2] 'quantum flux': supporting_text not in the document; dropped",
        "doc_1 (llm): relations[1] 'quantum flux --[causes]--> system crash': "
        "an endpoint is not in the entity list; dropped",
        "doc_1 (llm): relations[2] 'system crash --[affects]--> memory leak': confidence 0.4 below 0.6; dropped",
    ]
    assert len(server.requests) == 1


# ------------------------------------------------------------------ HTTP failures

def test_429_then_200_honours_retry_after(server: FakeOpenAI, retry_sleeps: list[float]) -> None:
    server.replies.extend([Reply(429, {"error": {"message": "rate limited"}}, headers={"Retry-After": "0"}),
                           extraction_reply(ENTITIES, RELATIONS)])
    result = make(server, backoff_base=5.0).extract(DOC)  # Retry-After: 0 must win over the 5 s backoff
    assert retry_sleeps == [0.0]
    assert names(result) == ["memory leak", "system crash"]
    assert len(server.requests) == 2


def test_500_three_times_raises_with_status_and_server_message(server: FakeOpenAI) -> None:
    server.replies.extend([Reply(500, {"error": {"message": "upstream overloaded " + "x" * 1000}})] * 3)
    with pytest.raises(ExtractionError) as info:
        make(server).extract(DOC)
    message = str(info.value)
    assert message.startswith("doc_1: ") and "after 3 attempts" in message
    assert "HTTP 500: upstream overloaded" in message
    assert len(message) < 600  # the server's message is truncated
    assert len(server.requests) == 3


def test_timeout_is_retried_then_raises(server: FakeOpenAI, retry_sleeps: list[float]) -> None:
    server.replies.extend([Reply(delay=2.0)] * 3)  # cut short when the server closes
    with pytest.raises(ExtractionError, match=r"^doc_1: .*after 3 attempts: timed out after 0.2 s"):
        make(server, timeout=0.2, backoff_base=0.01).extract(DOC)
    assert retry_sleeps == [0.01, 0.02]  # exponential backoff between the three attempts, none after the last
    assert len(server.requests) == 3


def test_401_names_openai_api_key_and_never_shows_the_key(server: FakeOpenAI) -> None:
    server.replies.append(Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}."}}))
    ex = make(server)
    with pytest.raises(ExtractionError) as info:
        ex.extract(DOC)
    message = str(info.value)
    assert message.startswith("doc_1: ") and "HTTP 401" in message and "OPENAI_API_KEY" in message
    assert "missing or wrong" in message
    assert KEY not in message and KEY not in repr(ex)
    assert len(server.requests) == 1  # an auth failure is not retried


def test_unreachable_server_is_a_clear_error() -> None:
    with socket.socket() as s:  # a port that nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ex = LLMExtractor(f"http://127.0.0.1:{port}/v1", "m", timeout=2.0, backoff_base=0.0)
    with pytest.raises(ExtractionError, match=rf"^doc_1: cannot reach http://127.0.0.1:{port}/v1"):
        ex.extract(DOC)


def test_retry_after_parsing() -> None:
    def headers(value: str | None) -> Message:
        m = Message()
        if value is not None:
            m["Retry-After"] = value
        return m

    assert retry_after(headers("0"), 30.0) == 0.0
    assert retry_after(headers("2.5"), 30.0) == 2.5
    assert retry_after(headers("120"), 30.0) == 30.0  # capped
    assert retry_after(headers("Wed, 21 Oct 2015 07:28:00 GMT"), 30.0) is None
    assert retry_after(headers(None), 30.0) is None


# ------------------------------------------------------------------ cache

def test_cache_hit_makes_no_request_and_other_model_does(server: FakeOpenAI, tmp_path: Path) -> None:
    cache = tmp_path / "llm-cache"
    server.replies.extend([extraction_reply(ENTITIES, RELATIONS), extraction_reply(ENTITIES, [])])
    first = make(server, cache_dir=cache).extract(DOC)
    again = make(server, cache_dir=cache).extract(DOC)  # a fresh extractor: the cache is on disk
    assert len(server.requests) == 1
    assert (first.entities, first.relations) == (again.entities, again.relations)
    assert (first.extra["cached"], again.extra["cached"]) == (False, True)

    (entry,) = cache.glob("*.json")
    data = json.loads(entry.read_text(encoding="utf-8"))
    assert data["model"] == "test-model" and data["prompt_version"] == PROMPT_VERSION
    assert data["extraction"]["relations"][0]["type"] == "causes"
    assert list(cache.glob(".*.tmp")) == []  # no temp file left behind

    other = make(server, cache_dir=cache, model="other-model").extract(DOC)
    assert len(server.requests) == 2 and server.requests[1].body["model"] == "other-model"
    assert other.relations == () and len(list(cache.glob("*.json"))) == 2


def test_cache_revalidates_and_survives_damage(server: FakeOpenAI, tmp_path: Path) -> None:
    server.replies.extend([extraction_reply(ENTITIES, RELATIONS), extraction_reply(ENTITIES, RELATIONS)])
    make(server, cache_dir=tmp_path).extract(DOC)
    strict = make(server, cache_dir=tmp_path, min_confidence=1.0).extract(DOC)  # cached, validated anew
    assert len(server.requests) == 1 and len(strict.relations) == 1
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{ damaged", encoding="utf-8")
    result = make(server, cache_dir=tmp_path).extract(DOC)
    assert len(server.requests) == 2 and names(result) == ["memory leak", "system crash"]
    assert json.loads(entry.read_text(encoding="utf-8"))["model"] == "test-model"  # rewritten


def test_failed_extraction_is_not_cached(server: FakeOpenAI, tmp_path: Path) -> None:
    server.replies.extend([chat_reply("nope"), chat_reply("still nope")])
    with pytest.raises(ExtractionError):
        make(server, cache_dir=tmp_path).extract(DOC)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ concurrency and rate limit

def _numbered_doc(n: int) -> SourceDocument:
    return SourceDocument(f"doc_{n}", f"Doc {n}", f"d{n}.txt", f"Document number {n} describes widget {n}.")


def test_extract_many_bounds_concurrency_and_keeps_input_order(server: FakeOpenAI) -> None:
    # The first three requests meet at a barrier, so three must really be in flight together;
    # later documents answer faster than earlier ones, so completion order differs from input order.
    barrier = threading.Barrier(3, timeout=5)
    arrivals = iter(range(100))

    def respond(req: Recorded) -> Reply:
        with server.lock:
            arrival = next(arrivals)
        if arrival < 3:
            barrier.wait()
        n = int(re.search(r"Document number (\d+)", req.messages[1]["content"]).group(1))
        return extraction_reply([{"name": f"widget {n}", "type": "component",
                                  "supporting_text": f"Document number {n} describes widget {n}."}], [],
                                delay=0.02 * (6 - n))

    server.responder = respond
    docs = [_numbered_doc(n) for n in range(1, 7)]
    results = list(make(server, max_concurrency=3).extract_many(docs))

    assert server.max_active == 3
    assert len(server.requests) == 6
    assert [doc.doc_id for doc, _ in results] == [f"doc_{n}" for n in range(1, 7)]
    assert [names(r) for _, r in results if isinstance(r, Extraction)] == [[f"widget {n}"] for n in range(1, 7)]


def test_extract_many_reports_a_failing_document_and_continues(server: FakeOpenAI) -> None:
    def respond(req: Recorded) -> Reply:
        if "Document number 2" in req.messages[1]["content"]:
            return Reply(400, {"error": {"message": "bad request"}})
        return extraction_reply([], [])

    server.responder = respond
    results = list(make(server, max_concurrency=2).extract_many([_numbered_doc(n) for n in (1, 2, 3)]))
    assert [doc.doc_id for doc, _ in results] == ["doc_1", "doc_2", "doc_3"]
    assert [type(r).__name__ for _, r in results] == ["Extraction", "ExtractionError", "Extraction"]
    assert str(results[1][1]).startswith("doc_2: ")


def test_rate_limiter_spaces_requests() -> None:
    now = [100.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(60, clock=lambda: now[0], sleep=sleep)  # one per second
    for _ in range(3):
        limiter.acquire()
    assert sleeps == [1.0, 1.0]
    now[0] += 5.0  # idle time does not bank a burst beyond the next slot
    limiter.acquire()
    assert sleeps == [1.0, 1.0]


def test_extractor_requests_go_through_the_rate_limiter(server: FakeOpenAI) -> None:
    server.responder = lambda req: extraction_reply([], [])
    ex = make(server, requests_per_minute=600)
    assert ex._limiter is not None and ex._limiter.interval == pytest.approx(0.1)
    now = [0.0]
    sleeps: list[float] = []
    ex._limiter = RateLimiter(600, clock=lambda: now[0], sleep=sleeps.append)  # frozen clock: every slot waits
    for n in range(1, 4):
        ex.extract(_numbered_doc(n))
    assert sleeps == pytest.approx([0.1, 0.2])
    assert len(server.requests) == 3


# ------------------------------------------------------------------ configuration

def test_from_config_reads_keys_and_environment_defaults() -> None:
    env = {"OPENAI_API_KEY": "sk-env", "GRAPHMEM_OPENAI_BASE_URL": "http://localhost:11434/v1/"}
    ex = LLMExtractor.from_config({"model": "llama3.1", "timeout": "12.5", "max_concurrency": "2"}, environ=env)
    assert (ex.model, ex.base_url, ex.url) == ("llama3.1", "http://localhost:11434/v1",
                                               "http://localhost:11434/v1/chat/completions")
    assert (ex.timeout, ex.max_concurrency, ex._api_key) == (12.5, 2, "sk-env")

    ex = LLMExtractor.from_config({"model": "gpt-4o-mini", "api_key": "sk-cfg"}, environ={})
    assert (ex.base_url, ex._api_key) == (DEFAULT_BASE_URL, "sk-cfg")
    assert LLMExtractor.from_config({"model": "m"}, environ={})._api_key is None

    with pytest.raises(InvalidInput, match="'model' is missing"):
        LLMExtractor.from_config({"base_url": "http://x/v1"}, environ={})
    with pytest.raises(InvalidInput, match=r"unknown key\(s\) \['modle'\]"):
        LLMExtractor.from_config({"modle": "m"}, environ={})
    with pytest.raises(InvalidInput, match="'timeout': expected float"):
        LLMExtractor.from_config({"model": "m", "timeout": "soon"}, environ={})
    # The [llm] table of config.toml spells "unset" as "" and "no rate limit" as 0.
    ex = LLMExtractor.from_config({"base_url": "", "model": "m", "requests_per_minute": 0}, environ={})
    assert (ex.base_url, ex.requests_per_minute, ex._limiter) == (DEFAULT_BASE_URL, None, None)
    with pytest.raises(InvalidInput, match="'model' is missing"):
        LLMExtractor.from_config({"base_url": "", "model": ""}, environ={})
    with pytest.raises(InvalidInput, match="base_url"):
        LLMExtractor("localhost:8080", "m")
    with pytest.raises(InvalidInput, match="max_concurrency"):
        LLMExtractor(DEFAULT_BASE_URL, "m", max_concurrency=0)


def test_fields_the_answer_misnames_are_reported(server: FakeOpenAI) -> None:
    wrong = [{**e, "quote": e["supporting_text"]} for e in ENTITIES]
    server.replies.append(extraction_reply(wrong, RELATIONS))
    result = make(server).extract(DOC)
    assert names(result) == ["memory leak", "system crash"]
    assert [w for w in result.extra["warnings"] if "unknown field" in w] == [
        f"{DOC.doc_id} (llm): entities: unknown field(s) ignored: 'quote' (2 items, did you mean "
        "'supporting_text'?); the fields read are name, type, supporting_text, aliases"]


def test_a_lone_surrogate_in_the_answer_is_a_malformed_answer(server: FakeOpenAI) -> None:
    """It reached the cache write (UnicodeEncodeError) and stopped the whole ingest with a traceback."""
    bad = [{**ENTITIES[0], "name": "memory\ud800leak"}]
    server.replies.extend([extraction_reply(bad, []), extraction_reply(bad, [])])
    with pytest.raises(ExtractionError, match="lone surrogate"):
        make(server).extract(DOC)
