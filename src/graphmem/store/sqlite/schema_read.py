"""Schema migrations 0010- of the SQLite backend: indexes for the read paths of a search.

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

__all__ = ["READ_PATH_MIGRATIONS"]

READ_PATH_MIGRATIONS: list[tuple[str, str]] = [
    (
        "0010_mentions_node_recent",
        """
-- A walk reads an entity's most recent passages, a few at a time: in id order per entity the
-- first N distinct chunks are read straight off the index (a hub entity's thousands of mentions
-- were all grouped and ranked before the LIMIT: 10 ms against 0.5 ms).
CREATE INDEX mentions_node_recent ON mentions (node_id, id);
""",
    ),
]
