"""Bulk and incremental ingest of folders: skip reasons, unchanged files, versions, prune,
interruption, agent-supplied extraction, validation of extractor output."""

from __future__ import annotations

import json
import os

import pytest

import graphmem
from graphmem.extraction import EntitySpec, Extraction, RelationSpec
from graphmem.ingest.extractors.base import ExtractionError


class FakeExtractor:
    """Finds capitalised words as entities; 'X uses Y.' sentences as relations."""

    name = "fake"

    def __init__(self, interrupt_on: str | None = None, fail_on: str | None = None) -> None:
        self.calls: list[str] = []
        self.interrupt_on = interrupt_on
        self.fail_on = fail_on

    def extract(self, doc):
        self.calls.append(doc.doc_id)
        if self.interrupt_on and doc.doc_id.endswith(self.interrupt_on):
            raise KeyboardInterrupt
        if self.fail_on and doc.doc_id.endswith(self.fail_on):
            raise ExtractionError(f"{doc.doc_id}: server said no")
        ents, rels = [], []
        for sent in doc.text.split(". "):
            words = sent.strip(". \n").split()
            if len(words) == 3 and words[1] == "uses":
                a, b = words[0], words[2]
                ents += [EntitySpec(a, "component", sent.strip(". \n")), EntitySpec(b, "component", sent.strip(". \n"))]
                rels.append(RelationSpec(a, b, "uses", 1.0, sent.strip(". \n")))
        ents.append(EntitySpec("Ghost", "concept", "a sentence that is not in the document"))
        return Extraction(tuple(ents), tuple(rels))


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("---\ntitle: Alpha\n---\nAlpha uses Beta. More text.")
    (root / "b.txt").write_text("Gamma uses Delta.")
    (root / "sub" / "c.html").write_text("<title>C</title><p>Beta uses Gamma.</p>")
    (root / "bin.dat").write_bytes(b"\x00\x01\x02")
    (root / "bad.txt").write_bytes(b"caf\xe9")
    (root / "empty.md").write_text("")
    (root / ".hidden.md").write_text("Hidden uses Nothing.")
    (root / "skip-me").mkdir()
    (root / "skip-me" / "x.md").write_text("Ignored uses Folder.")
    (root / ".gitignore").write_text("skip-me/\n")
    (root / "notes.jsonl").write_text("\n".join([
        json.dumps({"id": "n1", "title": "N1", "text": "Delta uses Epsilon."}),
        "this is not json",
        json.dumps({"id": "n2", "title": "N2", "text": "Zeta feeds Eta.",
                    "entities": [{"name": "Zeta", "type": "component", "supporting_text": "Zeta"},
                                 {"name": "Eta", "type": "component", "supporting_text": "Eta"}],
                    "relations": [{"source": "Zeta", "target": "Eta", "type": "feeds", "confidence": 0.9,
                                   "supporting_text": "Zeta feeds Eta."}]}),
    ]))
    return root


def test_folder_ingest_summary(corpus, tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        fx = FakeExtractor()
        s = kb.ingest_paths([corpus], extractor=fx)
        d = s.to_dict()
        assert d["added"] == 5 and d["unchanged"] == 0
        assert {x.doc_id for x in kb.documents.list()} == {"docs/a.md", "docs/b.txt", "docs/sub/c.html", "n1", "n2"}
        reasons = {(k["path"], k["line"]): k["reason"] for k in d["skipped"]}
        assert "unsupported file type" in reasons[("docs/bin.dat", None)]
        assert "not UTF-8" in reasons[("docs/bad.txt", None)]
        assert reasons[("docs/empty.md", None)] == "empty file"
        assert "not JSON" in reasons[("docs/notes.jsonl", 2)]
        assert not any("hidden" in p or "skip-me" in p for p, _ in reasons)
        assert "n2" not in fx.calls  # agent-supplied extraction is used as given
        assert kb.documents.get("docs/a.md").title == "Alpha"
        # relations from extractor and from the JSONL record, with evidence
        assert {(e["source_name"], e["type"], e["target_name"]) for e in kb.query("Zeta Alpha")["edges"]} == {
            ("Zeta", "feeds", "Eta"), ("Alpha", "uses", "Beta"), ("Beta", "uses", "Gamma")}
        # the invented entity was dropped and reported, never stored
        assert kb.graph.find("Ghost") is None
        assert any("'Ghost'" in w and "not in the document" in w for w in d["warnings"])
        assert d["entities"] == 7 and d["relations"] == 5  # Alpha..Epsilon, Zeta, Eta


def test_second_run_is_unchanged_and_skips_extraction(corpus, tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_paths([corpus], extractor=FakeExtractor())
        before = kb.stats()["events"]
        fx = FakeExtractor()
        s = kb.ingest_paths([corpus], extractor=fx)
        assert s.unchanged == 5 and s.added == 0 and fx.calls == []
        assert kb.stats()["events"] == before


def test_changed_file_becomes_new_version_and_prune(corpus, tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_paths([corpus], extractor=FakeExtractor())
        (corpus / "b.txt").write_text("Gamma uses Theta.")
        os.remove(corpus / "sub" / "c.html")
        s = kb.ingest_paths([corpus], extractor=FakeExtractor(), prune=True)
        assert (s.new_versions, s.unchanged) == (1, 3)
        assert s.pruned == ["docs/sub/c.html"]
        assert kb.documents.get("docs/b.txt").version == 2
        with pytest.raises(graphmem.NotFound):
            kb.documents.get("docs/sub/c.html")


def test_glob_and_exclude(corpus, tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([corpus], extractor=FakeExtractor(), glob="*.md")
        assert {d.doc_id for d in kb.documents.list()} == {"docs/a.md"}
        assert s.to_dict()["skipped"] == [{"path": "docs/empty.md", "line": None, "reason": "empty file"}]
    with graphmem.open(tmp_path / "kb2") as kb:
        kb.ingest_paths([corpus], extractor=FakeExtractor(), excludes=["sub/", "*.jsonl"])
        assert {d.doc_id for d in kb.documents.list()} == {"docs/a.md", "docs/b.txt"}


def test_interrupt_keeps_finished_documents_and_resumes(corpus, tmp_path):
    with graphmem.open(tmp_path / "kb", config={"ingest": {"batch_size": 100, "workers": 1}}) as kb:
        s = kb.ingest_paths([corpus], extractor=FakeExtractor(interrupt_on="c.html"))
        assert s.interrupted
        ids = {d.doc_id for d in kb.documents.list()}
        # files are read in walk order (a.md, b.txt, notes.jsonl, then sub/): all finished
        # documents are committed, the one being processed is absent
        assert ids == {"docs/a.md", "docs/b.txt", "n1", "n2"}
        assert kb.store.conn.execute("SELECT count(*) FROM chunks WHERE doc_id = 'docs/sub/c.html'").fetchone()[0] == 0
        s = kb.ingest_paths([corpus], extractor=FakeExtractor())
        assert (s.unchanged, s.added) == (4, 1) and not s.interrupted


def test_extraction_failure_is_reported_per_document(corpus, tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([corpus], extractor=FakeExtractor(fail_on="b.txt"))
        assert [f.to_dict() for f in s.failed] == [
            {"path": "docs/b.txt", "line": None, "reason": "extraction failed: docs/b.txt: server said no"}]
        assert s.added == 4  # the rest of the run went on


def test_huge_single_line_file_skipped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    big = tmp_path / "big.txt"
    with big.open("w") as fh:
        for _ in range(50):
            fh.write("x" * 1_000_000)
    (tmp_path / "ok.txt").write_text("Small uses File.")
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([big, tmp_path / "ok.txt"], extractor=FakeExtractor())
        [sk] = s.skipped
        assert sk.path == "big.txt" and "50.0 MB, over ingest.max_file_mb" in sk.reason
        assert s.added == 1


def test_missing_path_and_unknown_extractor(tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([tmp_path / "nope"], extractor="none")
        assert s.skipped[0].reason == "no such file or folder"
        with pytest.raises(graphmem.InvalidInput, match="unknown extractor 'magic'"):
            kb.ingest_paths([tmp_path], extractor="magic")
        with pytest.raises(graphmem.InvalidInput, match="at least one"):
            kb.ingest_paths([])


def test_bulk_with_many_records_batches(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recs = [{"title": f"T{i}", "text": f"Node{i} uses Node{i + 1}."} for i in range(150)]
    (tmp_path / "c.json").write_text(json.dumps(recs))
    progress = []
    with graphmem.open(tmp_path / "kb", config={"ingest": {"batch_size": 32}}) as kb:
        s = kb.ingest_paths([tmp_path / "c.json"], extractor=FakeExtractor(),
                            on_progress=lambda d, t, _id: progress.append((d, t)))
        assert s.added == 150 and s.relations == 150
        assert progress[-1] == (150, 150) and len(progress) == 5
        assert [d for d, _ in progress] == sorted(d for d, _ in progress)


def test_llm_extractor_through_the_pipeline(tmp_path, monkeypatch):
    """Valid answers are stored with provenance; a document whose answers stay malformed is
    retried once, then reported without stopping the run; an invented entity is dropped."""
    from fake_openai import FakeOpenAI, Recorded, chat_reply, extraction_reply
    from graphmem.ingest.extractors.llm import LLMExtractor

    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The Route Planner depends on Redis.")
    (docs / "b.txt").write_text("Kafka feeds the Tracker Service.")
    (docs / "c.txt").write_text("PgBouncer protects ledger-db.")

    def respond(req: Recorded):
        user = " ".join(m["content"] for m in req.messages if m["role"] == "user")
        if "Route Planner depends on Redis" in user:
            return extraction_reply(
                [{"name": "Route Planner", "type": "service", "supporting_text": "The Route Planner"},
                 {"name": "Redis", "type": "storage", "supporting_text": "Redis"}],
                [{"source": "Route Planner", "target": "Redis", "type": "depends on", "confidence": 1.0,
                  "supporting_text": "The Route Planner depends on Redis."}])
        if "Kafka feeds" in user:
            return chat_reply("this is not JSON")
        return extraction_reply(
            [{"name": "PgBouncer", "type": "software", "supporting_text": "PgBouncer protects ledger-db."},
             {"name": "quantum flux", "type": "concept", "supporting_text": "a quantum flux capacitor"}], [])

    with FakeOpenAI(responder=respond) as server, graphmem.open(tmp_path / "kb") as kb:
        ex = LLMExtractor(server.base_url, "test-model", api_key="k", backoff_base=0.0)
        s = kb.ingest_paths([docs], extractor=ex)
        assert s.added == 2
        [failed] = s.failed
        assert failed.path == "docs/b.txt" and "extraction failed" in failed.reason
        b_requests = [r for r in server.requests if "Kafka feeds" in json.dumps(r.body)]
        assert len(b_requests) == 2  # the first answer and exactly one retry
        [rel] = kb.graph.get_entity("Route Planner")["relations"]
        [p] = rel["evidence"]
        assert (p["doc_id"], p["start"], p["end"]) == ("docs/a.txt", 0, 35)
        assert kb.graph.find("PgBouncer") is not None and kb.graph.find("quantum flux") is None
        assert any("quantum flux" in w and "not in the document" in w for w in s.warnings)
