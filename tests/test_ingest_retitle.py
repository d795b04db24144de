"""A new title on the same text is a new version: the title is indexed (its BM25F column, the chunk
embeddings' header), so keeping the old one left search and citations naming a title the user had changed."""

from __future__ import annotations

import json
from pathlib import Path

import graphmem

TEXT = "Ada Lovelace worked with Charles Babbage on the Analytical Engine."


def _kb(tmp_path: Path, **wiki: object) -> graphmem.KnowledgeBase:
    return graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"},
                                                  "wiki": {"auto_pages": False, **wiki}})


def test_a_new_title_on_the_same_text_is_a_new_version_that_search_names(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        assert kb.ingest_with_content("d1", "Old Title", "", TEXT)["status"] == "added"
        res = kb.ingest_with_content("d1", "Zanzibar Notes", "", TEXT)
        assert (res["status"], res["version"], res["warnings"]) == ("new_version", 2, [])
        hit = kb.search("Zanzibar", k=1).hits[0]
        assert (hit.doc_id, hit.version, hit.title) == ("d1", 2, "Zanzibar Notes")
        assert kb.search("Old Title", k=5, preset="bm25").hits == []  # the title column holds the new title only
        # the same again, and the same text without a title, change nothing
        assert kb.ingest_with_content("d1", "Zanzibar Notes", "", TEXT)["status"] == "unchanged"
        again = kb.ingest(doc_id="d1", title=None, source=None, content=TEXT)
        assert (again.status, again.version) == ("unchanged", 2)
        assert kb.ingest(doc_id="d1", title="  ", source=None, content=TEXT).status == "unchanged"


def test_a_retitled_jsonl_record_is_written_again_and_the_rest_stay_unchanged(tmp_path: Path) -> None:
    jsonl = tmp_path / "notes.jsonl"

    def write(titles: list[str]) -> None:
        jsonl.write_text("".join(json.dumps({"id": f"n{i}", "title": t, "text": f"{TEXT} Note {i}."}) + "\n"
                                 for i, t in enumerate(titles)), encoding="utf-8")

    with _kb(tmp_path) as kb:
        write(["One", "Two", "Three"])
        assert kb.ingest_paths([jsonl], extractor="none").added == 3
        write(["One", "Two, renamed", " Three "])  # whitespace around a title is not a new title
        second = kb.ingest_paths([jsonl], extractor="none")
        assert (second.added, second.new_versions, second.unchanged) == (0, 1, 2)
        assert kb.documents.get("n1").title == "Two, renamed"
        third = kb.ingest_paths([jsonl], extractor="none")
        assert (third.added, third.new_versions, third.unchanged) == (0, 0, 3)


def _page(tmp_path: Path, rel: str) -> str:
    return (tmp_path / "kb" / "wiki" / rel).read_text(encoding="utf-8")


def test_the_summary_page_takes_the_new_title_and_keeps_its_file(tmp_path: Path) -> None:
    with _kb(tmp_path, auto_pages=True) as kb:
        kb.ingest_with_content("d1", "Old Title", "", TEXT)
        kb.ingest_with_content("d1", "New Title", "", TEXT + " It was never built.")
    page = _page(tmp_path, "summary/doc-old-title.md")  # the file keeps its name: links to it hold
    assert "title: New Title\n" in page and "\n# New Title\n" in page
    assert "Old Title" not in page
    index = _page(tmp_path, "index.md")
    assert "[[doc-old-title|New Title]]" in index and "Old Title" not in index
    # a retitle on the same text (a new version too) moves it again
    with _kb(tmp_path, auto_pages=True) as kb:
        kb.ingest_with_content("d1", "Third Title", "", TEXT + " It was never built.")
    assert "\n# Third Title\n" in _page(tmp_path, "summary/doc-old-title.md")


def test_a_title_a_person_gave_the_summary_page_stays(tmp_path: Path) -> None:
    with _kb(tmp_path, auto_pages=True) as kb:
        kb.ingest_with_content("d1", "Old Title", "", TEXT)
    path = tmp_path / "kb" / "wiki" / "summary" / "doc-old-title.md"
    path.write_text(path.read_text(encoding="utf-8").replace("title: Old Title", "title: My Engines")
                    .replace("# Old Title", "# My Engines"), encoding="utf-8")
    with _kb(tmp_path, auto_pages=True) as kb:
        kb.ingest_with_content("d1", "New Title", "", TEXT + " It was never built.")
    page = path.read_text(encoding="utf-8")
    assert "title: My Engines\n" in page and "\n# My Engines\n" in page and "New Title" not in page
