"""Memories in mem0's REST shape: POST/GET/DELETE /memories, GET/PUT/DELETE /memories/{id},
GET /memories/{id}/history, POST /memories/search (and POST /search with filters), POST /reset;
plus GET /memories/graph (a scope's memories with their context-graph edges) for the web UI."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from ...errors import InvalidInput
from .errors import ERROR_RESPONSES
from .schemas import MAX_ID, MemoryIn, MemorySearchIn, MemoryUpdateIn, ResetIn
from .schemas_out import (
    MemoryAddOut,
    MemoryChangeOut,
    MemoryDeletedOut,
    MemoryHistoryOut,
    MemoryListOut,
    MemoryOut,
)
from .state import ServerState, plain, state_of

__all__ = ["router", "memory_search"]

router = APIRouter(responses=ERROR_RESPONSES, tags=["memories"])

JSON = dict[str, Any]
_SCOPE = ("user_id", "agent_id", "run_id", "tenant_id")
ScopeId = Annotated[str | None, Query(min_length=1, max_length=200)]


def _scope(filters: dict[str, str] | None, **given: str | None) -> dict[str, str | None]:
    """mem0's ``filters`` (flat scope keys only) merged under the explicit ids."""
    out: dict[str, str | None] = dict.fromkeys(_SCOPE)
    key: str
    value: str | None
    for key, value in (filters or {}).items():
        if key not in _SCOPE:
            raise InvalidInput(f"filters.{key}: unknown filter; memory filters are {', '.join(_SCOPE)}")
        out[key] = value
    for key, value in given.items():
        if value is not None:
            out[key] = value
    return out


def memory_search(st: ServerState, query: str, filters: dict[str, str] | None, user_id: str | None,
                  agent_id: str | None, run_id: str | None, tenant_id: str | None, limit: int,
                  strategy: str | None) -> JSON:
    """The memory search both ``POST /search`` (with a scope) and ``POST /memories/search`` run."""
    scope = _scope(filters, user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id)
    return plain(st.call(lambda: st.kb.memory.search(query, scope["user_id"], scope["agent_id"], scope["run_id"],
                                                     scope["tenant_id"], limit=limit, strategy=strategy)))


@router.post("/memories", response_model=MemoryAddOut,
             summary="Remember a text or each message of a list (mem0's add)")
def add_memory(body: MemoryIn, request: Request) -> JSON:
    st = state_of(request)
    messages: Any = body.messages if isinstance(body.messages, str) else [
        {"role": m.role, "content": m.content} for m in body.messages]
    return plain(st.call(lambda: st.kb.memory.add(messages, body.user_id, body.agent_id, body.run_id, body.tenant_id,
                                                  body.metadata, body.timestamp, body.infer)))


@router.get("/memories", response_model=MemoryListOut,
            summary="Memories of a scope, oldest said first (mem0's get_all)")
def list_memories(request: Request, user_id: ScopeId = None, agent_id: ScopeId = None, run_id: ScopeId = None,
                  tenant_id: ScopeId = None, limit: int = Query(100, ge=1, le=10_000),
                  offset: int = Query(0, ge=0, le=MAX_ID), include_archived: bool = False) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.memory.get_all(None, limit, user_id=user_id, agent_id=agent_id, run_id=run_id,
                                                      tenant_id=tenant_id, include_archived=include_archived,
                                                      offset=offset)))


@router.delete("/memories", response_model=MemoryDeletedOut,
               summary="Delete every memory of a scope (mem0's delete_all; a scope is required)")
def delete_memories(request: Request, user_id: ScopeId = None, agent_id: ScopeId = None,
                    run_id: ScopeId = None, tenant_id: ScopeId = None) -> JSON:
    st = state_of(request)
    out = plain(st.call(lambda: st.kb.memory.delete_all(user_id, agent_id, run_id, tenant_id)))
    return {"message": f"{out['deleted']} memories deleted", **out}


@router.post("/reset", response_model=MemoryDeletedOut,
             summary="Delete every memory of every scope (mem0's reset; documents and wiki stay); "
                     "the body must be {\"confirm\": true}")
def reset(request: Request, body: ResetIn | None = None) -> JSON:
    if body is None or body.confirm is not True:
        raise InvalidInput('confirm: POST /reset deletes every memory of every scope; send the JSON body '
                           '{"confirm": true} to do it')
    st = state_of(request)
    out = plain(st.call(st.kb.memory.reset))
    return {"message": f"all memories reset ({out['deleted']} deleted)", **out}


@router.post("/memories/search", summary="mem0's memory search (the same as POST /search with filters)")
def search_memories(body: MemorySearchIn, request: Request) -> JSON:
    return memory_search(state_of(request), body.query, body.filters, body.user_id, body.agent_id, body.run_id,
                         body.tenant_id, body.limit, body.strategy)


@router.get("/memories/graph", summary="A scope's memories with the context-graph edges between them")
def memory_graph(request: Request, user_id: ScopeId = None, agent_id: ScopeId = None, run_id: ScopeId = None,
                 tenant_id: ScopeId = None, limit: int = Query(200, ge=1, le=2000)) -> JSON:
    st = state_of(request)
    mem = st.kb.memory

    def read() -> JSON:
        # one more than asked: ``more`` tells the UI its list is cut (it showed 200 of 230 without a word)
        got = plain(mem.get_all(None, limit + 1, user_id=user_id, agent_id=agent_id, run_id=run_id,
                                tenant_id=tenant_id))["results"]
        shown = got[:limit]
        return {"results": shown, "edges": mem.edges_among([m["id"] for m in shown]), "more": len(got) > limit}

    return st.call(read)


@router.get("/memories/{memory_id}", response_model=MemoryOut,
            summary="One memory")
def get_memory(memory_id: str, request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.memory.get(memory_id)))


@router.put("/memories/{memory_id}", response_model=MemoryChangeOut,
            summary="Replace a memory's text (the old text stays in its history)")
def update_memory(memory_id: str, body: MemoryUpdateIn, request: Request) -> JSON:
    st = state_of(request)
    given = [v for v in (body.text, body.memory, body.data) if v is not None]
    if len(given) != 1:
        raise InvalidInput("text: give the new text in exactly one of text, memory or data")
    text = given[0]
    return plain(st.call(lambda: st.kb.memory.update(memory_id, text, body.metadata)))


@router.delete("/memories/{memory_id}", response_model=MemoryChangeOut,
               summary="Delete a memory (its history stays readable)")
def delete_memory(memory_id: str, request: Request) -> JSON:
    st = state_of(request)
    out = plain(st.call(lambda: st.kb.memory.delete(memory_id)))
    return {"message": "Memory deleted successfully", **out}


@router.get("/memories/{memory_id}/history", response_model=list[MemoryHistoryOut],
            summary="ADD, UPDATE and DELETE entries of a memory, oldest first")
def memory_history(memory_id: str, request: Request) -> list[JSON]:
    st = state_of(request)
    return plain(st.call(lambda: st.kb.memory.history(memory_id)))
