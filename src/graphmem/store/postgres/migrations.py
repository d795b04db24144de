"""Named, append-only schema migrations of the PostgreSQL backend, applied on open.

Every pending migration is applied in ONE transaction that first takes the knowledge base's write lock
(``pg_advisory_xact_lock``): two processes opening a new database at once apply them once, and a
failure leaves the database as it was. The list is the core's, then the graph's (P2's modules), then
the core's that refer to the graph's tables. Never edit or reorder a shipped migration: append.
"""

from __future__ import annotations

from .schema_core import CORE_AFTER_MIGRATIONS, CORE_MIGRATIONS
from .schema_graph import GRAPH_MIGRATIONS
from .schema_memory import MEMORY_MIGRATIONS
from .schema_wiki import WIKI_MIGRATIONS

__all__ = ["MIGRATIONS"]

MIGRATIONS: list[tuple[str, str]] = [*CORE_MIGRATIONS, *GRAPH_MIGRATIONS, *WIKI_MIGRATIONS, *MEMORY_MIGRATIONS,
                                     *CORE_AFTER_MIGRATIONS]
"""``(name, SQL script)`` in the order they are applied."""
