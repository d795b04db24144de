"""A document's new title on the summary page graphmem keeps for it.

A new version of a document may carry a new title. Its summary page keeps its file name (links to it
hold) but takes the new title in its front matter and heading while they are still what graphmem wrote
for an earlier version; a title a person gave the page stays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..models import Document

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["earlier_titles", "retitled"]


def earlier_titles(store: Store, doc: Document) -> Callable[[], set[str]]:
    """The titles a summary page of ``doc`` had for its earlier versions (read only when the page's title
    differs from the new one), as written: alone or told apart by the document's id."""
    def read() -> set[str]:
        titles = {d.title for d in store.document_versions(doc.doc_id) if d.version < doc.version}
        return titles | {f"{t} ({doc.doc_id})" for t in titles}
    return read


def retitled(fm: dict[str, Any], body: str, title: str, earlier_titles: Callable[[], set[str]]) -> str:
    """A summary page still titled as graphmem titled an earlier version of its document takes the new
    title, in its front matter and its heading (a title a person wrote stays; the file keeps its name, so
    links to it hold)."""
    old = fm.get("title")
    if not isinstance(old, str) or old not in earlier_titles():
        return body
    fm["title"] = title
    head = f"# {old}\n"
    return f"# {title}\n" + body[len(head):] if body.startswith(head) else body
