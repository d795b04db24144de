"""kb.events.subscribe / unsubscribe / follow: in order, at least once, from this process and others,
resuming after a subscriber's crash, retrying a failing callback without blocking writers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import graphmem
from graphmem.errors import InvalidInput
from graphmem.feed.follow import DeliveryFailure, wait_for
from graphmem.models import Event

WRITER = """
import sys, graphmem
with graphmem.open(sys.argv[1]) as kb:
    for i in range(int(sys.argv[2])):
        kb.graph.add_node(f"entity {sys.argv[3]} {i}")
"""


def _all_ids(kb: graphmem.KnowledgeBase) -> list[int]:
    return [e.id for e in kb.events.list(limit=100000)]


def test_subscribe_from_zero_replays_the_log_then_follows_new_writes_in_order(kb) -> None:
    kb.graph.add_node("alpha")
    kb.graph.add_node("beta")
    got: list[Event] = []
    token = kb.events.subscribe(got.append, from_event_id=0)
    kb.graph.add_edge("alpha", "beta", "uses")
    kb.memory.add("I prefer green tea", user_id="u1")
    assert wait_for(lambda: len(got) >= 4)
    assert [e.type for e in got] == ["node.added", "node.added", "edge.added", "memory.added"]
    assert [e.id for e in got] == _all_ids(kb)
    assert kb.events.unsubscribe(token) is True
    kb.graph.add_node("gamma")
    assert kb.events.unsubscribe(token) is False
    assert len(got) == 4  # nothing after unsubscribe (the thread was joined)


def test_default_start_is_now_and_filters_by_type_contextkit_name_and_scope(kb) -> None:
    kb.graph.add_node("before")
    new: list[Event] = []
    ck: list[Event] = []
    scoped: list[Event] = []
    t1 = kb.events.subscribe(new.append)
    t2 = kb.events.subscribe(ck.append, event_types=["memory_feedback_recorded", "edge_added"], from_event_id=0)
    t3 = kb.events.subscribe(scoped.append, event_types=["memory.added"], from_event_id=0, scope={"user_id": "u2"})
    kb.graph.add_node("after")
    kb.graph.add_edge("before", "after", "uses")
    kb.memory.add("likes jazz", user_id="u1")
    added = kb.memory.add("likes opera", user_id="u2")
    kb.memory.feedback(added.results[0].id, "music", helpful=True)
    last = kb.events.last_id()
    assert wait_for(lambda: all(kb.events.subscription(t).position == last for t in (t1, t2, t3)))
    assert [e.type for e in new] == ["node.added", "edge.added", "memory.added", "memory.added", "memory.feedback"]
    assert [e.type for e in ck] == ["edge.added", "memory.feedback"]
    assert [e.payload["user_id"] for e in scoped] == ["u2"]
    for t in (t1, t2, t3):
        kb.events.unsubscribe(t)


def test_a_raising_callback_is_retried_then_reported_and_never_blocks_writers(kb) -> None:
    attempts: list[int] = []
    failures: list[DeliveryFailure] = []
    release = threading.Event()

    def flaky(event: Event) -> None:
        attempts.append(event.id)
        if event.payload.get("name") == "poison":
            raise RuntimeError("cannot handle poison")
        if attempts.count(event.id) < 2:
            raise ConnectionError("transient")
        release.wait(5)

    token = kb.events.subscribe(flaky, from_event_id=0, retries=2, backoff=0.001, on_error=failures.append)
    first = kb.graph.add_node("fine")
    poison = kb.graph.add_node("poison")
    release.set()
    # Writers went on while the callback was stuck: both nodes are committed.
    assert {kb.graph.find("fine").id, kb.graph.find("poison").id} == {first, poison}
    ids = _all_ids(kb)
    assert wait_for(lambda: kb.events.subscription(token).last_delivered == ids[-1])
    assert attempts == [ids[0], ids[0], ids[1], ids[1], ids[1]]  # 1 retry to succeed; 1 + 2 retries, then given up
    assert [(f.event_id, f.attempts, f.error) for f in failures] == [(ids[1], 3, "RuntimeError: cannot handle poison")]
    kb.events.unsubscribe(token)


def test_subscribe_rejects_bad_arguments_with_the_field_named(kb) -> None:
    with pytest.raises(InvalidInput, match="callback"):
        kb.events.subscribe("not callable")
    with pytest.raises(InvalidInput, match="from_event_id"):
        kb.events.subscribe(print, from_event_id=-1)
    with pytest.raises(InvalidInput, match="scope: unknown field 'user'"):
        kb.events.subscribe(print, scope={"user": "u1"})
    with pytest.raises(InvalidInput, match="token"):
        kb.events.subscription("sub_nope")


def test_events_written_by_another_process_arrive_in_order_without_gaps(kb, tmp_path: Path) -> None:
    got: list[Event] = []
    token = kb.events.subscribe(got.append, from_event_id=0)
    kb.graph.add_node("local one")
    subprocess.run([sys.executable, "-c", WRITER, str(kb.home), "25", "remote"], check=True)
    kb.graph.add_node("local two")
    ids = _all_ids(kb)
    assert len(ids) == 27
    assert wait_for(lambda: len(got) >= 27)
    assert [e.id for e in got] == ids
    assert [e.payload["name"] for e in got][1:4] == ["entity remote 0", "entity remote 1", "entity remote 2"]
    kb.events.unsubscribe(token)


def _follow(home: Path, after: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "graphmem", "--home", str(home), "events", "follow", "--from",
                             str(after), "--json"], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_a_subscriber_killed_mid_stream_resumes_from_its_last_id_with_no_gaps(kb) -> None:
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(kb.home), "60", "w"])
    seen: list[int] = []
    follower = _follow(kb.home, 0)
    assert follower.stdout is not None
    for _ in range(10):  # read some, then crash the subscriber (no clean shutdown)
        seen.append(json.loads(follower.stdout.readline())["id"])
    follower.send_signal(signal.SIGKILL)
    follower.wait()
    assert writer.wait(60) == 0
    ids = _all_ids(kb)
    assert len(ids) == 60
    follower = _follow(kb.home, seen[-1])
    assert follower.stdout is not None
    while len(seen) < len(ids):
        seen.append(json.loads(follower.stdout.readline())["id"])
    follower.send_signal(signal.SIGTERM)
    follower.wait()
    assert seen == ids
