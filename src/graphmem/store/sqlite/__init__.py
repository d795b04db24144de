"""SQLite backend (embedded default)."""

from .store import SqliteStore

__all__ = ["SqliteStore"]
