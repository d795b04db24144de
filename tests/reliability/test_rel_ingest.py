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
        kb.ingest_with_content("d", "t", "s", "Some text.", metadata={"m": _deep_dict(100)})
    # Deeper still, the public API's own argument check answers first, in one line.
    with pytest.raises(graphmem.InvalidInput, match=r"^kb.ingest_with_content: metadata\['m'\].{0,80} is nested "
                                                    r"more than 200 levels deep"):
        kb.ingest_with_content("d", "t", "s", "Some text.", metadata={"m": _deep_dict(5000)})
    assert kb.documents.list() == []


# -- defect 9: nothing streamed (ingest_paths read every file into a list first) -------------------


def _jsonl_file(path, n):
    import json

    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"r{i}", "text": f"Record {i} mentions Service{i % 50}. " * 4}) + "\n")


def test_bulk_ingest_reads_records_only_as_far_as_the_writer_needs(tmp_path, monkeypatch):
    from graphmem.ingest.readers import bulk

    monkeypatch.chdir(tmp_path)
    _jsonl_file(tmp_path / "big.jsonl", 10_000)
    made = []
    real = bulk.record_to_document

    def counting(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(bulk, "record_to_document", counting)

    class Seen(Exception):
        pass

    first = {}

    def on_progress(done, total, doc_id):
        first.update(done=done, total=total, read=len(made))
        raise Seen

    with graphmem.open(tmp_path / "kb", config={"ingest": {"batch_size": 16, "workers": 1}}) as kb:
        with pytest.raises(Seen):
            kb.ingest_paths([tmp_path / "big.jsonl"], extractor="none", on_progress=on_progress)
    # one batch written, at most the look-ahead window (2 x batch) read beyond it -- not 10,000
    assert first["done"] == 16
    assert first["read"] <= 16 * 3, first


def test_jsonl_and_json_list_readers_yield_before_reading_the_whole_file(tmp_path):
    import json

    from graphmem.ingest.readers import bulk

    _jsonl_file(tmp_path / "big.jsonl", 20_000)
    size = (tmp_path / "big.jsonl").stat().st_size
    with (tmp_path / "big.jsonl").open("rb") as fh:
        docs = bulk.read_stream(fh, tmp_path / "big.jsonl", "big.jsonl")
        assert next(docs).doc_id == "r0"
        assert fh.tell() < 64 * 1024 < size // 10
    records = [{"id": f"r{i}", "text": f"Record {i} body. " * 20} for i in range(20_000)]
    (tmp_path / "big.json").write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]")
    size = (tmp_path / "big.json").stat().st_size
    with (tmp_path / "big.json").open("rb") as fh:
        docs = bulk.read_stream(fh, tmp_path / "big.json", "big.json")
        assert next(docs).doc_id == "r0"
        assert fh.tell() <= 2 * 1024 * 1024 < size // 2
        rest = list(docs)
    assert len(rest) == 19_999 and rest[-1].doc_id == "r19999"


def test_streamed_json_list_keeps_line_numbers_and_long_records(tmp_path):
    """Records longer than the read window, and a broken record far into the file."""
    import json

    from graphmem.ingest.readers import Skipped, bulk

    long_text = "word " * 700_000  # 3.5 MB: more than one read window
    lines = ["["] + [json.dumps({"id": f"a{i}", "text": "short"}) + "," for i in range(3)]
    lines += [json.dumps({"id": "long", "text": long_text}) + ","]
    lines += [json.dumps({"id": f"b{i}", "text": "short"}) + "," for i in range(3)]
    lines += ['{"id": "broken", "text": oops}', "]"]
    (tmp_path / "x.json").write_text("\n".join(lines))
    with (tmp_path / "x.json").open("rb") as fh:
        out = list(bulk.read_stream(fh, tmp_path / "x.json", "x.json"))
    docs = [o for o in out if not isinstance(o, Skipped)]
    assert [d.doc_id for d in docs] == ["a0", "a1", "a2", "long", "b0", "b1", "b2"]
    assert docs[3].text == long_text
    [sk] = [o for o in out if isinstance(o, Skipped)]
    assert sk.line == 9 and "not valid JSON" in sk.reason


# -- defect 3 (ingest part): discovery followed symlinked files and folders -----------------------


@pytest.fixture
def linked_corpus(tmp_path, monkeypatch):
    """docs/ with a real file, a link to a secret file outside, a link to an outside folder, a
    link loop back to docs/ itself, a dangling link and a FIFO."""
    import os

    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.txt").write_text("The secret password is swordfish.")
    (outside / "folder" / "inner.txt").write_text("Inner document outside the corpus.")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "real.txt").write_text("A real document inside the corpus.")
    (docs / "secret.txt").symlink_to(outside / "secret.txt")
    (docs / "linked").symlink_to(outside / "folder", target_is_directory=True)
    (docs / "sub" / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    os.mkfifo(docs / "pipe.txt")
    return docs


def test_symlinks_are_skipped_and_reported_by_default(linked_corpus, tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([linked_corpus], extractor="none")
        assert {d.doc_id for d in kb.documents.list()} == {"docs/real.txt"}
        reasons = {sk.path: sk.reason for sk in s.skipped}
        for link in ("docs/secret.txt", "docs/linked", "docs/sub/loop", "docs/dangling.txt"):
            assert "symbolic link, not followed" in reasons[link] and "--follow-symlinks" in reasons[link]
        assert "not a regular file" in reasons["docs/pipe.txt"]  # a FIFO is never opened (it would block)


def test_follow_symlinks_reads_links_once_and_a_loop_does_not_hang(linked_corpus, tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([linked_corpus], extractor="none", follow_symlinks=True)
        ids = {d.doc_id for d in kb.documents.list()}
        # links keep their own path as id; the loop back to docs/ is not walked again
        assert ids == {"docs/real.txt", "docs/secret.txt", "docs/linked/inner.txt"}
        reasons = {sk.path: sk.reason for sk in s.skipped}
        assert "already being ingested" in reasons["docs/sub/loop"]
        assert reasons["docs/dangling.txt"] == "broken symbolic link"


def test_a_path_given_explicitly_that_is_a_symlink_needs_the_flag(linked_corpus, tmp_path):
    from click.testing import CliRunner

    from graphmem.cli import cli

    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([linked_corpus / "secret.txt"], extractor="none")
        assert s.added == 0 and "--follow-symlinks" in s.skipped[0].reason
    runner = CliRunner()
    home = str(tmp_path / "kb2")
    r = runner.invoke(cli, ["--home", home, "ingest", "docs/secret.txt", "--extractor", "none", "--json"])
    # Nothing was ingested (the one PATH was a link): exit 1, the summary still names the flag.
    assert r.exit_code == 1 and '"added": 0' in r.output and "follow-symlinks" in r.output
    r = runner.invoke(cli, ["--home", home, "ingest", "docs/secret.txt", "--extractor", "none", "--json",
                            "--follow-symlinks"])
    assert r.exit_code == 0 and '"added": 1' in r.output
    (tmp_path / "ex.json").write_text('{"entities": [], "relations": []}')
    r = runner.invoke(cli, ["--home", home, "ingest", "docs/secret.txt", "--extraction", "ex.json", "--id", "s2"])
    assert r.exit_code == 1 and "symbolic link" in r.output and "--follow-symlinks" in r.output


# -- property: the bulk reader and the extraction file only ever report, never raise --------------

_FRAGMENTS = ['{"id": "a", "text": "Alpha."}', '{"text": ', "[", "]", "{", "}", '"', "\\", ",", ":", "null",
              '{"text": "x", "entities": [{"name": "A"}]}', '{"text": "y", "metadata": [1]}', "1e999",
              "\ud800", "\x00", "\n", "\r\n", " ", "\u2028", '"\\ud800"', "[" * 70 + "]" * 70]


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_bulk_reader_only_reports_bad_input(tmp_path, suffix):
    pytest.importorskip("hypothesis")
    from hypothesis import given
    from hypothesis import strategies as st

    from graphmem.ingest.extractors.base import SourceDocument
    from graphmem.ingest.readers import NotText, Skipped, bulk

    @given(st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=8), max_size=25))
    def check(parts):
        raw = "".join(parts).encode("utf-8", "surrogatepass")
        path = tmp_path / f"x{suffix}"
        try:
            out = list(bulk.read(path, "x", raw))
        except NotText:
            return
        assert all(isinstance(o, (SourceDocument, Skipped)) for o in out)

    check()


def test_extraction_file_only_raises_invalid_input(tmp_path):
    pytest.importorskip("hypothesis")
    from hypothesis import given
    from hypothesis import strategies as st

    from graphmem.extraction import load_extraction_file

    @given(st.lists(st.sampled_from(_FRAGMENTS + ['{"entities": ', '{"relations": [{"source": 1}]}']), max_size=20))
    def check(parts):
        path = tmp_path / "ex.json"
        path.write_bytes("".join(parts).encode("utf-8", "surrogatepass"))
        try:
            load_extraction_file(path)
        except graphmem.InvalidInput:
            pass

    check()


def test_a_lone_surrogate_in_one_bulk_record_skips_that_record_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.jsonl").write_text('{"id": "ok", "text": "Fine text."}\n'
                                      '{"id": "bad", "text": "bad \\ud800 text"}\n'
                                      '{"id": "ok2", "text": "More fine text."}\n')
    with graphmem.open(tmp_path / "kb") as kb:
        s = kb.ingest_paths([tmp_path / "s.jsonl"], extractor="offline")
        assert {d.doc_id for d in kb.documents.list()} == {"ok", "ok2"}
        [sk] = s.skipped
        assert sk.line == 2 and "'text': holds a lone surrogate" in sk.reason


def test_a_document_with_many_chunks_is_embedded_in_slices(tmp_path, model_dir, monkeypatch):
    """A 200 MB text has ~500k chunks; their vectors were all encoded and held at once (>1 GB)."""
    monkeypatch.chdir(tmp_path)
    text = " ".join(f"Sentence {i} mentions Service{i % 97} and Queue{i % 89}." for i in range(15_000))
    (tmp_path / "big.txt").write_text(text)
    cfg = {"embeddings": {"model": f"model2vec:{model_dir}"}, "chunking": {"size": 60, "overlap": 0}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        emb = kb.embeddings.embedder
        sizes = []
        real = emb.encode
        monkeypatch.setattr(emb, "encode", lambda texts: (sizes.append(len(texts)), real(texts))[1])
        s = kb.ingest_paths([tmp_path / "big.txt"], extractor="none")
        assert s.chunks > 10_000
        assert max(sizes) <= 8192 and sum(sizes) >= s.chunks
        chunk_ids = [c.chunk_id for c in kb.documents.chunks("big.txt")]
        stored = kb.store.vector_hashes("chunk", chunk_ids, emb.model_id)
        assert len(stored) == len(chunk_ids) == s.chunks
