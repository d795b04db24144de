"""Documents, chunks, search, query, entities and stats: one library call per route."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response

from ...errors import InvalidInput
from .errors import ERROR_RESPONSES
from .routes_memory import memory_search
from .schemas import MAX_ID, DocumentIn, MergeIn, QueryIn, SearchIn
from .schemas_out import HealthOut
from .state import plain, state_of

__all__ = ["router"]

router = APIRouter(responses=ERROR_RESPONSES)

JSON = dict[str, Any]


@router.get("/health", tags=["server"], response_model=HealthOut, summary="Liveness (no token needed; HEAD too)")
def health() -> JSON:
    return {"status": "ok"}


# HEAD for uptime monitors and `curl -I`; outside the schema: one operation per path and method there, and an
# api_route with both methods gave two operations of one id (an invalid OpenAPI document)
@router.head("/health", include_in_schema=False)
def health_head() -> Response:
    return Response(media_type="application/json")


@router.get("/stats", tags=["server"], summary="What the knowledge base holds")
def stats(request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(st.kb.stats))


# -- documents ----------------------------------------------------------------------------------


@router.post("/documents", tags=["documents"], summary="Ingest a text (with extraction unless extract=none)")
def add_document(body: DocumentIn, request: Request) -> JSON:
    st = state_of(request)
    kb = st.kb
    if body.entities is not None or body.relations is not None:
        if body.doc_id is None:
            raise InvalidInput("doc_id: give the document id when supplying entities or relations")
        doc_id = body.doc_id
        return plain(st.call(lambda: kb.ingest_with_content(doc_id, body.title or doc_id, body.source or doc_id,
                                                            body.content, body.entities, body.relations,
                                                            body.metadata)))
    if body.extract == "none":
        return plain(st.call(lambda: kb.documents.add(body.content, body.doc_id, body.title, body.source,
                                                       body.metadata)))
    return plain(st.call(lambda: kb.documents.ingest_text(body.content, body.doc_id, body.title, body.source,
                                                          body.metadata, body.extract)))


@router.get("/documents", tags=["documents"], summary="Latest version of each document (no content)")
def list_documents(request: Request, limit: int = Query(100, ge=1, le=1000),
                   offset: int = Query(0, ge=0, le=MAX_ID)) -> list[JSON]:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.documents.list(limit, offset)))


@router.get("/documents/{doc_id:path}", tags=["documents"],
            summary="A document version (latest by default) with its versions and chunks")
def get_document(doc_id: str, request: Request, version: int | None = Query(None, ge=1, le=MAX_ID)) -> JSON:
    st = state_of(request)
    docs = st.kb.documents

    def read() -> JSON:
        doc = plain(docs.get(doc_id, version))
        doc["versions"] = [{"version": d["version"], "content_hash": d["content_hash"], "created_at": d["created_at"],
                            "is_latest": d["is_latest"]} for d in plain(docs.versions(doc_id))]
        doc["chunks"] = [{k: c[k] for k in ("chunk_id", "ordinal", "start", "end")}
                         for c in plain(docs.chunks(doc_id, doc["version"]))]
        return doc

    return st.call(read)


@router.delete("/documents/{doc_id:path}", tags=["documents"], summary="Delete a document (all versions)")
def delete_document(doc_id: str, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.documents.delete(doc_id)))


@router.get("/chunks/{chunk_id:path}", tags=["documents"], summary="One passage by chunk id")
def get_chunk(chunk_id: str, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.documents.chunk(chunk_id)))


# -- retrieval ----------------------------------------------------------------------------------


_MEMORY_KEYS = ("filters", "user_id", "agent_id", "run_id", "tenant_id")


@router.post("/search", tags=["retrieval", "memories"],
             summary="Hybrid search with evidence; with filters or a user/agent/run id, mem0's memory search")
def search(body: SearchIn, request: Request) -> JSON:
    st = state_of(request)
    if any(getattr(body, k) is not None for k in _MEMORY_KEYS):
        return memory_search(st, body.query, body.filters, body.user_id, body.agent_id, body.run_id,
                             body.tenant_id, body.limit, None)
    kinds = body.kinds or ["chunk"]
    return plain(st.call(lambda: st.kb.search(body.query, kinds=kinds, k=body.k, strategy=body.strategy,
                                              preset=body.preset, as_context=body.context,
                                              token_budget=body.token_budget)))


@router.post("/query", tags=["retrieval"], summary="The subgraph a question names, with its evidence chain")
def query(body: QueryIn, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.query_with_evidence(body.query)))


# -- entities -----------------------------------------------------------------------------------


@router.get("/entities", tags=["entities"], summary="Entities by name (type normalised like at ingest)")
def list_entities(request: Request, type: str | None = Query(None, min_length=1, max_length=100),
                  limit: int = Query(100, ge=1, le=1000), offset: int = Query(0, ge=0, le=MAX_ID)) -> list[JSON]:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.graph.list(type, limit, offset)))


@router.post("/entities/merge", tags=["entities"], summary="Merge entity `other` into `keep`")
def merge_entities(body: MergeIn, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.graph.merge(body.keep, body.other)))


# `{name:path}`: an entity name may hold a slash ("CI/CD", sent as CI%2FCD, which the server decodes
# before routing). The /graph route comes first, so "<name>/graph" is the neighbourhood of <name>.
@router.get("/entities/{name:path}/graph", tags=["entities"], summary="The entity's neighbourhood: nodes and edges")
def entity_graph(name: str, request: Request, depth: int = Query(1, ge=0, le=3),
                 max_nodes: int = Query(50, ge=1, le=500)) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.graph.neighbours(name, depth, None, max_nodes)))


@router.get("/entities/{name:path}", tags=["entities"],
            summary="An entity (id, name or alias) with its relations and each relation's evidence")
def get_entity(name: str, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.graph.get_entity(name)))
