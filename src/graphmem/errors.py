"""The one error hierarchy of graphmem.

Every error a user can cause is a :class:`GraphmemError`; its message names the offending
id or field and says what to do next. Interfaces (CLI, servers) turn these into one clear
line; anything else escaping is a bug.
"""

from __future__ import annotations

__all__ = ["GraphmemError", "NotFound", "InvalidInput", "Conflict", "BackendError", "StoreBusy"]


class GraphmemError(Exception):
    """Base class of every error graphmem raises on purpose."""


class NotFound(GraphmemError, LookupError):
    """A document, chunk, entity, edge or page with the given id or name does not exist."""


class InvalidInput(GraphmemError, ValueError):
    """Input was rejected; nothing was written. The message names the field."""


class Conflict(GraphmemError):
    """The operation contradicts the state of the store (e.g. mixing embedding models)."""


class BackendError(GraphmemError):
    """The storage backend failed (I/O error, corrupt file, unsupported SQLite build)."""


class StoreBusy(BackendError):
    """Another process held the write lock longer than the configured timeout."""
