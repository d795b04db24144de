"""kb.wiki: writing, reading, listing, searching, deleting pages; index.md, log.md, events;
unsafe titles; atomic writes under injected failures."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import backend_kb
import graphmem
from conftest import snapshot
from graphmem.errors import BackendError, InvalidInput, NotFound
from graphmem.wiki import files as wiki_files
from graphmem.wiki.hosts import LEDGER_LOCK, LEDGER_NAME

SUMMARY_BODY = (
    "# System Crash Analysis Summary\n\n"
    "The system crashes because of a [[memory-leak]]: objects are not released.\n\n"
    "- [[memory-leak]] causes [[system-crash]]\n"
)

# The knowledge base of these tests, on SQLite and on PostgreSQL (tests/backend_kb.py).
kb, backend_url = backend_kb.kb, backend_kb.backend_url
LOG_LINE = re.compile(r"^## \[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] (\w+) \| (\S+) — (.*)$")


def wiki_files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def log_lines(kb: graphmem.KnowledgeBase) -> list[str]:
    return [ln for ln in (kb.wiki.dir / "log.md").read_text(encoding="utf-8").splitlines() if ln.startswith("## [")]


# -- the seed's quick start ---------------------------------------------------------------------


def test_quickstart_write_page_makes_file_index_entry_log_line_and_event(kb, quickstart):
    r = kb.wiki.write_page(category="summary", title="System Crash Analysis Summary", content=SUMMARY_BODY,
                           summary="Memory leaks crash the system")
    assert (r["slug"], r["category"], r["created"]) == ("system-crash-analysis-summary", "summary", True)
    path = Path(r["path"])
    assert path == kb.wiki.dir / "summary" / "system-crash-analysis-summary.md" and path.is_file()
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\ntitle: System Crash Analysis Summary\ncategory: summary\n")
    for key in ("tags:", "source_documents:", "updated:", "summary: Memory leaks crash the system"):
        assert f"\n{key}" in text
    assert text.endswith(SUMMARY_BODY)

    index = (kb.wiki.dir / "index.md").read_text(encoding="utf-8")
    assert ("- [[system-crash-analysis-summary|System Crash Analysis Summary]] — Memory leaks crash the system"
            in index)
    entries = [LOG_LINE.match(ln).groups() for ln in log_lines(kb)]
    assert entries[0][:2] == ("ingest", "summary/doc-system-crash-analysis")  # the quick start's ingest
    assert ("write", "summary/system-crash-analysis-summary", "Memory leaks crash the system") in entries
    # ...and the entity pages it links now point back to it (their "See also").
    assert {e[:2] for e in entries[-2:]} == {("update", "entity/memory-leak"), ("update", "entity/system-crash")}
    assert "[[system-crash-analysis-summary]]" in (kb.wiki.dir / "entity" / "memory-leak.md").read_text("utf-8")
    ev = kb.events.list(types=["wiki.write"])
    assert [e.target for e in ev] == ["system-crash-analysis-summary"]
    assert ev[0].payload["path"] == "summary/system-crash-analysis-summary.md"


def test_quickstart_search_returns_summary_and_entity_pages_ranked_with_snippets(kb, quickstart):
    kb.wiki.write_page("summary", "System Crash Analysis Summary", SUMMARY_BODY)
    hits = kb.wiki.search_wiki("memory leak")
    slugs = [h["slug"] for h in hits]
    assert slugs[0] == "memory-leak"  # the title match ranks first
    assert {"memory-leak", "doc-system-crash-analysis", "system-crash-analysis-summary"} <= set(slugs)
    assert {h["category"] for h in hits} >= {"entity", "summary"}
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    for h in hits:
        assert set(h) == {"slug", "category", "path", "title", "snippet", "score"}
        assert Path(h["path"]).is_file()
        snip = h["snippet"].lower()  # a match inside a wikilink bolds the whole link (issue 13)
        assert "**memory**" in snip or "**leak" in snip or "**[[memory-leak]]**" in snip
    assert kb.wiki.search_wiki("memory leak", k=1) == hits[:1]
    assert kb.wiki.search_wiki('"NEAR* -: (') == [] or isinstance(kb.wiki.search_wiki('"NEAR* -: ('), list)
    assert [h["slug"] for h in kb.wiki.search_wiki("memory", category="summary")][0].startswith("system-crash")


# -- read, update, list, delete ----------------------------------------------------------------------


def test_read_by_title_and_by_slug(kb):
    kb.wiki.write_page("topic", "Caching Strategy", "Use [[lru-cache]] here.\n", tags=["perf"])
    a = kb.wiki.read_page("Topic", "caching strategy")  # category slugged, title case-insensitive
    b = kb.wiki.read_page_by_slug("caching-strategy")
    assert a == b
    assert a["content"] == "Use [[lru-cache]] here.\n" and a["tags"] == ["perf"]
    assert a["front_matter"]["title"] == "Caching Strategy"
    assert a["links"] == [{"target": "lru-cache", "line": a["links"][0]["line"], "label": None}]
    with pytest.raises(NotFound, match="no page titled 'Nope' in category 'topic'"):
        kb.wiki.read_page("topic", "Nope")
    with pytest.raises(NotFound, match="no wiki page with slug 'nope'"):
        kb.wiki.read_page_by_slug("nope")


def test_rewrite_updates_in_place_and_keeps_front_matter_added_by_hand(kb):
    first = kb.wiki.write_page("topic", "Retry Policy", "v1\n")
    path = Path(first["path"])
    text = path.read_text(encoding="utf-8").replace("category: topic\n", "category: topic\naliases:\n- backoff\n")
    path.write_text(text, encoding="utf-8")
    second = kb.wiki.write_page("topic", "retry policy", "v2\n", summary="How we retry")
    assert (second["slug"], second["created"]) == ("retry-policy", False)
    page = kb.wiki.read_page_by_slug("retry-policy")
    assert page["content"] == "v2\n" and page["front_matter"]["aliases"] == ["backoff"]
    assert page["title"] == "retry policy"  # the title as last written
    assert LOG_LINE.match(log_lines(kb)[-1]).group(1) == "update"
    assert [e.type for e in kb.events.list(target="retry-policy")][-1] == "wiki.update"
    assert len(kb.wiki.list_pages("topic")) == 1


def test_slugs_are_unique_across_the_wiki(kb):
    a = kb.wiki.write_page("topic", "Memory Leak", "a\n")
    b = kb.wiki.write_page("entity", "memory leak", "b\n")
    c = kb.wiki.write_page("topic", "Memory Leak!", "c\n")
    assert (a["slug"], b["slug"], c["slug"]) == ("memory-leak", "memory-leak-2", "memory-leak-3")
    assert kb.wiki.read_page("entity", "Memory Leak")["content"] == "b\n"


def test_list_pages(kb):
    for cat, title in [("topic", "B"), ("topic", "a"), ("entity", "Z")]:
        kb.wiki.write_page(cat, title, "x\n", summary=f"about {title}")
    assert [(p["category"], p["title"]) for p in kb.wiki.list_pages()] == [("entity", "Z"), ("topic", "a"),
                                                                           ("topic", "B")]
    assert [p["slug"] for p in kb.wiki.list_pages("topic", limit=1, offset=1)] == ["b"]
    assert kb.wiki.list_pages("topic")[0]["summary"] == "about a"


def test_delete_page_removes_file_index_entry_and_logs(kb):
    kb.wiki.write_page("topic", "Keep", "links to [[gone]]\n")
    r = kb.wiki.write_page("topic", "Gone", "bye\n")
    out = kb.wiki.delete_page("topic", "Gone")
    assert out["deleted"] and not Path(r["path"]).exists()
    assert "[[gone|" not in (kb.wiki.dir / "index.md").read_text(encoding="utf-8")
    assert LOG_LINE.match(log_lines(kb)[-1]).groups()[:2] == ("delete", "topic/gone")
    assert kb.events.list(types=["wiki.delete"])[0].target == "gone"
    assert kb.wiki.lint_wiki()["broken_wikilinks"] == {"keep": [{"target": "gone", "line": 8}]}
    with pytest.raises(NotFound):
        kb.wiki.delete_page(slug="gone")
    assert kb.store.get_nodes([kb.store.get_page("keep").node_id])  # pages are graph nodes of kind page


def test_backlinks_and_pages_about_an_entity(kb, quickstart):
    kb.wiki.write_page("topic", "Crash Notes", "See [[memory-leak]].\n\nAnd [[memory-leak]] again.\n")
    back = kb.wiki.backlinks("memory-leak")
    assert {b["slug"] for b in back} >= {"crash-notes", "doc-system-crash-analysis", "system-crash"}
    notes = next(b for b in back if b["slug"] == "crash-notes")
    assert notes["category"] == "topic" and notes["title"] == "Crash Notes"
    about = [p["slug"] for p in kb.wiki.pages_about("Memory Leak")]
    assert about[0] == "memory-leak" and "crash-notes" in about
    assert kb.wiki.backlinks("no-such-page") == []


def test_get_log_reads_the_last_entries(kb):
    for i in range(30):
        kb.wiki.write_page("topic", f"Page {i}", "x\n")
    log = kb.wiki.get_log(5)
    assert [e["target"] for e in log] == [f"topic/page-{i}" for i in range(25, 30)]
    assert all(e["operation"] == "write" and e["line"].startswith("## [") for e in log)
    assert kb.wiki.get_log(0) == [] and len(kb.wiki.get_log(100)) == 30


def test_source_documents_are_pinned_to_versions(kb, quickstart):
    r = kb.wiki.write_page("topic", "Cited", "x\n", source_documents=["doc_1"])
    assert kb.wiki.read_page_by_slug(r["slug"])["front_matter"]["source_documents"] == ["doc_1@v1"]
    with pytest.raises(InvalidInput, match="no document with id 'nope'"):
        kb.wiki.write_page("topic", "Cited", "x\n", source_documents=["nope"])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"content": 3}, "content"),
        ({"content": "a\x00b"}, "content"),
        ({"tags": "one"}, "tags"),
        ({"summary": "a\x01"}, "summary"),
        ({"category": ""}, "category"),
        ({"category": "!!"}, "category"),
        ({"title": 5}, "title"),
    ],
)
def test_bad_arguments_name_the_field_and_write_nothing(kb, kwargs: dict[str, Any], field: str):
    args = {"category": "topic", "title": "T", "content": "x\n", **kwargs}
    before = snapshot(kb)
    with pytest.raises(InvalidInput, match=field):
        kb.wiki.write_page(**args)
    assert snapshot(kb) == before and not (kb.wiki.dir / "topic").exists()


# -- unsafe titles --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "title", ["../../etc/passwd", "/etc/passwd", "..", "../..", "C:\\evil", "a/../../b", "~/.ssh/id_rsa"]
)
def test_path_like_titles_are_slugged_inside_the_wiki(kb, tmp_path, title: str):
    # (a folder on a shared store keeps its wiki ledger and its lock beside config.toml: bookkeeping, not a page)
    ledger = (LEDGER_NAME, LEDGER_LOCK)
    outside_before = {p for p in tmp_path.rglob("*") if kb.wiki.dir not in p.parents and p.name not in ledger}
    try:
        r = kb.wiki.write_page("topic", title, "x\n")
    except InvalidInput:
        return  # rejected is fine too ("..": nothing to make a name of)
    path = Path(r["path"]).resolve()
    assert kb.wiki.dir.resolve() in path.parents and path.parent.name == "topic"
    assert re.fullmatch(r"[a-z0-9-]+", r["slug"])
    outside_after = {p for p in tmp_path.rglob("*") if kb.wiki.dir not in p.parents and p.name not in ledger}
    assert outside_after == outside_before


@pytest.mark.parametrize("title", ["a\x00b", "line\nbreak", "esc\x1b[31m", "...", "!!! ???", "   "])
def test_control_characters_and_punctuation_only_titles_are_rejected(kb, title: str):
    with pytest.raises(InvalidInput, match="title"):
        kb.wiki.write_page("topic", title, "x\n")
    assert kb.wiki.list_pages() == []


def test_path_like_categories_stay_inside(kb):
    r = kb.wiki.write_page("../../outside", "T", "x\n")
    assert r["category"] == "outside" and Path(r["path"]).parent == kb.wiki.dir / "outside"


# -- atomicity --------------------------------------------------------------------------------------


def _state(kb: graphmem.KnowledgeBase) -> tuple[dict[str, Any], dict[str, bytes], Any]:
    page = kb.store.get_page("retry-policy", with_content=True)
    return snapshot(kb), wiki_files_under(kb.wiki.dir), page


def test_failed_rename_leaves_page_index_and_store_as_they_were(kb, monkeypatch):
    kb.wiki.write_page("topic", "Retry Policy", "version one\n", summary="v1")
    kb.wiki.write_page("topic", "Other", "x\n")
    before = _state(kb)
    real = os.replace

    def failing(src, dst):
        raise OSError(28, "No space left on device", str(dst))

    monkeypatch.setattr(wiki_files.os, "replace", failing)
    with pytest.raises(BackendError, match="No space left on device"):
        kb.wiki.write_page("topic", "Retry Policy", "version two\n", summary="v2")
    monkeypatch.setattr(wiki_files.os, "replace", real)
    assert _state(kb) == before  # page file, index.md, log.md, rows, events: all as before
    assert not [p for p in kb.wiki.dir.rglob(".*.tmp")]


def test_failure_after_the_page_rename_puts_the_page_back(kb, monkeypatch):
    kb.wiki.write_page("topic", "Retry Policy", "version one\n", summary="v1")
    before = _state(kb)
    real = os.replace
    calls = []

    def second_fails(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # the page went in; the index shard fails
            raise OSError(5, "I/O error", str(dst))
        return real(src, dst)

    monkeypatch.setattr(wiki_files.os, "replace", second_fails)
    with pytest.raises(BackendError, match="I/O error"):
        kb.wiki.write_page("topic", "Retry Policy", "version two\n", summary="a new summary")
    monkeypatch.setattr(wiki_files.os, "replace", real)
    assert str(calls[0]).endswith("retry-policy.md")
    assert _state(kb) == before


def test_failure_in_the_store_leaves_files_untouched(kb, monkeypatch):
    kb.wiki.write_page("topic", "Retry Policy", "version one\n")
    before = _state(kb)

    def boom(*a, **k):
        raise BackendError("disk I/O error (injected)")

    monkeypatch.setattr(kb.store, "save_page", boom)
    monkeypatch.setattr(kb.store, "save_pages", boom)  # what a page write calls (all its rows at once)
    with pytest.raises(BackendError, match="injected"):
        kb.wiki.write_page("topic", "Retry Policy", "version two\n")
    monkeypatch.undo()
    assert _state(kb) == before
    assert not [p for p in kb.wiki.dir.rglob(".*.tmp")]


def test_failed_commit_puts_files_back(kb, monkeypatch):
    kb.wiki.write_page("topic", "Retry Policy", "version one\n")
    before = _state(kb)
    real_commit = wiki_files.FileTxn.commit

    def commit_then_fail(self):
        real_commit(self)
        raise BackendError("commit failed (injected)")

    monkeypatch.setattr(wiki_files.FileTxn, "commit", commit_then_fail)
    with pytest.raises(BackendError, match="injected"):
        kb.wiki.write_page("topic", "Retry Policy", "version two\n")
    monkeypatch.undo()
    assert _state(kb) == before


# -- index.md and its shards --------------------------------------------------------------------------


def test_index_shards_stay_identical_to_a_full_render(tmp_path):
    from graphmem.wiki.indexfiles import render_root, render_shard, shard_file

    with graphmem.open(tmp_path / "kb", config={"wiki": {"index_inline_max": 3}}) as kb:
        titles = ["Mango", "melon", "Apple", "apricot", "Mango Two", "mandarin", "Avocado", "maple", "Medlar"]
        for t in titles:
            kb.wiki.write_page("topic", t, f"about {t}\n", summary=f"{t} summary")
        kb.wiki.write_page("topic", "melon", "changed\n", summary="a new summary moves nothing")
        kb.wiki.delete_page("topic", "Apple")
        # Two files with the same title in one shard: ordered by slug.
        for name in ("mango-b", "mango-a"):
            (kb.wiki.dir / "topic" / f"{name}.md").write_text("---\ntitle: Mango\n---\nx\n", encoding="utf-8")
        kb.wiki.sync()
        kb.wiki.write_page("topic", "Mulberry", "x\n")
        for category, shard, _ in kb.store.wiki_index_counts():
            text = shard_file(kb.wiki.dir, category, shard).read_text(encoding="utf-8")
            assert text == render_shard(kb.store, category, shard)
        m = shard_file(kb.wiki.dir, "topic", "ma").read_text(encoding="utf-8")
        order = [ln.split("|")[0][4:] for ln in m.splitlines() if ln.startswith("- [[")]
        assert order == ["mandarin", "mango", "mango-a", "mango-b", "mango-two", "maple"]
        index = (kb.wiki.dir / "index.md").read_text(encoding="utf-8")
        assert index == render_root(kb.store, 3)
        assert "[[_index/topic/ma|topic: ma]]" in index and "[[melon|" not in index  # > 3 pages: sharded
        assert not shard_file(kb.wiki.dir, "topic", "z").exists()


def test_words_on_half_the_pages_or_more_do_not_change_the_ranking(kb):
    for i in range(6):
        kb.wiki.write_page("topic", f"Note {i}", "common words everywhere\n" + ("zebra stripes\n" if i == 4 else ""))
    hits = kb.wiki.search_wiki("common zebra")
    assert hits[0]["slug"] == "note-4" and "**zebra**" in hits[0]["snippet"]
    # The other pages match only the ubiquitous word: they still fill the list, after it.
    assert len(hits) == 6 and {h["slug"] for h in hits[1:]} == {f"note-{i}" for i in (0, 1, 2, 3, 5)}
    assert [h["slug"] for h in kb.wiki.search_wiki("common zebra", k=1)] == ["note-4"]


def test_timestamps_come_from_the_knowledge_base_clock(tmp_path):
    from datetime import datetime, timezone

    fixed = datetime(2026, 11, 30, 10, 0, 0, tzinfo=timezone.utc)
    with graphmem.open(tmp_path / "kb", clock=lambda: fixed) as kb:
        assert kb.wiki.write_page("topic", "T", "a\n")["created"] is True
        again = kb.wiki.write_page("topic", "T", "b\n")
        assert again["created"] is False and again["updated"] == "2026-11-30T10:00:00.000Z"
        assert kb.wiki.get_log()[-1]["line"] == "## [2026-11-30T10:00:00Z] update | topic/t — T"
        assert "updated: \"2026-11-30T10:00:00.000Z\"" in Path(again["path"]).read_text(encoding="utf-8")


def test_entity_pages_whose_names_end_in_digits_are_not_regenerated_at_every_sync(tmp_path):
    """INC-2041, HTTP 503, PostgreSQL 15: their slugs end in -<digits>, which the legacy-slug check took for
    a numbered duplicate; every `wiki sync` marked and regenerated them and they never moved (on the bundled
    example, 6 pages each sync; 3 s per sync on an 8,000-document knowledge base)."""
    import graphmem
    from graphmem.wiki.generate import legacy_slug_marks

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        kb.ingest_with_content(
            "inc", "Incident", "s", "INC-2041 was caused by PostgreSQL 15. INC-2041 affects PostgreSQL 15.\n",
            entities=[{"name": "INC-2041", "type": "incident"}, {"name": "PostgreSQL 15", "type": "database"}],
            relations=[{"source": "INC-2041", "target": "PostgreSQL 15", "type": "caused by"}])
        slugs = {p.slug for p in kb.store.list_pages("entity")}
        assert {"inc-2041", "postgresql-15"} <= slugs
        assert legacy_slug_marks(kb.store) == []
        assert kb.wiki.sync().to_dict()["regenerated"] == 0


def _index_matches_a_full_render(kb: graphmem.KnowledgeBase) -> None:
    from graphmem.wiki.indexfiles import INDEX_DIR, render_root, render_shard, shard_file

    listed: list[str] = []
    live = set()
    for category, shard, _ in kb.store.wiki_index_counts():
        path = shard_file(kb.wiki.dir, category, shard)
        live.add(path)
        text = path.read_text(encoding="utf-8")
        assert text == render_shard(kb.store, category, shard), (category, shard)
        listed += [ln.split("|")[0][4:] for ln in text.splitlines() if ln.startswith("- [[")]
    assert sorted(listed) == sorted(p.slug for p in kb.store.list_pages(None))  # each page listed once
    assert (kb.wiki.dir / "index.md").read_text(encoding="utf-8") == render_root(kb.store,
                                                                                 kb.ctx.config.wiki.index_inline_max)
    assert {p for p in (kb.wiki.dir / INDEX_DIR).rglob("*.md")} <= live


def test_summary_pages_are_sharded_by_their_titles(tmp_path):
    """Every generated summary page is doc-<title>: sharded by its first two characters they all went to
    one shard, which each ingest batch of more than a few documents rendered again in full (at 3,000
    documents a batch of 20 rewrote a 3,000-line file)."""
    from graphmem.wiki.indexfiles import shard_file

    titles = ["Apple Pie", "Banana Bread", "Cherry Tart", "Apricot Jam", "Blueberry Muffin"]
    with graphmem.open(tmp_path / "kb") as kb:
        for i, t in enumerate(titles):
            kb.ingest_with_content(f"d{i}", t, f"{t}.md", f"{t} is baked with flour and sugar.", [], [])
        shards = {s for c, s, _ in kb.store.wiki_index_counts() if c == "summary"}
        assert shards == {"ap", "ba", "bl", "ch"}
        assert "[[doc-apricot-jam|Apricot Jam]]" in shard_file(kb.wiki.dir, "summary", "ap").read_text("utf-8")
        _index_matches_a_full_render(kb)


def test_pages_listed_in_the_old_summary_shard_move_when_they_change(tmp_path):
    """A knowledge base from before: its summary rows and index say shard "do". A page keeps its row's
    shard until graphmem writes it again, which moves its line; the index stays what a full render gives."""
    from graphmem.wiki.lint import rewrite_index

    with graphmem.open(tmp_path / "kb") as kb:
        for i in range(12):
            kb.ingest_with_content(f"d{i}", f"Topic {i:02d}", f"t{i}.md", f"Topic {i} is about item {i}.", [], [])
        kb.store.conn.execute("UPDATE pages SET shard = 'do' WHERE category = 'summary'")  # as the old code kept it
        kb.store.conn.commit()
        rewrite_index(kb.wiki._core)
        _index_matches_a_full_render(kb)
        kb.ingest_with_content("d3", "Topic 03", "t3.md", "Topic 3 is about something else now.", [], [])
        _index_matches_a_full_render(kb)
        batch = tmp_path / "batch.jsonl"  # more changes in one batch than a shard file is patched for
        batch.write_text("".join(json.dumps({"id": f"d{i}", "title": f"Topic {i:02d}", "text": f"Topic {i} changed."})
                                 + "\n" for i in range(12)), encoding="utf-8")
        kb.ingest_paths([batch], extractor="none")
        _index_matches_a_full_render(kb)
        assert {s for c, s, _ in kb.store.wiki_index_counts() if c == "summary"} == {"to"}
