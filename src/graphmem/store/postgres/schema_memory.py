"""PLACEHOLDER (P1's stub, to be overwritten by P2): the memory migrations of the PostgreSQL backend."""

from __future__ import annotations

__all__ = ["MEMORY_MIGRATIONS"]

MEMORY_MIGRATIONS: list[tuple[str, str]] = []
