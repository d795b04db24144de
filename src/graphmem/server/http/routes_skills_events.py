"""Skills (query with the prompt block, one skill, info; SkillGraph's ``/retrieve``) and events
(a page of the change log, and the live stream as Server-Sent Events with Last-Event-ID resume)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from ...errors import InvalidInput
from ...skills.prompt import render_block
from ...skills.spec import model_may_invoke
from .errors import ERROR_RESPONSES
from .schemas import MAX_ID, SkillGraphRetrieveIn, SkillQueryIn
from .schemas_out import EventsPageOut
from .state import ServerState, plain, state_of

__all__ = ["router"]

router = APIRouter(responses=ERROR_RESPONSES)

JSON = dict[str, Any]


# -- skills -------------------------------------------------------------------------------------


def _skills_answer(st: ServerState, message: str, top_k: int | None, strategy: str | None, fmt: str) -> JSON:
    skills = st.kb.skills
    k = st.kb.config.skills.top_k if top_k is None else top_k

    def run() -> JSON:
        # Ask for more until k invocable skills are found or the index has no more to give.
        want = k
        while True:
            hits = skills.retrieve(message, want, strategy=strategy)
            allowed = [h for h in hits if model_may_invoke(skills.get(h.id).front_matter)]
            if len(allowed) >= k or len(hits) < want:
                break
            want *= 2
        allowed = allowed[:k]
        block = render_block(allowed, fmt, query=message)
        return {"query": message, "skills": plain(allowed), "prompt": plain(block)}

    return st.call(run)


@router.post("/skills/query", tags=["skills"], summary="The skills a message needs and the prompt block an agent gets")
def query_skills(body: SkillQueryIn, request: Request) -> JSON:
    return _skills_answer(state_of(request), body.message, body.top_k, body.strategy, body.format)


@router.post("/retrieve", tags=["skills"], summary="SkillGraph's retrieve(query, top_k), for its users")
def skillgraph_retrieve(body: SkillGraphRetrieveIn, request: Request) -> JSON:
    return _skills_answer(state_of(request), body.query, body.top_k, None, "markdown")


@router.get("/skills", tags=["skills"], summary="Counts, categories and edges of the skills index")
def skills_info(request: Request) -> JSON:
    st = state_of(request)
    return plain(st.call(st.kb.skills.info))


@router.get("/skills/{skill_id}", tags=["skills"], summary="One skill (id or unique name): front matter and body")
def get_skill(skill_id: str, request: Request) -> JSON:
    st = state_of(request)
    skills = st.kb.skills

    def read() -> JSON:
        out = plain(skills.get(skill_id))
        out["neighbours"] = plain(skills.neighbours(out["id"]))["edges"]
        return out

    return st.call(read)


# -- events -------------------------------------------------------------------------------------


@router.get("/events", tags=["events"], response_model=EventsPageOut,
            summary="Events after an id, oldest first (page on with last_id)")
def list_events(request: Request, after: int = Query(0, ge=0, le=MAX_ID),
                types: Annotated[list[str] | None, Query()] = None,
                target: str | None = Query(None, min_length=1, max_length=500),
                limit: int = Query(100, ge=1, le=1000)) -> JSON:
    st = state_of(request)
    events = plain(st.call(lambda: st.kb.events.list(after, types, target, limit)))
    return {"events": events, "last_id": events[-1]["id"] if events else after}


def _resume_point(after: int, last_event_id: str | None) -> int:
    if last_event_id is None or not last_event_id.strip():
        return after
    try:
        value = int(last_event_id.strip())
    except ValueError:
        raise InvalidInput(f"Last-Event-ID: expected an event id (an integer), got {last_event_id!r}") from None
    if value < 0:
        raise InvalidInput(f"Last-Event-ID: expected a non-negative event id, got {value}")
    if value > MAX_ID:  # the store's ids are 64-bit: a larger one would fail inside the stream
        raise InvalidInput(f"Last-Event-ID: expected an event id of at most {MAX_ID}, got {value}")
    return value


@router.get("/events/stream", tags=["events"], response_class=StreamingResponse,
            summary="Live events as Server-Sent Events; resumes after the Last-Event-ID header (or `after`)",
            responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}},
                             "description": "`id: <event id>` and `data: <event JSON>` per event"}})
async def stream_events(request: Request, after: int = Query(0, ge=0, le=MAX_ID),
                        types: Annotated[list[str] | None, Query()] = None,
                        limit: int | None = Query(None, ge=1, le=100_000,
                                                  description="close the stream after this many events"),
                        timeout: float | None = Query(None, gt=0, le=86_400,
                                                      description="close the stream after this many seconds"),
                        last_event_id: str | None = Header(None, alias="Last-Event-ID")) -> StreamingResponse:
    st = state_of(request)
    start = _resume_point(after, last_event_id)

    async def gen() -> AsyncIterator[str]:
        cursor, sent = start, 0
        began = last_beat = time.monotonic()
        yield "retry: 2000\n\n"
        while True:
            left = None if limit is None else limit - sent
            size = min(100, left or 100)
            batch = await run_in_threadpool(
                st.call, lambda c=cursor, n=size: plain(st.kb.events.list(c, types, None, n)))
            for ev in batch:
                cursor = ev["id"]
                sent += 1
                yield f"id: {ev['id']}\ndata: {json.dumps(ev, ensure_ascii=False, default=str)}\n\n"
            now = time.monotonic()
            if (limit is not None and sent >= limit) or (timeout is not None and now - began >= timeout):
                return
            if batch:
                continue  # more may be waiting: no pause while catching up
            if now - last_beat >= st.sse_heartbeat_seconds:
                last_beat = now
                yield ": keep-alive\n\n"
            if await request.is_disconnected():
                return
            await asyncio.sleep(st.sse_poll_seconds)

    return StreamingResponse(gen(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
