"""The wiki: pages (create/replace, read, update, delete), list, search, lint, backlinks, log."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from .errors import ERROR_RESPONSES
from .schemas import MAX_ID, PageIn, PageUpdateIn
from .state import plain, state_of

__all__ = ["router"]

router = APIRouter(prefix="/wiki", responses=ERROR_RESPONSES, tags=["wiki"])

JSON = dict[str, Any]


@router.get("/pages", summary="Pages by category and title")
def list_pages(request: Request, category: str | None = Query(None, min_length=1, max_length=100),
               limit: int = Query(500, ge=1, le=5000), offset: int = Query(0, ge=0, le=MAX_ID)) -> list[JSON]:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.wiki.list_pages(category, limit, offset)))


@router.post("/pages", summary="Create or replace the page `title` of `category`")
def write_page(body: PageIn, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.wiki.write_page(body.category, body.title, body.content, body.summary,
                                                       body.tags, body.source_documents, body.allow_empty)))


@router.get("/pages/{slug:path}", summary="A page by slug (`dispatch-api` or `entity/dispatch-api`): front "
            "matter, markdown body, links and backlinks")
def read_page(slug: str, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.wiki.read_page_by_slug(slug)))


@router.put("/pages/{slug:path}", summary="Replace the body (and summary, tags) of an existing page")
def update_page(slug: str, body: PageUpdateIn, request: Request) -> JSON:
    st = state_of(request)
    wiki = st.kb.wiki

    def write() -> JSON:
        page = wiki.read_page_by_slug(slug)
        return plain(wiki.write_page(page["category"], page["title"], body.content, body.summary, body.tags,
                                     body.source_documents, body.allow_empty))

    return st.call(write)


@router.delete("/pages/{slug:path}", summary="Delete a page (links to it become broken links)")
def delete_page(slug: str, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.wiki.delete_page(slug=slug)))


@router.get("/search", summary="Full-text search over pages, best first")
def search_wiki(request: Request, q: str = Query(min_length=1, max_length=2000), k: int = Query(10, ge=1, le=200),
                category: str | None = Query(None, min_length=1, max_length=100)) -> list[JSON]:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.wiki.search_wiki(q, k, category)))


@router.get("/backlinks/{slug:path}", summary="Pages linking to a slug (it need not exist)")
def backlinks(slug: str, request: Request) -> list[JSON]:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.wiki.backlinks(slug)))


@router.get("/lint", summary="Lint problems (broken links, orphans, stale pages...); writes nothing")
def lint(request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.wiki.lint_wiki()))


@router.get("/log", summary="The last entries of log.md, oldest first")
def log(request: Request, last_n: int = Query(20, ge=1, le=1000)) -> list[JSON]:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.wiki.get_log(last_n)))
