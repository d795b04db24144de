"""Issue 13, items 6-8: one slug form everywhere (entity pages keep the entity's slug, summaries
are ``doc-...``), Obsidian aliases, no blanked page on an empty body, a read-only lint, front
matter given in a page's content merged into the page's, one summary page per document."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

import graphmem
from cli_inproc import graphmem_env, run_cli
from graphmem.errors import InvalidInput
from graphmem.frontmatter import load_front_matter

DISPATCH_TEXT = "Dispatch API depends on PgBouncer. PgBouncer pools connections for the Dispatch API."
DISPATCH_ENTITIES: list[dict[str, Any]] = [
    {"name": "Dispatch API", "type": "service", "supporting_text": "Dispatch API depends on PgBouncer."},
    {"name": "PgBouncer", "type": "tool", "supporting_text": "PgBouncer pools connections"},
]
DISPATCH_RELATIONS: list[dict[str, Any]] = [
    {"source": "Dispatch API", "target": "PgBouncer", "type": "depends_on", "confidence": 0.9,
     "supporting_text": "Dispatch API depends on PgBouncer."},
]


def cli(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(["--home", str(home), *args], env=graphmem_env(), input=stdin or "")


def ingest_dispatch(kb: graphmem.KnowledgeBase, text: str = DISPATCH_TEXT) -> dict[str, Any]:
    return kb.ingest_with_content("doc_d", "Dispatch API", "docs/dispatch-api.md", text, DISPATCH_ENTITIES,
                                  DISPATCH_RELATIONS)


def front_matter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return load_front_matter(text.split("---\n", 2)[1])


def page_files(kb: graphmem.KnowledgeBase) -> set[str]:
    return {p.relative_to(kb.wiki.dir).as_posix() for p in kb.wiki.dir.glob("*/*.md")}


# -- item 6: slugs ---------------------------------------------------------------------------------


def test_entity_page_keeps_the_entity_slug_when_its_document_has_the_same_title(kb):
    ingest_dispatch(kb)
    slugs = {(p["category"], p["slug"]) for p in kb.wiki.list_pages()}
    assert ("entity", "dispatch-api") in slugs  # was entity/dispatch-api-2
    assert ("summary", "doc-dispatch-api") in slugs  # was summary/dispatch-api
    assert not any(s.endswith("-2") for _, s in slugs)
    # [[dispatch-api]] opens the entity, and the entity page links the summary.
    assert kb.wiki.read_page_by_slug("dispatch-api")["category"] == "entity"
    assert "[[doc-dispatch-api]]" in (kb.wiki.dir / "entity" / "dispatch-api.md").read_text("utf-8")


def test_generated_pages_carry_obsidian_aliases(kb):
    ingest_dispatch(kb)
    ent = front_matter(kb.wiki.dir / "entity" / "dispatch-api.md")
    assert ent["aliases"][0] == "Dispatch API"  # [[Dispatch API]] resolves in Obsidian
    # The summary has no alias of the same name: [[Dispatch API]] must not be ambiguous.
    summ = front_matter(kb.wiki.dir / "summary" / "doc-dispatch-api.md")
    assert "Dispatch API" not in summ.get("aliases", [])


def test_every_displayed_slug_is_accepted_by_wiki_read(tmp_path):
    home = tmp_path / "kb"
    with graphmem.open(home) as kb:
        ingest_dispatch(kb)
        # Force the old collision: a hand-written entity page holds the bare slug elsewhere.
        kb.wiki.write_page("note", "PgBouncer", "About [[pgbouncer]].")
    listing = cli(home, "wiki", "list")
    assert listing.returncode == 0, listing.stderr
    shown = [line.split(" — ", 1)[0] for line in listing.stdout.splitlines() if " — " in line]
    assert "entity/dispatch-api" in shown and len(shown) >= 4
    for ref in shown:
        r = cli(home, "wiki", "read", ref)
        assert r.returncode == 0, f"wiki read {ref}: {r.stderr}"
        assert r.stdout.startswith(ref + " — ")
    bad = cli(home, "wiki", "read", "summary/dispatch-api")  # right slug, wrong folder
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and "entity/dispatch-api" in bad.stderr
    with graphmem.open(home) as kb:
        assert kb.wiki.read_page_by_slug("entity/dispatch-api")["slug"] == "dispatch-api"


def test_an_existing_kb_moves_to_the_new_slugs_on_regeneration(tmp_path, monkeypatch):
    from graphmem.wiki import generate

    home = tmp_path / "kb"
    with graphmem.open(home) as kb:
        monkeypatch.setattr(generate, "SUMMARY_PREFIX", "")  # the slugs of an older graphmem
        ingest_dispatch(kb)
        assert {"summary/dispatch-api.md", "entity/dispatch-api-2.md"} <= page_files(kb)
        kb.wiki.write_page("note", "Reading list", "See [[dispatch-api-2]] and [[dispatch-api]].")
    monkeypatch.setattr(generate, "SUMMARY_PREFIX", "doc-")
    with graphmem.open(home) as kb:
        res = kb.wiki.sync()  # marks pages with old slugs; they are regenerated under the new ones
        assert res["regenerated"] >= 2
        files = page_files(kb)
        assert {"summary/doc-dispatch-api.md", "entity/dispatch-api.md"} <= files
        assert not {"summary/dispatch-api.md", "entity/dispatch-api-2.md"} & files  # no stale files
        rows = {p["slug"]: p["category"] for p in kb.wiki.list_pages()}
        assert rows["dispatch-api"] == "entity" and rows["doc-dispatch-api"] == "summary"
        assert "dispatch-api-2" not in rows
        assert "[[doc-dispatch-api]]" in (kb.wiki.dir / "entity" / "dispatch-api.md").read_text("utf-8")
        # generated pages link each other under the new slugs; the old entity slug stays an alias
        report = kb.wiki.lint_wiki()
        assert report["orphan_pages"] == [] and report["missing_pages"] == []  # index.md moved with them
        index = (kb.wiki.dir / "index.md").read_text("utf-8")
        assert "[[doc-dispatch-api|" in index and "[[dispatch-api-2|" not in index
        broken = report["broken_wikilinks"]
        assert not {k: v for k, v in broken.items() if k != "reading-list"}
        assert [i["target"] for i in broken.get("reading-list", [])] == ["dispatch-api-2"]
        assert kb.wiki.sync()["regenerated"] == 0  # moved once, not on every sync


# -- item 7: empty bodies, read-only lint ------------------------------------------------------------


def test_write_page_refuses_an_empty_body_unless_allowed(kb):
    kb.wiki.write_page("topic", "Runbook", "Restart the pooler.")
    path = kb.wiki.dir / "topic" / "runbook.md"
    before = path.read_bytes()
    for empty in ("", "   \n\n"):
        with pytest.raises(InvalidInput, match="content.*empty.*allow_empty"):
            kb.wiki.write_page("topic", "Runbook", empty)
    assert path.read_bytes() == before
    r = kb.wiki.write_page("topic", "Runbook", "", allow_empty=True)
    assert r["created"] is False and path.read_text("utf-8").endswith("---\n")


def test_cli_wiki_write_with_empty_stdin_does_not_blank_a_page(tmp_path):
    home = tmp_path / "kb"
    assert cli(home, "wiki", "write", "topic", "Runbook", "--content", "Restart the pooler.").returncode == 0
    path = home / "wiki" / "topic" / "runbook.md"
    before = path.read_bytes()
    r = cli(home, "wiki", "write", "topic", "Runbook", stdin="")
    assert r.returncode == 1 and "Traceback" not in r.stderr and "--allow-empty" in r.stderr
    assert path.read_bytes() == before
    r = cli(home, "wiki", "write", "topic", "Runbook", "--allow-empty", stdin="")
    assert r.returncode == 0, r.stderr
    assert "Restart" not in path.read_text("utf-8")


def test_lint_without_fix_writes_nothing(kb):
    ingest_dispatch(kb)
    kb.wiki.write_page("topic", "Orphan", "Links to [[nowhere]].")
    log = kb.wiki.dir / "log.md"
    before = (log.read_bytes(), len(kb.events.list(limit=100000)), page_files(kb))
    for _ in range(3):
        report = kb.wiki.lint_wiki()
        assert report["problems"] >= 1
    assert (log.read_bytes(), len(kb.events.list(limit=100000)), page_files(kb)) == before
    kb.wiki.lint_wiki(fix=True)  # a fix is a change: it is logged
    assert kb.wiki.get_log(1)[0]["operation"] == "lint"


# -- item 8: front matter in content, one summary per document -----------------------------------------

SEED_CONTENT = """---
title: Dispatch API
source_document: doc_d
tags: [summary, incident]
---

# Dispatch API

- [[dispatch-api]] depends on [[pgbouncer]] (confidence: 0.9)
"""


def test_front_matter_in_content_is_merged_into_the_page(kb):
    ingest_dispatch(kb)
    r = kb.wiki.write_page("topic", "Dispatch notes", SEED_CONTENT, summary="notes")
    text = Path(r["path"]).read_text("utf-8")
    assert text.count("---\n") == 2  # one front matter block (was two)
    fm = front_matter(Path(r["path"]))
    assert fm["tags"] == ["summary", "incident"]
    assert fm["source_documents"] == ["doc_d@v1"] and "source_document" not in fm
    assert (fm["title"], fm["category"], fm["summary"]) == ("Dispatch notes", "topic", "notes")
    assert kb.wiki.read_page("topic", "Dispatch notes")["content"].startswith("\n# Dispatch API")
    r2 = kb.wiki.write_page("topic", "Dispatch notes", SEED_CONTENT, tags=["given"])
    assert front_matter(Path(r2["path"]))["tags"] == ["given"]  # an argument beats the content's


def test_agent_summary_of_a_document_replaces_the_generated_one(kb):
    ingest_dispatch(kb)
    assert (kb.wiki.dir / "summary" / "doc-dispatch-api.md").is_file()
    r = kb.wiki.write_page("summary", "Dispatch API Summary", SEED_CONTENT, summary="what dispatch needs")
    assert r["slug"] == "dispatch-api-summary"
    summaries = kb.wiki.list_pages("summary")
    assert [p["slug"] for p in summaries] == ["dispatch-api-summary"]  # one summary for doc_d
    assert "summary/doc-dispatch-api.md" not in page_files(kb)
    text = Path(r["path"]).read_text("utf-8")
    assert "- [[dispatch-api]] depends on [[pgbouncer]] (confidence: 0.9)" in text  # the agent's words
    assert "graphmem:generated" in text or "<!--" in text  # graphmem's block, kept up to date
    entity = (kb.wiki.dir / "entity" / "dispatch-api.md").read_text("utf-8")
    assert "[[dispatch-api-summary]]" in entity and "[[doc-dispatch-api]]" not in entity
    assert not kb.wiki.lint_wiki()["broken_wikilinks"]
    # A new version of the document updates the agent's page, not a new generated one.
    ingest_dispatch(kb, DISPATCH_TEXT + " Dispatch API retries twice.")
    assert [p["slug"] for p in kb.wiki.list_pages("summary")] == ["dispatch-api-summary"]
    text = Path(r["path"]).read_text("utf-8")
    assert "version 2" in text and "- [[dispatch-api]] depends on [[pgbouncer]] (confidence: 0.9)" in text


def test_sync_merges_the_two_summaries_an_older_graphmem_left_for_one_document(kb, monkeypatch):
    import graphmem.faces.wiki as wiki_face

    ingest_dispatch(kb)
    with monkeypatch.context() as m:  # what an older graphmem did: a second summary for doc_d
        m.setattr(wiki_face, "summary_to_replace", lambda *a: None)
        kb.wiki.write_page("summary", "Dispatch API Summary", "Written by the agent.", source_documents=["doc_d"])
    assert len(kb.wiki.list_pages("summary")) == 2
    kb.wiki.sync()
    assert [p["slug"] for p in kb.wiki.list_pages("summary")] == ["dispatch-api-summary"]
    text = (kb.wiki.dir / "summary" / "dispatch-api-summary.md").read_text("utf-8")
    assert "Written by the agent." in text and "<!-- graphmem:begin generated -->" in text
    assert not kb.wiki.lint_wiki()["broken_wikilinks"]
    assert kb.wiki.sync()["regenerated"] == 0 and len(kb.wiki.list_pages("summary")) == 1
