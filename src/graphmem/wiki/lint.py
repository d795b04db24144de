"""Wiki lint: what is out of step between the files, the index, the links and the graph.

Lint does not sync first: it reports what sync (or ``--fix``) would mend. The seed's four keys
keep the seed's meanings (``broken_wikilinks`` entries carry the line number as well); the
rest are what the seed's lint workflow asked the agent to look for by hand. Every check is a
query over the index (plus one listing of the folder names for orphans and missing files).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from ..context import FIND_ENTITY, WIKI_FLUSH
from ..errors import InvalidInput
from ..models import ENTITY
from .backlinks import resolve_link_targets
from .core import PageWrite, Plan, WikiCore
from .files import FileTxn, lstat, read_bytes
from .generate import ENT
from .indexfiles import INDEX_DIR, stage_index
from .markdown import (
    dump_front_matter,
    generated_block,
    heading_text,
    parse_links,
    replace_generated,
    split_front_matter,
)
from .scan import attachment_names
from .slugs import category_slug, slugify

__all__ = ["LINT_KEYS", "lint", "count_problems", "fix", "rewrite_index"]

LINT_KEYS = (
    "orphan_pages",
    "missing_pages",
    "broken_wikilinks",
    "isolated_pages",
    "unlinked_pages",
    "stale_pages",
    "contradictions",
    "uncited_claims",
    "missing_cross_references",
    "stubs",
)


def count_problems(report: dict[str, Any]) -> int:
    """Number of findings in a lint report (each broken link counts once)."""
    n = 0
    for key in LINT_KEYS:
        value = report.get(key) or []
        n += sum(len(v) for v in value.values()) if isinstance(value, dict) else len(value)
    return n


def lint(core: WikiCore) -> dict[str, Any]:
    """The lint report (see :data:`LINT_KEYS`)."""
    store = core.ctx.store
    cfg = core.ctx.config.wiki
    files = core.list_files()
    rows = store.page_files()
    report: dict[str, Any] = {
        "orphan_pages": sorted(files - rows.keys()),
        "missing_pages": sorted(rows[p][0] for p in rows.keys() - files),
    }
    # A link by a page's title or alias ([[Dispatch API]] for dispatch-api) is no broken link, and the page it
    # names is linked: the same resolution as backlinks (wiki/markdown.py link_forms).
    # ... or by an entity's other name ([[Dispatch]] for the page of "Dispatch API", alias "Dispatch")
    links = store.wiki_broken_links()
    unlinked = store.wiki_unlinked_pages()
    by_form = resolve_link_targets(store, {t for _, t, _ in links}) if links else {}
    # ... or a file that is no page: ![[arch.png]], [[spec.pdf]] (Obsidian finds attachments in any folder)
    if any("." in t and t not in by_form for _, t, _ in links):
        files_there = attachment_names(core.dir)
        by_form.update({t: "" for _, t, _ in links if t not in by_form and t in files_there})
    broken: dict[str, list[dict[str, Any]]] = {}
    reached: set[str] = set()
    for src, target, line in links:
        to = by_form.get(target)
        if to is None:
            broken.setdefault(src, []).append({"target": target, "line": line})
        elif to and to != src:  # ("": an attachment, no page)
            reached.add(to)
    report["broken_wikilinks"] = broken
    report["isolated_pages"] = store.wiki_isolated_pages()
    report["unlinked_pages"] = [p for p in unlinked if p not in reached]
    report["stale_pages"] = [
        {"slug": page, "doc_id": doc, "cited_version": cited, "latest_version": latest,
         "reason": "document deleted" if latest is None else f"cites version {cited}, latest is {latest}"}
        for page, doc, cited, latest in store.wiki_stale_sources()
    ]
    contradictions: list[dict[str, Any]] = [
        {"slug": slug, "kind": "flagged", "count": n} for slug, n in store.wiki_flagged_pages()
    ]
    contradictions += _type_conflicts(core)
    report["contradictions"] = contradictions
    report["uncited_claims"] = [
        {"slug": page, "line": line, "claim": text, "edge_id": edge_id,
         "reason": "no such relation in the graph" if missing else "the relation has no evidence left"}
        for page, edge_id, line, text, missing in store.wiki_uncited_claims()
    ]
    xrefs: list[dict[str, Any]] = []
    # An entity page is bounded: its first max_documents documents, then "See also" with the first max_backlinks
    # summaries (by slug) that link to it, less those already listed. A summary it does not link back is a
    # finding only where those bounds would have shown it: the page lists every summary, or the summary is one
    # of the See also window. (Counting the missing links against max_documents + max_backlinks flagged every
    # entity named by 11 or more documents, on a freshly generated wiki, and --fix could never clear it.)
    window: dict[str, tuple[bool, set[str]]] = {}
    for summary, ent in store.wiki_one_way_links("summary", "entity"):
        if ent not in window:
            full = len(store.page_backlinks(ent, cfg.max_documents + 1, category="summary")) > cfg.max_documents
            window[ent] = (full, set(store.backlink_sources(ent, cfg.max_backlinks, category="summary")))
        full, see_also = window[ent]
        if not full or summary in see_also:
            xrefs.append({"slug": ent, "missing_link_to": summary})
    for ent, summary in store.wiki_one_way_links("entity", "summary"):
        xrefs.append({"slug": summary, "missing_link_to": ent})
    report["missing_cross_references"] = sorted(xrefs, key=lambda x: (x["slug"], x["missing_link_to"]))
    report["stubs"] = store.wiki_stubs()
    report["problems"] = count_problems(report)
    return report


def _type_conflicts(core: WikiCore) -> list[dict[str, Any]]:
    """The same entity stated with different types on different pages."""
    store, onto = core.ctx.store, core.ctx.config.ontology
    stated = store.wiki_stated_types()
    if not stated:
        return []
    by_title = store.find_nodes(ENTITY, {t for _, subject, t, _ in stated if not (subject or "").startswith(ENT)})
    groups: dict[str, dict[str, str]] = {}
    for slug, subject, title_norm, etype in stated:
        nid = subject[len(ENT):] if subject and subject.startswith(ENT) else by_title.get(title_norm)
        if nid:
            groups.setdefault(nid, {})[slug] = onto.normalize_type(etype)
    out = []
    nodes = store.get_nodes([n for n, g in groups.items() if len(set(g.values())) > 1])
    for nid, pages in sorted(groups.items()):
        if len(set(pages.values())) > 1:
            out.append({"slug": sorted(pages)[0], "kind": "entity types", "entity": nodes[nid].name if nid in nodes
                        else nid, "types": dict(sorted(pages.items()))})
    return out


def fix(core: WikiCore, report: dict[str, Any], create_stubs: bool = False) -> dict[str, Any]:
    """Repair what is mechanical; returns what was done per kind."""
    store = core.ctx.store
    done: dict[str, Any] = {}
    paths = list(report["orphan_pages"]) + [
        p.path for p in store.pages_by_slug(report["missing_pages"]).values()]
    if paths:
        res = core.sync(paths)
        done["indexed"] = res["indexed"]
        done["removed"] = res["removed"]
        if res["skipped"]:
            done["not_indexed"] = res["skipped"]
    # Cross references: regenerate generated pages (their "See also" picks the links up);
    # pages without a generated block get one listing the missing links.
    regen: set[str] = set()
    manual: dict[str, set[str]] = {}
    pages = store.pages_by_slug(x["slug"] for x in report["missing_cross_references"])
    for x in report["missing_cross_references"]:
        p = pages.get(x["slug"])
        if p is None:
            continue
        if p.subject:
            regen.add(p.subject)
        else:
            manual.setdefault(p.slug, set()).add(x["missing_link_to"])
    if regen and core.ctx.config.wiki.auto_pages:
        store_keys = sorted(regen)
        with store.transaction():
            store.mark_wiki_dirty(store_keys)
        done["regenerated"] = _flushed_pages(core)
    if manual:
        done["cross_references_added"] = _add_see_also(core, manual, pages)
    if create_stubs and report["broken_wikilinks"]:
        done["stubs_created"] = _create_stubs(core, report["broken_wikilinks"])
    # Always rewrite index.md and every shard from the store (mends a hand-edited index).
    rewrite_index(core)
    done["index_rewritten"] = True
    return done


def _flushed_pages(core: WikiCore) -> int:
    """Regenerate the pages marked dirty through the wiki's flush hook (which keeps its own
    bookkeeping of pending and failed pages); 0 without a wiki registered."""
    flushed = core.ctx.hooks.first(WIKI_FLUSH)
    return int(flushed["pages"]) if flushed else 0


def _add_see_also(core: WikiCore, manual: dict[str, set[str]], pages: dict[str, Any]) -> list[str]:
    def make_plan() -> Plan:
        plan = Plan()
        now = core.ctx.now()
        for slug, targets in sorted(manual.items()):
            page = pages[slug]
            old = read_bytes(core.dir, core.abspath(page.path))
            if old is None:
                continue
            fm, body, _, error = split_front_matter(old.decode("utf-8", errors="replace"))
            if error is not None:
                continue
            span = generated_block(body)
            have = {ln.target for ln in parse_links(body[span[0]:span[1]])} if span else set()
            links = sorted(have | targets)
            block = "## See also\n\n" + "\n".join(f"- [[{t}]]" for t in links)
            fm["updated"] = now
            plan.writes.append(PageWrite(page.category, page.slug, page.path,
                                         dump_front_matter(fm) + replace_generated(body, block), old=old,
                                         existing=page, op="fix", extra={"change": "cross references"}))
        if plan.writes:
            plan.log += [f"lint | {w.category}/{w.slug} — cross references added" for w in plan.writes]
        return plan

    return [f"{p.category}/{p.slug}" for p in core.apply(make_plan).saved]


_SLUGGY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # a target written as a slug


def _create_stubs(core: WikiCore, broken: dict[str, list[dict[str, Any]]]) -> list[str]:
    store, ctx = core.ctx.store, core.ctx
    first_source: dict[str, str] = {}
    for src, items in sorted(broken.items()):
        for item in items:
            first_source.setdefault(item["target"], src)

    # the setting as a category folder: "_index" wrote stubs into graphmem's index folder (removed at the next
    # sync) and "." at the top of the wiki (never indexed)
    try:
        stub_category = category_slug(str(ctx.config.wiki.stub_category))
    except InvalidInput as exc:
        raise InvalidInput(f"config key 'wiki.stub_category': {exc}") from None

    def make_plan() -> Plan:
        plan = Plan()
        now = ctx.now()
        for target, src in sorted(first_source.items()):
            # [[missing-thing]] or [[Missing Thing]] (kept as written: "missing thing")
            slug_form = _SLUGGY.fullmatch(target) is not None
            title = target.replace("-", " ") if slug_form else target
            try:
                slug = slugify(title)
            except InvalidInput:  # a target no page can be named after
                continue
            if slug_form and slug != target:  # e.g. "con" -> "con-page": no page could answer to that link
                continue
            if store.get_page(slug) is not None:
                continue
            entity = ctx.hooks.first(FIND_ENTITY, title)
            category = "entity" if entity is not None else stub_category
            fm = {"title": entity.name if entity else title, "category": category, "tags": ["stub"],
                  "updated": now}
            heading = heading_text(str(fm["title"]))
            body = (f"# {heading}\n\n_Stub created by `graphmem wiki lint --fix --create-stubs` for the link "
                    f"from [[{src}]]; write what it is about here._\n")
            rel = f"{category}/{slug}.md"
            plan.writes.append(PageWrite(category, slug, rel, dump_front_matter(fm) + body,
                                         subject=(ENT + entity.id) if entity is not None and not
                                         store.pages_by_subject([ENT + entity.id]) else None,
                                         op="write", extra={"change": "stub"}))
        if plan.writes:
            plan.log += [f"write | {w.category}/{w.slug} — stub for a broken link" for w in plan.writes]
        return plan

    return [f"{p.category}/{p.slug}" for p in core.apply(make_plan).saved]


def _index_files(core: WikiCore, root: Path) -> list[Path]:
    """The ``*.md`` files in ``root`` and its folders, links included but not followed."""
    st = lstat(core.dir, root)
    if st is None or not stat.S_ISDIR(st.st_mode):
        return []
    out: list[Path] = []
    folders = [root]
    while folders:
        with os.scandir(folders.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    folders.append(Path(e.path))
                elif e.name.endswith(".md"):
                    out.append(Path(e.path))
    return sorted(out)


def rewrite_index(core: WikiCore) -> None:
    """index.md, every shard file, and removal of shard files no category has any more."""
    store = core.ctx.store
    ftx = FileTxn(core.dir)
    try:
        with store.transaction():
            counts = store.wiki_index_counts()
            shards: dict[tuple[str, str], None] = {(c, s): None for c, s, _ in counts}  # render each in full
            root = core.dir / INDEX_DIR
            live = {f"{c}/{s}.md" for c, s in shards}
            for f in _index_files(core, root):
                if f.relative_to(root).as_posix() not in live:
                    ftx.delete(f)  # a link here is refused by the check in delete
            stage_index(ftx, store, core.dir, shards, core.ctx.config.wiki.index_inline_max)
            ftx.commit()
    except BaseException:
        ftx.undo()
        raise
    core.note_own_writes()
