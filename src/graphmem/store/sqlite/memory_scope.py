"""The scope filter of memory reads (part of the SQLite backend): which tenant, user, agent, run or
isolation key a read is limited to, and whether archived memories count."""

from __future__ import annotations

from typing import Any

from ..rows import ScopeFilters

__all__ = ["SCOPE_FIELDS", "scope_where"]

SCOPE_FIELDS = ("tenant_id", "user_id", "agent_id", "run_id")


def scope_where(filters: ScopeFilters, include_archived: bool, alias: str = "m") -> tuple[str, list[Any]]:
    """``AND``-ed equality on the given scope fields (None values are not filters)."""
    parts: list[str] = []
    params: list[Any] = []
    for key in SCOPE_FIELDS:
        value = filters.get(key)
        if value is not None:
            parts.append(f"{alias}.{key} = ?")
            params.append(value)
    if filters.get("scope_key") is not None:  # exact isolation key (tenant, user, agent)
        parts.append(f"{alias}.scope_key = ?")
        params.append(filters["scope_key"])
    if not include_archived:
        # "+": never pick an index by the archived flag (it holds nearly every row; the scope
        # columns' indexes are the selective ones).
        parts.append(f"+{alias}.archived = 0")
    return (" AND ".join(parts) or "1"), params
