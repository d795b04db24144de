"""PostgreSQL urls: which ones select the backend, and how they are shown (without a password)."""

from __future__ import annotations

from ...config_sections import redact_url

__all__ = ["is_postgres_url", "safe_url"]


def is_postgres_url(url: str | None) -> bool:
    """Whether ``url`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return bool(url) and str(url).split("://", 1)[0].lower() in ("postgresql", "postgres")


def safe_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for messages and logs): the same redaction as status and
    errors everywhere else (:func:`graphmem.config_sections.redact_url`)."""
    return redact_url(url)
