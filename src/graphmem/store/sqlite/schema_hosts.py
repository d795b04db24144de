"""Schema migration of the SQLite backend for knowledge bases shared between folders (issue 20).

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

__all__ = ["HOSTS_MIGRATIONS"]

HOSTS_MIGRATIONS: list[tuple[str, str]] = [
    (
        "0020_pgops_page_text",
        """
-- A page file's exact text, so that a folder without the file (another host on the same store, a
-- migrated copy) can write it byte for byte; `content` is only the indexed body. Not in pages_fts.
-- Rows written before this migration keep '' until their page is written or re-synced.
ALTER TABLE pages ADD COLUMN text TEXT NOT NULL DEFAULT '';
""",
    ),
]
