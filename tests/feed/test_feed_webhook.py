"""The webhook sink against a receiver on 127.0.0.1: signed deliveries, retries on 5xx, the dead-letter file,
verify() on the receiving end, the JSONL sink, and `graphmem events webhook` resuming after a restart."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from feed_helpers import receiver

from graphmem.errors import InvalidInput
from graphmem.feed.sinks import (
    HEADER_ID,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    HEADER_TYPE,
    JsonlSink,
    SignatureError,
    WebhookSink,
    sign,
    verify,
)
from graphmem.models import Event

EVENT = Event(7, "memory.feedback", "mem_1", "2026-01-01T00:00:00+00:00", {"query": "tea", "helpful": True})
SECRET = "s3cret"


def test_a_delivery_is_signed_and_verify_accepts_it() -> None:
    with receiver() as rec:
        result = WebhookSink(rec.url, SECRET).send(EVENT)
        assert (result.delivered, result.attempts, result.status) == (True, 1, 200)
        headers, body = rec.requests[0]
    assert headers[HEADER_ID] == "7" and headers[HEADER_TYPE] == "memory.feedback"
    decoded = verify(body, headers, SECRET)
    assert decoded["id"] == 7 and decoded["payload"] == {"query": "tea", "helpful": True}
    assert decoded["contextkit_type"] == "memory_feedback_recorded"
    assert headers[HEADER_SIGNATURE] == sign(SECRET, headers[HEADER_TIMESTAMP], body)


def test_verify_rejects_tampered_bodies_wrong_secrets_stale_and_missing_timestamps() -> None:
    body = json.dumps({"id": 1}).encode()
    ts = str(int(time.time()))
    good = {HEADER_TIMESTAMP: ts, HEADER_SIGNATURE: sign(SECRET, ts, body)}
    assert verify(body, good, SECRET) == {"id": 1}
    assert verify(body.decode(), {k.lower(): v for k, v in good.items()}, SECRET) == {"id": 1}  # str, any case
    with pytest.raises(SignatureError, match="does not match the body"):
        verify(body.replace(b"1", b"2"), good, SECRET)
    with pytest.raises(SignatureError, match="does not match"):
        verify(body, good, "another secret")
    old = str(int(ts) - 600)
    with pytest.raises(SignatureError, match="600 s old, more than the 300 s tolerance"):
        verify(body, {HEADER_TIMESTAMP: old, HEADER_SIGNATURE: sign(SECRET, old, body)}, SECRET, now=float(ts))
    with pytest.raises(SignatureError, match="more than the 60 s tolerance"):  # a tighter tolerance
        verify(body, good, SECRET, tolerance=60, now=float(ts) + 61)
    # the timestamp is signed too: moving it forward breaks the signature
    with pytest.raises(SignatureError, match="does not match"):
        verify(body, {**good, HEADER_TIMESTAMP: str(int(ts) + 1)}, SECRET)
    with pytest.raises(SignatureError, match="missing"):
        verify(body, {HEADER_TIMESTAMP: ts}, SECRET)
    with pytest.raises(SignatureError, match="not a unix time"):
        verify(body, {**good, HEADER_TIMESTAMP: "yesterday"}, SECRET)
    assert isinstance(SignatureError("x"), InvalidInput)


def test_5xx_answers_are_retried_with_exponential_backoff() -> None:
    waits: list[float] = []
    with receiver() as rec:
        rec.statuses = [500, 503, 502]
        result = WebhookSink(rec.url, SECRET, retries=5, backoff=0.5, sleep=waits.append).send(EVENT)
        assert len(rec.requests) == 4
        for headers, body in rec.requests:  # every attempt is signed
            verify(body, headers, SECRET)
    assert (result.delivered, result.attempts, result.status) == (True, 4, 200)
    assert waits == [0.5, 1.0, 2.0]


def test_after_the_retry_limit_the_event_goes_to_the_dead_letter_file(tmp_path: Path) -> None:
    dead = tmp_path / "dead.jsonl"
    with receiver() as rec:
        rec.statuses = [500] * 10
        result = WebhookSink(rec.url, SECRET, retries=2, backoff=0.0, dead_letter=dead).send(EVENT)
        assert len(rec.requests) == 3
    assert (result.delivered, result.attempts, result.status) == (False, 3, 500)
    [record] = [json.loads(line) for line in dead.read_text().splitlines()]
    assert record["event"]["id"] == 7 and record["attempts"] == 3 and record["error"].startswith("HTTP 500")


def test_a_4xx_refusal_is_not_retried_and_an_unreachable_receiver_is(tmp_path: Path) -> None:
    dead = tmp_path / "dead.jsonl"
    with receiver() as rec:
        rec.statuses = [400]
        assert WebhookSink(rec.url, SECRET, retries=3, dead_letter=dead, sleep=lambda s: None).send(EVENT).attempts == 1
        url = rec.url
    gone = WebhookSink(url, SECRET, retries=2, dead_letter=dead, sleep=lambda s: None, timeout=2).send(EVENT)
    assert (gone.delivered, gone.attempts, gone.status) == (False, 3, None)
    assert len(dead.read_text().splitlines()) == 2


def test_webhook_sink_rejects_bad_settings() -> None:
    with pytest.raises(InvalidInput, match="url"):
        WebhookSink("ftp://x", SECRET)
    with pytest.raises(InvalidInput, match="secret"):
        WebhookSink("http://127.0.0.1:9/", "")


def test_jsonl_sink_appends_one_event_per_line(tmp_path: Path) -> None:
    sink = JsonlSink(tmp_path / "out" / "events.jsonl")
    sink.send(EVENT)
    sink(Event(8, "node.added", "n1", EVENT.timestamp, {"name": "a"}))
    lines = [json.loads(x) for x in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    assert [(x["id"], x["type"], x["contextkit_type"]) for x in lines] == [
        (7, "memory.feedback", "memory_feedback_recorded"), (8, "node.added", "node_added")]


def _forward(home: Path, url: str, n: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "graphmem", "--home", str(home), "events", "webhook", url,
                          "--secret", SECRET, "--max-events", str(n), "--backoff", "0", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_cli_forwarder_resumes_from_its_last_delivered_id_after_a_restart(kb) -> None:
    for name in ("a", "b", "c", "d", "e"):
        kb.graph.add_node(name)
    ids = [e.id for e in kb.events.list()]
    with receiver() as rec:
        rec.statuses = [500]  # the first attempt fails, the retry succeeds
        assert _forward(kb.home, rec.url, 2) == {"url": rec.url, "sent": 2, "cursor": ids[1]}
        assert _forward(kb.home, rec.url, 3) == {"url": rec.url, "sent": 3, "cursor": ids[4]}
        delivered = [verify(b, h, SECRET)["id"] for h, b in rec.requests]
    assert delivered == [ids[0], *ids]  # event 1 twice (the 500), then each once, in order
    assert kb.events.cursor(f"webhook:{rec.url}") == ids[4]


def test_forward_requires_a_name(kb) -> None:
    with pytest.raises(InvalidInput, match="name"):
        kb.events.forward(print, "")
