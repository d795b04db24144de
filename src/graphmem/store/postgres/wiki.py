"""PLACEHOLDER (P1's stub, to be overwritten by P2's port of ../sqlite/wiki.py): the wiki mixin of the
PostgreSQL backend. Until then its methods are missing and the contract tests that need them fail."""

from __future__ import annotations

from .pgbase import PgHelpers

__all__ = ["WikiPgMixin"]


class WikiPgMixin(PgHelpers):
    """Placeholder: P2 replaces this module."""
