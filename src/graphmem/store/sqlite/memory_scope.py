"""The scope filter of memory reads (part of the SQLite backend): which tenant, user, agent, run or
isolation key a read is limited to, and whether archived memories count."""

from __future__ import annotations

from typing import Any

from ..rows import ScopeFilters, scope_terms

__all__ = ["scope_where"]


def scope_where(filters: ScopeFilters, include_archived: bool, alias: str = "m") -> tuple[str, list[Any]]:
    """``AND``-ed equality on the given scope fields (None values are not filters)."""
    terms = scope_terms(filters)
    parts = [f"{alias}.{column} = ?" for column, _ in terms]
    params: list[Any] = [value for _, value in terms]
    if not include_archived:
        # "+": never pick an index by the archived flag (it holds nearly every row; the scope
        # columns' indexes are the selective ones).
        parts.append(f"+{alias}.archived = 0")
    return (" AND ".join(parts) or "1"), params
