"""Generated pages whose subject is gone: the summary page of a deleted document, the pages of the
entities no evidence supports any more once it is gone.

A page that is only what graphmem wrote (its heading and its generated block) is deleted, file, row and
index entry. A page a person also wrote in keeps their text: graphmem's block and the deleted document's
``source_documents`` entry leave it, and it stops being a generated page (no subject: graphmem no longer
rewrites it). Either way the log says which and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import GraphmemError
from ..models import Page
from ..text import content_hash
from .core import PageWrite, Plan, WikiCore
from .files import read_bytes
from .leftovers import only_generated
from .markdown import dump_front_matter, generated_block, split_front_matter
from .subjects import DOC, ENT

__all__ = ["orphan_plan", "retire_pages"]

_BLANK_RUN = re.compile(r"\n{3,}")


def orphan_plan(core: WikiCore, pages: Iterable[Page], doc_id: str, warnings: list[str]) -> Plan:
    """The writes and deletes that retire ``pages`` after ``doc_id`` was deleted (``warnings``: the pages
    left as they are, and why)."""
    plan = Plan()
    why = f"document {doc_id} deleted"
    for page in pages:
        raw = read_bytes(core.dir, core.abspath(page.path))
        text = None
        if raw is not None:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:  # not graphmem's text any more: the person's file stays as it is
                warnings.append(f"wiki page {page.path}: not UTF-8 text, left as it is; it still cites deleted "
                                f"document '{doc_id}' (fix or delete it)")
                continue
        if text is None:
            plan.deletes.append(page)
            plan.log.append(f"delete | {page.category}/{page.slug} — {why}")
            continue
        # the row's front matter only while the file is what it was indexed from (a person may have edited it)
        known = page.front_matter if page.front_matter and page.content_hash == content_hash(text) else None
        fm, body, _, error = split_front_matter(text, known)
        if error is None and only_generated(fm, body, page.title):
            plan.deletes.append(page)
            plan.log.append(f"delete | {page.category}/{page.slug} — {why}")
            continue
        span = generated_block(body)
        rest = body if span is None else body[: span[0]] + body[span[1]:]
        if error is not None:  # front matter a person broke: theirs to fix, graphmem's block goes all the same
            new_text = text[: len(text) - len(body)] + _BLANK_RUN.sub("\n\n", rest).strip("\n") + "\n"
            plan.writes.append(PageWrite(page.category, page.slug, page.path, new_text, old=raw, existing=page,
                                         op="fix", drop_subject=True, extra={"change": "updated"}))
            plan.log.append(f"update | {page.category}/{page.slug} — graphmem's block removed ({why}); the rest "
                            "is yours")
            continue
        merged = dict(fm)
        sources = merged.get("source_documents")
        if isinstance(sources, list):
            mine = f"{doc_id}@v"
            merged["source_documents"] = [s for s in sources if not (isinstance(s, str) and s.startswith(mine))]
        new_text = dump_front_matter(merged) + _BLANK_RUN.sub("\n\n", rest).strip("\n") + "\n"
        plan.writes.append(PageWrite(page.category, page.slug, page.path, new_text, old=raw, existing=page,
                                     op="fix", front_matter=merged, drop_subject=True,
                                     extra={"change": "updated"}))
        plan.log.append(f"update | {page.category}/{page.slug} — graphmem's block removed ({why}); the rest is "
                        "yours")
    return plan


def retire_pages(core: WikiCore, doc_id: str, removed: Iterable[str], warnings: list[str]) -> None:
    """Apply :func:`orphan_plan` to the summary page of ``doc_id`` and the pages of the ``removed``
    entities (inside the delete's transaction: the files change at its COMMIT). A page that cannot be
    retired does not fail the delete: ``warnings`` says so (``graphmem wiki lint`` lists what is left)."""
    pages = core.ctx.store.pages_by_subject([DOC + doc_id, *(ENT + n for n in removed)])
    if not pages:
        return
    try:
        core.apply(lambda: orphan_plan(core, pages.values(), doc_id, warnings))
    except GraphmemError as exc:
        warnings.append(f"wiki pages of deleted document '{doc_id}' not retired ({exc}); `graphmem wiki lint` "
                        "lists them")
