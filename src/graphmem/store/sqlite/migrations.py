"""Named, append-only schema migrations of the SQLite backend.

Each migration runs once, in its own transaction, and is recorded in ``schema_migrations``
(the runner is :meth:`LifecycleSqlMixin._migrate`). Never edit or reorder a migration that has
shipped: add a new one at the end of the last ``schema_*`` module (or a new module).
"""

from __future__ import annotations

import sqlite3

from .schema_disk import DISK_FIX_MIGRATIONS, DISK_MIGRATIONS
from .schema_graph import GRAPH_MIGRATIONS
from .schema_hosts import HOSTS_MIGRATIONS
from .schema_memory import FEED_MIGRATIONS, SKILL_MEMORY_MIGRATIONS
from .schema_memory_reads import MEMORY_READ_MIGRATIONS
from .schema_memory_uses import MEMORY_USES_MIGRATIONS
from .schema_read import READ_PATH_MIGRATIONS
from .schema_search import SEARCH_MIGRATIONS
from .schema_wiki import WIKI_SEE_ALSO_MIGRATIONS, WIKI_VECTOR_MIGRATIONS
from .schema_write import WRITE_PATH_MIGRATIONS

__all__ = ["MIGRATIONS", "split_sql"]

MIGRATIONS: list[tuple[str, str]] = [*GRAPH_MIGRATIONS, *WIKI_VECTOR_MIGRATIONS, *SKILL_MEMORY_MIGRATIONS,
                                     *READ_PATH_MIGRATIONS, *FEED_MIGRATIONS, *SEARCH_MIGRATIONS,
                                     *WRITE_PATH_MIGRATIONS, *WIKI_SEE_ALSO_MIGRATIONS, *HOSTS_MIGRATIONS,
                                     *DISK_MIGRATIONS, *MEMORY_READ_MIGRATIONS,
                                     *DISK_FIX_MIGRATIONS, *MEMORY_USES_MIGRATIONS]
"""``(name, SQL script)`` in the order they are applied."""


def split_sql(script: str) -> list[str]:
    """Split a migration script into statements (trigger bodies stay whole)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if not buf and (not line.strip() or line.strip().startswith("--")):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
