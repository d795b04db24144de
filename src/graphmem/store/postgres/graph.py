"""PLACEHOLDER (P1's stub, to be overwritten by P2's port of ../sqlite/graph.py): the graph mixin of the
PostgreSQL backend. Until then its methods are missing and the contract tests that need them fail."""

from __future__ import annotations

from .pgbase import PgHelpers

__all__ = ["GraphPgMixin"]


class GraphPgMixin(PgHelpers):
    """Placeholder: P2 replaces this module."""
