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


def test_a_title_that_is_the_document_id_counts_as_none(tmp_path: Path) -> None:
    """MCP, HTTP and a JSONL record without a title put the document id in the title's place."""
    with _kb(tmp_path) as kb:
        kb.ingest_with_content("d1", "Engines", "", TEXT)
        again = kb.ingest_with_content("d1", "d1", "mcp", TEXT)
        assert (again["status"], again["version"]) == ("unchanged", 1)
        # new text without a title: a new version that keeps the document's title
        v2 = kb.ingest(doc_id="d1", title=None, source=None, content=TEXT + " Later.")
        assert (v2.status, v2.version, kb.documents.get("d1").title) == ("new_version", 2, "Engines")
        jsonl = tmp_path / "r.jsonl"
        jsonl.write_text(json.dumps({"id": "d1", "text": TEXT + " Later."}) + "\n", encoding="utf-8")
        assert kb.ingest_paths([jsonl], extractor="none").unchanged == 1
        jsonl.write_text(json.dumps({"id": "d1", "title": "   ", "text": TEXT + " Later."}) + "\n", encoding="utf-8")
        assert kb.ingest_paths([jsonl], extractor="none").unchanged == 1  # a blank title is none too


def _summary(tmp_path: Path, slug: str) -> str:
    return _page(tmp_path, f"summary/{slug}.md")


def test_a_page_is_told_apart_by_its_id_while_another_has_its_title(tmp_path: Path) -> None:
    with _kb(tmp_path, auto_pages=True) as kb:
        def title(slug: str) -> str:
            page = kb.store.get_page(slug)
            assert page is not None and f"\n# {page.title}\n" in _summary(tmp_path, slug)  # heading and title agree
            return page.title

        kb.ingest_with_content("d1", "Shared", "", TEXT)
        kb.ingest_with_content("d2", "Shared", "", TEXT + " Two.")
        assert title("doc-shared-d2") == "Shared (d2)"
        kb.ingest_with_content("d2", "Shared", "", TEXT + " Two, edited.")  # same title, new text
        assert title("doc-shared-d2") == "Shared (d2)"
        kb.ingest_with_content("d2", "Private", "", TEXT + " Two, edited.")  # retitled to a free title
        assert title("doc-shared-d2") == "Private"
        kb.ingest_with_content("d3", "Third", "", TEXT + " Three.")
        kb.ingest_with_content("d3", "Shared", "", TEXT + " Three.")  # to a title d1's page has
        assert title("doc-third") == "Shared (d3)"
        assert title("doc-shared") == "Shared"


def test_a_page_a_person_named_and_graphmem_adopted_keeps_its_title(tmp_path: Path) -> None:
    own = tmp_path / "kb" / "wiki" / "summary" / "engines.md"
    with _kb(tmp_path, auto_pages=True) as kb:
        kb.wiki.write_page("summary", "Engines", "My notes on the engines.")
        kb.ingest_with_content("d1", "Engines", "", TEXT)
        assert "graphmem:begin generated" in own.read_text(encoding="utf-8")  # adopted: it has the block
        kb.ingest_with_content("d1", "Motors", "", TEXT)
    text = own.read_text(encoding="utf-8")
    assert "title: Engines\n" in text and "Motors" not in text.split("<!-- graphmem:begin")[0]


def test_a_heading_edited_by_hand_leaves_the_title_alone(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "wiki" / "summary" / "doc-old-title.md"
    with _kb(tmp_path, auto_pages=True) as kb:
        kb.ingest_with_content("d1", "Old Title", "", TEXT)
    path.write_text(path.read_text(encoding="utf-8").replace("# Old Title", "# Old Title — my notes"),
                    encoding="utf-8")
    with _kb(tmp_path, auto_pages=True) as kb:
        kb.ingest_with_content("d1", "New Title", "", TEXT)
    text = path.read_text(encoding="utf-8")
    assert "title: Old Title\n" in text and "# Old Title — my notes" in text  # one story, not two
    crlf = tmp_path / "kb" / "wiki" / "summary" / "doc-crlf.md"
    with _kb(tmp_path, auto_pages=True) as kb:
        kb.ingest_with_content("d2", "CRLF", "", TEXT + " Two.")
        crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
        kb.ingest_with_content("d2", "Windows", "", TEXT + " Two.")
    text = crlf.read_bytes().decode("utf-8")
    assert "# Windows\r\n" in text and "# CRLF" not in text
