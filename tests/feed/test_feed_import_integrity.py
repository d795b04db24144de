"""An export that lost lines, or carries a damaged vector, is refused whole; ``check`` finds a damaged vector
and ``--repair`` drops it. (Both used to load: a file cut at a line boundary imported with exit 0, and a short
vector blob imported, passed check, then failed every search.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphmem
from graphmem.errors import InvalidInput
from graphmem.portability import check, export, import_jsonl


def _exported(kb: graphmem.KnowledgeBase, tmp_path: Path) -> list[str]:
    kb.ingest_with_content("doc_1", "Crash notes", "notes.txt", "System crashes due to memory leaks.")
    kb.memory.add("I keep the crash notes", user_id="u")
    out = tmp_path / "kb.jsonl"
    export(kb.ctx, "jsonl", out)
    return out.read_text(encoding="utf-8").splitlines()


def _refused(tmp_path: Path, lines: list[str], match: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with graphmem.open(tmp_path / "fresh") as fresh:
        with pytest.raises(InvalidInput, match=match):
            import_jsonl(fresh.ctx, bad)
        st = fresh.stats()
        assert (st["documents"], st["chunks"], st["events"], fresh.store.last_event_id()) == (0, 0, 0, 0)


def test_the_export_ends_with_its_counts(tmp_path: Path, kb: graphmem.KnowledgeBase) -> None:
    lines = _exported(kb, tmp_path)
    assert json.loads(lines[0])["version"] == 2
    end = json.loads(lines[-1])["end"]
    tables: dict[str, int] = {}
    for line in lines[1:-1]:
        rec = json.loads(line)
        if "table" in rec:
            tables[rec["table"]] = tables.get(rec["table"], 0) + 1
    assert end == {"rows": tables, "files": sum("file" in json.loads(x) for x in lines[1:-1])}
    assert tables["documents"] == 1 and tables["memories"] == 1


def test_a_file_cut_at_a_line_boundary_is_refused(tmp_path: Path, kb: graphmem.KnowledgeBase) -> None:
    lines = _exported(kb, tmp_path)
    _refused(tmp_path, lines[: len(lines) // 2], "ends without the export's end line")


def test_lines_lost_or_added_before_the_end_are_refused(tmp_path: Path, kb: graphmem.KnowledgeBase) -> None:
    lines = _exported(kb, tmp_path)
    row = next(i for i, x in enumerate(lines) if '"table": "chunks"' in x)
    _refused(tmp_path, lines[:row] + lines[row + 1:], r"the end line counts .*lines are missing or were added")
    _refused(tmp_path, [*lines, lines[row]], "a record after the export's end line")


def test_a_version_1_file_without_an_end_line_still_imports(tmp_path: Path, kb: graphmem.KnowledgeBase) -> None:
    lines = _exported(kb, tmp_path)
    header = json.loads(lines[0])
    header["version"] = 1
    old = tmp_path / "v1.jsonl"
    old.write_text("\n".join([json.dumps(header), *lines[1:-1]]) + "\n", encoding="utf-8")
    with graphmem.open(tmp_path / "fresh") as fresh:
        got = import_jsonl(fresh.ctx, old)
        assert got["rows"]["documents"] == 1
        assert [h.chunk.doc_id for h in fresh.documents.search("memory leaks", 3)] == ["doc_1"]


@pytest.mark.parametrize("vec", [{"$b64": "AAAA"}, {"$b64": "not base64!"}, "AAAA", None])
def test_a_vector_whose_bytes_do_not_fit_its_dimension_is_refused(tmp_path: Path, kb: graphmem.KnowledgeBase,
                                                                  vec: object) -> None:
    lines = _exported(kb, tmp_path)
    row = {"id": 1, "item_kind": "chunk", "item_id": "doc_1:v1:c0", "model": "model2vec:m", "dim": 4,
           "text_hash": "h", "vec": vec}
    lines.insert(1, json.dumps({"table": "vectors", "row": row}))
    _refused(tmp_path, lines, r"bad\.jsonl:2: vectors row 'chunk' 'doc_1:v1:c0': .* for dim 4 .*damaged")


def test_check_finds_a_damaged_vector_and_repair_drops_it(kb: graphmem.KnowledgeBase) -> None:
    kb.ingest_with_content("doc_1", "Crash notes", "notes.txt", "System crashes due to memory leaks.")
    chunk = kb.store.conn.execute("SELECT chunk_id FROM chunks").fetchone()[0]
    with kb.store.transaction():
        kb.store.conn.execute("INSERT INTO vectors (item_kind, item_id, model, dim, text_hash, vec) VALUES "
                              "('chunk', ?, 'model2vec:m', 4, 'h', x'0000')", (chunk,))
    report = check(kb.ctx)
    assert report["ok"] is False
    assert report["vectors"] == [f"chunk {chunk!r}: vector of 2 bytes for dim 4 (expected 8); graphmem check "
                                 "--repair drops it, graphmem reindex writes it again"]
    assert check(kb.ctx, repair=True)["repaired"] is True
    assert check(kb.ctx)["ok"] is True
    assert kb.store.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0


def test_a_refused_import_creates_no_knowledge_base(tmp_path: Path) -> None:
    from tests.cli_inproc import graphmem_env, run_cli

    bad = tmp_path / "bad.jsonl"
    for text in ('{"format":\n', '{"format": "graphmem-jsonl", "version": 2}\n'):
        bad.write_text(text, encoding="utf-8")
        got = run_cli(["--home", tmp_path / "new", "import", "jsonl", bad], env=graphmem_env())
        assert got.returncode == 1 and got.stderr.startswith("error: ") and "nothing was imported" in got.stderr
        assert not (tmp_path / "new").exists()  # before: config.toml, graph.db and wiki/ were left there


def test_an_import_into_a_new_folder_takes_the_exports_embedding_model(tmp_path: Path, model_dir: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's `export kb.jsonl && --home ./copy import kb.jsonl`: the copy used to be configured for the
    default model and refused every search ("vectors were made with ... but the configured model is ...")."""
    from tests.cli_inproc import graphmem_env, run_cli

    monkeypatch.delenv("GRAPHMEM_EMBED_MODEL")  # the configured model is what this test is about
    spec = f"model2vec:{model_dir.resolve()}"
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": spec}}) as kb:
        kb.ingest_with_content("doc_1", "Crash notes", "notes.txt", "System crashes due to memory leaks.")
        kb.ingest_with_content("doc_2", "Tea", "tea.txt", "Green tea is brewed at 80 degrees.")
        export(kb.ctx, "jsonl", tmp_path / "kb.jsonl")
        want = [(h.id, round(h.score, 6)) for h in kb.search("brewing tea", preset="dense").hits]
    env = {k: v for k, v in graphmem_env().items() if k != "GRAPHMEM_EMBED_MODEL"}
    got = run_cli(["--home", tmp_path / "copy", "import", "jsonl", tmp_path / "kb.jsonl"], env=env)
    assert got.returncode == 0, got.stderr
    with graphmem.open(tmp_path / "copy") as copy:
        assert copy.config.embeddings.model == spec
        assert [(h.id, round(h.score, 6)) for h in copy.search("brewing tea", preset="dense").hits] == want


def test_an_export_follows_the_umask_and_keeps_a_symlinked_target(tmp_path: Path, kb: graphmem.KnowledgeBase) -> None:
    """The temporary file of the atomic export was chmod 0644 whatever the umask (the export holds every
    memory and document), and a rename replaced a symbolic link with a file, leaving its target as it was."""
    import os
    import stat

    kb.memory.add("a private note", user_id="u")
    old = os.umask(0o077)
    try:
        export(kb.ctx, "jsonl", tmp_path / "private.jsonl")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private.jsonl").stat().st_mode) == 0o600
    real = tmp_path / "real"
    real.mkdir()
    (real / "x.jsonl").write_text("old", encoding="utf-8")
    (tmp_path / "link.jsonl").symlink_to(real / "x.jsonl")
    export(kb.ctx, "jsonl", tmp_path / "link.jsonl")
    assert (tmp_path / "link.jsonl").is_symlink()
    assert json.loads((real / "x.jsonl").read_text(encoding="utf-8").splitlines()[0])["format"] == "graphmem-jsonl"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_a_killed_exports_temporary_file_is_removed_by_the_next(tmp_path: Path, kb: graphmem.KnowledgeBase) -> None:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    left = tmp_path / f".kb.jsonl.{dead}-0123abcd.tmp"
    left.write_text("half an export", encoding="utf-8")
    export(kb.ctx, "jsonl", tmp_path / "kb.jsonl")
    assert not left.exists() and (tmp_path / "kb.jsonl").is_file()
