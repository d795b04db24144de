"""PLACEHOLDER (P1's stub, to be overwritten by P2): the wiki and skills migrations of the PostgreSQL backend."""

from __future__ import annotations

__all__ = ["WIKI_MIGRATIONS"]

WIKI_MIGRATIONS: list[tuple[str, str]] = []
