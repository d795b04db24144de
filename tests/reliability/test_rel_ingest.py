"""Trust regressions for bulk ingest (issue 12): re-ingest past long unchanged runs, deep or
broken JSON, symlinks, and streaming (the input is never materialised)."""

from __future__ import annotations

import pytest

import graphmem

pytestmark = pytest.mark.reliability


def _small_corpus(root, n):
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"f{i:04d}.txt").write_text(f"Document number {i} talks about topic {i}.")


# -- defect 1: re-ingest stopped after 2 x batch_size unchanged files ------------------------------


def test_reingest_reads_past_a_long_run_of_unchanged_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    _small_corpus(docs, 130)
    with graphmem.open(tmp_path / "kb") as kb:  # default batch_size 64: a window of 128
        first = kb.ingest_paths([docs], extractor="none")
        assert first.added == 130
        (docs / "f0130.txt").write_text("A new document arrived after the first run.")
        (docs / "f0129.txt").write_text("Document 129 was edited after the first run.")
        progress = []
        s = kb.ingest_paths([docs], extractor="none", on_progress=lambda d, t, i: progress.append((d, t)))
        assert (s.documents, s.added, s.new_versions, s.unchanged) == (131, 1, 1, 129)
        assert kb.documents.get("docs/f0130.txt").version == 1
        assert kb.documents.get("docs/f0129.txt").version == 2
        # progress moves through the unchanged run and ends at the true total
        assert progress and progress[-1] == (131, 131)
        assert [d for d, _ in progress] == sorted(d for d, _ in progress)


def test_reingest_after_interrupt_resumes_beyond_the_window(tmp_path, monkeypatch):
    """Ctrl-C after 200 documents, then re-run: the first 200 are unchanged and the rest is read."""
    from graphmem.extraction import Extraction

    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    _small_corpus(docs, 300)

    class StopAt:
        name = "stop"

        def extract(self, doc):
            if doc.doc_id.endswith("f0200.txt"):
                raise KeyboardInterrupt
            return Extraction()

    with graphmem.open(tmp_path / "kb", config={"ingest": {"batch_size": 10, "workers": 1}}) as kb:
        s = kb.ingest_paths([docs], extractor=StopAt())
        assert s.interrupted and s.added == 200
        s = kb.ingest_paths([docs], extractor="none")
        assert (s.unchanged, s.added, s.interrupted) == (200, 100, False)
        assert len(kb.documents.list(limit=1000)) == 300


# -- defect 7: deep JSON aborted the run; one bad JSONL line lost the good ones -------------------

DEEP = "[" * 100_000 + "]" * 100_000


def _deep_dict(levels):
    value: object = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


def test_deep_jsonl_line_is_skipped_with_its_line_and_the_rest_is_ingested(tmp_path, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    lines = [
        json.dumps({"id": "good1", "text": "Alpha uses Beta."}),
        '{"id": "deep", "text": "x", "metadata": ' + DEEP + "}",
        json.dumps({"id": "good2", "text": "Gamma uses Delta."}),
        json.dumps({"id": "deep65", "text": "Deep but parseable.", "metadata": _deep_dict(65)}),
        DEEP,
        json.dumps({"id": "good3", "text": "Epsilon uses Zeta."}),
    ]
    (tmp_path / "bulk.jsonl").write_text("\n".join(lines) + "\n")
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([tmp_path / "bulk.jsonl"], extractor="none")
        assert {d.doc_id for d in kb.documents.list()} == {"good1", "good2", "good3"}
        skipped = {sk.line: sk for sk in s.skipped}
        assert sorted(skipped) == [2, 4, 5]
        for sk in skipped.values():
            assert sk.path == "bulk.jsonl" and "nested deeper than 64 levels" in sk.reason


def test_deep_record_in_a_json_list_is_skipped_and_later_records_are_read(tmp_path, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    body = ("[\n" + json.dumps({"id": "a", "text": "Alpha uses Beta."}) + ",\n"
            + '{"id": "deep", "text": "x", "entities": ' + DEEP + "},\n"
            + json.dumps({"id": "b", "text": "Gamma uses Delta."}) + "\n]")
    (tmp_path / "bulk.json").write_text(body)
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([tmp_path / "bulk.json"], extractor="none")
        assert {d.doc_id for d in kb.documents.list()} == {"a", "b"}
        [sk] = s.skipped
        assert sk.line == 3 and "nested deeper than 64 levels" in sk.reason


def test_deep_extraction_file_is_one_clear_cli_error_and_writes_nothing(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from graphmem.cli import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.txt").write_text("Alpha uses Beta.")
    (tmp_path / "ex.json").write_text('{"entities": ' + DEEP + "}")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "kb"), "ingest", "doc.txt",
                                      "--extraction", "ex.json"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "ex.json: nested deeper than 64 levels" in result.output
    assert "Traceback" not in result.output
    with graphmem.open(tmp_path / "kb") as kb:
        assert kb.documents.list() == []


def test_deep_metadata_from_python_is_invalid_input(kb):
    with pytest.raises(graphmem.InvalidInput, match="metadata of document 'd'.*nested deeper than 64"):
        kb.ingest_with_content("d", "t", "s", "Some text.", metadata={"m": _deep_dict(5000)})
    assert kb.documents.list() == []
