"""Library errors as JSON: ``{"error": {"type", "message", "field"}}`` with the matching status."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from ...errors import BackendError, Conflict, GraphmemError, InvalidInput, NotFound, StoreBusy

__all__ = ["ErrorBody", "ErrorResponse", "ERROR_RESPONSES", "error_response", "install_error_handlers",
           "RETRY_AFTER_SECONDS"]

log = logging.getLogger("graphmem.server")

RETRY_AFTER_SECONDS = 1

# graphmem messages start with the field they are about ("k: expected ...", "filters.user_id: ...").
_FIELD = re.compile(r"^(?P<field>[A-Za-z_][A-Za-z0-9_-]*(?:[.\[][A-Za-z0-9_\]]+)*)\s*:\s")


class ErrorBody(BaseModel):
    """What went wrong: the error class, a message saying what to do, the field when one is at fault."""

    type: str
    message: str
    field: str | None = None


class ErrorResponse(BaseModel):
    """Every error response has this shape."""

    error: ErrorBody


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Invalid input (InvalidInput): nothing was written"},
    401: {"model": ErrorResponse, "description": "Missing or wrong bearer token"},
    403: {"model": ErrorResponse, "description": "The knowledge base is read-only (ReadOnly), or the Host or "
                                                 "Origin header is refused (Forbidden)"},
    404: {"model": ErrorResponse, "description": "No such item (NotFound)"},
    409: {"model": ErrorResponse, "description": "Contradicts the store's state (Conflict)"},
    413: {"model": ErrorResponse, "description": "Request body over the size limit"},
    503: {"model": ErrorResponse, "description": "Another writer holds the lock (StoreBusy); retry after "
                                                 "the Retry-After header's seconds"},
}


def error_response(status: int, type_: str, message: str, field: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON error response."""
    return JSONResponse({"error": {"type": type_, "message": message, "field": field}}, status_code=status,
                        headers=headers)


def _field_of(message: str) -> str | None:
    m = _FIELD.match(message)
    return m.group("field") if m else None


def library_error(exc: GraphmemError, read_only: bool = False) -> JSONResponse:
    """The response for a graphmem error."""
    message = str(exc)
    if isinstance(exc, InvalidInput):
        return error_response(400, "InvalidInput", message, _field_of(message))
    if isinstance(exc, NotFound):
        return error_response(404, "NotFound", message, _field_of(message))
    if isinstance(exc, Conflict):
        return error_response(409, "Conflict", message, _field_of(message))
    if isinstance(exc, StoreBusy):
        return error_response(503, "StoreBusy", message, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    if isinstance(exc, BackendError) and read_only and "read-only" in message:
        return error_response(403, "ReadOnly", message)
    log.error("backend error: %s", message)
    return error_response(500, type(exc).__name__, message)


def _validation_field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc[1:]] if loc and loc[0] in ("body", "query", "path", "header") else list(map(str, loc))
    return ".".join(parts) or str(loc[0] if loc else "body")


def install_error_handlers(app: Any) -> None:
    """Map library errors, request validation, unknown routes and bugs to JSON errors."""

    async def on_graphmem(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, GraphmemError)
        kb = getattr(request.app.state, "kb", None)
        return library_error(exc, read_only=bool(kb is not None and kb.read_only))

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
        field = _validation_field(tuple(first.get("loc", ())))
        msg = str(first.get("msg", "invalid value"))
        if first.get("type") == "json_invalid":  # its loc is ("body", <character offset>): not a field
            loc = tuple(first.get("loc", ()))
            at = f" at character {loc[1]}" if len(loc) > 1 else ""
            ctx = first.get("ctx")
            reason = ctx.get("error", msg) if isinstance(ctx, dict) else msg
            field, msg = "body", f"not valid JSON{at} ({reason}); send a JSON object"
        more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        return error_response(400, "InvalidInput", f"{field}: {msg}{more}", field)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        kind = {404: "NotFound", 405: "MethodNotAllowed", 401: "Unauthorized", 413: "PayloadTooLarge"}.get(
            exc.status_code, "HTTPError")
        message = str(exc.detail)
        if exc.status_code == 400:  # a body the framework could not parse (e.g. JSON nested thousands deep)
            return error_response(400, "InvalidInput", f"body: {message}; send a JSON object of the documented "
                                  "shape (see /docs)", "body")
        if exc.status_code == 404 and message == "Not Found":
            message = f"no route {request.method} {request.url.path}; the routes are listed at /docs and /openapi.json"
        return error_response(exc.status_code, kind, message, headers=getattr(exc, "headers", None))

    async def on_bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "InternalError", f"unexpected {type(exc).__name__} on {request.method} "
                              f"{request.url.path}; this is a graphmem bug, the server log has the details")

    app.add_exception_handler(GraphmemError, on_graphmem)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_bug)
