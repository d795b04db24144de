"""The HTTP API and web UI over one knowledge base (optional extra ``server``: FastAPI + uvicorn).

``create_app(kb, ...)`` builds the ASGI app; ``serve(kb, host, port, ...)`` runs it with uvicorn
after :func:`check_bind` refused what must not be served (a non-loopback address without a token).
FastAPI is imported only here, lazily, so the rest of graphmem works without the extra.
"""

from __future__ import annotations

from typing import Any

from .bind import check_bind, is_loopback
from .guard import checked_origins

__all__ = ["create_app", "serve", "check_bind", "checked_origins", "is_loopback", "MISSING_EXTRA"]

MISSING_EXTRA = ("the HTTP server needs the 'server' extra (FastAPI and uvicorn); install it with "
                 "`pip install 'graphmem[server]'`")


def create_app(*args: Any, **kwargs: Any) -> Any:
    """Build the ASGI app (see :func:`graphmem.server.http.app.create_app`)."""
    from .app import create_app as _create_app

    return _create_app(*args, **kwargs)


def serve(*args: Any, **kwargs: Any) -> None:
    """Run the server (see :func:`graphmem.server.http.app.serve`)."""
    from .app import serve as _serve

    _serve(*args, **kwargs)
