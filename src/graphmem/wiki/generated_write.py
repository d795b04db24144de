"""The write that puts a generated block into a page: the page's current file merged (its front matter,
its text outside graphmem's markers kept), or a new page (part of the wiki's page generation, generate.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..models import Document, Page
from ..text import content_hash, normalize_name
from .core import PageWrite, WikiCore
from .files import read_bytes
from .markdown import dump_front_matter, heading_text, replace_generated, split_front_matter
from .retitle import Retitle, retitled

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["page_write", "retitle_for"]


def retitle_for(store: Store, doc: Document, page: Page | None, summary_prefix: str) -> Retitle:
    """What decides whether the summary page ``page`` of ``doc`` follows its new title."""
    def previous_title() -> str | None:
        earlier = [d for d in store.document_versions(doc.doc_id) if d.version < doc.version]
        return earlier[-1].title if earlier else None

    def taken(title: str) -> bool:
        other = store.find_page("summary", normalize_name(title))
        return other is not None and (page is None or other.slug != page.slug)

    return Retitle(doc.doc_id, page is not None and page.slug.startswith(summary_prefix), previous_title, taken)


def page_write(core: WikiCore, page: Page | None, category: str, slug: str, title: str, subject: str,
                block: str, sources: list[str], tags: list[str], aliases: list[str], now: str,
                retitle: Retitle | None = None, leftover: bool = False) -> PageWrite | None:
    """The write that puts ``block`` in the page (None when nothing would change); a page
    whose slug changed (generate.py, ``_move_legacy_slugs``) is written at its new path. ``retitle`` (summary
    pages): what decides whether the page follows its document's new title (wiki/retitle.py); ``leftover``: see
    below."""
    renamed = page is not None and page.slug != slug
    rel = f"{page.category if page else category}/{slug}.md" if renamed or page is None else page.path
    # ``leftover``: a new page whose path holds graphmem's own file a killed ingest left (generate._allocate
    # took it back): its bytes are what the write replaces, so the commit's edit check sees no edit
    old = read_bytes(core.dir, core.abspath(page.path)) if page else (
        read_bytes(core.dir, core.dir / rel) if leftover else None)
    if old is not None and page is not None:
        try:
            old_text = old.decode("utf-8")
        except UnicodeDecodeError:
            old_text = None
        if old_text is not None:
            # A file that is still what its row was indexed from has the row's front matter:
            # graphmem's own YAML is not parsed again (a changed file is, in full).
            known = page.front_matter if page.front_matter and page.content_hash == content_hash(old_text) else None
            fm, body, _, error = split_front_matter(old_text, known)
            new_body = replace_generated(body, block)
            raw_had = fm.get("aliases")
            had: list[Any] = raw_had if isinstance(raw_had, list) else []
            all_aliases = list(dict.fromkeys([*aliases, *(str(a) for a in had)]))
            if (error is None and new_body == body and fm.get("source_documents") == sources and not renamed
                    and (not all_aliases or had == all_aliases)):
                return None
            merged = dict(fm) if error is None else {}
            if retitle is not None and merged.get("title") not in (None, title):
                new_body = retitled(merged, new_body, title, retitle)
            merged.setdefault("title", title)
            if all_aliases:
                merged["aliases"] = all_aliases
            merged["category"] = page.category if page else category
            merged.setdefault("tags", tags)
            merged["source_documents"] = sources
            merged["updated"] = now
            if error is not None:  # keep the unreadable front matter as text, below the new one
                new_body = old_text if old_text.endswith("\n") else old_text + "\n"
                new_body = replace_generated(new_body, block)
            return PageWrite(page.category if page else category, slug, rel, dump_front_matter(merged) + new_body,
                             subject=subject, old=None if renamed else old, existing=page, op="ingest",
                             front_matter=merged, extra={"change": "renamed" if renamed else "updated",
                                                         "subject": subject})
    new_fm: dict[str, Any] = {"title": title, **({"aliases": aliases} if aliases else {}), "category": category,
                              "tags": tags, "source_documents": sources, "updated": now}
    body = f"# {heading_text(title)}\n\n" + replace_generated("", block)
    return PageWrite(category, slug, rel, dump_front_matter(new_fm) + body, subject=subject,
                     old=None if renamed else old, existing=page,
                     op="ingest", front_matter=new_fm,
                     extra={"change": "created" if page is None else "recreated", "subject": subject})
