"""Results of ``kb.wiki``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...models import PageLink
from .base import Result

__all__ = [
    "PageInfo",
    "PageWritten",
    "LinkFrom",
    "PageRead",
    "PageHit",
    "Backlink",
    "LogEntry",
    "PageDeleted",
    "SyncReport",
    "LintReport",
]


# -- wiki --------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class PageInfo(Result):
    """A wiki page as listed (``path`` is absolute; ``updated`` its last write)."""

    slug: str
    category: str
    title: str
    path: str
    summary: str
    tags: list[str]
    updated: str
    created_at: str


@dataclass(frozen=True, eq=False)
class PageWritten(Result):
    """``kb.wiki.write_page``: the page written, and whether it is new."""

    page: PageInfo
    created: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.page.to_dict(), "created": self.created}


@dataclass(frozen=True, eq=False)
class LinkFrom(Result):
    """A page linking to the one read, and the line of the link."""

    slug: str
    line: int


@dataclass(frozen=True, eq=False)
class PageRead(Result):
    """``kb.wiki.read_page``: the page with its front matter, body (as in the file), links and backlinks."""

    page: PageInfo
    front_matter: dict[str, Any]
    content: str
    links: list[PageLink]
    backlinks: list[LinkFrom]
    # each link's target (as stored: PageLink.target) -> the slug of the page it means, resolved as lint and
    # backlinks do (slug, title, alias, an entity's other name); a broken link is not in it
    link_slugs: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.page.to_dict(), "front_matter": self.front_matter, "content": self.content,
                "links": [ln.to_dict() for ln in self.links], "backlinks": [b.to_dict() for b in self.backlinks],
                "link_slugs": dict(self.link_slugs)}


@dataclass(frozen=True, eq=False)
class PageHit(Result):
    """A full-text hit of ``kb.wiki.search_wiki`` (raw BM25 ``score``, higher is better)."""

    slug: str
    category: str
    path: str
    title: str
    snippet: str
    score: float


@dataclass(frozen=True, eq=False)
class Backlink(Result):
    """A page linking to a slug (``kb.wiki.backlinks``); ``category`` is None for a page not indexed."""

    slug: str
    line: int
    title: str
    category: str | None


@dataclass(frozen=True, eq=False)
class LogEntry(Result):
    """One line of ``log.md``, parsed."""

    timestamp: str
    operation: str
    target: str
    summary: str
    line: str


@dataclass(frozen=True, eq=False)
class PageDeleted(Result):
    """A page removed by ``kb.wiki.delete_page`` (``path`` is where its file was)."""

    slug: str
    category: str
    path: str
    deleted: bool = True


@dataclass(frozen=True, eq=False)
class SyncReport(Result):
    """``kb.wiki.sync``: pages (re)indexed and removed, files left alone (``skipped`` with the reason),
    generated pages regenerated and those that could not be (``failed``: ``{key, error}``). On a store
    shared by several folders (``[store] url``) also the page files written back from the store because
    they were missing here (``restored``) and the files whose text differed from the store's
    (``conflicts``: ``{path, saved_to}``, the store's text now in the file, this folder's saved outside
    wiki/); both keys are in the dict only when not empty, so a single folder's output is as before."""

    indexed: list[str]
    removed: list[str]
    unchanged: int
    skipped: list[dict[str, Any]]
    regenerated: int
    failed: list[dict[str, Any]]
    restored: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        for key in ("restored", "conflicts"):
            if not out[key]:
                del out[key]
        return out


@dataclass(frozen=True, eq=False)
class LintReport(Result):
    """``kb.wiki.lint_wiki``: ``findings`` by check (``orphan_pages``, ``broken_wikilinks`` ... in the
    order of :data:`graphmem.wiki.lint.LINT_KEYS`), the number of ``problems``, and with ``fix`` what
    was ``fixed`` (None without)."""

    findings: dict[str, Any]
    problems: int
    fixed: dict[str, Any] | None = None

    @classmethod
    def from_report(cls, report: Mapping[str, Any]) -> LintReport:
        """From the lint engine's report."""
        return cls({k: v for k, v in report.items() if k not in ("problems", "fixed")}, report["problems"],
                   report.get("fixed"))

    def to_dict(self) -> dict[str, Any]:
        out = {**self.findings, "problems": self.problems}
        if self.fixed is not None:
            out["fixed"] = self.fixed
        return out
