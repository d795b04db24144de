"""Moving a PostgreSQL knowledge base's rows in and out whole (dump, load, backup, checks, replay)."""

from __future__ import annotations

from .pgbase import PgHelpers

__all__ = ["PortablePgMixin"]


class PortablePgMixin(PgHelpers):
    """Dump, load, back up and check the stored rows (being written)."""
