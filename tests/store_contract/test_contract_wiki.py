"""Contract of :class:`graphmem.store.protocols.WikiStore`: the wiki's page index."""

from __future__ import annotations

import pytest

from graphmem.errors import BackendError
from graphmem.models import Page, PageLink
from graphmem.store.protocols import WikiStore

from .seed import T0, T1, document, edge, evidence, node

PROTOCOL = WikiStore
contract = pytest.mark.contract


def page(slug: str, category: str = "entities", title: str | None = None, content: str = "", shard: str = "",
         subject: str | None = None, node_id: str | None = None, **fields) -> Page:
    return Page(slug=slug, category=category, title=title or slug.title(), path=f"{category}/{slug}.md",
                content=content, content_hash=f"h-{slug}-{len(content)}", size=len(content), mtime_ns=1,
                shard=shard, subject=subject, node_id=node_id, created_at=T0, updated_at=T0, **fields)


def save(store, p: Page, links=(), claims=(), sources=()) -> Page:
    with store.transaction():
        store.save_page(p, list(links), list(claims), list(sources))
    return p


@contract("save_page", "get_page", "pages_by_slug", "list_pages", "delete_page_row")
def test_pages_are_saved_replaced_listed_and_deleted(store) -> None:
    save(store, page("ada", title="Ada Lovelace", content="Ada wrote the first program.", summary="a countess",
                     tags=["person"], front_matter={"k": 1}, node_id="page:ada"))
    save(store, page("bob", category="concepts", title="Bob"))
    got = store.get_page("ada", with_content=True)
    assert (got.title, got.content, got.summary, got.tags, got.front_matter, got.path) == (
        "Ada Lovelace", "Ada wrote the first program.", "a countess", ["person"], {"k": 1}, "entities/ada.md")
    assert store.get_page("ada").content == ""  # without content
    # a page with a node_id is also a manual graph node of kind page, found by its slug
    assert store.get_nodes(["page:ada"])["page:ada"].kind == "page"
    assert store.find_nodes("page", ["ada"]) == {"ada": "page:ada"}
    replaced = page("ada", title="Ada L.", content="new body", node_id="page:ada")
    replaced.created_at, replaced.updated_at = "ignored", T1
    save(store, replaced, links=[PageLink("bob", 1)])
    again = store.get_page("ada", with_content=True)
    assert (again.title, again.content, again.created_at, again.updated_at) == ("Ada L.", "new body", T0, T1)
    assert store.get_nodes(["page:ada"])["page:ada"].name == "Ada L."
    assert sorted(store.pages_by_slug(["ada", "bob", "zzz"])) == ["ada", "bob"]
    assert [p.slug for p in store.list_pages()] == ["bob", "ada"]  # by category, then title
    assert [p.slug for p in store.list_pages("entities")] == ["ada"]
    assert [p.slug for p in store.list_pages(limit=1, offset=1)] == ["ada"]
    with store.transaction():
        assert store.delete_page_row("ada") is True
        assert store.delete_page_row("ada") is False
    assert store.get_page("ada") is None and store.get_nodes(["page:ada"]) == {}
    assert store.page_links_of("ada") == [] and store.pages_by_slug([]) == {}


@contract("save_page", "get_page")
def test_page_text_round_trips(store) -> None:
    """The file's exact text comes back with the content (another folder on the store writes it from here)."""
    text = "---\ntitle: Ada\n---\n<!-- graphmem:begin -->\nAda wrote the first program. ✓\n<!-- graphmem:end -->\n"
    save(store, page("ada", content="Ada wrote the first program. ✓", text=text))
    assert store.get_page("ada", with_content=True).text == text
    assert store.get_page("ada").text == ""  # without content, like content
    save(store, page("ada", content="v2", text="---\ntitle: Ada\n---\nv2\n"))
    assert store.get_page("ada", with_content=True).text == "---\ntitle: Ada\n---\nv2\n"
    assert [h.slug for h in store.search_pages("graphmem")] == []  # the text is not searched


@contract("save_page", "find_page", "pages_by_subject", "subject_slugs", "slug_subjects", "slugs_taken")
def test_page_lookups_by_title_subject_and_slug(store) -> None:
    save(store, page("ada-lovelace", title="Ada Lovelace", subject="entity:ada"))
    save(store, page("ada-lovelace-2", title="Ada  LOVELACE"))
    save(store, page("ada-lovelaces", title="Other"))
    assert store.find_page("entities", "ada lovelace").slug == "ada-lovelace"  # the oldest of that title
    assert store.find_page("concepts", "ada lovelace") is None
    assert {k: p.slug for k, p in store.pages_by_subject(["entity:ada", "entity:zzz"]).items()} == {
        "entity:ada": "ada-lovelace"}
    assert store.subject_slugs(["entity:ada", "doc:zzz"]) == {"entity:ada": "ada-lovelace"}
    assert store.slug_subjects(["ada-lovelace", "ada-lovelace-2", "zzz"]) == {
        "ada-lovelace": "entity:ada", "ada-lovelace-2": None}
    assert store.slugs_taken("ada-lovelace") == {"ada-lovelace", "ada-lovelace-2"}
    assert store.slugs_taken("nobody") == set()
    with pytest.raises(BackendError), store.transaction():  # one page per subject
        store.save_page(page("second", subject="entity:ada"), [], [], [])
    assert store.get_page("second") is None


@contract("set_page_stat", "page_files", "page_stats")
def test_page_file_stats(store) -> None:
    save(store, page("ada", content="body"))
    save(store, page("bob", category="concepts"))
    with store.transaction():
        store.set_page_stat("ada", 99, 12345)
        store.set_page_stat("zzz", 1, 1)
    files = store.page_files()
    assert files == {"entities/ada.md": ("ada", 99, 12345, "h-ada-4"), "concepts/bob.md": ("bob", 0, 1, "h-bob-0")}
    assert files["entities/ada.md"].mtime_ns == 12345
    assert store.page_stats(["concepts/bob.md", "nope.md"]) == {"concepts/bob.md": ("bob", 0, 1, "h-bob-0")}
    assert store.page_stats([]) == {}


@contract("search_pages")
def test_search_pages_weights_titles_and_bolds_matches(store) -> None:
    save(store, page("kayak", title="Kayak", content="a boat"))
    save(store, page("boats", category="concepts", title="Boats", content="a kayak is a boat; kayak kayak"))
    hits = store.search_pages("kayak")
    assert [h.page.slug for h in hits] == ["kayak", "boats"]  # the title counts more
    assert all(h.score > 0 for h in hits) and "**kayak**" in hits[1].snippet.lower()
    assert [h.page.slug for h in store.search_pages("kayak", category="concepts")] == ["boats"]
    assert len(store.search_pages("kayak", k=1)) == 1 and store.search_pages("kayak", k=0) == []
    assert store.search_pages("?!") == [] and store.search_pages("submarine") == []
    assert {h.page.slug for h in store.search_pages('kayak" OR NEAR(* title:')} == {"kayak", "boats"}


@contract("page_backlinks", "page_links_of", "pages_linking_to")
def test_links_backlinks(store) -> None:
    save(store, page("ada"), links=[PageLink("bob", 3, "Bob"), PageLink("ada", 1), PageLink("gone", 2)])
    save(store, page("bob", category="concepts"), links=[PageLink("ada", 1)])
    save(store, page("cy"), links=[PageLink("bob", 1)])
    assert store.page_links_of("ada") == [PageLink("ada", 1), PageLink("gone", 2), PageLink("bob", 3, "Bob")]
    assert store.page_backlinks("bob") == [("ada", 3), ("cy", 1)]
    assert store.page_backlinks("bob", limit=1) == [("ada", 3)]
    assert store.page_backlinks("ada") == [("bob", 1)]  # not its own link
    assert store.page_backlinks("bob", category="concepts") == []
    assert store.page_backlinks("zzz") == [] and store.page_links_of("zzz") == []
    assert store.pages_linking_to(["bob", "ada"]) == ["ada", "bob", "cy"]
    assert store.pages_linking_to(["bob"], limit=1) == ["ada"] and store.pages_linking_to([]) == []
    save(store, page("ada"), links=[])  # links are replaced on save
    assert store.page_links_of("ada") == [] and store.page_backlinks("bob") == [("cy", 1)]


@contract("save_pages")
def test_save_pages_is_save_page_in_order(store) -> None:
    with store.transaction():
        store.save_pages([
            (page("ada", content="first", node_id="page:ada"), [PageLink("bob", 1)], [], [("d1", 1)]),
            (page("bob", category="summary", subject="doc:d1"), [PageLink("ada", 2), PageLink("cy", 3)],
             [("r_1", 2, "- [[ada]] knows [[cy]]")], [("d1", None)]),
        ])
    assert store.get_page("ada", with_content=True).content == "first"
    assert store.page_links_of("bob") == [PageLink("ada", 2), PageLink("cy", 3)]
    assert store.page_backlinks("ada") == [("bob", 2)] and store.subject_slugs(["doc:d1"]) == {"doc:d1": "bob"}
    assert store.get_nodes(["page:ada"])["page:ada"].kind == "page"
    with store.transaction():  # replaced, not merged; the same slug twice: the later one wins
        store.save_pages([(page("ada", content="second", node_id="page:ada"), [], [], []),
                          (page("bob", category="summary", subject="doc:d1"), [PageLink("cy", 1)], [], []),
                          (page("ada", content="third", node_id="page:ada"), [PageLink("cy", 4)], [], [])])
        store.save_pages([])
    assert store.get_page("ada", with_content=True).content == "third"
    assert store.page_links_of("ada") == [PageLink("cy", 4)] and store.page_backlinks("ada") == []
    assert store.backlink_sources("cy", 5) == ["ada", "bob"]
    with pytest.raises(BackendError):  # another page of the same subject, as with save_page
        with store.transaction():
            store.save_pages([(page("zed", subject="doc:d1"), [], [], [])])
    assert store.get_page("zed") is None


@contract("find_pages")
def test_find_pages_is_find_page_for_many_titles(store) -> None:
    save(store, page("ada-lovelace", title="Ada Lovelace", subject="entity:ada"))
    save(store, page("ada-lovelace-2", title="Ada  LOVELACE"))
    save(store, page("bob", title="Bob"))
    save(store, page("bob-c", category="concepts", title="Bob"))
    found = store.find_pages("entities", ["ada lovelace", "bob", "nobody", "bob"])
    assert {k: p.slug for k, p in found.items()} == {"ada lovelace": "ada-lovelace", "bob": "bob"}
    assert found["ada lovelace"].subject == "entity:ada" and found["bob"].title == "Bob"
    assert {k: p.slug for k, p in store.find_pages("concepts", ["bob", "ada lovelace"]).items()} == {"bob": "bob-c"}
    assert store.find_pages("entities", []) == {}


@contract("backlink_sources")
def test_backlink_sources_in_slug_order(store) -> None:
    save(store, page("zed", category="summary"), links=[PageLink("hub", 1), PageLink("other", 2)])
    save(store, page("amy", category="summary"), links=[PageLink("hub", 4)])
    save(store, page("hub"), links=[PageLink("hub", 1)])  # its own link is left out
    save(store, page("kim", category="concepts"), links=[PageLink("hub", 1)])
    save(store, page("bea", category="summary"), links=[PageLink("hub", 1), PageLink("hub#x", 2)])
    assert store.backlink_sources("hub", 10) == ["amy", "bea", "kim", "zed"]
    assert store.backlink_sources("hub", 10, category="summary") == ["amy", "bea", "zed"]
    assert store.backlink_sources("hub", 2, category="summary") == ["amy", "bea"]
    save(store, page("amy", category="summary"), links=[PageLink("hub", 9)])  # re-saved: same place
    assert store.backlink_sources("hub", 2, category="summary") == ["amy", "bea"]
    save(store, page("bea", category="summary"), links=[])
    assert store.backlink_sources("hub", 10, category="summary") == ["amy", "zed"]
    assert store.backlink_sources("nobody", 5) == []


@contract("wiki_index_counts", "wiki_index_rows", "wiki_index_prev")
def test_index_counts_rows_and_order(store) -> None:
    save(store, page("b", title="Beta", shard="b", summary="second"))
    save(store, page("a", title="Alpha", shard="a"))
    save(store, page("a2", title="Alpha", shard="a"))
    save(store, page("c", category="concepts", title="Gamma", shard="g"))
    assert store.wiki_index_counts() == [("concepts", "g", 1), ("entities", "a", 2), ("entities", "b", 1)]
    assert store.wiki_index_counts()[1].pages == 2
    assert store.wiki_index_rows("entities") == [("a", "Alpha", ""), ("a2", "Alpha", ""), ("b", "Beta", "second")]
    assert store.wiki_index_rows("entities", shard="b") == [("b", "Beta", "second")]
    assert store.wiki_index_rows("entities", limit=1) == [("a", "Alpha", "")]
    assert store.wiki_index_rows("nothing") == []
    assert store.wiki_index_prev("entities", "a", "alpha", "a2") == "a"
    assert store.wiki_index_prev("entities", "a", "alpha", "a") is None
    with store.transaction():
        store.delete_page_row("c")
    assert store.wiki_index_counts() == [("entities", "a", 2), ("entities", "b", 1)]  # empty shards left out


@contract("mark_wiki_dirty", "wiki_dirty", "clear_wiki_dirty")
def test_regeneration_marks(store) -> None:
    with store.transaction():
        store.mark_wiki_dirty(["entity:b", "entity:a", "entity:b"])
    assert store.wiki_dirty() == ["entity:a", "entity:b"] and store.wiki_dirty(limit=1) == ["entity:a"]
    with store.transaction():
        store.clear_wiki_dirty(["entity:a", "entity:zzz"])
    assert store.wiki_dirty() == ["entity:b"]


@contract("wiki_broken_links", "wiki_isolated_pages", "wiki_unlinked_pages", "wiki_one_way_links", "wiki_stubs",
          "wiki_flagged_pages", "wiki_stated_types")
def test_lint_queries_on_pages_and_links(store) -> None:
    save(store, page("ada", subject="entity:ada", entity_type="person", contradictions=2),
         links=[PageLink("bob", 1), PageLink("gone", 4)])
    save(store, page("bob", category="concepts"), links=[PageLink("ada", 1)])
    save(store, page("cy", stub=True), links=[PageLink("bob", 2)])
    save(store, page("lonely", title="Lonely Page", entity_type="city"))
    assert store.wiki_broken_links() == [("ada", "gone", 4)]
    assert store.wiki_isolated_pages() == ["lonely"]
    assert store.wiki_unlinked_pages() == ["cy", "lonely"]
    assert store.wiki_one_way_links("entities", "concepts") == [("cy", "bob")]
    assert store.wiki_one_way_links("concepts", "entities") == []
    assert store.wiki_stubs() == ["cy"]
    assert store.wiki_flagged_pages() == [("ada", 2)] and store.wiki_flagged_pages()[0].contradictions == 2
    assert store.wiki_stated_types() == [("ada", "entity:ada", "ada", "person"),
                                         ("lonely", None, "lonely page", "city")]


@contract("wiki_stale_sources", "wiki_uncited_claims")
def test_lint_queries_on_citations_and_claims(store) -> None:
    _, c = document(store, "d", ["Ada wrote notes"])
    document(store, "gone", ["bye"])
    for n in ("ada", "notes"):
        node(store, n, n.title())
    cited = edge(store, "ada", "wrote", "notes")
    bare = edge(store, "notes", "about", "ada")
    hand = edge(store, "ada", "likes", "notes", manual=True)
    evidence(store, "edge", cited.id, c[0])
    save(store, page("ada"), claims=[(cited.id, 3, "Ada wrote notes"), (bare.id, 4, "about"), (hand.id, 5, "likes"),
                                     ("e:missing", 6, "a relation gone")],
         sources=[("d", 1), ("gone", 1), ("any", None)])
    document(store, "any", ["any version"])
    assert store.wiki_stale_sources() == []
    with store.transaction():
        store.delete_document("gone")
    assert store.wiki_stale_sources() == [("ada", "gone", 1, None)]
    document(store, "d", ["Ada wrote notes twice"], version=2)
    document(store, "any", ["any version, again"], version=2)  # cited without a version: never stale
    stale = store.wiki_stale_sources()
    assert sorted(stale) == [("ada", "d", 1, 2), ("ada", "gone", 1, None)]
    assert {s.doc_id: s.latest_version for s in stale} == {"d": 2, "gone": None}
    uncited = store.wiki_uncited_claims()
    assert uncited == [("ada", bare.id, 4, "about", False), ("ada", "e:missing", 6, "a relation gone", True)]
    assert uncited[1].relation_missing is True
