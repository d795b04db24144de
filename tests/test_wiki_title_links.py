"""``[[Dispatch API]]``: a link by a page's title (or an entity's name or alias, which generated entity pages
list as Obsidian ``aliases``) is a link to that page for lint, backlinks and pages_about, as it is for Obsidian.
Lint called it broken, and backlinks / pages_about never listed it. The link keeps its target as written, so
it resolves whichever of the two pages came first."""

from __future__ import annotations

from pathlib import Path

import graphmem

TEXT = "The dispatch API depends on PgBouncer. Dispatch API calls PgBouncer for every request."
ENTITIES = [{"name": "Dispatch API", "type": "service", "supporting_text": "The dispatch API depends on PgBouncer."},
            {"name": "PgBouncer", "type": "service", "supporting_text": "The dispatch API depends on PgBouncer."}]


def test_a_link_by_title_resolves_to_the_pages_slug(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb") as kb:
        for i in range(2):  # an entity page needs two documents
            kb.ingest_with_content(f"d{i}", f"Notes {i}", "s", TEXT, ENTITIES)
        assert {p["slug"] for p in kb.wiki.list_pages()} >= {"dispatch-api", "pgbouncer"}
        page = kb.wiki.write_page("topic", "Title links", "See [[Dispatch API]] and [[PgBouncer]].\n")
        report = kb.wiki.lint_wiki()
        assert report["broken_wikilinks"] == {}, report["broken_wikilinks"]
        assert page["slug"] in [b["slug"] for b in kb.wiki.backlinks("dispatch-api")]
        assert page["slug"] in [p["slug"] for p in kb.wiki.pages_about("Dispatch API")]


def test_a_hand_made_file_named_with_spaces_keeps_its_own_links(tmp_path: Path) -> None:
    """An Obsidian vault's own files are named by title ('Dispatch notes.md', slug 'dispatch notes'): a
    link to that exact name still goes to it."""
    with graphmem.open(tmp_path / "kb", config={"wiki": {"auto_pages": False}}) as kb:
        folder = kb.home / "wiki" / "topic"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "Dispatch notes.md").write_text("# Dispatch notes\n\nback to [[Start here]]\n", encoding="utf-8")
        (folder / "Start here.md").write_text("# Start here\n\nsee [[Dispatch notes]]\n", encoding="utf-8")
        kb.wiki.sync()
        assert kb.wiki.lint_wiki()["broken_wikilinks"] == {}
        assert [b["slug"] for b in kb.wiki.backlinks("dispatch notes")] == ["start here"]


def test_a_link_written_before_its_page_resolves_once_the_page_exists(tmp_path: Path) -> None:
    """Obsidian's usual order: [[Dispatch notes]] first, the file (created by clicking it) after."""
    with graphmem.open(tmp_path / "kb", config={"wiki": {"auto_pages": False}}) as kb:
        folder = kb.home / "wiki" / "topic"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "Start here.md").write_text("# Start here\n\nsee [[Dispatch notes]]\n", encoding="utf-8")
        kb.wiki.sync()
        assert list(kb.wiki.lint_wiki()["broken_wikilinks"]) == ["start here"]  # no such page yet
        (folder / "Dispatch notes.md").write_text("# Dispatch notes\n\nback to [[start here]]\n", encoding="utf-8")
        kb.wiki.sync()
        report = kb.wiki.lint_wiki()
        assert report["broken_wikilinks"] == {} and report["unlinked_pages"] == []
        assert [b["slug"] for b in kb.wiki.backlinks("dispatch notes")] == ["start here"]


def test_a_link_by_an_entitys_other_name_reaches_its_page(tmp_path: Path) -> None:
    entities = [{**ENTITIES[0], "aliases": ["Dispatch"]}, ENTITIES[1]]
    with graphmem.open(tmp_path / "kb") as kb:
        for i in range(2):
            kb.ingest_with_content(f"d{i}", f"Notes {i}", "s", TEXT, entities)
        page = kb.wiki.write_page("topic", "Alias links", "See [[Dispatch]].\n")
        assert kb.wiki.lint_wiki()["broken_wikilinks"] == {}
        assert page["slug"] in [b["slug"] for b in kb.wiki.backlinks("dispatch-api")]


def _hand_pages(kb: graphmem.KnowledgeBase, files: dict[str, str]) -> None:
    folder = kb.home / "wiki" / "topic"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    kb.wiki.sync()


def test_titles_and_aliases_resolve_for_pages_linked_by_slug_elsewhere_and_an_exact_slug_wins(tmp_path: Path) -> None:
    """Review: a page linked by slug anywhere was never looked at for its title or aliases (lint said broken
    where backlinks said linked), and a page whose slug is the target itself did not take precedence."""
    with graphmem.open(tmp_path / "kb", config={"wiki": {"auto_pages": False}}) as kb:
        _hand_pages(kb, {
            "dispatch-api.md": "---\ntitle: Dispatch API\naliases: [Dispatcher]\n---\n# Dispatch API\n\n[[hub]]\n",
            "hub.md": "# hub\n\n[[dispatch-api]]\n",
            "notes.md": "# notes\n\n[[Dispatcher]] and [[Dispatch API]]\n",
            "Other Page.md": "# Other Page\n\n[[hub]]\n",
            "p2.md": "# p2\n\n[[Other Page]]\n"})
        report = kb.wiki.lint_wiki()
        assert report["broken_wikilinks"] == {}, report["broken_wikilinks"]
        assert "notes" in [b["slug"] for b in kb.wiki.backlinks("dispatch-api")]
        assert [b["slug"] for b in kb.wiki.read_page("topic", "Dispatch API").backlinks] == ["hub", "notes"]
        # 'Other Page.md' (slug 'other page') is the page [[Other Page]] means, not a page titled so elsewhere
        assert [b["slug"] for b in kb.wiki.backlinks("other page")] == ["p2"]


def test_create_stubs_makes_a_stub_for_a_link_by_a_missing_title(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config={"wiki": {"auto_pages": False}}) as kb:
        kb.wiki.write_page("topic", "Page one", "See [[Missing Thing]] and [[missing-slug]].\n")
        fixed = kb.wiki.lint_wiki(fix=True, create_stubs=True)
        assert sorted(fixed["fixed"]["stubs_created"]) == ["topic/missing-slug", "topic/missing-thing"]
        assert kb.wiki.lint_wiki()["broken_wikilinks"] == {}
        assert kb.wiki.read_page("topic", "missing thing").page.slug == "missing-thing"
