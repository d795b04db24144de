"""Calls a stranger makes by mistake: a knowledge base used after close(), a lone surrogate given to a
method a face inherits, a timestamp outside the calendar. Each is InvalidInput naming the call, and
writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import snapshot, write_tree

import graphmem
from graphmem.errors import InvalidInput


def test_a_closed_knowledge_base_says_so(tmp_path: Path) -> None:
    """Used after close() (or after its ``with`` block), every call raised sqlite3.ProgrammingError."""
    kb = graphmem.open(tmp_path / "kb")
    kb.memory.add("I like green tea", user_id="u")
    kb.close()
    kb.close()  # harmless
    for call in (lambda: kb.memory.search("tea", user_id="u"), lambda: kb.search("tea"),
                 lambda: kb.skills.retrieve("tea"), lambda: kb.documents.list(), lambda: kb.wiki.list_pages(),
                 lambda: kb.query_with_evidence("tea"), lambda: kb.events.list()):
        with pytest.raises(InvalidInput, match=r"the knowledge base .*kb is closed; open it again"):
            call()
    with graphmem.open(tmp_path / "kb") as again:
        assert [m["memory"] for m in again.memory.get_all(user_id="u")["results"]] == ["I like green tea"]


def test_methods_a_face_inherits_check_their_arguments_too(kb: graphmem.KnowledgeBase) -> None:
    """backfill_context_graph and reset_context_graph come from a mixin: a lone surrogate in user_id reached
    SQLite (UnicodeEncodeError) instead of the InvalidInput every other method gives."""
    for method in ("backfill_context_graph", "reset_context_graph"):
        with pytest.raises(InvalidInput, match=rf"memory\.{method}: user_id holds a lone surrogate"):
            getattr(kb.memory, method)(user_id="u\ud800")


@pytest.mark.parametrize("when", [1e20, -1e15, -62135596801, "0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"])
def test_a_timestamp_outside_the_calendar_is_refused_by_name(kb: graphmem.KnowledgeBase, when: Any) -> None:
    """OverflowError / ValueError ('year 0 is out of range') came out of memory.add."""
    before = snapshot(kb)
    with pytest.raises(InvalidInput, match=r"timestamp: .* is outside the years 1 to 9999 \(UTC\)"):
        kb.memory.add("hello", user_id="u", timestamp=when)
    assert snapshot(kb) == before


def test_the_edges_of_the_calendar_are_kept(kb: graphmem.KnowledgeBase) -> None:
    from datetime import datetime, timedelta, timezone

    kb.memory.add("first", user_id="u", timestamp=datetime(1, 1, 1, 5, tzinfo=timezone(timedelta(hours=5))))
    kb.memory.add("last", user_id="u", timestamp="9999-12-31T23:59:59Z")
    said = sorted(m["timestamp"] for m in kb.memory.get_all(user_id="u")["results"])
    assert said == ["0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.000Z"]


def test_a_newline_in_a_file_name_is_refused_as_a_document_id(tmp_path: Path) -> None:
    """ESC was refused ("no control characters") but a newline or tab was taken: 'docs list' broke across lines."""
    folder = write_tree(tmp_path / "d", {"new\nline.md": "Kafka causes lag.\n", "tab\there.md": "Redis causes lag.\n",
                                         "fine.md": "Fine.\n"})
    with graphmem.open(tmp_path / "kb") as kb:
        done = kb.ingest_paths([folder])
        assert sorted(d.doc_id for d in kb.documents.list()) == ["d/fine.md"]
        assert sorted(s.path for s in done.skipped) == ["d/new\nline.md", "d/tab\there.md"]
        assert all("no control characters" in s.reason for s in done.skipped)
        with pytest.raises(InvalidInput, match="no control characters"):
            kb.ingest_with_content("a\nb", "t", "s", "text")


@pytest.mark.parametrize(("call", "named"), [
    (lambda kb: kb.memory.add("\x00\x00", user_id="u"), r"contains NUL characters"),
    (lambda kb: kb.memory.add("tea\x00time", user_id="u"), r"contains NUL characters"),
    (lambda kb: kb.memory.add("hello", user_id="\x00"), r"user_id '\\x00': contains a control character"),
    (lambda kb: kb.memory.add("hello", user_id="u", agent_id="a\nb"), r"agent_id 'a\\nb': contains a control"),
])
def test_nul_in_a_memory_and_control_characters_in_a_new_scope_id_are_refused(kb: graphmem.KnowledgeBase, call: Any,
                                                                          named: str) -> None:
    before = snapshot(kb)
    with pytest.raises(InvalidInput, match=named):
        call(kb)
    assert snapshot(kb) == before


def test_wrong_types_in_ingest_search_skills_and_memory_are_refused_by_name(kb: graphmem.KnowledgeBase) -> None:
    """Each raised AttributeError or TypeError from inside the call."""
    cases = [
        (lambda: kb.ingest("d6", "t", "s", "text", extraction=[1]), r"extraction: expected an Extraction or a mapping"),
        (lambda: kb.ingest("d6", "t", "s", "text", extraction={"nodes": []}), r"extraction: unknown key\(s\) 'nodes'"),
        (lambda: kb.search("tea", as_context=True, token_budget=None), r"token_budget: expected a positive number"),
        (lambda: kb.search("tea", k=True), r"k: expected a positive integer"),
        (lambda: kb.skills.retrieve("helm", preset=[1]), r"unknown skills preset \[1\]"),
        (lambda: kb.skills.retrieve("helm", config=[1]), r"config: expected a mapping of skills search settings"),
        (lambda: kb.memory.edges_among(None), r"memory_ids: expected a list of memory ids, got NoneType"),
        (lambda: kb.skills.get(None), r"skill id: expected a skill's id or name"),
        (lambda: kb.skills.neighbours(5), r"skill id: expected a skill's id or name"),
    ]
    before = snapshot(kb)
    for call, named in cases:
        with pytest.raises(InvalidInput, match=named):
            call()
    assert snapshot(kb) == before


def test_an_extraction_given_as_a_mapping_is_parsed(kb: graphmem.KnowledgeBase) -> None:
    text = "System crashes due to memory leaks."
    res = kb.ingest("d7", "Crash", "s", text, extraction={"entities": [
        {"name": "memory leak", "type": "issue", "supporting_text": text}]})
    assert res.status == "added" and kb.graph.find("memory leak") is not None


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_a_blank_query_is_the_same_error_in_every_face(kb: graphmem.KnowledgeBase, blank: str) -> None:
    """memory.search and skills.retrieve refused it; search, query, query_with_evidence, documents.search and
    wiki.search_wiki answered nothing, as if nothing matched."""
    calls = [kb.search, kb.query, kb.query_with_evidence, kb.documents.search, kb.wiki.search_wiki,
             lambda q: kb.memory.search(q, user_id="u")]
    for call in calls:
        with pytest.raises(InvalidInput, match=r"query: expected a non-empty string"):
            call(blank)
    with pytest.raises(InvalidInput, match="message: give the text"):
        kb.skills.retrieve(blank)


def test_document_metadata_must_be_json(kb: graphmem.KnowledgeBase) -> None:
    """NaN was accepted in a document's metadata (memory metadata refused it): the stored document then was
    no longer valid JSON for exports and HTTP."""
    before = snapshot(kb)
    with pytest.raises(InvalidInput, match=r"metadata of document 'doc_1' is not JSON-serialisable"):
        kb.ingest_with_content("doc_1", "t", "s", "System crashes due to memory leaks.", metadata={"x": float("nan")})
    assert snapshot(kb) == before


def test_reads_and_deletes_still_reach_a_scope_id_stored_with_a_control_character(
        kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    """A knowledge base from before the rule may hold 'alice\t': its memories stay reachable, and deletable."""
    import graphmem.faces.memory as face
    from graphmem.memory.scope import scope_filters

    with monkeypatch.context() as older:  # what an older graphmem let through
        older.setattr(face, "scope_filters", lambda *, writing=False, **fields: scope_filters(**fields))
        kb.memory.add("an old note", user_id="alice\t")
    assert [m["memory"] for m in kb.memory.get_all(user_id="alice\t")["results"]] == ["an old note"]
    assert [h.memory for h in kb.memory.search("note", user_id="alice\t").results] == ["an old note"]
    assert kb.memory.delete_all(user_id="alice\t")["deleted"] == 1


def test_an_embedding_endpoint_that_does_not_answer_is_one_graphmem_error(tmp_path: Path) -> None:
    """An OpenAI-compatible embedder (Ollama, SkillGraph's backend="ollama") that nobody serves raised
    EmbedderUnavailable, not a GraphmemError: a 56-line traceback in the CLI, uncaught by except GraphmemError."""
    import socket

    from graphmem.errors import GraphmemError

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = {"embeddings": {"model": "openai:bge-m3", "base_url": f"http://127.0.0.1:{port}/v1"}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        with pytest.raises(GraphmemError, match="cannot reach|refused|connect"):
            kb.ingest_with_content("d", "t", "s", "System crashes due to memory leaks.")
        assert kb.stats()["documents"] == 0


def test_a_record_id_with_a_nul_is_reported_not_a_crash_of_the_cli(tmp_path: Path) -> None:
    """The summary printed, then Path.resolve() on the skipped id raised ValueError ('embedded null byte')."""
    from tests.cli_inproc import graphmem_env, run_cli

    folder = write_tree(tmp_path / "d", {"r.jsonl": '{"id": "ok", "text": "Good record."}\n'
                                                     '{"id": "x\\u0000y", "text": "nul id"}\n'})
    got = run_cli(["--home", tmp_path / "kb", "ingest", folder], env=graphmem_env())
    assert "Traceback" not in got.stderr and "no control characters" in got.stdout, got.stderr
    assert got.returncode in (0, 3)


def test_a_record_id_given_twice_in_one_run_is_left_out_and_reruns_add_nothing(tmp_path: Path) -> None:
    """Two records with one id (in one file or two) took turns as the latest version: each re-run of the
    unchanged files added a version (a1 was at version 4 after three runs)."""
    folder = write_tree(tmp_path / "d", {"one.jsonl": '{"id": "a1", "text": "First text."}\n'
                                                       '{"id": "a1", "text": "Second text."}\n',
                                         "a.jsonl": '{"id": "shared", "text": "A text."}\n',
                                         "b.jsonl": '{"id": "shared", "text": "B text."}\n'})
    with graphmem.open(tmp_path / "kb") as kb:
        runs = [kb.ingest_paths([folder]) for _ in range(3)]
        assert [(r.added, r.new_versions, r.unchanged) for r in runs] == [(2, 0, 0), (0, 0, 2), (0, 0, 2)]
        assert sorted(s.path for s in runs[0].skipped) == ["d/b.jsonl#1", "d/one.jsonl#2"]
        assert all("is given again" in s.reason for s in runs[0].skipped)
        assert {d.doc_id: d.version for d in kb.documents.list()} == {"a1": 1, "shared": 1}


def test_a_busy_lock_after_the_documents_are_stored_keeps_the_summary(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Recording the ingested folder is a small transaction after every document is committed: a busy lock
    there raised StoreBusy ('nothing was written', exit 1), though the documents were stored."""
    from graphmem.errors import StoreBusy
    from graphmem.ingest.doc_ids import DocIds

    def busy(self: Any, folders: Any) -> None:
        raise StoreBusy("knowledge base graph.db is busy: another process held the write lock")

    folder = write_tree(tmp_path / "d", {"a.md": "# A\n\nKafka causes lag.\n"})
    monkeypatch.setattr(DocIds, "remember", busy)
    with graphmem.open(tmp_path / "kb") as kb:
        done = kb.ingest_paths([folder])
        assert done.added == 1 and any("were not recorded for later runs" in w for w in done.warnings)
        assert [d.doc_id for d in kb.documents.list()] == ["d/a.md"]
