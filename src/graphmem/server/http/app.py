"""The ASGI app: routes, the guard (token, body size), JSON errors, CORS (off by default), the UI."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from .bind import check_bind
from .errors import install_error_handlers
from .guard import Guard, checked_origins
from .headers import SecurityHeaders
from .routes_knowledge import router as knowledge_router
from .routes_memory import router as memory_router
from .routes_skills_events import router as skills_events_router
from .routes_wiki import router as wiki_router
from .state import ServerState

if TYPE_CHECKING:
    from ...kb import KnowledgeBase

__all__ = ["create_app", "serve", "DEFAULT_MAX_BODY", "STATIC"]

DEFAULT_MAX_BODY = 1_048_576  # 1 MiB: a large document, not a whole corpus (ingest folders with the CLI)
STATIC = Path(__file__).parent / "static"

log = logging.getLogger("graphmem.server")


def create_app(kb: KnowledgeBase, *, token: str | None = None, max_body_bytes: int = DEFAULT_MAX_BODY,
               cors_origins: Sequence[str] = (), sse_poll_seconds: float = 0.5) -> Any:
    """The ASGI app serving ``kb``: REST routes (OpenAPI at ``/openapi.json``, docs at ``/docs``),
    the web UI at ``/``. ``token``: every API request needs ``Authorization: Bearer <token>``.
    ``cors_origins``: origins allowed to call the API from a browser (none by default)."""
    from graphmem import __version__

    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) or max_body_bytes < 1:
        raise ValueError(f"max_body_bytes: expected a positive integer, got {max_body_bytes!r}")
    app = FastAPI(title="graphmem", version=__version__, docs_url=None, redoc_url=None, openapi_url="/openapi.json",
                  description="REST over every face of a graphmem knowledge base: documents, retrieval with "
                              "evidence, entities, wiki, memories (mem0's REST shape), skills, events (SSE). "
                              "Errors are `{error: {type, message, field}}`.")
    app.state.graphmem = ServerState(kb, sse_poll_seconds=sse_poll_seconds)
    app.state.kb = kb
    install_error_handlers(app)
    for router in (knowledge_router, memory_router, wiki_router, skills_events_router):
        app.include_router(router)

    # GET and HEAD: `curl -I` and uptime monitors ask with HEAD (405 before)
    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.api_route("/docs", methods=["GET", "HEAD"], include_in_schema=False)
    def docs() -> FileResponse:
        return FileResponse(STATIC / "docs.html")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)

    app.mount("/ui", StaticFiles(directory=STATIC), name="ui")
    origins = checked_origins(cors_origins)
    if origins:
        from starlette.middleware.cors import CORSMiddleware

        # the browser sends the origin in this form; Starlette compares it as written
        app.add_middleware(CORSMiddleware, allow_origins=list(origins), allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type", "Last-Event-ID"])
    # Outside the routes and CORS: a foreign, unauthenticated or oversized request is answered before anything
    # else runs; it lets a preflight from a named origin through to the CORS layer (a preflight never carries
    # the token).
    app.add_middleware(Guard, token=token, max_body_bytes=max_body_bytes, cors_origins=origins)
    app.add_middleware(SecurityHeaders)  # around everything: the guard's own refusals carry the headers too
    return app


def serve(kb: KnowledgeBase, host: str = "127.0.0.1", port: int = 8765, *, token: str | None = None,
          max_body_bytes: int = DEFAULT_MAX_BODY, cors_origins: Sequence[str] = (), log_level: str = "info") -> None:
    """Serve ``kb`` with uvicorn until interrupted (refuses a non-loopback host without a token)."""
    import uvicorn

    check_bind(host, token)
    app = create_app(kb, token=token, max_body_bytes=max_body_bytes, cors_origins=cors_origins)
    # Open event streams must not keep a Ctrl-C'd server alive.
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=2,
                server_header=False)
