"""PLACEHOLDER (P1's stub, to be overwritten by P2's port of ../sqlite/evidence.py): the evidence mixin of the
PostgreSQL backend. Until then its methods are missing and the contract tests that need them fail."""

from __future__ import annotations

from .pgbase import PgHelpers

__all__ = ["EvidencePgMixin"]


class EvidencePgMixin(PgHelpers):
    """Placeholder: P2 replaces this module."""
