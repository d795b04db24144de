"""[ingest.readers]: keys as users write them ("NDJSON", "ndjson", ".Ndjson") all mean the extension, a
reader name that does not exist stops the ingest before anything is written (naming the key), and JSON
Lines has a name ("jsonl") and its common other extension (.ndjson)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphmem
from graphmem.errors import InvalidInput


def _kb(tmp_path: Path, readers: dict[str, str] | None = None) -> graphmem.KnowledgeBase:
    config: dict = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}
    if readers is not None:
        config["ingest"] = {"readers": readers}
    return graphmem.open(tmp_path / "kb", config=config)


def _records(path: Path, n: int = 2) -> Path:
    path.write_text("".join(json.dumps({"id": f"r{i}", "title": f"T{i}", "text": f"Record {i} text."}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def test_ndjson_files_are_json_lines_by_default(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _records(folder / "data.ndjson", 3)
    with _kb(tmp_path) as kb:
        summary = kb.ingest_paths([folder])
        assert summary.added == 3 and not summary.skipped


@pytest.mark.parametrize("key", [".log", "log", "LOG", ".Log", " .log "])
def test_a_reader_key_is_the_extension_however_it_is_written(tmp_path: Path, key: str) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "app.log").write_text("The Dispatch API calls Ledger DB.\n", encoding="utf-8")
    with _kb(tmp_path, {key: "text"}) as kb:
        summary = kb.ingest_paths([folder])
        assert summary.added == 1, summary.skipped


def test_jsonl_names_the_json_lines_reader(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _records(folder / "dump.data", 2)
    with _kb(tmp_path, {".data": "jsonl"}) as kb:
        summary = kb.ingest_paths([folder])
        assert summary.added == 2 and not summary.skipped


def test_an_unknown_reader_name_stops_the_ingest_before_anything_is_written(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nAlpha calls Beta.\n", encoding="utf-8")
    (folder / "b.log").write_text("Gamma calls Delta.\n", encoding="utf-8")
    with _kb(tmp_path, {"log": "plaintext"}) as kb:
        with pytest.raises(InvalidInput) as info:
            kb.ingest_paths([folder])
        assert "ingest.readers" in str(info.value) and "'log'" in str(info.value)
        assert "plaintext" in str(info.value) and "text" in str(info.value)
        assert kb.stats()["documents"] == 0


def test_reader_names_ignore_case_and_json_means_one_json_document(tmp_path: Path) -> None:
    """'JSONL' was refused, and '.ndjson = "json"' still read the file as JSON Lines (review finding)."""
    folder = tmp_path / "in"
    folder.mkdir()
    _records(folder / "lines.data", 2)
    (folder / "list.ndjson").write_text(json.dumps([{"id": "l1", "title": "L", "text": "A list record."}]),
                                        encoding="utf-8")
    with _kb(tmp_path, {".data": "JSONL", ".ndjson": "json"}) as kb:
        summary = kb.ingest_paths([folder])
        assert summary.added == 3 and not summary.skipped
