"""Pure helpers of the wiki layer: slugs, front matter, generated blocks, links, claims."""

from __future__ import annotations

import pytest

from graphmem.errors import InvalidInput
from graphmem.wiki.markdown import (
    BEGIN,
    END,
    dump_front_matter,
    parse_claims,
    parse_links,
    parse_page,
    replace_generated,
    split_front_matter,
)
from graphmem.wiki.slugs import page_path, shard_of, slugify, unique_slug


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Memory Leak", "memory-leak"),
        ("  Café Crème brûlée ", "cafe-creme-brulee"),
        ("../../etc/passwd", "etc-passwd"),
        ("/etc/passwd", "etc-passwd"),
        ("C:\\Windows\\system32", "c-windows-system32"),
        ("a/b\\c", "a-b-c"),
        ("Straße Øresund Łódź", "strasse-oresund-lodz"),
        ("CON", "con-page"),
        ("x" * 200, "x" * 80),
    ],
)
def test_slugify(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_slug_of_a_long_title_is_cut_at_a_word_boundary() -> None:
    slug = slugify("word " * 40)
    assert len(slug) <= 80 and not slug.endswith("-") and slug.startswith("word-word")


def test_non_latin_titles_get_a_stable_hashed_slug() -> None:
    assert slugify("日本語") == slugify("日本語")
    assert slugify("日本語").startswith("page-") and slugify("日本語") != slugify("中文")


@pytest.mark.parametrize("bad", ["...", "!!! ???", "/", "  ", "", "a\x00b", "tab\there", "bell\x07"])
def test_unsluggable_titles_are_rejected(bad: str) -> None:
    with pytest.raises(InvalidInput, match="title"):
        slugify(bad)


def test_page_path_refuses_anything_but_one_plain_component(tmp_path) -> None:
    assert page_path(tmp_path, "entity", "memory-leak") == tmp_path / "entity" / "memory-leak.md"
    for category, slug in [("..", "x"), ("entity", ".."), ("entity", "a/b"), ("/abs", "x"), (".hidden", "x"),
                           ("entity", "a\\b"), ("entity", "")]:
        with pytest.raises(InvalidInput):
            page_path(tmp_path, category, slug)


def test_unique_slug_and_shards() -> None:
    assert unique_slug("a", set()) == "a"
    assert unique_slug("a", {"a", "a-2"}) == "a-3"
    assert [shard_of(s) for s in ("memory-leak", "9lives", "_x", "a-b", "q", "Ünï")] == ["me", "9l", "_x", "a_",
                                                                                      "q", "_n"]
    # A generated summary page's slug is doc-<title>: its shard is its title's, not "do" for all of them (one
    # shard holding every summary page was re-rendered whole by every ingest batch).
    assert [shard_of(s) for s in ("doc-memory-leak", "doc-9", "doc-", "doc", "docker")] == ["me", "9", "do", "do",
                                                                                          "do"]


@pytest.mark.parametrize(
    "fm",
    [
        {"title": "memory leak", "category": "entity", "tags": ["entity", "issue"], "source_documents": ["doc_1@v1"],
         "updated": "2026-11-30T10:00:00.000Z"},
        {"title": "Yes", "a": "no", "b": "on", "c": "null", "d": "1.5", "e": "0x10", "f": "- x", "g": "a: b",
         "h": "x #y", "i": 'Café "q" \\ back', "k": "", "l": " lead", "m": "trail ", "n": "日本語", "o": "@x",
         "p": "%x", "q": "!x", "r": "*x", "s": "&x", "t": "[x]", "u": "{x}", "v": "|x", "w": "2026-01-01"},
        {"tags": [], "n": 5, "b": True, "z": None, "list": ["a b", "c: d", "yes"]},
        {"nested": {"a": [1, 2]}, "float": 1.5},
    ],
)
def test_front_matter_round_trips(fm: dict) -> None:
    text = dump_front_matter(fm) + "# body\n"
    got, body, line, error = split_front_matter(text)
    assert (got, body, error) == (fm, "# body\n", None)
    assert text.splitlines()[line - 1] == "# body"


def test_broken_front_matter_is_reported_not_raised() -> None:
    fm, body, _, error = split_front_matter("---\ntitle: [unclosed\n---\nbody\n")
    assert fm == {} and body == "body\n" and "not valid YAML" in error
    assert split_front_matter("no front matter\n") == ({}, "no front matter\n", 1, None)


def test_replace_generated_keeps_everything_outside_the_markers_byte_for_byte() -> None:
    before = "# T\r\n\nintro  with  spaces\n\n"
    after = "\n\n## Notes\n\ttabbed ünïcode line\n   \n"
    body = before + BEGIN + "\nold\n" + END + after
    new = replace_generated(body, "new block")
    assert new == before + BEGIN + "\nnew block\n" + END + after
    assert replace_generated(new, "new block") == new


def test_replace_generated_appends_a_block_to_a_page_without_one() -> None:
    assert replace_generated("hand text", "gen") == "hand text\n\n" + BEGIN + "\ngen\n" + END + "\n"
    assert replace_generated("", "gen") == BEGIN + "\ngen\n" + END + "\n"


def test_links_with_line_numbers_labels_anchors_embeds_and_code() -> None:
    body = (
        "see [[Memory-Leak]] and [[system-crash|the crash]]\n"
        "```\n[[in-fence]]\n```\n"
        "`[[inline-code]]` but ![[diagram.md]] and [[topic/deep#Heading]] [[#self]]\n"
        "again [[memory-leak]]\n"
    )
    links = parse_links(body, first_line=10)
    assert [(ln.target, ln.line, ln.label) for ln in links] == [
        ("memory-leak", 10, None), ("system-crash", 10, "the crash"), ("diagram", 14, None), ("deep", 14, None),
    ]


def test_claims_are_list_items_linking_two_pages() -> None:
    body = ("- [[memory-leak]] causes [[system-crash]] (confidence 1.00)\n* [[a|A]] **depends on** [[b]]\n"
            "not [[x]] uses [[y]]\n")
    claims = parse_claims(body, 5)
    assert [(c.source, c.relation, c.target, c.line) for c in claims] == [
        ("memory-leak", "causes", "system-crash", 5), ("a", "depends on", "b", 6)]


def test_parse_page_flags_stubs_contradictions_and_types() -> None:
    stub = parse_page("---\ntitle: x\n---\n# x\n\n" + BEGIN + "\n**Type:** issue\n" + END + "\n", "entity")
    assert stub.stub and stub.stated_type == "issue" and stub.contradictions == 0
    full = parse_page("# x\n\nA paragraph.\n\n## Contradictions\n\n- one\n- two\n\n## Next\n- not counted\n", "entity")
    assert not full.stub and full.contradictions == 2
    assert not parse_page("# x\n", "topic").stub  # only entity pages can be stubs
    typed = parse_page("---\ntype: Bug\n---\nbody\n", "topic")
    assert typed.stated_type == "bug"


def test_a_page_saved_with_a_byte_order_mark_keeps_its_front_matter(tmp_path):
    """Windows editors save UTF-8 with a BOM: such a page was synced with no front matter, its heading as
    title and the summary '\\ufeff---' (ingest read the same file right)."""
    import graphmem

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        folder = tmp_path / "kb" / "wiki" / "notes"
        folder.mkdir(parents=True)
        (folder / "runbook.md").write_bytes("\ufeff---\r\ntitle: Runbook\r\ntags: [ops]\r\n---\r\n# Heading\r\n\r\n"
                                            "Restart the Dispatch API first.\r\n".encode("utf-8"))
        kb.wiki.sync()
        page = kb.wiki.read_page_by_slug("runbook")
        assert page["title"] == "Runbook" and page["front_matter"]["tags"] == ["ops"]
        assert "\ufeff" not in page["summary"] and "Restart" in page["summary"]


@pytest.mark.parametrize("title, slug", [("Index", "index-page"), ("Log", "log-page"), ("Logs", "logs"),
                                         ("Index of terms", "index-of-terms")])
def test_pages_never_take_the_names_of_index_md_and_log_md(title, slug):
    """An entity named "Index" got entity/index.md: [[index]] then meant two things in Obsidian."""
    from graphmem.wiki.slugs import category_slug, slugify

    assert slugify(title) == slug
    assert category_slug("Log") == "log"  # a category folder wiki/log/ is no clash with wiki/log.md


@pytest.mark.parametrize("line, links", [
    ("see [[a]] and `[[b]]`", ["a"]),
    ("an id ``x`[[b]]`` then [[c]]", ["c"]),          # what code_span writes for an id holding a backtick
    ("``[[b]]` `` and [[c]]", ["c"]),
    ("unclosed `[[d]] here", ["d"]),
])
def test_links_inside_code_spans_of_any_fence_are_no_links(line, links):
    """code_span fences an id holding backticks with a longer run; the link parser only knew single
    backticks, so '``x`[[b]]``' left a phantom link to b (review finding)."""
    from graphmem.wiki.markdown import parse_links

    assert [ln.target for ln in parse_links(line)] == links
