"""LLM help for memories against the local fake OpenAI server: infer=True facts, labelled edges,
the persisted daily budget and its cooldown."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import graphmem
from fake_openai import FakeOpenAI, Reply, chat_reply
from graphmem.errors import InvalidInput

T0 = datetime(2025, 3, 1, 9, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def usage_reply(content: dict[str, Any], tokens: int) -> Reply:
    r = chat_reply(json.dumps(content))
    r.body["usage"] = {"prompt_tokens": tokens - 10, "completion_tokens": 10, "total_tokens": tokens}
    return r


def llm_cfg(server: FakeOpenAI, model_dir: Path | None = None, **llm_edges: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"llm": {"base_url": server.base_url, "model": "test-model"}}
    if model_dir is not None:
        cfg["embeddings"] = {"model": f"model2vec:{model_dir}"}
    if llm_edges:
        cfg["memory"] = {"context_graph": {"edges": {"llm": llm_edges}}}
    return cfg


def test_infer_stores_extracted_facts_citing_their_message(tmp_path: Path) -> None:
    with FakeOpenAI([chat_reply(json.dumps({"facts": [
            {"fact": "The user is allergic to peanuts", "message": 1},
            {"fact": "An invented fact citing nothing", "message": 9}]}))]) as server:
        with graphmem.open(tmp_path / "kb", config=llm_cfg(server)) as kb:
            out = kb.memory.add([{"role": "user", "content": "Careful, I'm allergic to peanuts"},
                                 {"role": "assistant", "content": "Noted!"}], user_id="u1", infer=True)
            (r,) = out["results"]
            m = kb.memory.get(r["id"])
            assert m["memory"] == "The user is allergic to peanuts"
            assert m["metadata"]["source_message"] == {"index": 0, "role": "user",
                                                       "content": "Careful, I'm allergic to peanuts"}
        assert "allergic to peanuts" in server.requests[0].messages[1]["content"]


def test_infer_without_an_llm_or_with_a_broken_one_stores_nothing(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "a") as kb:
        with pytest.raises(InvalidInput, match=r"\[llm\] model"):
            kb.memory.add("x", user_id="u1", infer=True)
        assert kb.memory.stats()["memories"] == 0
    with FakeOpenAI([chat_reply("not json")]) as server:
        with graphmem.open(tmp_path / "b", config=llm_cfg(server)) as kb:
            with pytest.raises(InvalidInput, match="nothing was stored"):
                kb.memory.add("x", user_id="u1", infer=True)
            assert kb.memory.stats()["memories"] == 0


def test_labelled_edges_and_a_budget_that_survives_restarts(tmp_path: Path, model_dir: Path) -> None:
    clock = Clock()
    label = {"labels": [{"pair": 1, "label": "CONTRADICTS", "confidence": 0.9}]}
    with FakeOpenAI([usage_reply(label, 150), usage_reply(label, 150)]) as server:
        cfg = llm_cfg(server, model_dir, enabled=True, daily_token_budget=200, cooldown_seconds=3600)
        with graphmem.open(tmp_path / "kb", config=cfg, clock=clock) as kb:
            a = kb.memory.add("My favourite colour is blue", user_id="u1", run_id="r1")["results"][0]["id"]
            assert not server.requests  # nothing similar yet: no pair, no call
            b = kb.memory.add("My favourite colour is not blue", user_id="u1", run_id="r2")["results"][0]["id"]
            assert len(server.requests) == 1
            types = {t for _, _, t, _ in kb.store.memory_edges_among([a, b])}
            assert {"TOPIC_SIMILAR", "CONTRADICTS"} <= types
            (c_src, c_dst, _, w), = [e for e in kb.store.memory_edges_among([a, b]) if e[2] == "CONTRADICTS"]
            assert (c_src, c_dst, w) == (b, a, 0.9)
        with graphmem.open(tmp_path / "kb", config=cfg, clock=clock) as kb:  # restart: 150 of 200 tokens used
            kb.memory.add("My favourite colour is blue, really", user_id="u1", run_id="r3")
            assert len(server.requests) == 2  # 150 < 200: one more call, now 300 >= 200 -> cooldown
            kb.memory.add("My favourite colour is definitely blue", user_id="u1", run_id="r4")
            assert len(server.requests) == 2
        clock.now += timedelta(days=1, hours=2)  # a new day and the cooldown over
        with graphmem.open(tmp_path / "kb", config=cfg, clock=clock) as kb:
            server.replies.append(usage_reply({"labels": []}, 50))
            kb.memory.add("Blue is my favourite colour", user_id="u1", run_id="r5")
            assert len(server.requests) == 3
            assert [e.type for e in kb.events.list(types=["memory.labelled"])] == ["memory.labelled"] * 3


def test_low_confidence_labels_are_dropped_and_failures_only_warn(tmp_path: Path, model_dir: Path) -> None:
    low = {"labels": [{"pair": 1, "label": "SUPPORTS", "confidence": 0.3}]}
    with FakeOpenAI([usage_reply(low, 20), Reply(400, {"error": {"message": "bad"}})]) as server:
        with graphmem.open(tmp_path / "kb", config=llm_cfg(server, model_dir, enabled=True)) as kb:
            kb.memory.add("I work at the bakery", user_id="u1", run_id="r1")
            kb.memory.add("I work at the bakery on Main Street", user_id="u1", run_id="r2")
            assert "SUPPORTS" not in kb.memory.stats()["edge_types"]
            with pytest.warns(UserWarning, match="labelling skipped"):
                out = kb.memory.add("I work at a bakery", user_id="u1", run_id="r3")
            assert out["results"] and kb.memory.stats()["memories"] == 3
